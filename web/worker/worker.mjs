// The runtime worker: restores Pyodide from the build's memory snapshot (Python
// started, the engine imported), installs the engine's wheels from dist/ for any
// later import, then relays the page's protocol messages (JSON text) to the
// engine's endpoint (py_runtime/hosts/pyodide.py) and its replies back.
// BUILD is defined by build/build.py.

/* global BUILD */
import {
  keepModelPrepared, modelCacheStates, modelPrepared, modelText, revalidate, setDownloadTimeout,
  setRevalidation,
} from './model-cache.mjs';

const base = new URL('.', import.meta.url);

// The page learns that this worker stopped (terminated, crashed, or closed after a
// fatal ONNX Runtime error) when the Web Lock it holds from now on is released:
// ../src/transport.js then rejects the pending calls and starts a fresh worker.
const life = `prompt-api-runtime-worker-${crypto.randomUUID()}`;
self.navigator.locks?.request(life, () => {
  self.postMessage({ life });
  return new Promise(() => {});
});
const queue = [];
let engine = null;
let bootDone = () => {};

// Pyodide can fail without settling loadPyodide(): when the wasm does not
// instantiate, its instantiateWasm hook only logs "wasm instantiation failed!"
// and the error with console.warn. Watch for that (and for any uncaught error)
// while booting, so a broken install rejects the page's calls instead of hanging.
const bootFailure = new Promise((_, reject) => {
  const warn = console.warn;
  let instantiationFailed = false;
  console.warn = (...args) => {
    warn.apply(console, args);
    if (instantiationFailed) reject(args[0] instanceof Error ? args[0] : new Error(String(args[0])));
    instantiationFailed ||= args[0] === 'wasm instantiation failed!';
  };
  self.addEventListener('unhandledrejection', (event) => reject(event.reason));
  self.addEventListener('error', (event) => reject(event.error ?? new Error(event.message)));
  bootDone = () => { console.warn = warn; };
});
const booting = (async () => {
  const { loadPyodide } = await import(new URL('pyodide/pyodide.mjs', base).href);
  const pyodide = await loadPyodide({
    indexURL: new URL('pyodide/', base).href,
    _loadSnapshot: unzip(new URL(BUILD.snapshot, base)),
  });
  await install(pyodide, BUILD.wheels);
  return pyodide;
})();

// The snapshot is gzipped in dist/ (30 MiB of wasm memory, about 7 MB on the wire).
// A server that sends it with Content-Encoding: gzip has had it inflated already.
async function unzip(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  const bytes = await response.blob();
  const magic = new Uint8Array(await bytes.slice(0, 2).arrayBuffer());
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) return new Uint8Array(await bytes.arrayBuffer());
  const inflated = bytes.stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

// The snapshot holds imported modules but no files: install the wheels themselves.
async function install(pyodide, wheels) {
  const archives = await Promise.all(wheels.map(async (wheel) => {
    const response = await fetch(new URL(wheel, base));
    if (!response.ok) throw new Error(`${wheel}: HTTP ${response.status}`);
    return response.arrayBuffer();
  }));
  for (const archive of archives) pyodide.unpackArchive(archive, 'wheel');
}

/**
 * Boot the engine for the page's `init` message.
 * @param {string} text the message
 * @param {import('../src/protocol.js').Config} config its configuration
 */
async function init(text, config) {
  // Models run here need ONNX Runtime Web (not the echo model, nor a server's): start
  // it while Pyodide starts. A failure here comes back from createOrtBackend() and
  // create() reports it.
  const model = config.model ?? 'echo';
  const local = model !== 'echo' && !model.startsWith('openai:');
  const ortBackend = local ? import('./ort-backend.mjs') : null;
  ortBackend?.then(({ startOrt }) => startOrt({
    device: config.device || 'wasm', threads: Number(config.threads) || 0, jspi: config.jspi,
  })).catch(() => {});
  let pyodide;
  try {
    pyodide = await Promise.race([booting, bootFailure]);
    bootDone();
    performance.mark('prompt-api:pyodide-ready'); // start-up phases (bench/startup_phases.py)
    let createBackend;
    if (ortBackend) {
      // ... and the chat-template engine.
      await install(pyodide, BUILD.modelWheels);
      ({ createOrtBackend: createBackend } = await ortBackend);
    }
    const host = pyodide.pyimport('py_runtime.hosts.pyodide');
    setRevalidation(config.cacheRevalidation);
    setDownloadTimeout(config.downloadTimeout);
    const files = {
      text: modelText, states: modelCacheStates, revalidate, prepared: modelPrepared, keepPrepared: keepModelPrepared,
    };
    engine = host.start(text, (reply) => self.postMessage(reply), createBackend, files);
    performance.mark('prompt-api:engine-ready');
  } catch (error) {
    const message = `The Prompt API runtime failed to start: ${error?.message ?? error}`;
    /** @type {import('../src/protocol.js').BootError} */
    const reply = { kind: 'boot-error', error: { name: 'OperationError', message } };
    self.postMessage(JSON.stringify(reply));
    return;
  }
  if (!engine) return; // the engine posted its boot-error
  for (const message of queue.splice(0)) engine.receive(message);
}

self.onmessage = (event) => {
  const text = event.data;
  if (engine) {
    engine.receive(text);
    return;
  }
  const message = JSON.parse(text);
  if (message.kind === 'init') init(text, message.config);
  else queue.push(text);
};
