// Issue 45: a worker's view of the browser's identity (dedicated, shared
// or service, by how the page started it), answered to any message.
async function signals() {
  const d = navigator.userAgentData;
  const high = d ? await d.getHighEntropyValues(['fullVersionList']) : {};
  return {
    ua: navigator.userAgent,
    brands: d ? d.brands.map(b => `${b.brand}/${b.version}`).join(', ') : null,
    full: (high.fullVersionList || []).map(b => `${b.brand}/${b.version}`).join(', '),
    platform: d ? d.platform : null,
    mobile: d ? d.mobile : null,
    webdriver: navigator.webdriver,
    native: /\[native code\]/.test(String(Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'webdriver')?.get)),
  };
}
self.onmessage = async (e) => {
  const answer = await signals();
  if (e.source) e.source.postMessage(answer); else self.postMessage(answer);
};
self.onconnect = (e) => {
  const port = e.ports[0];
  port.onmessage = async () => port.postMessage(await signals());
};
