// The offscreen document: hosts the engine (the runtime worker, with Pyodide and
// ONNX Runtime Web) for the whole browser, and its router (./router.js). The service
// worker creates it with the engine's configuration in its URL, and closes it when
// the settings change. Offscreen documents reach only chrome.runtime.

import { PORT_NAME } from './channel.js';
import { Router } from './router.js';

const config = JSON.parse(new URLSearchParams(location.search).get('config') ?? '{}');
let worker = null;
const engine = {
  post(text) {
    if (!worker) {
      worker = new Worker('worker.mjs', { type: 'module' });
      worker.onmessage = (event) => router.fromEngine(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        const message = `The runtime worker failed to load: ${event.message ?? 'unknown error'}`;
        router.fromEngine(JSON.stringify({ kind: 'boot-error', error: { name: 'OperationError', message } }));
      };
    }
    worker.postMessage(text);
  },
};
const router = new Router(engine, config);

chrome.runtime.onConnect.addListener((port) => {
  // Only this extension's own content scripts (bridge.js) connect: the manifest has no
  // externally_connectable, and a port from anywhere else is refused all the same.
  if (port.name !== PORT_NAME || port.sender?.id !== chrome.runtime.id) {
    port.disconnect();
    return;
  }
  const { receive, close } = router.connect((text) => port.postMessage(text));
  port.onMessage.addListener(receive);
  port.onDisconnect.addListener(close);
});

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.kind === 'offscreen-status') {
    reply({ ...router.status(), config, crossOriginIsolated: self.crossOriginIsolated });
  } else if (message?.kind === 'offscreen-native') {
    // The browser's own API, as pages would see it (no polyfill runs here).
    const native = /** @type {any} */ (globalThis).LanguageModel;
    if (typeof native?.availability !== 'function') reply(null);
    else native.availability().then(reply, () => reply('unavailable'));
    return true;
  }
  return false;
});
