// The page side of the worker protocol (py_runtime/engine/protocol.py; the types in
// ./protocol.js are generated from it). One engine per page, shared by every
// session, reached through a transport (./transport.js).

import { TOOL_CALL_RESULTS } from './protocol.js';

/** @typedef {import('./protocol.js').Config} Config */
/** @typedef {import('./protocol.js').ErrorWire} ErrorWire */
/** @typedef {import('./protocol.js').ChunkWire} ChunkWire */
/** @typedef {import('./protocol.js').Reply} Reply */
/** @typedef {import('./protocol.js').Requests} Requests */
/** @typedef {import('./protocol.js').Results} Results */
/** @typedef {import('./transport.js').Transport} Transport */

/**
 * What a call's replies are handed to.
 * @template R
 * @typedef {object} Handlers
 * @property {(loaded: number) => void} [progress]
 * @property {(chunk: ChunkWire) => void} [chunk]
 * @property {(value: R, id: number) => void} ret
 * @property {(error: ErrorWire) => void} thrown
 * @property {number} [generation] the engine a session's call is for (Client.generation
 *   when the session was made): a session of a stopped engine is gone
 */

/**
 * The configuration, checked where the shim reads it itself.
 * @param {Config} config
 * @returns {Config}
 */
function checkConfig(config) {
  const rule = config.toolCallResults;
  if (rule !== undefined && !TOOL_CALL_RESULTS.includes(rule)) {
    throw new TypeError(
      `toolCallResults must be one of ${TOOL_CALL_RESULTS.join(', ')}, not ${String(rule)}.`,
    );
  }
  return config;
}

/** A call on a session whose engine stopped. */
const LOST = 'This session was lost when the runtime worker stopped; create a new one.';

export class Client {
  #transport;
  /** @type {Config} */
  #config;
  #nextId = 1;
  /** @type {Map<number, Handlers<any>>} */
  #pending = new Map();
  /** @type {ErrorWire | null} */
  #bootError = null;
  #initialized = false;
  #started = false;
  #generation = 1;

  /**
   * @param {Transport} transport
   * @param {Config} config
   */
  constructor(transport, config) {
    this.#transport = transport;
    this.#config = checkConfig(config);
  }

  /** The configuration (read-only; configure() changes it before the first call). */
  get config() {
    return this.#config;
  }

  /** When prompt() returns a list (Config.toolCallResults; default 'when-called'). */
  get toolCallResults() {
    return this.#config.toolCallResults ?? 'when-called';
  }

  /** Which engine this is: 1, then one more each time the engine stopped and the
   * next call started a fresh one. Sessions live in the engine that made them. */
  get generation() {
    return this.#generation;
  }

  /** Open the transport (and so start the engine's boot) now; idempotent. */
  start() {
    this.#started = true;
    this.#transport.start(
      (text) => this.#receive(JSON.parse(text)),
      (message) => this.#fail({ name: 'OperationError', message }),
      (message) => this.#stopped(message),
    );
  }

  /**
   * The page configuration; frozen at the first call into the engine.
   * @param {Config} config
   */
  configure(config) {
    if (this.#initialized) {
      throw new DOMException('The runtime is already configured.', 'InvalidStateError');
    }
    if (this.#started && config.assetsURL !== undefined && config.assetsURL !== this.#config.assetsURL) {
      throw new DOMException(
        'assetsURL must be configured before the runtime starts (data-boot="lazy" defers it).',
        'InvalidStateError');
    }
    this.#config = checkConfig({ ...this.#config, ...config });
  }

  /**
   * Send a call; `handlers` get its progress, chunks, return value and error.
   * @template {keyof Results} K
   * @param {K} kind
   * @param {Omit<Requests[K], 'kind' | 'id'>} payload
   * @param {Handlers<Results[K]>} handlers
   * @returns {number} the call's id
   */
  call(kind, payload, handlers) {
    this.start();
    if (!this.#initialized) {
      this.#initialized = true;
      const { model } = this.#config;
      // A model folder's URL is relative to the page, not to the worker.
      const config = model && model !== 'echo'
        ? { ...this.#config, model: new URL(model, document.baseURI).href }
        : this.#config;
      this.#post({ kind: 'init', config });
    }
    const id = this.#nextId++;
    // A boot failure refuses every call; a stopped engine, the calls of its sessions.
    const refusal = this.#bootError ?? (
      handlers.generation !== undefined && handlers.generation !== this.#generation
        ? { name: 'OperationError', message: LOST } : null);
    if (refusal) {
      queueMicrotask(() => handlers.thrown(refusal));
      return id;
    }
    this.#pending.set(id, handlers);
    this.#post(/** @type {Requests[K]} */ ({ kind, id, ...payload }));
    return id;
  }

  /** @param {number} target */
  abort(target) {
    if (this.#pending.has(target)) this.#post({ kind: 'abort', target });
  }

  /**
   * @param {number} target
   * @param {boolean} keep
   */
  settle(target, keep) {
    this.#post({ kind: 'settle', target, keep });
  }

  /** @param {Requests[keyof Requests]} message */
  #post(message) {
    this.#transport.post(JSON.stringify(message));
  }

  /** @param {Reply} reply */
  #receive(reply) {
    if (reply.kind === 'boot-error') {
      this.#fail(reply.error);
      return;
    }
    const handlers = this.#pending.get(reply.id);
    if (!handlers) return;
    switch (reply.kind) {
      case 'progress':
        handlers.progress?.(reply.loaded);
        break;
      case 'chunk':
        handlers.chunk?.(reply.chunk);
        break;
      case 'return':
        this.#pending.delete(reply.id); // a `settle` answer, if any, is sent at once
        handlers.ret(reply.value, reply.id);
        break;
      case 'throw':
        this.#pending.delete(reply.id);
        handlers.thrown(reply.error);
        break;
    }
  }

  /**
   * The engine stopped: every pending call rejects; the next call starts a fresh
   * engine (re-sending the configuration), where earlier sessions do not exist.
   * @param {string} message
   */
  #stopped(message) {
    this.#initialized = false;
    this.#generation += 1;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const handlers of pending) handlers.thrown({ name: 'OperationError', message });
  }

  /**
   * A boot failure rejects every pending and future call, never hangs.
   * @param {ErrorWire} error
   */
  #fail(error) {
    this.#bootError = error;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const handlers of pending) handlers.thrown(error);
  }
}
