// A dedicated worker of routes.html: its request pauses in its frame's
// request stage, where the session's routes answer it.
fetch('/api/worker')
  .then((r) => r.json())
  .then((d) => postMessage('says ' + d.items.join(',')))
  .catch(() => postMessage('failed'));
