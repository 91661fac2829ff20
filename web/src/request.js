// The shim's calls into the engine: one request as a promise, which rejects at once
// when its signal aborts (the engine is told to stop) and keeps a state-changing
// result only if it was not aborted; all through the one client the entry point set.

import { toPageError } from './errors.js';

/** @typedef {import('./protocol.js').ChunkWire} ChunkWire */
/** @typedef {import('./client.js').Client} Client */

/** @type {Client} */
export let client;

/**
 * Set the client every session uses (done once by the entry point).
 * @param {Client} engineClient
 */
export function useClient(engineClient) {
  client = engineClient;
}

/**
 * Run one engine request as a promise. It rejects at once with the abort
 * reason when `signal` aborts (and tells the engine to stop). A request whose
 * result changes session state (`settles`) is kept only if it was not aborted.
 * The request is sent once `before` settles (media decoded, earlier calls sent).
 * @template {keyof import('./protocol.js').Results} K
 * @param {K} kind
 * @param {Omit<import('./protocol.js').Requests[K], 'kind' | 'id'>} payload
 * @param {object} how
 * @param {AbortSignal} [how.signal]
 * @param {{thrown: unknown[]}} [how.call] the conversion's state (page exceptions)
 * @param {Promise<unknown>} [how.before]
 * @param {(chunk: ChunkWire) => void} [how.chunk]
 * @param {(loaded: number) => void} [how.progress]
 * @param {boolean} [how.settles]
 * @param {(value: import('./protocol.js').Results[K]) => void} [how.onKeep]
 * @param {(value: import('./protocol.js').Results[K]) => void} [how.onLate]
 * @param {number} [how.generation] the engine of the session the call is for
 * @returns {Promise<import('./protocol.js').Results[K]>}
 */
export function request(kind, payload, {
  signal, call, before, chunk, progress, settles = false, onKeep, onLate, generation,
}) {
  return new Promise((resolve, reject) => {
    let finished = false;
    let id = null;
    const finish = () => {
      finished = true;
      signal?.removeEventListener('abort', onAbort);
    };
    function onAbort() {
      if (finished) return;
      finish();
      if (id !== null) client.abort(id);
      reject(signal.reason);
    }
    signal?.addEventListener('abort', onAbort);
    const send = () => {
      if (finished) return;
      id = client.call(kind, payload, {
        generation,
        progress,
        chunk: (value) => { if (!finished) chunk?.(value); },
        ret: (value) => {
          if (settles) client.settle(id, !finished);
          if (finished) {
            onLate?.(value);
            return;
          }
          finish();
          onKeep?.(value);
          resolve(value);
        },
        thrown: (error) => {
          if (finished) return;
          finish();
          reject(toPageError(error, call?.thrown));
        },
      });
    };
    if (before) before.then(send);
    else send();
  });
}

/**
 * Free a session in the engine (one made for a call that was aborted meanwhile, or
 * destroyed); nothing to do when its engine has stopped.
 * @param {{session: number}} info
 * @param {number} [generation]
 */
export function destroySession({ session }, generation = client.generation) {
  client.call('destroy', { session }, { generation, ret() {}, thrown() {} });
}
