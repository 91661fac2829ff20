// The transport seam under the worker protocol: it carries JSON text between the
// page's client and the engine. Here, a dedicated module Worker running Pyodide;
// an extension would carry the same messages over chrome.runtime ports.

/**
 * @typedef {object} Transport
 * @property {(onMessage: (text: string) => void, onFailure: (message: string) => void) => void} start
 *   Open the channel (idempotent): `onMessage` gets each message from the engine,
 *   `onFailure` is told when the channel itself breaks.
 * @property {(text: string) => void} post Send one message to the engine.
 */

/** @implements {Transport} */
export class WorkerTransport {
  /** @type {Worker | null} */
  #worker = null;
  #url;

  /** @param {string | (() => string)} url the runtime worker's script (read at start) */
  constructor(url) {
    this.#url = url;
  }

  /**
   * @param {(text: string) => void} onMessage
   * @param {(message: string) => void} onFailure
   */
  start(onMessage, onFailure) {
    if (this.#worker) return;
    const worker = createWorker(typeof this.#url === 'function' ? this.#url() : this.#url);
    worker.onmessage = (event) => onMessage(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      onFailure(`The runtime worker failed to load: ${event.message ?? 'unknown error'}`);
    };
    this.#worker = worker;
  }

  /** @param {string} text */
  post(text) {
    this.#worker?.postMessage(text);
  }
}

/** @param {string} url */
function createWorker(url) {
  if (new URL(url).origin === location.origin) return new Worker(url, { type: 'module' });
  // A cross-origin script (e.g. from a CDN) cannot start a worker directly.
  const source = `import ${JSON.stringify(url)};`;
  return new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
}
