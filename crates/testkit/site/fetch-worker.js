// A worker (dedicated or shared) that fetches the URL its own script URL's
// `url` parameter names and says what came back ("got <body>" or
// "failed"): a route's test of a worker's own request (crates/engine/tests/routes.rs).
const target = new URL(self.location.href).searchParams.get('url');
const said = fetch(target, { cache: 'no-store' })
  .then((r) => r.text())
  .then((t) => 'got ' + t)
  .catch(() => 'failed');
if ('onconnect' in self) {
  self.onconnect = (e) => { const port = e.ports[0]; said.then((m) => port.postMessage(m)); };
} else {
  said.then((m) => postMessage(m));
}
