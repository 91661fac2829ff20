// The runtime worker: boots Pyodide from dist/, installs the engine from the
// local package index with micropip, then relays the page's JSON messages to
// py_runtime.worker and its replies back. BUILD is defined by build/build.py.

/* global BUILD */
const base = new URL('.', import.meta.url);
const queue = [];
let engine = null;

const booting = (async () => {
  const started = performance.now();
  const { loadPyodide } = await import(new URL('pyodide/pyodide.mjs', base).href);
  const pyodide = await loadPyodide({ indexURL: new URL('pyodide/', base).href });
  await pyodide.loadPackage(new URL(BUILD.micropip, base).href);
  const micropip = pyodide.pyimport('micropip');
  micropip.set_index_urls([new URL('simple/', base).href]);
  await micropip.install(BUILD.requirements);
  micropip.destroy();
  console.debug(`[prompt-api] runtime booted in ${Math.round(performance.now() - started)} ms`);
  return pyodide;
})();

async function init(config) {
  let pyodide;
  try {
    pyodide = await booting;
    const worker = pyodide.pyimport('py_runtime.worker');
    engine = worker.start(JSON.stringify(config), (text) => self.postMessage(text));
  } catch (error) {
    const message = `The Prompt API runtime failed to start: ${error?.message ?? error}`;
    self.postMessage(JSON.stringify({ type: 'boot-error', error: { name: 'OperationError', message } }));
    return;
  }
  for (const text of queue.splice(0)) engine.receive(text);
}

self.onmessage = (event) => {
  const text = event.data;
  if (engine) {
    engine.receive(text);
    return;
  }
  const message = JSON.parse(text);
  if (message.kind === 'init') init(message.config);
  else queue.push(text);
};
