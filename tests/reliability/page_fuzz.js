// Page-level fuzzing of the shim (tests/reliability/test_fuzz_page.py): seeded random
// values through every entry point of LanguageModel and the tool classes, on the echo
// model. Property: every exception or rejection is a TypeError or RangeError, a
// DOMException with a name the spec uses, or exactly a value the page itself threw (a
// getter, a Proxy trap, a toJSON, a callback) or gave as an abort reason; every error is
// of this realm; nothing hangs; afterwards a plain create() + prompt() still answers.
//
// `runPageFuzz(seed, cases)` returns {seed, cases, counts, failures, ms}; each case draws
// from its own generator (seeded from the run's seed and its index), so a failing case
// is reproduced from the printed seed.

/* global LanguageModel, LanguageModelToolCall, LanguageModelToolSuccess, LanguageModelToolError */
(() => {
  'use strict';

  const SPEC_DOM_NAMES = new Set([
    'NotSupportedError', 'NotAllowedError', 'InvalidStateError', 'SyntaxError', 'DataError',
    'AbortError', 'QuotaExceededError', 'OperationError',
  ]);
  // The documented OperationErrors a page can reach (docs/tools.md): the closed loop's round limit.
  const DOCUMENTED_OPERATION_ERRORS = [/maxToolRounds/];
  const CASE_TIMEOUT_MS = 20000;

  function mulberry32(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6D2B79F5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  class Gen {
    constructor(seed) { this.random = mulberry32(seed); }
    int(n) { return Math.floor(this.random() * n); }
    chance(p) { return this.random() < p; }
    pick(list) { return list[this.int(list.length)]; }
    list(make, max = 3) { return Array.from({ length: this.int(max + 1) }, () => make()); }
  }

  /** Everything the page threw or gave as a reason: a rejection may be exactly one. */
  const thrown = new Set();
  function throwable(g) {
    const value = g.pick([
      () => new Error('page error'),
      () => ({ pageThrew: true }),
      () => new TypeError('a page TypeError'),
      () => new DOMException('a page DOMException', 'NotFoundError'),
      () => 987654321 + g.int(1000),
    ])();
    thrown.add(value);
    return value;
  }

  const KEYS = [
    'expectedInputs', 'expectedOutputs', 'tools', 'initialPrompts', 'samplingMode', 'topK',
    'temperature', 'monitor', 'signal', 'type', 'languages', 'role', 'content', 'prefix',
    'value', 'name', 'description', 'inputSchema', 'properties', 'required', 'callId', 'callID',
    'arguments', 'result', 'errorMessage', 'responseConstraint', 'omitResponseConstraintInput',
    'execute', 'annotations', 'readOnlyHint', 'maxParallelToolCalls', 'maxToolRounds',
    'beforeToolCall', 'afterToolCall', 'items', 'enum', 'pattern', 'toJSON',
  ];
  const MESSAGE_TYPES = ['text', 'image', 'audio', 'tool-call', 'tool-response'];
  const ROLES = ['system', 'user', 'assistant'];
  const MODES = [
    'most-predictable', 'predictable', 'slightly-predictable', 'balanced', 'slightly-creative',
    'creative', 'most-creative',
  ];
  const STRINGS = [
    '', 'ping', '<GenerateSimpleToolCalls>', '<GenerateMultipleToolCalls>',
    '<GenerateSimpleToolCalls>after', 'Args: {"city": "Paris"}', 'Args: {', '\ud800', '\udfff',
    '\u0000', '\u2028', '😀', 'e\u0301', ...MESSAGE_TYPES, ...ROLES, 'balanced', 'en', 'en-US',
    'zh-Hant-TW', 'xx-', '123', 'en_US', 'object', 'string', '{"a":1}', 'null', 'NaN',
  ];
  const REGEXPS = [
    /\d{4}/, /(red|green)/i, /^(yes|no)$/, /[a-z]+/u, /(?=a)b/, /\p{L}/u, /a/gimsuy, /x*?/,
    /[\s\S]/, /(?<n>a)\k<n>/, /\bw/, /[^]/, /./s,
  ];

  function string(g) {
    switch (g.int(6)) {
      case 0: return g.pick(['a', '😀', 'ab ']).repeat(g.pick([300, 1001, 10000, 300000, 2000000]));
      case 1: return String.fromCharCode(...g.list(() => g.int(0x10000), 12));
      case 2: return String.fromCodePoint(...g.list(() => g.int(0x110000), 6));
      default: return g.pick(STRINGS);
    }
  }

  function number(g) {
    return g.pick([0, -0, 1, -1, 0.5, 1.5, NaN, Infinity, -Infinity, 2 ** 53, 1e308, 5e-324, 4, 128, g.int(1000)]);
  }

  function primitive(g) {
    return g.pick([
      () => undefined, () => null, () => true, () => false, () => number(g), () => string(g),
      () => string(g), () => Symbol('s'), () => 10n,
    ])();
  }

  function throwingGetters(g, base) {
    const target = base ?? {};
    for (const key of g.list(() => g.pick(KEYS), 2)) {
      const error = throwable(g);
      Object.defineProperty(target, key, { get() { throw error; }, enumerable: true, configurable: true });
    }
    return target;
  }

  function proxy(g, base) {
    const trap = g.pick(['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'none']);
    const key = g.chance(0.5) ? g.pick(KEYS) : null; // null: every key
    const error = throwable(g);
    const handler = {};
    if (trap === 'get') {
      handler.get = (t, k, r) => {
        if (key === null || k === key) throw error;
        return Reflect.get(t, k, r);
      };
    } else if (trap !== 'none') {
      handler[trap] = () => { throw error; };
    }
    return new Proxy(base ?? {}, handler);
  }

  function pageObject(g) {
    return g.pick([
      () => new Blob(['abc']), () => new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }),
      () => new ArrayBuffer(8), () => new Uint8Array([1, 2, 3]), () => new Date(0),
      () => g.pick(REGEXPS), () => new Map([[1, 2]]), () => document.body, () => window,
      () => new ImageData(1, 1), () => document.createElement('canvas'),
      () => new AudioBuffer({ length: 8, sampleRate: 8000 }), () => new AbortController().signal,
      () => { const reason = throwable(g); return AbortSignal.abort(reason); },
      () => AbortSignal.abort(), () => Promise.resolve(1), () => new WeakMap(), () => function f() {},
      () => () => { throw throwable(g); }, () => Object.create(null), () => Object.freeze({ a: 1 }),
      () => new LanguageModelToolCall({ callId: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }),
      () => new LanguageModelToolSuccess({ callId: 'c1', name: 'get_weather', result: [{ type: 'text', value: 'sunny' }] }),
      () => new LanguageModelToolError({ callId: 'c1', name: 'get_weather', errorMessage: 'no' }),
    ])();
  }

  /** A signal the page aborts a moment later, with a reason of its own. */
  function laterAbort(g) {
    const controller = new AbortController();
    const reason = throwable(g);
    setTimeout(() => controller.abort(reason), g.int(5));
    return controller.signal;
  }

  function cyclic(g) {
    const value = g.chance(0.5) ? { type: 'object', properties: {} } : [];
    if (Array.isArray(value)) value.push(value);
    else value.properties.self = value;
    return value;
  }

  function odd(g) {
    return g.pick([
      () => throwingGetters(g),
      () => proxy(g),
      () => cyclic(g),
      () => pageObject(g),
      () => ({ toString() { throw throwable(g); } }),
      () => ({ [Symbol.toPrimitive]() { throw throwable(g); } }),
      () => ({ valueOf: () => ({}), toString: () => ({}) }),
      () => ({ toJSON() { throw throwable(g); } }),
      () => ({ toJSON: () => g.pick([undefined, 5, 'x', [1], null, () => 1]) }),
      () => ({ [Symbol.iterator]() { throw throwable(g); } }),
      () => ({ [Symbol.iterator]: () => ({ next: () => 5 }) }),
      () => ({ [Symbol.iterator]: 5 }),
      () => Object.assign([1, 2], { [Symbol.iterator]: undefined }),
      () => { const a = []; a[3] = 'x'; return a; },
      () => g.list(() => anyValue(g, 1), 3),
    ])();
  }

  function anyValue(g, depth = 0) {
    if (depth > 2 || g.chance(0.5)) return primitive(g);
    return odd(g);
  }

  /** A well-shaped value most of the time, anything now and then. */
  function maybe(g, make, p = 0.06) {
    return g.chance(p) ? anyValue(g) : make();
  }

  /** Booby-trap a plain object: a member becomes a throwing getter, or the whole a Proxy. */
  function trap(g, value, p = 0.04) {
    if (value === null || typeof value !== 'object' || !g.chance(p)) return value;
    if (g.chance(0.5)) {
      const keys = Object.keys(value);
      if (keys.length) {
        const key = g.pick(keys);
        const error = throwable(g);
        Object.defineProperty(value, key, { get() { throw error; } });
      }
      return value;
    }
    return proxy(g, value);
  }

  function jsonSchema(g, depth = 0) {
    if (depth > 2 || g.chance(0.3)) {
      return maybe(g, () => g.pick([
        { type: g.pick(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null', 'foo']) },
        { enum: ['a', 1, null] }, { const: { a: 1 } }, true, false, {},
        { type: 'integer', minimum: g.int(10) - 5, maximum: g.int(100) },
        { type: 'string', maxLength: g.int(5), pattern: g.pick(['^a+$', '[', '(?=a)', '\\d']) },
        { type: 'string', format: g.pick(['date', 'uri', 'email', 5]) },
      ]));
    }
    const schema = {};
    for (const key of g.list(() => g.pick([
      'type', 'properties', 'required', 'items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties',
      'minItems', 'maxItems', '$ref', '$defs', 'not', 'prefixItems',
    ]), 4)) {
      schema[key] = {
        type: () => g.pick(['object', 'array', ['string', 'null'], 5, {}]),
        properties: () => Object.fromEntries(g.list(() => [string(g).slice(0, 8), jsonSchema(g, depth + 1)], 3)),
        required: () => g.list(() => string(g).slice(0, 8), 2),
        items: () => jsonSchema(g, depth + 1),
        anyOf: () => g.list(() => jsonSchema(g, depth + 1), 2),
        oneOf: () => g.list(() => jsonSchema(g, depth + 1), 2),
        allOf: () => g.list(() => jsonSchema(g, depth + 1), 2),
        additionalProperties: () => g.pick([false, true, jsonSchema(g, depth + 1)]),
        minItems: () => number(g),
        maxItems: () => number(g),
        $ref: () => g.pick(['#', '#/$defs/a', 'http://example.com/s']),
        $defs: () => ({ a: jsonSchema(g, depth + 1) }),
        not: () => jsonSchema(g, depth + 1),
        prefixItems: () => g.list(() => jsonSchema(g, depth + 1), 2),
      }[key]();
    }
    return trap(g, schema);
  }

  function deep(depth) {
    let value = 1;
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  }

  function inputSchema(g) {
    return maybe(g, () => g.pick([
      () => ({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }),
      () => ({ type: 'object' }),
      () => ({ type: 'object', properties: g.pick([undefined, 5, {}, []]) }),
      () => ({ type: 'object', required: g.pick([undefined, 'x', ['a'], {}]) }),
      () => ({ type: g.pick(['string', undefined, 5]) }),
      () => ({ type: 'object', properties: deep(g.pick([10, 200, 3000])) }),
      () => jsonSchema(g),
      () => cyclic(g),
    ])(), 0.15);
  }

  function toolDeclaration(g, closed) {
    const tool = {
      name: maybe(g, () => g.pick(['get_weather', 'getWeather', 'a', '', string(g).slice(0, 10)])),
      description: maybe(g, () => g.pick(['Get the weather.', 'Get it. Args: {"city": "Paris"}', '', string(g).slice(0, 30)])),
      inputSchema: inputSchema(g),
    };
    if (closed || g.chance(0.05)) {
      tool.execute = maybe(g, () => g.pick([
        async () => g.pick(['sunny', { t: 18 }, [1, 2], 5, null, undefined, deep(300)]),
        () => { throw throwable(g); },
        async () => { throw throwable(g); },
        () => cyclic(g),
        () => document.body,
      ]), 0.05);
      if (g.chance(0.5)) tool.annotations = maybe(g, () => ({ readOnlyHint: g.chance(0.5) }));
    }
    return trap(g, tool);
  }

  function expected(g, outputs) {
    const value = { type: maybe(g, () => (outputs ? g.pick(['text', 'tool-call', 'image']) : g.pick(MESSAGE_TYPES))) };
    if (g.chance(0.3)) value.languages = maybe(g, () => g.list(() => g.pick(['en', 'en-US', 'fr', 'xx-', '', '123', 'en_US']), 2));
    return trap(g, value);
  }

  function createOptions(g) {
    if (g.chance(0.05)) return anyValue(g);
    const closed = g.chance(0.1);
    const options = {};
    const tools = g.chance(0.4) ? g.list(() => toolDeclaration(g, closed), 2) : [];
    if (tools.length || g.chance(0.3)) options.tools = maybe(g, () => tools, 0.05);
    if (tools.length || g.chance(0.3)) {
      options.expectedOutputs = maybe(g, () => [...g.list(() => expected(g, true), 2), ...(tools.length && g.chance(0.9) ? [{ type: 'tool-call' }] : [])], 0.05);
    }
    if (g.chance(0.4)) {
      options.expectedInputs = maybe(g, () => g.list(() => expected(g, false), 3), 0.05);
    }
    if (g.chance(0.3)) options.initialPrompts = maybe(g, () => messageList(g), 0.05);
    if (g.chance(0.2)) options.samplingMode = maybe(g, () => g.pick(MODES));
    if (g.chance(0.1)) options.topK = anyValue(g);
    if (g.chance(0.1)) options.temperature = anyValue(g);
    if (g.chance(0.1)) options.monitor = maybe(g, () => g.pick([() => {}, (m) => m.addEventListener('downloadprogress', () => { throw throwable(g); }), () => { throw throwable(g); }]));
    if (g.chance(0.1)) options.signal = maybe(g, () => g.pick([new AbortController().signal, AbortSignal.abort(throwable(g))]));
    if (closed || g.chance(0.05)) {
      if (g.chance(0.3)) options.maxParallelToolCalls = maybe(g, () => g.pick([1, 2, 4, 0, -1, 1.5, NaN]));
      if (g.chance(0.3)) options.maxToolRounds = maybe(g, () => g.pick([1, 2, 10, 0, 2.5]));
      if (g.chance(0.3)) options.beforeToolCall = maybe(g, () => g.pick([() => undefined, () => ({ deny: 'no' }), () => { throw throwable(g); }, () => 5]));
      if (g.chance(0.3)) options.afterToolCall = maybe(g, () => g.pick([() => undefined, () => ({ context: '<GenerateSimpleToolCalls>' }), () => { throw throwable(g); }, () => 5, () => ({ context: 5 })]));
    }
    return trap(g, options);
  }

  function contentValue(g, type) {
    return maybe(g, () => {
      switch (type) {
        case 'text': return string(g);
        case 'image': return g.pick([() => new ImageData(2, 2), () => new Blob(['not an image']), () => document.createElement('canvas'), () => new Uint8Array(4), () => new ArrayBuffer(0)])();
        case 'audio': return g.pick([() => new AudioBuffer({ length: 8, sampleRate: 8000 }), () => new Blob(['not audio']), () => new ArrayBuffer(4)])();
        case 'tool-call': return g.pick([
          () => new LanguageModelToolCall({ callId: 'c1', name: 'get_weather', arguments: { city: 'Paris' } }),
          () => new LanguageModelToolCall({ callId: string(g).slice(0, 5), name: 'x' }),
          () => new LanguageModelToolCall({ callID: 'c2', name: 'x', arguments: g.pick([[1], new Date(0), cyclic(g), deep(500), { toJSON: () => 5 }, new Blob([])]) }),
        ])();
        default: return g.pick([
          () => new LanguageModelToolSuccess({ callId: 'c1', name: 'get_weather', result: [{ type: 'text', value: 'sunny' }] }),
          () => new LanguageModelToolSuccess({ callId: 'c1', name: 'x', result: g.list(() => ({ type: g.pick(['text', 'object', 'image', 'audio']), value: g.pick([string(g).slice(0, 20), { a: 1 }, 5, cyclic(g), new Blob([]), deep(300), () => 1, Symbol('s')]) }), 3) }),
          () => new LanguageModelToolError({ callId: 'c1', name: 'x', errorMessage: string(g).slice(0, 20) }),
        ])();
      }
    });
  }

  function message(g) {
    const role = maybe(g, () => g.pick(['user', 'user', 'assistant', 'system']), 0.05);
    const value = { role };
    if (g.chance(0.4)) {
      value.content = maybe(g, () => string(g));
    } else {
      value.content = maybe(g, () => g.list(() => {
        const type = maybe(g, () => g.pick(MESSAGE_TYPES), 0.05);
        return trap(g, { type, value: contentValue(g, typeof type === 'string' ? type : 'text') });
      }, 3), 0.05);
    }
    if (g.chance(0.2)) value.prefix = maybe(g, () => g.chance(0.5));
    return trap(g, value);
  }

  function messageList(g) {
    return g.list(() => message(g), 3);
  }

  function promptInput(g) {
    return g.pick([() => string(g), () => string(g), () => messageList(g), () => anyValue(g)])();
  }

  function promptOptions(g) {
    if (g.chance(0.1)) return anyValue(g);
    const options = {};
    if (g.chance(0.3)) {
      options.responseConstraint = maybe(g, () => g.pick([() => jsonSchema(g), () => g.pick(REGEXPS), () => cyclic(g), () => deep(g.pick([50, 500, 5000]))])());
    }
    if (g.chance(0.2)) options.omitResponseConstraintInput = anyValue(g);
    if (g.chance(0.1)) options.signal = maybe(g, () => g.pick([new AbortController().signal, AbortSignal.abort(throwable(g)), laterAbort(g)]));
    return trap(g, options);
  }

  function toolInit(g, kind) {
    if (g.chance(0.1)) return anyValue(g);
    const init = {};
    if (g.chance(0.9)) init[g.chance(0.8) ? 'callId' : 'callID'] = maybe(g, () => string(g).slice(0, 10));
    if (g.chance(0.9)) init.name = maybe(g, () => string(g).slice(0, 10));
    if (kind === 'call' && g.chance(0.7)) init.arguments = maybe(g, () => g.pick([{ a: 1 }, [1], cyclic(g), deep(g.pick([5, 200, 5000]))]));
    if (kind === 'success' && g.chance(0.9)) init.result = maybe(g, () => g.list(() => trap(g, { type: maybe(g, () => g.pick(['text', 'object', 'image', 'audio', 'video'])), value: anyValue(g) }), 3));
    if (kind === 'error' && g.chance(0.9)) init.errorMessage = anyValue(g);
    return trap(g, init);
  }

  // -- checks ---------------------------------------------------------------------------

  /** Why `error` is not an allowed rejection, or null. */
  function badError(error) {
    if (thrown.has(error)) return null;
    if (error instanceof TypeError || error instanceof RangeError) {
      const proto = Object.getPrototypeOf(error);
      if (proto !== TypeError.prototype && proto !== RangeError.prototype) return 'an error subclass';
      return /internal error/.test(error.message) ? 'an internal error' : null;
    }
    if (error instanceof DOMException) {
      if (!SPEC_DOM_NAMES.has(error.name)) return `a DOMException named ${error.name}`;
      if (/internal error/.test(error.message)) return 'an internal error';
      if (error.name === 'OperationError' && !DOCUMENTED_OPERATION_ERRORS.some((re) => re.test(error.message))) {
        return 'an undocumented OperationError';
      }
      if (error.name === 'QuotaExceededError' && !(error.requested > error.quota)) {
        return 'a QuotaExceededError without requested > quota';
      }
      return null;
    }
    return 'not a TypeError, RangeError, spec DOMException or a value the page threw';
  }

  function describe(error) {
    try {
      if (error instanceof Error || error instanceof DOMException) return `${error.name}: ${error.message}`.slice(0, 300);
      return `${typeof error} ${String(error)}`.slice(0, 300);
    } catch {
      return typeof error;
    }
  }

  function withTimeout(promise, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`HANG: ${what} did not settle in ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  async function readAll(stream) {
    const reader = stream.getReader();
    const chunks = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return chunks;
      chunks.push(value);
    }
  }

  function checkResult(op, value) {
    switch (op) {
      case 'prompt': return typeof value === 'string' || Array.isArray(value);
      case 'promptStreaming': return value.every((c) => typeof c === 'string' || (c && c.type === 'tool-call' && c.value instanceof LanguageModelToolCall));
      case 'availability': return ['unavailable', 'downloadable', 'downloading', 'available'].includes(value);
      case 'measureContextUsage': return typeof value === 'number' && value >= 0;
      case 'create': case 'clone': return value instanceof LanguageModel;
      case 'append': return value === undefined;
      default: return true;
    }
  }

  // -- the run ------------------------------------------------------------------------

  async function plainSession() {
    return LanguageModel.create();
  }

  const OPERATIONS = [
    'create', 'create', 'availability', 'prompt', 'prompt', 'prompt', 'promptStreaming', 'append',
    'measureContextUsage', 'clone', 'toolCall', 'toolSuccess', 'toolError', 'destroy', 'badThis',
  ];

  async function runCase(g, sessions) {
    const op = g.pick(OPERATIONS);
    const session = sessions.length ? g.pick(sessions) : null;
    switch (op) {
      case 'create': {
        const model = await LanguageModel.create(createOptions(g));
        sessions.push(model);
        if (sessions.length > 6) sessions.shift().destroy();
        return [op, model];
      }
      case 'availability': return [op, await LanguageModel.availability(createOptions(g))];
      case 'prompt': return [op, await session.prompt(promptInput(g), promptOptions(g))];
      case 'promptStreaming': return [op, await readAll(session.promptStreaming(promptInput(g), promptOptions(g)))];
      case 'append': return [op, await session.append(promptInput(g), g.chance(0.8) ? {} : anyValue(g))];
      case 'measureContextUsage': return [op, await session.measureContextUsage(promptInput(g), promptOptions(g))];
      case 'clone': {
        const clone = await session.clone(g.chance(0.8) ? {} : { signal: g.pick([AbortSignal.abort(throwable(g)), anyValue(g)]) });
        sessions.push(clone);
        if (sessions.length > 6) sessions.shift().destroy();
        return [op, clone];
      }
      case 'toolCall': return [op, new LanguageModelToolCall(toolInit(g, 'call'))];
      case 'toolSuccess': return [op, new LanguageModelToolSuccess(toolInit(g, 'success'))];
      case 'toolError': return [op, new LanguageModelToolError(toolInit(g, 'error'))];
      case 'destroy': {
        session.destroy();
        if (g.chance(0.7)) sessions.splice(sessions.indexOf(session), 1);
        return [op, undefined];
      }
      default: {
        const method = g.pick(['prompt', 'append', 'clone', 'measureContextUsage', 'destroy', 'promptStreaming']);
        return [op, await LanguageModel.prototype[method].call(g.pick([{}, null, session, LanguageModel.prototype]), 'x')];
      }
    }
  }

  /** Errors of another window's runtime are of that window's realm. */
  window.openFrame = async () => {
    const frame = document.createElement('iframe');
    frame.srcdoc = '<!doctype html><body style="height: 100px">frame<script src="/_lm/language-model.js"><\/script>';
    document.body.append(frame);
    await new Promise((resolve) => { frame.onload = resolve; });
  };

  /** After openFrame() and a click in the frame (its first create() needs activation). */
  window.runRealmChecks = async () => {
    const failures = [];
    const counts = {};
    const frame = document.querySelector('iframe');
    const other = frame.contentWindow;
    const cases = [
      ['TypeError', () => other.LanguageModel.create({ expectedInputs: 5 })],
      ['TypeError', () => other.LanguageModel.create({ tools: [{ name: 'a', description: 'b', inputSchema: { type: 'object' } }] })],
      ['NotSupportedError', () => other.LanguageModel.create({ expectedOutputs: [{ type: 'image' }] })],
      ['RangeError', () => other.LanguageModel.availability({ expectedInputs: [{ type: 'text', languages: ['en_US'] }] })],
      ['QuotaExceededError', () => other.LanguageModel.create({ initialPrompts: [{ role: 'system', content: 'a'.repeat(2000) }] })],
      ['InvalidStateError', async () => { const s = await other.LanguageModel.create(); s.destroy(); return s.prompt('x'); }],
      ['TypeError', () => new other.LanguageModelToolCall({})],
    ];
    for (const [name, run] of cases) {
      counts.realmChecks = (counts.realmChecks ?? 0) + 1;
      try {
        await run();
        failures.push({ op: 'realm', error: `${name} expected, it resolved` });
      } catch (error) {
        const ctor = name === 'TypeError' ? other.TypeError : name === 'RangeError' ? other.RangeError : other.DOMException;
        const mine = name === 'TypeError' ? TypeError : name === 'RangeError' ? RangeError : DOMException;
        if (!(error instanceof ctor) || error instanceof mine || (ctor === other.DOMException && error.name !== name)) {
          failures.push({ op: 'realm', error: `${name} expected from the frame's realm: ${describe(error)}` });
        }
      }
    }
    frame.remove();
    return { counts, failures };
  };

  window.runPageFuzz = async (seed, cases) => {
    const started = performance.now();
    const failures = [];
    const counts = { ok: 0, rejected: 0, pageThrown: 0 };
    const messages = {};
    const sessions = [await plainSession()];
    for (let index = 0; index < cases; index++) {
      const g = new Gen((seed ^ Math.imul(index + 1, 0x9E3779B1)) >>> 0);
      if (!sessions.length) sessions.push(await plainSession());
      let op = '?';
      try {
        const [name, value] = await withTimeout(runCase(g, sessions), `case ${index}`);
        op = name;
        counts[`ok ${op}`] = (counts[`ok ${op}`] ?? 0) + 1;
        counts.ok++;
        if (!checkResult(op, value)) failures.push({ index, op, error: `an odd result: ${describe(value)}` });
      } catch (error) {
        counts.rejected++;
        if (error instanceof Error && error.message.startsWith('HANG')) {
          failures.push({ index, op, error: error.message });
          continue;
        }
        if (thrown.has(error)) counts.pageThrown++;
        const name = error instanceof TypeError || error instanceof RangeError || error instanceof DOMException ? error.name : 'page value';
        counts[`error ${name}`] = (counts[`error ${name}`] ?? 0) + 1;
        if (error instanceof TypeError || error instanceof RangeError) {
          const text = error.message.replace(/'[^']*'|"[^"]*"|\d+/g, '_').slice(0, 70);
          messages[text] = (messages[text] ?? 0) + 1;
        }
        const bad = badError(error);
        if (bad) failures.push({ index, op, error: `${bad}: ${describe(error)}` });
      }
      // Every tenth case, and after a failure, a session still answers.
      if (index % 10 === 9) {
        try {
          const live = await withTimeout(plainSession(), 'a plain create()');
          const answer = await withTimeout(live.prompt('still there?'), 'a plain prompt()');
          if (!answer.endsWith('still there?')) failures.push({ index, op: 'check', error: `answered ${answer}` });
          live.destroy();
        } catch (error) {
          failures.push({ index, op: 'check', error: `a plain prompt failed: ${describe(error)}` });
        }
      }
    }
    for (const session of sessions) session.destroy();
    const final = await withTimeout(plainSession(), 'the final create()');
    const answer = await withTimeout(final.prompt('the end'), 'the final prompt()');
    return { seed, cases, counts, messages, failures, answer, ms: Math.round(performance.now() - started) };
  };
})();
