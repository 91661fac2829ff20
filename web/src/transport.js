// The transport seam under the worker protocol: it carries JSON text between the
// page's client and the engine. Here, a dedicated module Worker running Pyodide;
// an extension would carry the same messages over chrome.runtime ports.

/**
 * @typedef {object} Transport
 * @property {(onMessage: (text: string) => void, onFailure: (message: string) => void,
 *   onStopped?: (message: string) => void) => void} start
 *   Open the channel (idempotent): `onMessage` gets each message from the engine,
 *   `onFailure` is told when the channel cannot open, `onStopped` when the engine
 *   behind an open channel stopped (the next start() opens a fresh one).
 * @property {(text: string) => void} post Send one message to the engine.
 */

/** @implements {Transport} */
export class WorkerTransport {
  /** @type {Worker | null} */
  #worker = null;
  #failed = false;
  #url;

  /** @param {string | (() => string)} url the runtime worker's script (read at start) */
  constructor(url) {
    this.#url = url;
  }

  /**
   * @param {(text: string) => void} onMessage
   * @param {(message: string) => void} onFailure
   * @param {(message: string) => void} [onStopped]
   */
  start(onMessage, onFailure, onStopped) {
    if (this.#worker || this.#failed) return;
    let worker;
    try {
      worker = createWorker(typeof this.#url === 'function' ? this.#url() : this.#url);
    } catch (error) {
      // E.g. Trusted Types enforced with a `trusted-types` list that omits our policy.
      this.#failed = true;
      const message = String(error?.message ?? error);
      const hint = /trusted/i.test(message)
        ? ` (a page that requires Trusted Types must allow the policy '${POLICY_NAME}')` : '';
      onFailure(`The runtime worker could not be created: ${message}${hint}.`);
      return;
    }
    worker.onmessage = (event) => {
      if (typeof event.data === 'string') onMessage(event.data);
      else if (event.data?.life) this.#watch(worker, event.data.life, onStopped);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      onFailure(`The runtime worker failed to load: ${event.message ?? 'unknown error'}`);
    };
    this.#worker = worker;
  }

  /**
   * The worker holds the Web Lock `life` while it lives (./worker/worker.mjs): once
   * the page is granted it, the worker has stopped (terminated, crashed, or closed
   * itself after a fatal error), and the next start() makes a fresh one.
   * @param {Worker} worker
   * @param {string} life
   * @param {((message: string) => void) | undefined} onStopped
   */
  #watch(worker, life, onStopped) {
    navigator.locks?.request(life, () => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      worker.terminate();
      onStopped?.('The runtime worker stopped (it was terminated, crashed or ran out of memory).');
    });
  }

  /** @param {string} text */
  post(text) {
    this.#worker?.postMessage(text);
  }
}

/** The name of the Trusted Types policy the runtime creates its worker with. */
export const POLICY_NAME = 'prompt-api-runtime';
/** Script URLs this module made and may hand to `new Worker` (nothing else is trusted). */
const ownURLs = new Set();
/** @type {{createScriptURL: (url: string) => any} | null | undefined} */
let policy;

/**
 * `url` as a TrustedScriptURL where the browser has Trusted Types (a page may require
 * them for scripts: `require-trusted-types-for 'script'`), else the string itself. The
 * policy accepts only the URLs this module built, so the page gains no way to
 * launder other script URLs through it.
 * @param {string} url
 * @returns {any}
 */
function trustedScriptURL(url) {
  const factory = /** @type {any} */ (globalThis).trustedTypes;
  if (policy === undefined) {
    try {
      policy = factory?.createPolicy?.(POLICY_NAME, {
        createScriptURL: (/** @type {string} */ value) => {
          if (!ownURLs.has(value)) throw new TypeError(`${POLICY_NAME} does not trust ${value}`);
          return value;
        },
      }) ?? null;
    } catch {
      policy = null; // a `trusted-types` list without our name: the string is all we have
    }
  }
  ownURLs.add(url);
  return policy ? policy.createScriptURL(url) : url;
}

/** @param {string} url */
function createWorker(url) {
  if (new URL(url).origin === location.origin) {
    return new Worker(trustedScriptURL(url), { type: 'module' });
  }
  // A cross-origin script (e.g. from a CDN) cannot start a worker directly.
  const source = `import ${JSON.stringify(url)};`;
  const blobURL = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  return new Worker(trustedScriptURL(blobURL), { type: 'module' });
}
