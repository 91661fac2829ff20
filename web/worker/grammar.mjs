// Constrained decoding in the worker: XGrammar (./xgrammar-instance.mjs) compiles the
// engine's grammars (written as XGrammar EBNF by py_runtime/hosts/xgrammar_ebnf.py)
// against the model's vocabulary (./vocab.mjs), and a matcher per KV cache gives the
// mask of the tokens allowed next. Loaded only when a constraint is first used.

import { instance } from './xgrammar-instance.mjs';
import { detectVocabType, encodedVocab } from './vocab.mjs';

/** @typedef {import('./xgrammar-instance.mjs').Instance} Instance */

/**
 * The engine's grammar (to_xgrammar() in py_runtime/hosts/xgrammar_ebnf.py): an EBNF
 * grammar, or free text in which a trigger starts one of the tags (each with the
 * EBNF grammar of its arguments).
 * @typedef {{kind: 'ebnf', source: string}
 *   | {kind: 'tool-calls', triggers: string[], tags: {begin: string, grammar: string, end: string}[]}} GrammarSpec
 */
/** Compiled grammars kept per model (least recently used dropped first). */
const CACHED_GRAMMARS = 16;

/**
 * How to compile `grammar`: what a rejection says, and the call into XGrammar.
 * @param {any} compiler a GrammarCompiler
 * @param {GrammarSpec} grammar
 * @returns {[string, () => Promise<any>]}
 */
function compileCall(compiler, grammar) {
  switch (grammar?.kind) {
    case 'ebnf':
      return ['XGrammar rejected the grammar', () => compiler.compileGrammar(String(grammar.source))];
    case 'tool-calls': {
      const tags = Array.from(grammar.tags, (tag) => ({
        type: 'tag',
        begin: String(tag.begin),
        content: { type: 'grammar', grammar: String(tag.grammar) },
        end: String(tag.end),
      }));
      const triggers = Array.from(grammar.triggers, String);
      return ['XGrammar rejected the tool calls', () => compiler.compileStructuralTag({
        type: 'structural_tag', format: { type: 'triggered_tags', triggers, tags },
      })];
    }
    default:
      throw new Error(`Unknown grammar kind: ${/** @type {any} */ (grammar)?.kind}`);
  }
}

/**
 * One model's grammars: its TokenizerInfo and GrammarCompiler (made when a grammar is
 * first compiled, made again in a fresh XGrammar instance after an error) and its
 * compiled grammars, by their JSON text.
 */
export class ModelGrammars {
  #url;
  /** @type {string | (() => Promise<string>) | null} */
  #tokenizer;
  #stopIds;
  /** @type {string[]} */
  #vocab = null;
  #vocabType = 'raw';
  #prependSpace = false;
  #width = 0;
  /** @type {Promise<{instance: Instance, info: any, compiler: any, compiled: Map<string, Promise<any>>}>} */
  #state = null;

  /**
   * @param {string} url XGrammar's file (dist/xgrammar/xgrammar.js)
   * @param {string | (() => Promise<string>)} tokenizer the model's tokenizer.json, as
   *   text or a function that reads it (called when a grammar is first compiled)
   * @param {number[]} stopIds the tokens that end an answer
   */
  constructor(url, tokenizer, stopIds) {
    this.#url = url;
    this.#tokenizer = tokenizer;
    this.#stopIds = Array.from(stopIds);
  }

  /** Milliseconds the last TokenizerInfo took to make (benchmarks). */
  prepareMs = 0;

  /** The compiler's state, in the current XGrammar instance. @param {number} width */
  async #current(width) {
    const state = await this.#state?.catch(() => null);
    if (state && !state.instance.retired) return state;
    const preparing = this.#prepare(width);
    this.#state = preparing;
    preparing.catch(() => { if (this.#state === preparing) this.#state = null; });
    return preparing;
  }

  async #prepare(width) {
    const started = performance.now();
    if (!this.#vocab) {
      const text = typeof this.#tokenizer === 'function' ? await this.#tokenizer() : this.#tokenizer;
      const spec = JSON.parse(text);
      ({ vocabType: this.#vocabType, prependSpace: this.#prependSpace } = detectVocabType(spec));
      this.#vocab = encodedVocab(spec, this.#vocabType, width);
      // Unknown width (Infinity): the tokenizer's size; wider logits are masked past it.
      this.#width = Number.isFinite(width) ? width : this.#vocab.length;
      this.#tokenizer = null; // the vocabulary is all that is needed from it now
    }
    const made = await instance(this.#url);
    const { TokenizerInfo, GrammarCompiler } = made.xgr;
    const info = await made.run('XGrammar rejected the vocabulary', () => TokenizerInfo.createTokenizerInfo(
      this.#vocab, this.#vocabType, this.#prependSpace, this.#width, this.#stopIds,
    ));
    // XGrammar's own cache is unbounded: this class keeps the last few instead.
    const compiler = await made.run('XGrammar', () => GrammarCompiler.createGrammarCompiler(info, false));
    this.prepareMs = performance.now() - started;
    return { instance: made, info, compiler, compiled: new Map() };
  }

  /**
   * `grammar` compiled (an XGrammar CompiledGrammar, kept among the last few by its
   * JSON text), with the XGrammar instance it lives in; `width` is the logits' width
   * (the vocabulary size XGrammar masks), read on the first call only. Throws an
   * Error saying what XGrammar rejected.
   * @param {GrammarSpec} grammar
   * @param {number} width
   * @returns {Promise<{instance: Instance, compiled: any}>}
   */
  async compile(grammar, width) {
    const state = await this.#current(width);
    const key = JSON.stringify(grammar);
    let compiled = state.compiled.get(key);
    if (compiled) {
      state.compiled.delete(key); // set again below: the most recently used
    } else {
      const [what, call] = compileCall(state.compiler, grammar);
      compiled = state.instance.run(what, call);
      compiled.catch(() => { if (state.compiled.get(key) === compiled) state.compiled.delete(key); });
    }
    state.compiled.set(key, compiled);
    for (const [old, entry] of state.compiled) {
      if (state.compiled.size <= CACHED_GRAMMARS) break;
      state.compiled.delete(old);
      // A matcher keeps what it needs of its grammar: disposing this handle is safe.
      entry.then((g) => g.dispose(), () => {});
    }
    return { instance: state.instance, compiled: await compiled };
  }

  /**
   * A matcher for `grammar`, at its start (see compile()).
   * @param {GrammarSpec} grammar
   * @param {number} width
   * @returns {Promise<Matcher>}
   */
  async matcher(grammar, width) {
    const { instance: made, compiled } = await this.compile(grammar, width);
    const handle = await made.run('XGrammar', () => made.xgr.GrammarMatcher.createGrammarMatcher(
      compiled, this.#stopIds,
    ));
    return new Matcher(made, handle, this.#width);
  }
}

/**
 * One answer's position in its grammar (one per KV cache): the mask of the tokens
 * allowed next, and the tokens taken.
 */
export class Matcher {
  #instance;
  #matcher;
  #width;
  /** The mask once a stop token is taken: none allowed (XGrammar aborts if asked). */
  #none = null;

  /**
   * @param {Instance} instance the XGrammar instance `matcher` lives in
   * @param {any} matcher a GrammarMatcher
   * @param {number} width the vocabulary size it masks
   */
  constructor(instance, matcher, width) {
    this.#instance = instance;
    this.#matcher = matcher;
    this.#width = width;
  }

  /**
   * Advance over `ids`; false at the first one the grammar rejects (the matcher
   * stays before it), and after a stop token.
   * @param {Iterable<number>} ids
   */
  accept(ids) {
    return this.#instance.runSync('XGrammar', () => {
      for (const id of ids) {
        if (!(id >= 0 && id < this.#width) || this.#matcher.isTerminated()) return false;
        if (!this.#matcher.acceptToken(id)) return false;
      }
      return true;
    });
  }

  /** The text the grammar allows next and nothing else (jump-forward), or ''. */
  forced() {
    return this.#instance.runSync('XGrammar', () => (
      this.#matcher.isTerminated() ? '' : this.#matcher.findJumpForwardString()));
  }

  /** Whether a stop token has been taken. */
  terminated() {
    return this.#instance.runSync('XGrammar', () => this.#matcher.isTerminated());
  }

  /** The allowed tokens, as XGrammar's bitmask (bit i of word i >> 5). @returns {Promise<Int32Array>} */
  bitmask() {
    if (this.terminated()) {
      this.#none ??= new Int32Array((this.#width + 31) >> 5);
      return Promise.resolve(this.#none);
    }
    return this.#instance.run('XGrammar', () => this.#matcher.getNextTokenBitmask());
  }

  dispose() {
    this.#matcher.dispose();
  }
}

/**
 * Set the logits of the tokens `bitmask` forbids to -Infinity (tokens beyond the
 * bitmask too), in place, in one pass; false when it allows none.
 * @param {Float32Array} logits
 * @param {Int32Array} bitmask
 */
export function applyBitmask(logits, bitmask) {
  const length = logits.length;
  const words = Math.min(bitmask.length, (length + 31) >> 5);
  let any = false;
  for (let w = 0; w < words; w++) {
    const word = bitmask[w];
    const start = w << 5;
    const end = Math.min(start + 32, length);
    if (word === 0) {
      logits.fill(-Infinity, start, end);
    } else if (word === -1 && end - start === 32) {
      any = true;
    } else {
      for (let i = start; i < end; i++) {
        if ((word >>> (i - start)) & 1) any = true;
        else logits[i] = -Infinity;
      }
    }
  }
  if (words << 5 < length) logits.fill(-Infinity, words << 5);
  return any;
}
