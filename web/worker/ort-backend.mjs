// ONNX Runtime Web behind the engine's Backend seam (py_runtime/backends/base.py).
// KV caches live here as ORT tensors, addressed by integer handles; the logits of
// the last position stay here too, and the next token is chosen here (./sampling.mjs),
// so no per-token work over the vocabulary happens in Python. A constrained answer's
// mask (grammar.mjs, XGrammar) is applied here too.

import { readSignature } from './graph-signature.mjs';
import { ModelGrammars, applyBitmask } from './grammar.mjs';
import { modelText } from './model-cache.mjs';
import { lastRows, loadSession, stopIfFatal } from './ort-session.mjs';
import { choose, judge, logNormalizer, penalize } from './sampling.mjs';

export { startOrt } from './ort-session.mjs';

// Bundled into dist/worker.mjs: XGrammar's files are in dist/xgrammar/.
const base = new URL('./', import.meta.url);

/**
 * Dispose of `tensor` and give back its bytes now where they are in JS memory: a KV
 * cache's tensors are replaced on every pass, and each replaced ArrayBuffer (MiBs on a
 * long context) would otherwise wait for a garbage collection, hundreds of MiB of them
 * (docs/performance.md). ArrayBuffer.prototype.transfer(0) detaches the buffer, which
 * frees its store. Only for tensors whose buffer nothing else views.
 * @param {any} tensor
 */
function free(tensor) {
  const data = tensor.location === 'cpu' ? tensor.data : null;
  tensor.dispose?.();
  const buffer = data?.buffer;
  if (buffer instanceof ArrayBuffer && typeof (/** @type {any} */ (buffer)).transfer === 'function') {
    /** @type {any} */ (buffer).transfer(0);
  }
}

/** Positions per forward pass of a long input (see OrtBackend.forward). */
const PREFILL_CHUNK = 128;
/** The most draft tokens one speculate() runs (it keeps their logits: k x vocabulary). */
const MAX_DRAFT = 32;

/**
 * Load `modelURL` + `file` (and its `.onnx_data` external weights, if any), the
 * model at `dtype`, into an InferenceSession on `device` ('wasm' or 'webgpu'), behind
 * an OrtBackend; `config` is the model's config.json (./graph-signature.mjs).
 */
export async function createOrtBackend({ modelURL, file, dtype, device, threads, config, onProgress }) {
  const { ort, session } = await loadSession({ modelURL, file, dtype, device, threads, onProgress });
  try {
    const tokenizer = () => modelText(new URL('tokenizer.json', modelURL).href);
    return new OrtBackend(ort, session, device === 'webgpu', config ?? {}, tokenizer);
  } catch (error) {
    await session.release();
    throw error;
  }
}

export class OrtBackend {
  #ort;
  #session;
  /** The last task started: forward passes go one at a time (see #exclusive). */
  #running = Promise.resolve();
  #webgpu;
  #caches = new Map();
  #next = 0;

  /** What the graph takes and gives. @type {import('./graph-signature.mjs').Signature} */
  #signature;
  /** @type {ModelGrammars} made by useTokenizer() */
  #grammars = null;
  /** The masked copy of a constrained step's logits (reused). */
  #masked = null;
  /** Reads the model's tokenizer.json. @type {() => Promise<string>} */
  #readTokenizer;

  constructor(ort, session, webgpu, config, readTokenizer) {
    this.#ort = ort;
    this.#readTokenizer = readTokenizer;
    this.#session = session;
    this.#webgpu = webgpu;
    this.#signature = readSignature(session, config);
    const metadata = /** @type {any} */ (session);
    const logits = metadata.outputMetadata?.find((m) => m.name === 'logits');
    /**
     * Whether one pass can give logits for several positions (speculate() needs
     * them): the graph keeps as many as asked, or all of them.
     */
    this.speculates = this.#signature.keepInput !== null || logits?.shape?.[1] !== 1;
    /** Positions run through the model, in total (read by tests of KV reuse). */
    this.forwarded = 0;
    /** Forward passes (InferenceSession.run() calls), in total. */
    this.passes = 0;
    /** Milliseconds spent inside InferenceSession.run(), in total (benchmarks). */
    this.runMs = 0;
    /** Milliseconds spent computing and applying grammar masks and advancing matchers (benchmarks). */
    this.maskMs = 0;
    /** Milliseconds spent compiling grammars and preparing the vocabulary for them (benchmarks). */
    this.compileMs = 0;
  }

  /**
   * The model's stop tokens, for constrain(). The grammar library reads its
   * tokenizer.json when a grammar is first compiled: `tokenizerJSON` where given, else
   * the file itself, from the model's folder (the model cache). The engine hands the ids
   * only: Pyodide's conversion of a tokenizer's text to a JS string took 0.3 s for
   * SmolLM2's 3.4 MB and 2.6 s for Gemma 3's 31 MB, and left garbage in the worker's
   * heap that raised the page's peak by 120-670 MiB (docs/performance.md).
   * @param {Iterable<number>} stopIds
   * @param {string | null} [tokenizerJSON]
   */
  useTokenizer(stopIds, tokenizerJSON = null) {
    this.#grammars = new ModelGrammars(
      new URL('xgrammar/xgrammar.js', base).href, tokenizerJSON ?? this.#readTokenizer, Array.from(stopIds),
    );
  }

  /** The logits' width: the model's output metadata, else a last forward's logits. */
  #logitsWidth() {
    const logits = /** @type {any} */ (this.#session).outputMetadata
      ?.find((m) => m.name === 'logits');
    const width = logits?.shape?.at(-1);
    if (typeof width === 'number' && width > 0) return width;
    for (const cache of this.#caches.values()) if (cache.logits) return cache.logits.length;
    return Infinity; // the tokenizer's size, then (grammar.mjs cuts the vocabulary at the width)
  }

  /**
   * Constrain the cache's next tokens to `grammar` (grammar.mjs's GrammarSpec), from
   * its start; null: unconstrained again. Rejects with what the grammar library
   * rejected when it cannot compile the grammar.
   * @param {number} handle
   * @param {import('./grammar.mjs').GrammarSpec | null} grammar
   */
  async constrain(handle, grammar) {
    const cache = this.#caches.get(handle);
    cache.matcher?.dispose();
    cache.matcher = null;
    if (grammar === null || grammar === undefined) return;
    if (!this.#grammars) throw new Error('constrain() needs useTokenizer() first.');
    const started = performance.now();
    const matcher = await this.#grammars.matcher(grammar, this.#logitsWidth());
    this.compileMs += performance.now() - started;
    cache.matcher?.dispose(); // constrained again meanwhile
    cache.matcher = matcher;
  }

  /**
   * Advance the cache's matcher over `ids` (an answer's prefix, forced tokens):
   * false at the first token the grammar rejects (the matcher stays before it).
   * True when the cache is not constrained.
   */
  accept(handle, ids) {
    const matcher = this.#caches.get(handle).matcher;
    if (!matcher) return true;
    const started = performance.now();
    const accepted = matcher.accept(ids);
    this.maskMs += performance.now() - started;
    return accepted;
  }

  /** The text the cache's grammar allows next and nothing else (jump-forward); '' when unconstrained. */
  forced(handle) {
    return this.#caches.get(handle).matcher?.forced() ?? '';
  }

  /** Every state's first value: empty KV caches, zero recurrent states. */
  #emptyPast() {
    const past = {};
    for (const { input, shape, type } of this.#signature.states) {
      const size = shape.reduce((a, b) => a * b, 1);
      const data = type === 'float16' ? new Uint16Array(size) : new Float32Array(size);
      past[input] = new this.#ort.Tensor(type, data, shape);
    }
    return past;
  }

  newCache() {
    this.#next += 1;
    this.#caches.set(this.#next, {
      past: this.#emptyPast(), length: 0, logits: null, keep: null, ids: [], matcher: null,
    });
    return this.#next;
  }

  /**
   * Apply a pending truncation: copy the first `keep` positions of every KV cache
   * along its sequence axis; a graph with recurrent states (replaced whole by every
   * pass) runs the kept tokens again from empty states instead.
   */
  async #applyTruncation(cache) {
    if (cache.keep === null) return;
    const keep = cache.keep;
    cache.keep = null;
    if (this.#signature.recurrent) {
      const ids = cache.ids.slice(0, keep);
      for (const tensor of Object.values(cache.past)) free(tensor);
      Object.assign(cache, { past: this.#emptyPast(), length: 0, ids: [] });
      for (let start = 0; start < ids.length; start += PREFILL_CHUNK) {
        await this.#forwardChunk(cache, ids.slice(start, start + PREFILL_CHUNK));
      }
      return;
    }
    for (const { input, axis } of this.#signature.states) {
      const tensor = cache.past[input];
      const dims = tensor.dims;
      const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
      const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
      const length = dims[axis];
      const data = this.#webgpu ? await tensor.getData() : tensor.data;
      const kept = new data.constructor(outer * keep * inner);
      for (let o = 0; o < outer; o++) {
        kept.set(data.subarray(o * length * inner, (o * length + keep) * inner), o * keep * inner);
      }
      free(tensor);
      cache.past[input] = new this.#ort.Tensor(tensor.type, kept, dims.map((d, i) => (i === axis ? keep : d)));
    }
    cache.length = keep;
    cache.ids.length = keep;
  }

  /**
   * Run `ids` through the model after the cache's positions. A long input goes in
   * chunks of PREFILL_CHUNK positions: the exported graph computes logits for every
   * position (positions x vocabulary floats), which one pass over a long prompt
   * would hold at once.
   */
  forward(handle, ids) {
    return this.#exclusive(async () => {
      const cache = this.#caches.get(handle);
      await this.#applyTruncation(cache);
      for (let start = 0; start < ids.length; start += PREFILL_CHUNK) {
        await this.#forwardChunk(cache, ids.slice(start, start + PREFILL_CHUNK));
      }
    });
  }

  /**
   * Run `task` after every task started before it has finished. Sessions' prompts run
   * concurrently in the engine (their steps interleave), but ONNX Runtime Web does not
   * promise that overlapping run() calls on one InferenceSession are safe. Forward
   * passes, clones and releases of caches go through here, so none sees a cache's
   * tensors while another replaces or frees them.
   * @template T
   * @param {() => Promise<T> | T} task
   * @returns {Promise<T>}
   */
  #exclusive(task) {
    const result = this.#running.then(task);
    this.#running = result.then(() => {}, () => {});
    return result;
  }

  /**
   * One pass over `ids`; the logits of its last `keep` positions (fewer if the graph
   * gives fewer), the last of them the cache's last logits.
   * @returns {Promise<Float32Array[]>}
   */
  async #forwardChunk(cache, ids, keep = 1) {
    const count = ids.length;
    const total = cache.length + count;
    const Tensor = this.#ort.Tensor;
    const { inputs, keepInput, keepDims, states } = this.#signature;
    const feeds = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, count]),
      ...cache.past,
    };
    if (inputs.has('attention_mask')) {
      feeds.attention_mask = new Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]);
    }
    if (inputs.has('position_ids')) {
      feeds.position_ids = new Tensor('int64',
        BigInt64Array.from({ length: count }, (_, i) => BigInt(cache.length + i)), [1, count]);
    }
    if (keepInput) feeds[keepInput] = new Tensor('int64', BigInt64Array.of(BigInt(keep)), keepDims);
    const started = performance.now();
    const outputs = await this.#session.run(feeds).catch((error) => {
      stopIfFatal(error);
      throw error;
    });
    this.runMs += performance.now() - started;
    const logits = outputs.logits;
    const rows = lastRows(this.#webgpu ? { dims: logits.dims, data: await logits.getData() } : logits, keep);
    cache.logits = rows.at(-1);
    free(logits);
    for (const tensor of Object.values(cache.past)) free(tensor);
    cache.past = {};
    for (const { input, output } of states) cache.past[input] = outputs[output];
    const kept = new Set(['logits', ...states.map((s) => s.output)]);
    for (const [name, tensor] of Object.entries(outputs)) if (!kept.has(name)) free(tensor);
    cache.length = total;
    for (const id of ids) cache.ids.push(id);
    this.forwarded += count;
    this.passes += 1;
    return rows;
  }

  /**
   * The next token from the last logits: argmax, or top-k sampling at `temperature`.
   * A number, or a Promise of one when the cache is constrained (its matcher then
   * takes the token; -1 when the grammar allows no token, not even a stop token).
   * @returns {number | Promise<number>}
   */
  nextToken(handle, topK, temperature, repetitionPenalty = 1) {
    const cache = this.#caches.get(handle);
    if (cache.matcher) return this.#take(cache, cache.logits, cache.ids, topK, temperature, repetitionPenalty);
    const logits = repetitionPenalty === 1
      ? cache.logits : penalize(cache.logits, cache.ids, repetitionPenalty);
    return choose(logits, topK, temperature);
  }

  /**
   * Jump-forward as speculative decoding (py_runtime/models/backend.py, speculate):
   * `draft` (the grammar's forced text, tokenized) runs in one pass that keeps every
   * position's logits, and each token is judged where it stands, as nextToken would
   * choose there. Returns the tokens emitted and whether the last still needs a
   * forward pass (a token chosen instead of the draft's, taken by the matcher, not
   * run: maybe a stop token, or -1).
   * @param {number} handle
   * @param {Iterable<number>} draft
   * @returns {Promise<{tokens: number[], pending: boolean}>}
   */
  async speculate(handle, draft, topK, temperature, repetitionPenalty = 1) {
    const cache = this.#caches.get(handle);
    const tokens = Array.from(draft).slice(0, MAX_DRAFT);
    if (!tokens.length) return { tokens, pending: false };
    // The first token needs no pass: the cache's last logits decide it.
    const first = await this.#take(cache, cache.logits, cache.ids, topK, temperature, repetitionPenalty, tokens[0]);
    if (first !== tokens[0] || tokens.length === 1 || !this.speculates) return { tokens: [first], pending: true };
    const base = cache.keep ?? cache.length;
    const before = cache.logits;
    const rows = await this.#exclusive(async () => {
      await this.#applyTruncation(cache);
      return this.#forwardChunk(cache, tokens, tokens.length);
    });
    if (rows.length < tokens.length) { // the graph kept fewer positions: judge one at a time
      this.speculates = false;
      this.truncate(handle, base);
      cache.logits = before;
      return { tokens: [first], pending: true };
    }
    for (let i = 1; i < tokens.length; i++) {
      const ids = repetitionPenalty === 1 ? cache.ids : cache.ids.slice(0, base + i);
      const token = await this.#take(cache, rows[i - 1], ids, topK, temperature, repetitionPenalty, tokens[i]);
      if (token !== tokens[i]) {
        this.truncate(handle, base + i);
        cache.logits = rows[i - 1];
        return { tokens: [...tokens.slice(0, i), token], pending: true };
      }
    }
    return { tokens, pending: false };
  }

  /**
   * The log-probability of each of `ids` after the ones before it, the first from the
   * cache's last logits (raw: no penalty, no grammar); then, from the same pass, of
   * each (position, token) pair of `also` (flat): the token after `ids[:position]`.
   * The cache is left as it was (py_runtime/models/backend.py, score).
   * @param {number} handle
   * @param {Iterable<number>} ids
   * @param {Iterable<number>} [also]
   * @returns {Promise<number[]>}
   */
  async score(handle, ids, also = []) {
    const cache = this.#caches.get(handle);
    const tokens = Array.from(ids);
    if (!tokens.length) return [];
    const base = cache.keep ?? cache.length;
    const before = cache.logits;
    const rows = [before];
    await this.#exclusive(async () => {
      await this.#applyTruncation(cache);
      if (tokens.length > 1 && this.speculates) {
        const kept = await this.#forwardChunk(cache, tokens.slice(0, -1), tokens.length - 1);
        if (kept.length === tokens.length - 1) rows.push(...kept);
        else { // the graph kept fewer positions: one at a time
          this.speculates = false;
          cache.keep = base;
          await this.#applyTruncation(cache);
        }
      }
      while (rows.length < tokens.length) {
        rows.push((await this.#forwardChunk(cache, [tokens[rows.length - 1]])).at(-1));
      }
    });
    this.truncate(handle, base);
    cache.logits = before;
    const norms = rows.map(logNormalizer);
    const pairs = Array.from(also);
    const scores = tokens.map((id, i) => rows[i][id] - norms[i]);
    for (let i = 0; i < pairs.length; i += 2) scores.push(rows[pairs[i]][pairs[i + 1]] - norms[pairs[i]]);
    return scores;
  }

  /**
   * The token chosen from one position's `logits` (after `ids`): repetition penalty,
   * the grammar's mask, then choose() (judge() for a draft's `proposed` token); the
   * matcher, if any, takes it (-1: the grammar allows no token, not even a stop token).
   */
  async #take(cache, logits, ids, topK, temperature, repetitionPenalty, proposed = -1) {
    const { matcher } = cache;
    let started = performance.now();
    const bitmask = matcher ? await matcher.bitmask() : null;
    // From here to the end, nothing awaits: #masked is this step's alone.
    if (this.#masked?.length !== logits.length) this.#masked = new Float32Array(logits.length);
    const masked = this.#masked;
    masked.set(logits);
    if (repetitionPenalty !== 1) penalize(logits, ids, repetitionPenalty, masked);
    const allowed = bitmask ? applyBitmask(masked, bitmask) : true;
    let elapsed = performance.now() - started;
    let token = -1;
    if (allowed) {
      token = proposed >= 0 ? judge(masked, topK, temperature, proposed) : choose(masked, topK, temperature);
      started = performance.now();
      if (matcher && !matcher.accept([token])) throw new Error(`The grammar rejected the token it allowed (${token}).`);
      elapsed += performance.now() - started;
    }
    if (matcher) this.maskMs += elapsed;
    return token;
  }

  cacheLength(handle) {
    const cache = this.#caches.get(handle);
    return cache.keep ?? cache.length;
  }

  truncate(handle, length) {
    const cache = this.#caches.get(handle);
    if (length < (cache.keep ?? cache.length)) {
      cache.keep = length;
      cache.logits = null;
      cache.ids.length = length;
    }
  }

  clone(handle) {
    return this.#exclusive(() => this.#clone(handle));
  }

  async #clone(handle) {
    const source = this.#caches.get(handle);
    await this.#applyTruncation(source);
    const past = {};
    for (const [name, tensor] of Object.entries(source.past)) {
      const data = this.#webgpu ? await tensor.getData() : tensor.data;
      past[name] = new this.#ort.Tensor(tensor.type, data.slice(), tensor.dims);
    }
    this.#next += 1;
    // No matcher: a session's copy (session.clone()) starts free, and the copy a prompt
    // call scores a tool call's arguments in (tool_arguments.py) is never held to one.
    this.#caches.set(this.#next, {
      past, length: source.length, logits: source.logits?.slice() ?? null, keep: null,
      ids: source.ids.slice(), matcher: null,
    });
    return this.#next;
  }

  /**
   * What the backend holds now (promptAPIRuntime.stats(): leak checks). A released
   * cache no longer counts, though its tensors are disposed only once the work queued
   * before its release is done (a forward pass of a prompt aborted by a destroy).
   */
  resources() {
    const caches = [...this.#caches.values()].filter((cache) => !cache.released);
    return {
      caches: caches.length,
      tensors: caches.reduce((sum, cache) => sum + Object.keys(cache.past).length, 0),
      matchers: caches.filter((cache) => cache.matcher).length,
    };
  }

  release(handle) {
    const cache = this.#caches.get(handle);
    if (cache) cache.released = true;
    this.#exclusive(() => this.#release(handle));
  }

  #release(handle) {
    const cache = this.#caches.get(handle);
    cache?.matcher?.dispose();
    for (const tensor of Object.values(cache?.past ?? {})) free(tensor);
    this.#caches.delete(handle);
  }
}
