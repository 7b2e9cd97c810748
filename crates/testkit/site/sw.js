// Issue 20: a service worker that answers /secret/* navigations itself
// and fetches the denied server (port from its own ?d=) for /sw-fetch and
// when a page posts it "fetch" (answering "fetched" or "refused").
const port = new URL(location.href).searchParams.get('d');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.pathname.startsWith('/secret/')) {
    event.respondWith(new Response('<!doctype html><title>secret</title><p>SERVICE WORKER SECRET</p>',
      { headers: { 'Content-Type': 'text/html' } }));
  } else if (url.pathname === '/sw-fetch') {
    event.respondWith(fetch('http://127.0.0.1:' + port + '/from-worker', { mode: 'no-cors' })
      .then(() => new Response('fetched'), () => new Response('refused')));
  }
});
self.addEventListener('message', (event) => {
  event.waitUntil(fetch('http://127.0.0.1:' + port + '/from-worker-message', { mode: 'no-cors' })
    .then(() => 'fetched', () => 'refused')
    .then((outcome) => event.source.postMessage(outcome)));
});
