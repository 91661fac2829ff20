// The bridge: the isolated-world content script. It takes the MessageChannel port a
// page sends (web/extension/transports.js), asks the service worker for the engine,
// and relays the protocol's text between the page and the engine's router, which
// knows this connection only by its port: a page can reach only its own sessions.

import { CONNECT, PORT_NAME, brokenChannel } from './channel.js';

window.addEventListener('message', (event) => {
  if (event.source !== window || !event.data?.[CONNECT] || !event.ports[0]) return;
  const page = event.ports[0];
  const queue = [];
  let port = null;
  page.onmessage = ({ data }) => {
    if (typeof data !== 'string') return;
    if (port) port.postMessage(data);
    else queue.push(data);
  };
  chrome.runtime.sendMessage({ kind: 'engine' }).then((answer) => {
    if (answer?.error) {
      page.postMessage(brokenChannel(answer.error));
      return;
    }
    port = chrome.runtime.connect({ name: PORT_NAME });
    port.onMessage.addListener((text) => page.postMessage(text));
    port.onDisconnect.addListener(() => {
      page.postMessage(brokenChannel("The extension's engine stopped; reload the page."));
      page.close();
    });
    for (const text of queue.splice(0)) port.postMessage(text);
  }, () => page.postMessage(brokenChannel("The extension's engine did not start.")));
});
