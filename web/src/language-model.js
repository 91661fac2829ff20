// The LanguageModel interface. Methods convert their arguments (WebIDL), keep
// page objects on this side, and run the spec's steps in the engine through
// the worker; results and errors are created here, in the page's realm.

import { invalidState } from './errors.js';
import { CreateMonitor } from './monitor.js';
import {
  convertCoreOptions, convertCreateOptions, convertPrompt, convertPromptOptions,
  convertSignalOptions, newCall,
} from './convert.js';
import { closedLoop } from './closed-loop.js';
import { decodeMedia } from './media.js';
import { toolCallFromWire } from './tools.js';
import { isObject } from './webidl.js';
import { EXTENSION_CONTEXT } from './extension.js';
import { client, destroySession, request } from './request.js';

const CONSTRUCT = Symbol('construct');

/** @typedef {import('./protocol.js').ChunkWire} ChunkWire */
/** @typedef {import('./protocol.js').SessionInfo} SessionInfo */
/** @typedef {import('./convert.js').LoopOptions} LoopOptions */
/** @typedef {import('./closed-loop.js').Round} Round */

/**
 * The engine's topK and temperature of a session (the extension-only attributes).
 * @type {(model: LanguageModel) => {topK: number, temperature: number}}
 */
export let samplingOf;

function hasStickyActivation() {
  const activation = navigator.userActivation;
  return !!activation && (activation.isActive || activation.hasBeenActive);
}

/**
 * A streamed chunk as the page sees it: text, or a tool-call content.
 * @param {ChunkWire} chunk
 */
function chunkFromWire(chunk) {
  return chunk.kind === 'text' ? chunk.text : { type: 'tool-call', value: toolCallFromWire(chunk) };
}

export class LanguageModel extends EventTarget {
  #session;
  /** The engine the session lives in (Client.generation when it was made). */
  #generation;
  #contextUsage;
  #contextWindow;
  #samplingMode;
  #sampling;
  #destruction = new AbortController();
  /** @type {Promise<unknown>} */
  #lastSend = Promise.resolve(); // calls reach the engine in call order
  #oncontextoverflow = null;
  /** Whether expectedOutputs lists tool-call (kept by clone()). */
  #expectsToolCalls;
  /** @type {LoopOptions | null} the closed loop's settings (kept by clone()) */
  #loop;

  // Defaults keep `LanguageModel.length` 0: the interface has no constructor.
  constructor(token = undefined, info = undefined, settings = undefined) {
    if (token !== CONSTRUCT) throw new TypeError('Illegal constructor');
    super();
    this.#expectsToolCalls = settings.expectsToolCalls;
    this.#loop = settings.loop;
    this.#session = info.session;
    this.#generation = client.generation;
    this.#contextUsage = info.contextUsage;
    this.#contextWindow = info.contextWindow;
    this.#samplingMode = info.samplingMode;
    this.#sampling = { topK: info.topK, temperature: info.temperature };
  }

  static {
    samplingOf = (model) => model.#sampling;
  }

  static async availability(options = {}) {
    const call = newCall();
    const [converted] = convertCoreOptions(options, call);
    return request('availability', { options: converted }, { call });
  }

  static async create(options = {}) {
    const call = newCall();
    const { options: converted, monitor, signal, loop } = convertCreateOptions(options, call);
    if (signal?.aborted) throw signal.reason;
    let target = null;
    if (monitor) {
      target = new CreateMonitor();
      monitor.call(undefined, target); // An exception rejects create() as-is.
    }
    const info = await request('create', { options: converted, activation: hasStickyActivation() }, {
      signal,
      call,
      before: decodeMedia(call.media),
      progress: (loaded) => target?.dispatchProgress(loaded),
      onLate: destroySession,
    });
    const expectsToolCalls = (converted.expectedOutputs ?? []).some((e) => e.type === 'tool-call');
    const model = new LanguageModel(CONSTRUCT, info, { expectsToolCalls, loop });
    // The create signal stays tied to the session: aborting it later destroys
    // the session with the signal's reason.
    signal?.addEventListener('abort', () => model.#destroy(signal.reason), { once: true });
    return model;
  }

  /**
   * A call on this session: `request()` with the session's id and engine.
   * @template {'prompt' | 'append' | 'measure' | 'clone'} K
   * @param {K} kind
   * @param {any} payload the request without its session
   * @param {any} how as for request()
   * @returns {Promise<import('./protocol.js').Results[K]>}
   */
  #request(kind, payload, how) {
    return request(kind, { session: this.#session, ...payload }, { ...how, generation: this.#generation });
  }

  #check() {
    if (!(#session in this)) throw new TypeError('Illegal invocation');
  }

  /** The composite of the destruction signal and the caller's; throws if aborted. */
  #signal(...signals) {
    const composite = AbortSignal.any([this.#destruction.signal, ...signals.filter(Boolean)]);
    if (composite.aborted) throw composite.reason;
    return composite;
  }

  /** Convert a prompt and start decoding its media; sent after the previous call. */
  #input(input) {
    const call = newCall();
    const converted = convertPrompt(input, call);
    const before = Promise.all([this.#lastSend, decodeMedia(call.media)]);
    this.#lastSend = before;
    return { call, converted, before };
  }

  #keep = ({ contextUsage, overflowed }) => {
    this.#contextUsage = contextUsage;
    if (!overflowed) return;
    this.dispatchEvent(new Event('contextoverflow'));
    if (EXTENSION_CONTEXT) this.dispatchEvent(new Event('quotaoverflow')); // the deprecated name
  };

  /** Shared by prompt() and promptStreaming(): the engine's "prefill" then "generate". */
  #prompt(input, options, chunk, stopSignal = null) {
    const { call, converted, before } = this.#input(input);
    const { constraint, omit, signal } = convertPromptOptions(options);
    const composite = this.#signal(signal, stopSignal);
    return this.#request('prompt', { input: converted, constraint, omit }, {
      signal: composite, call, before, chunk, settles: true, onKeep: this.#keep,
    });
  }

  /**
   * prompt() and promptStreaming() of a closed-loop session: model turns and tool
   * rounds until a turn answers in text (./closed-loop.js). Later calls on the
   * session wait for the whole loop. `onText` gets every turn's text.
   * @param {LoopOptions} loop
   * @returns {Promise<string>}
   */
  #promptLoop(loop, input, options, onText, stopSignal = null) {
    const { call, converted, before } = this.#input(input);
    const { constraint, omit, signal } = convertPromptOptions(options);
    const composite = this.#signal(signal, stopSignal);
    const destruction = this.#destruction.signal;
    const turns = {
      /** @param {Round} round */
      prompt: async (round) => {
        let text = '';
        const calls = [];
        await this.#request('prompt', { input: round.converted, constraint, omit }, {
          signal: composite,
          call: round.call,
          before: round.before ?? decodeMedia(round.call.media),
          chunk: (wire) => {
            if (wire.kind === 'text') {
              text += wire.text;
              onText(wire.text);
            } else {
              calls.push(toolCallFromWire(wire));
            }
          },
          settles: true,
          onKeep: this.#keep,
        });
        return { text, calls };
      },
      /** @param {Round} round */
      commit: (round) => this.#request('append', { input: round.converted }, {
        signal: destruction, call: round.call, before: decodeMedia(round.call.media),
        settles: true, onKeep: this.#keep,
      }).then(() => {}),
    };
    const loopDone = closedLoop(loop, { converted, call, before }, turns, composite);
    this.#lastSend = loopDone.catch(() => {});
    return loopDone;
  }

  async prompt(input, options = {}) {
    this.#check();
    // A closed loop answers with its last turn's text (docs/tools.md).
    if (this.#loop) return this.#promptLoop(this.#loop, input, options, () => {});
    // The spec's onChunk/onDone steps: text is concatenated; with tool calls,
    // the result is the list of contents (Chromium: a string otherwise). Under
    // toolCallResults 'always-array' (Chromium's newer WPT), a session whose
    // expectedOutputs lists tool-call always gets the list, text-only answers too.
    const contents = [];
    let text = '';
    let hasToolCall = false;
    await this.#prompt(input, options, (wire) => {
      const chunk = chunkFromWire(wire);
      if (typeof chunk === 'string') {
        text += chunk;
        return;
      }
      hasToolCall = true;
      if (text !== '') contents.push({ type: 'text', value: text });
      text = '';
      contents.push(chunk);
    });
    const alwaysArray = this.#expectsToolCalls && client.toolCallResults === 'always-array';
    if (!hasToolCall && !alwaysArray) return text;
    if (text !== '') contents.push({ type: 'text', value: text });
    return contents;
  }

  promptStreaming(input, options = {}) {
    this.#check();
    // Conversion errors and an already-aborted signal throw synchronously.
    const stopper = new AbortController();
    let controller;
    let open = true;
    const stream = new ReadableStream({
      start: (c) => { controller = c; },
      cancel: () => {
        open = false;
        stopper.abort();
      },
    });
    const operation = this.#loop
      ? this.#promptLoop(this.#loop, input, options, (text) => { if (open) controller.enqueue(text); },
        stopper.signal)
      : this.#prompt(input, options, (wire) => {
        if (open) controller.enqueue(chunkFromWire(wire));
      }, stopper.signal);
    operation.then(() => open && controller.close(), (error) => open && controller.error(error));
    return stream;
  }

  async append(input, options = {}) {
    this.#check();
    const { call, converted, before } = this.#input(input);
    const { signal } = convertSignalOptions(options, 'LanguageModelAppendOptions');
    const composite = this.#signal(signal);
    await this.#request('append', { input: converted }, {
      signal: composite, call, before, settles: true, onKeep: this.#keep,
    });
  }

  async measureContextUsage(input, options = {}) {
    this.#check();
    const { call, converted, before } = this.#input(input);
    const { constraint, omit, signal } = convertPromptOptions(options);
    const composite = this.#signal(signal);
    return this.#request('measure', { input: converted, constraint, omit }, {
      signal: composite, call, before,
    });
  }

  async clone(options = {}) {
    this.#check();
    const { signal } = convertSignalOptions(options, 'LanguageModelCloneOptions');
    const composite = this.#signal(signal);
    const before = this.#lastSend;
    const info = await this.#request('clone', {}, {
      signal: composite, before, onLate: destroySession,
    });
    return new LanguageModel(CONSTRUCT, info, { expectsToolCalls: this.#expectsToolCalls, loop: this.#loop });
  }

  destroy() {
    this.#check();
    this.#destroy(invalidState());
  }

  /** Abort every pending and future call with `reason` and free the engine's session. */
  #destroy(reason) {
    if (this.#destruction.signal.aborted) return;
    this.#destruction.abort(reason);
    destroySession({ session: this.#session }, this.#generation);
  }

  get contextUsage() {
    this.#check();
    return this.#contextUsage;
  }

  get contextWindow() {
    this.#check();
    return this.#contextWindow;
  }

  get samplingMode() {
    this.#check();
    return this.#samplingMode;
  }

  get oncontextoverflow() {
    this.#check();
    return this.#oncontextoverflow;
  }

  set oncontextoverflow(handler) {
    this.#check();
    if (this.#oncontextoverflow === null) {
      this.addEventListener('contextoverflow', (event) => {
        if (typeof this.#oncontextoverflow === 'function') this.#oncontextoverflow.call(this, event);
      });
    }
    this.#oncontextoverflow = isObject(handler) ? handler : null;
  }
}

Object.defineProperty(LanguageModel.prototype, Symbol.toStringTag, {
  value: 'LanguageModel', configurable: true,
});
