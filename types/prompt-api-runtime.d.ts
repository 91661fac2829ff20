// TypeScript declarations for the globals the Prompt API runtime installs
// (`LanguageModel`, `LanguageModelToolCall`, `LanguageModelToolSuccess`,
// `LanguageModelToolError`, `QuotaExceededError` where the browser lacks it) and
// for its `promptAPIRuntime` object.
//
// The Prompt API part follows the WebIDL of the Prompt API spec
// (../shared/spec/prompt-api-spec.txt), plus the definitions it uses from the
// Writing Assistance APIs spec (Availability, CreateMonitor, CreateMonitorCallback,
// DestroyableModel) and from WebIDL (QuotaExceededError).
// tests/types/check-idl.mjs checks every IDL name, member, enum value, argument and
// type against this file; tests/types/errors.ts checks what the types reject.
//
// This runtime's extensions are marked "Extension (this runtime)": closed-loop tools
// (docs/tools.md), `callID` beside `callId` (docs/spec-choices.md), and
// `promptAPIRuntime` (README "Use it in a page").
//
// Use: `import 'prompt-api-runtime';` once (or list it in `compilerOptions.types`).

export {};

declare global {
  // ---------------------------------------------------------------------------
  // The prompt and its result

  /**
   * The argument to `prompt()` and the methods like it: messages, or a string
   * (shorthand for `[{role: "user", content: [{type: "text", value}]}]`).
   * IDL: `typedef (sequence<LanguageModelMessage> or DOMString) LanguageModelPrompt`.
   */
  type LanguageModelPrompt = LanguageModelMessage[] | string;

  /**
   * What `prompt()` resolves with. IDL:
   * `typedef (DOMString or sequence<LanguageModelMessageContent>) LanguageModelPromptResult`.
   *
   * Narrower than the IDL (every value is one of the IDL's): the list holds only
   * `text` and `tool-call` contents. The runtime returns a string unless the answer
   * holds a tool call; then the list of contents in order (text between calls kept).
   * Under `toolCallResults: 'always-array'` a session whose `expectedOutputs` lists
   * `tool-call` always gets the list (docs/spec-choices.md).
   * A closed-loop session (tools with `execute`) always gets a string.
   */
  type LanguageModelPromptResult = string | LanguageModelResultContent[];

  /** An element of a `prompt()` result list. */
  type LanguageModelResultContent = LanguageModelTextContent | LanguageModelToolCallContent;

  /** A text content of a `prompt()` result list. */
  interface LanguageModelTextContent extends LanguageModelMessageContent {
    type: 'text';
    value: string;
  }

  /** A tool call of a `prompt()` result list or of a `promptStreaming()` stream. */
  interface LanguageModelToolCallContent extends LanguageModelMessageContent {
    type: 'tool-call';
    value: LanguageModelToolCall;
  }

  /**
   * A `promptStreaming()` chunk: a piece of text, or a whole tool call (the IDL's
   * stream is an untyped `ReadableStream`). A closed-loop session streams text only.
   */
  type LanguageModelStreamChunk = string | LanguageModelToolCallContent;

  // ---------------------------------------------------------------------------
  // LanguageModel

  /** The events a session fires. */
  interface LanguageModelEventMap {
    /** The oldest history was evicted to make room (before the call resolves). */
    contextoverflow: Event;
    /** Extension contexts only: the deprecated name of `contextoverflow`. */
    quotaoverflow: Event;
  }

  // `LanguageModel includes DestroyableModel;`
  interface LanguageModel extends DestroyableModel {}

  /**
   * A language model session (IDL `interface LanguageModel : EventTarget`). Made by
   * `LanguageModel.create()` or `clone()`; there is no constructor.
   */
  class LanguageModel extends EventTarget {
    private constructor();

    /**
     * Create a session. The first `create()` of a downloadable model needs user
     * activation. Rejects with `NotSupportedError` when the options are unavailable,
     * `TypeError` for invalid options (e.g. tools without `tool-call` in
     * `expectedOutputs`, or tools with and without `execute` mixed).
     */
    static create(options?: LanguageModelCreateOptions): Promise<LanguageModel>;
    /** Whether a session with these options can be created. */
    static availability(options?: LanguageModelCreateCoreOptions): Promise<Availability>;
    /**
     * Extension contexts only (the IDL: "Only available in extension and
     * experimental contexts"); absent in web pages, hence optional.
     */
    static params?(): Promise<LanguageModelParams | null>;

    /** Prompt the model; a `system` message here is a `TypeError`. */
    prompt(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<LanguageModelPromptResult>;
    /** Prompt the model and stream the answer (the IDL's `ReadableStream`). */
    promptStreaming(
      input: LanguageModelPrompt, options?: LanguageModelPromptOptions,
    ): ReadableStream<LanguageModelStreamChunk>;
    /** Add messages to the conversation without answering. */
    append(input: LanguageModelPrompt, options?: LanguageModelAppendOptions): Promise<void>;

    /** How much of the context window `input` would use. */
    measureContextUsage(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<number>;
    /** How much of the context window the conversation uses. */
    readonly contextUsage: number;
    /** The context window's size (IDL `unrestricted double`: may be `Infinity`). */
    readonly contextWindow: number;
    /** Handler of `contextoverflow`. */
    oncontextoverflow: ((this: LanguageModel, ev: Event) => any) | null;

    /** Deprecated; extension contexts only: `measureContextUsage()`. */
    measureInputUsage?(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<number>;
    /** Deprecated; extension contexts only: `contextUsage`. */
    readonly inputUsage?: number;
    /** Deprecated; extension contexts only: `contextWindow`. */
    readonly inputQuota?: number;
    /** Deprecated; extension contexts only: handler of `quotaoverflow`. */
    onquotaoverflow?: ((this: LanguageModel, ev: Event) => any) | null;

    /** Deprecated; extension contexts only: the session's top-K. */
    readonly topK?: number;
    /** Deprecated; extension contexts only: the session's temperature. */
    readonly temperature?: number;

    /**
     * The sampling mode given to `create()` (`balanced` by default), or null when
     * `topK`/`temperature` were given (extension contexts). The IDL: experimental
     * contexts only; this runtime has it everywhere.
     */
    readonly samplingMode: LanguageModelSamplingMode | null;

    /** A copy of the session, its conversation included. */
    clone(options?: LanguageModelCloneOptions): Promise<LanguageModel>;

    addEventListener<K extends keyof LanguageModelEventMap>(
      type: K, listener: (this: LanguageModel, ev: LanguageModelEventMap[K]) => any,
      options?: boolean | AddEventListenerOptions,
    ): void;
    addEventListener(
      type: string, listener: EventListenerOrEventListenerObject | null,
      options?: boolean | AddEventListenerOptions,
    ): void;
    removeEventListener<K extends keyof LanguageModelEventMap>(
      type: K, listener: (this: LanguageModel, ev: LanguageModelEventMap[K]) => any,
      options?: boolean | EventListenerOptions,
    ): void;
    removeEventListener(
      type: string, listener: EventListenerOrEventListenerObject | null,
      options?: boolean | EventListenerOptions,
    ): void;
  }

  /**
   * Deprecated; extension contexts only: what `LanguageModel.params()` resolves with.
   * The runtime gives a plain object: there is no `LanguageModelParams` global.
   */
  interface LanguageModelParams {
    readonly defaultTopK: number;
    readonly maxTopK: number;
    readonly defaultTemperature: number;
    readonly maxTemperature: number;
  }

  // ---------------------------------------------------------------------------
  // Options

  /**
   * A tool the model can call (IDL `LanguageModelToolDeclaration`, aligned with
   * WebMCP's `ModelContextTool`). Without `execute` the page answers the model's
   * calls itself (the open loop); with it the runtime does (the closed loop). A
   * session's tools must all have `execute` or none (`TypeError` at `create()`).
   */
  interface LanguageModelToolDeclaration {
    name: string;
    description: string;
    /** A JSON Schema with `type: "object"` for the call's arguments. */
    inputSchema: object;
    /**
     * Extension (this runtime; docs/tools.md): run a call. May return a
     * promise. A string is a `text` result, a JSON object or array an `object`
     * result, a number, boolean or null the `text` of its JSON, `undefined` an empty
     * result; a throw becomes a `LanguageModelToolError` for the model to read.
     */
    execute?: (args: any, info: LanguageModelToolExecuteInfo) => unknown | Promise<unknown>;
    /** Extension (this runtime; WebMCP's `ModelContextToolAnnotations`). */
    annotations?: LanguageModelToolAnnotations;
  }

  /** Extension (this runtime): the second argument of a tool's `execute`. */
  interface LanguageModelToolExecuteInfo {
    /** The call's id (its `LanguageModelToolCall`'s `callId`). */
    callId: string;
    /** Aborts when the prompt is aborted or the session destroyed. */
    signal: AbortSignal;
  }

  /** Extension (this runtime): WebMCP's tool annotations. */
  interface LanguageModelToolAnnotations {
    /** Calls of read-only tools may run beside each other (`maxParallelToolCalls`). */
    readOnlyHint?: boolean;
  }

  /** What `availability()` reads, and the core of `create()`'s options. */
  interface LanguageModelCreateCoreOptions {
    /** Deprecated; extension contexts only (ignored in web pages). */
    topK?: number;
    /** Deprecated; extension contexts only (ignored in web pages). */
    temperature?: number;
    /** Not with `topK` or `temperature` (`TypeError`). Default `balanced`. */
    samplingMode?: LanguageModelSamplingMode;
    expectedInputs?: LanguageModelExpected[];
    /** Must list `{type: 'tool-call'}` when `tools` is not empty. */
    expectedOutputs?: LanguageModelExpected[];
    /** Default `[]`. */
    tools?: LanguageModelToolDeclaration[];
  }

  /** `create()`'s options. */
  interface LanguageModelCreateOptions extends LanguageModelCreateCoreOptions {
    /** Aborting it later destroys the session with the signal's reason. */
    signal?: AbortSignal;
    /** Called once with a `CreateMonitor` that fires `downloadprogress`. */
    monitor?: CreateMonitorCallback;
    /** Default `[]`. A `system` message may only come first. */
    initialPrompts?: LanguageModelMessage[];

    /**
     * Extension (this runtime; closed loop): how many calls to `readOnlyHint` tools
     * run at once. A positive integer (`TypeError` otherwise, `RangeError` below 1);
     * default 4.
     */
    maxParallelToolCalls?: number;
    /**
     * Extension (this runtime; closed loop): the most tool rounds one prompt runs
     * (default 10); past it the prompt rejects with `OperationError`.
     */
    maxToolRounds?: number;
    /**
     * Extension (this runtime; closed loop): runs before each call is dispatched, in
     * call order. `{deny: reason}` gives the call an error result without running it.
     */
    beforeToolCall?: (
      call: LanguageModelToolCall, info: { signal: AbortSignal },
    ) => void | null | { deny: string } | Promise<void | null | { deny: string }>;
    /**
     * Extension (this runtime; closed loop): runs in call order once a call and every
     * call before it have settled. `{context: prompt}` goes to the model after the
     * round's results.
     */
    afterToolCall?: (
      call: LanguageModelToolCall, response: LanguageModelToolResponse,
    ) => void | null | { context: LanguageModelPrompt } | Promise<void | null | { context: LanguageModelPrompt }>;
  }

  /** Options of `prompt()`, `promptStreaming()` and `measureContextUsage()`. */
  interface LanguageModelPromptOptions {
    /**
     * A JSON Schema object or a `RegExp` the answer must match
     * (docs/constrained-decoding.md); unsupported keywords are `NotSupportedError`.
     */
    responseConstraint?: object;
    /** Leave the schema out of the prompt. Default false. */
    omitResponseConstraintInput?: boolean;
    signal?: AbortSignal;
  }

  /** `append()`'s options. */
  interface LanguageModelAppendOptions {
    signal?: AbortSignal;
  }

  /** `clone()`'s options. */
  interface LanguageModelCloneOptions {
    signal?: AbortSignal;
  }

  /** An expected input or output type, with its languages (BCP 47 tags). */
  interface LanguageModelExpected {
    type: LanguageModelMessageType;
    languages?: string[];
  }

  // ---------------------------------------------------------------------------
  // Messages

  /** One message of a prompt. */
  interface LanguageModelMessage {
    role: LanguageModelMessageRole;
    /** A string is shorthand for `[{type: "text", value}]`. */
    content: string | LanguageModelMessageContent[];
    /** An assistant message the answer continues. Default false. */
    prefix?: boolean;
  }

  /** One content of a message. */
  interface LanguageModelMessageContent {
    type: LanguageModelMessageType;
    value: LanguageModelMessageValue;
  }

  type LanguageModelSamplingMode =
    | 'most-predictable'
    | 'predictable'
    | 'slightly-predictable'
    | 'balanced'
    | 'slightly-creative'
    | 'creative'
    | 'most-creative';

  type LanguageModelMessageRole = 'system' | 'user' | 'assistant';

  type LanguageModelMessageType = 'text' | 'image' | 'audio' | 'tool-call' | 'tool-response';

  /** A content's value: an image, audio, text, a tool call or a tool response. */
  type LanguageModelMessageValue =
    | ImageBitmapSource
    | AudioBuffer
    | BufferSource
    | string
    | LanguageModelToolCall
    | LanguageModelToolResponse;

  // ---------------------------------------------------------------------------
  // Tool calls and responses

  type LanguageModelToolResultType = 'text' | 'image' | 'audio' | 'object';

  /** One part of a tool's result. */
  interface LanguageModelToolResultContent {
    type: LanguageModelToolResultType;
    /** This runtime: a `text` value may be any JSON-serialisable value. */
    value: any;
  }

  /** A tool call the model asked for. */
  class LanguageModelToolCall {
    constructor(init: LanguageModelToolCallInit | LanguageModelToolCallInitCallID);
    readonly callId: string;
    /** Extension (this runtime): Chromium's first spelling of `callId`. */
    readonly callID: string;
    readonly name: string;
    /** The call's arguments (a JSON object from the model), or null. */
    readonly arguments: Record<string, any> | null;
  }

  interface LanguageModelToolCallInit {
    callId: string;
    name: string;
    arguments?: object;
  }

  /**
   * Extension (this runtime): an init with Chromium's first spelling `callID`
   * (`callId` wins if both are given).
   */
  interface LanguageModelToolCallInitCallID extends Omit<LanguageModelToolCallInit, 'callId'> {
    callID: string;
    callId?: string;
  }

  /** A tool's successful response, for a `tool-response` content. */
  class LanguageModelToolSuccess {
    constructor(init: LanguageModelToolSuccessInit | LanguageModelToolSuccessInitCallID);
    readonly callId: string;
    /** Extension (this runtime): Chromium's first spelling of `callId`. */
    readonly callID: string;
    readonly name: string;
    readonly result: ReadonlyArray<LanguageModelToolResultContent>;
  }

  interface LanguageModelToolSuccessInit {
    callId: string;
    name: string;
    result: LanguageModelToolResultContent[];
  }

  /** Extension (this runtime): `LanguageModelToolSuccessInit` with `callID`. */
  interface LanguageModelToolSuccessInitCallID extends Omit<LanguageModelToolSuccessInit, 'callId'> {
    callID: string;
    callId?: string;
  }

  /** A tool's failure, for a `tool-response` content. */
  class LanguageModelToolError {
    constructor(init: LanguageModelToolErrorInit | LanguageModelToolErrorInitCallID);
    readonly callId: string;
    /** Extension (this runtime): Chromium's first spelling of `callId`. */
    readonly callID: string;
    readonly name: string;
    readonly errorMessage: string;
  }

  interface LanguageModelToolErrorInit {
    callId: string;
    name: string;
    errorMessage: string;
  }

  /** Extension (this runtime): `LanguageModelToolErrorInit` with `callID`. */
  interface LanguageModelToolErrorInitCallID extends Omit<LanguageModelToolErrorInit, 'callId'> {
    callID: string;
    callId?: string;
  }

  /** A tool's response: success or error. */
  type LanguageModelToolResponse = LanguageModelToolSuccess | LanguageModelToolError;

  // ---------------------------------------------------------------------------
  // From the Writing Assistance APIs spec

  /** Whether a model (with given options) can be used. */
  type Availability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

  interface CreateMonitorEventMap {
    /** `loaded` of `total` 1 (rounded to 1/65536). */
    downloadprogress: ProgressEvent;
  }

  /**
   * What a `monitor` callback receives; it fires `downloadprogress`. The runtime
   * defines no `CreateMonitor` global.
   */
  interface CreateMonitor extends EventTarget {
    ondownloadprogress: ((this: CreateMonitor, ev: ProgressEvent) => any) | null;
    addEventListener<K extends keyof CreateMonitorEventMap>(
      type: K, listener: (this: CreateMonitor, ev: CreateMonitorEventMap[K]) => any,
      options?: boolean | AddEventListenerOptions,
    ): void;
    addEventListener(
      type: string, listener: EventListenerOrEventListenerObject | null,
      options?: boolean | AddEventListenerOptions,
    ): void;
    removeEventListener<K extends keyof CreateMonitorEventMap>(
      type: K, listener: (this: CreateMonitor, ev: CreateMonitorEventMap[K]) => any,
      options?: boolean | EventListenerOptions,
    ): void;
    removeEventListener(
      type: string, listener: EventListenerOrEventListenerObject | null,
      options?: boolean | EventListenerOptions,
    ): void;
  }

  /** `create()`'s `monitor` option. */
  type CreateMonitorCallback = (monitor: CreateMonitor) => void;

  /** The mixin that gives `LanguageModel` its `destroy()`. */
  interface DestroyableModel {
    /** Abort every pending call (`InvalidStateError`) and free the session. */
    destroy(): void;
  }

  // ---------------------------------------------------------------------------
  // From WebIDL: QuotaExceededError (installed by the runtime where the browser
  // lacks it). The input that cannot fit beside the initial prompts rejects with it.

  interface QuotaExceededErrorOptions {
    quota?: number;
    requested?: number;
  }

  interface QuotaExceededError extends DOMException {
    readonly quota: number | null;
    readonly requested: number | null;
  }

  var QuotaExceededError: {
    prototype: QuotaExceededError;
    new(message?: string, options?: QuotaExceededErrorOptions): QuotaExceededError;
  };

  // ---------------------------------------------------------------------------
  // Extension (this runtime): promptAPIRuntime (README "Use it in a page")

  /** The ONNX file a model folder's dtype picks (`onnx/model{suffix}.onnx`). */
  type PromptAPIRuntimeDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';

  /**
   * The runtime's configuration: the script tag's `data-` attributes, or
   * `promptAPIRuntime.configure()` before the first call into the runtime. In the
   * browser extension the engine runs the extension's settings; only
   * `toolCallResults` is the page's.
   */
  interface PromptAPIRuntimeConfig {
    /** `'echo'` (the default), or the base URL of a model folder (relative to the page). */
    model?: string;
    /** Default `q8` on wasm, `fp32` on WebGPU. */
    dtype?: PromptAPIRuntimeDtype;
    /** Default `wasm`; `webgpu` needs an adapter (`create()` rejects otherwise). */
    device?: 'wasm' | 'webgpu';
    /** ONNX Runtime wasm threads (default: every core when cross-origin isolated, else 1). */
    threads?: number | `${number}`;
    /** A cap on the model's context window (default: its `max_position_embeddings`). */
    contextWindow?: number | `${number}`;
    /**
     * When `prompt()` returns a list: only when the answer holds a tool call
     * (`'when-called'`, the default), or whenever `expectedOutputs` lists
     * `tool-call` (`'always-array'`, Chromium's newer WPT).
     */
    toolCallResults?: 'when-called' | 'always-array';
    /** How often cached model files are revalidated with the server (default `'daily'`). */
    cacheRevalidation?: 'daily' | 'always' | 'never';
    /**
     * Seconds a model download may go without receiving a byte before `create()`
     * rejects with a `NetworkError` (default 30).
     */
    downloadTimeout?: number | `${number}`;
    /**
     * Where the runtime's files (worker.mjs, pyodide/, ort/, …) are served from,
     * relative to the page; default: beside the script. Before the runtime starts.
     */
    assetsURL?: string;
  }

  /** `promptAPIRuntime.benchmark()`'s options. */
  interface PromptAPIRuntimeBenchmarkOptions {
    /** Default 512. */
    promptTokens?: number;
    /** Default 128. */
    decodeTokens?: number;
  }

  /** The configured real model's prefill and decode speed. */
  interface PromptAPIRuntimeBenchmarkResult {
    promptTokens: number;
    decodeTokens: number;
    prefillMs: number;
    decodeMs: number;
    prefillTokensPerSecond: number;
    decodeTokensPerSecond: number;
    /** The share of a decode step spent outside the model's run (bridge, glue, sampling). */
    outsideRunShare: number;
  }

  /** One cached model file. */
  interface PromptAPIRuntimeCacheEntry {
    url: string;
    bytes: number;
  }

  /** The page's model cache (Cache API, in the page's origin). */
  interface PromptAPIRuntimeCache {
    /** The cached model files. */
    list(): Promise<PromptAPIRuntimeCacheEntry[]>;
    /** Drop every cached model file (the next `create()` downloads again). */
    clear(): Promise<void>;
  }

  /** The `promptAPIRuntime` global. */
  interface PromptAPIRuntime {
    /**
     * Merge `config` into the configuration. `InvalidStateError` after the first
     * call into the runtime (and for `assetsURL` once it has started); `TypeError`
     * for an unknown `toolCallResults`.
     */
    configure(config: PromptAPIRuntimeConfig): void;
    /** Start booting now (the default at script load unless `data-boot="lazy"`). */
    start(): void;
    /** Measure the configured real model (`NotSupportedError` for the echo model). */
    benchmark(options?: PromptAPIRuntimeBenchmarkOptions): Promise<PromptAPIRuntimeBenchmarkResult>;
    /**
     * What the engine holds now: live sessions, and the model's KV caches, their
     * tensors and grammar matchers (0 before a real model loads). For leak checks.
     */
    stats(): Promise<{ sessions: number; caches: number; tensors: number; matchers: number }>;
    /**
     * The page's model cache. Absent in the browser extension (its options page
     * manages the shared cache), hence optional.
     */
    readonly cache?: PromptAPIRuntimeCache;
  }

  /** Extension (this runtime): configuration, early start, speed and cache. */
  var promptAPIRuntime: PromptAPIRuntime;
}
