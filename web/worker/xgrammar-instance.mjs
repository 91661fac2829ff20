// XGrammar's web build (@mlc-ai/web-xgrammar, dist/xgrammar/xgrammar.js: a UMD file
// with its wasm inlined), loaded into the worker when a constraint is first used.
//
// XGrammar reports a rejected grammar by logging "[FATAL] file:line: reason" and
// aborting its wasm instance, which leaves that instance's stack pointer where the
// abort happened: a few dozen aborts later the instance breaks. So after any error
// from inside XGrammar, the instance is retired: later grammars are compiled in a
// fresh one (the same file imported again under another URL fragment), while the
// matchers already made go on in the old one until they are released.

/** One evaluation of XGrammar's file: its own wasm instance. */
export class Instance {
  /** @param {any} xgr the file's exports (globalThis.xgrammar) */
  constructor(xgr) {
    this.xgr = xgr;
    /** The last "[FATAL] ..." line the instance logged. */
    this.fatal = '';
    /** Set once an error came out of the instance: compile nothing more in it. */
    this.retired = false;
  }

  /**
   * Run `call` (into XGrammar); an error from inside retires the instance and
   * comes back as an Error saying what XGrammar rejected.
   * @template T
   * @param {string} what
   * @param {() => T | Promise<T>} call
   * @returns {Promise<T>}
   */
  async run(what, call) {
    this.fatal = '';
    try {
      return await call();
    } catch (error) {
      throw this.#failed(what, error);
    }
  }

  /**
   * run() for a synchronous call.
   * @template T
   * @param {string} what
   * @param {() => T} call
   * @returns {T}
   */
  runSync(what, call) {
    this.fatal = '';
    try {
      return call();
    } catch (error) {
      throw this.#failed(what, error);
    }
  }

  #failed(what, error) {
    this.retired = true;
    if (current === this) current = null;
    const reason = this.fatal.replace(/^\[FATAL\]\s*\S+?:\d+:\s*/, '')
      || String(error?.message ?? error);
    return new Error(`${what}: ${reason}`, { cause: error });
  }
}

let loads = 0;
/** @type {Instance} */
let current = null;
/** @type {Promise<Instance>} */
let loading = null;

/**
 * The XGrammar instance to compile in (a fresh one after an error): `url` is
 * dist/xgrammar/xgrammar.js. The UMD wrapper, evaluated as an ES module (where
 * `this` is undefined), sets globalThis.xgrammar.
 * @param {string} url
 * @returns {Promise<Instance>}
 */
export function instance(url) {
  if (current) return Promise.resolve(current);
  loading ??= (async () => {
    try {
      loads += 1;
      // Another fragment is another module record: the file is evaluated again
      // (from the HTTP cache), with new wasm memory.
      await import(loads === 1 ? url : `${url}#${loads}`);
      const xgr = /** @type {any} */ (globalThis).xgrammar;
      if (!xgr?.GrammarCompiler) throw new Error(`${url} did not define globalThis.xgrammar`);
      const made = new Instance(xgr);
      // The wasm module binds its error printer (console.error.bind(console)) when
      // XGrammar's first call starts it, synchronously: record its messages.
      const log = console.error;
      console.error = (...args) => {
        const text = args.join(' ');
        if (text.startsWith('[FATAL]')) made.fatal = text;
        log.apply(console, args);
      };
      let started;
      try {
        started = xgr.Grammar.builtinJSONGrammar();
      } finally {
        console.error = log;
      }
      (await started).dispose();
      current = made;
      return made;
    } finally {
      loading = null;
    }
  })();
  return loading;
}
