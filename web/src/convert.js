// WebIDL conversion of the Prompt API's dictionaries and unions into the plain
// data the engine reads (see py_runtime/options.py and py_runtime/prompt.py).

import { EXTENSION_CONTEXT } from './extension.js';
import { MESSAGE_TYPES, ROLES, SAMPLING_MODES } from './protocol.js';
import { describeToolValue } from './tools.js';
import {
  abortSignal, attempt, dictionary, isIterableObject, isObject, jsonOrNull, required, sequence,
  toDOMString, toDouble, toEnum, toObject, wireDouble,
} from './webidl.js';


function languageTag(value) {
  const tag = toDOMString(value);
  try {
    return { tag, canonical: Intl.getCanonicalLocales(tag)[0] };
  } catch {
    return { tag, canonical: null }; // The engine throws the RangeError at the spec's step.
  }
}

function expected(value) {
  const what = 'LanguageModelExpected';
  const dict = dictionary(value, what);
  const languages = dict.languages;
  const type = toEnum(required(dict.type, 'type', what), MESSAGE_TYPES, 'LanguageModelMessageType');
  return {
    type,
    ...(languages !== undefined && { languages: sequence(languages, languageTag, 'languages') }),
  };
}

/**
 * "validate and canonicalize language model options" step 5.3.6-12 performs
 * `? Get` / `? IsArray` / `? serialize` on the schema; do them in that order,
 * stopping where the engine's steps would stop.
 */
function probeSchema(schema, call) {
  const probe = {};
  const type = attempt(call.thrown, () => schema.type);
  probe.type = 'threw' in type ? type : type.value === 'object' ? 'object' : 'other';
  if (probe.type !== 'object') return probe;
  const properties = attempt(call.thrown, () => schema.properties);
  probe.properties = 'threw' in properties ? properties
    : properties.value === undefined ? 'undefined' : isObject(properties.value) ? 'object' : 'other';
  if (typeof probe.properties !== 'string' || probe.properties === 'other') return probe;
  const requiredList = attempt(call.thrown, () => {
    const value = schema.required;
    return value === undefined ? 'undefined' : Array.isArray(value) ? 'array' : 'other';
  });
  probe.required = 'threw' in requiredList ? requiredList : requiredList.value;
  if (typeof probe.required !== 'string' || probe.required === 'other') return probe;
  const json = attempt(call.thrown, () => JSON.stringify(schema) ?? null);
  probe.json = 'threw' in json ? json : json.value;
  return probe;
}

/**
 * A LanguageModelToolDeclaration, members in IDL order. `annotations` and
 * `execute` (ModelContextTool's, for the closed loop) stay in the page.
 * @returns {{wire: import('./protocol.js').ToolDeclarationWire, tool: PageTool}}
 */
function toolDeclaration(value, call) {
  const what = 'LanguageModelToolDeclaration';
  const dict = dictionary(value, what);
  const annotations = dictionary(dict.annotations, 'ModelContextToolAnnotations');
  const readOnly = !!annotations.readOnlyHint;
  const description = toDOMString(required(dict.description, 'description', what));
  const execute = dict.execute;
  if (execute !== undefined && typeof execute !== 'function') {
    throw new TypeError("The 'execute' member of a tool declaration is not a function.");
  }
  const inputSchema = toObject(required(dict.inputSchema, 'inputSchema', what), 'inputSchema');
  const name = toDOMString(required(dict.name, 'name', what));
  return {
    wire: {
      name, description,
      inputSchema: /** @type {import('./protocol.js').SchemaProbe} */ (probeSchema(inputSchema, call)),
    },
    tool: { name, execute, readOnly },
  };
}

/**
 * A declared tool's page-side members.
 * @typedef {{name: string, execute: Function | undefined, readOnly: boolean}} PageTool
 */

/**
 * The closed loop's settings, fixed at create() and kept by clone().
 * @typedef {object} LoopOptions
 * @property {Map<string, PageTool>} tools
 * @property {number} maxParallelToolCalls
 * @property {number} maxToolRounds
 * @property {Function | undefined} beforeToolCall
 * @property {Function | undefined} afterToolCall
 */

/** The default cap on concurrent parallel-safe calls (docs/tools.md). */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 4;
/** The default number of tool rounds one prompt may run. */
export const DEFAULT_MAX_TOOL_ROUNDS = 10;

/** A positive integer option: TypeError for a non-integer, RangeError below 1. */
function positiveInteger(value, member, fallback) {
  if (value === undefined) return fallback;
  const number = toDouble(value);
  if (!Number.isInteger(number)) throw new TypeError(`${member} must be a positive integer, not ${String(number)}.`);
  if (number < 1) throw new RangeError(`${member} must be at least 1, not ${number}.`);
  return number;
}

function callback(value, member) {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`The '${member}' member is not a function.`);
  }
  return value;
}

/**
 * The state of one call's conversion: page exceptions the engine may rethrow
 * (by index), and media values to decode before the engine sees them.
 */
export function newCall() {
  return { thrown: [], media: [] };
}

/**
 * LanguageModelCreateCoreOptions; returns [engine data, the dictionary, the
 * tools' page-side members].
 * @returns {[import('./protocol.js').CreateOptionsWire, any, PageTool[]]}
 */
export function convertCoreOptions(value, call) {
  const dict = dictionary(value, 'LanguageModelCreateCoreOptions');
  /** @type {import('./protocol.js').CreateOptionsWire} */
  const options = {};
  const expectedInputs = dict.expectedInputs;
  if (expectedInputs !== undefined) options.expectedInputs = sequence(expectedInputs, expected, 'expectedInputs');
  const expectedOutputs = dict.expectedOutputs;
  if (expectedOutputs !== undefined) options.expectedOutputs = sequence(expectedOutputs, expected, 'expectedOutputs');
  const samplingMode = dict.samplingMode;
  if (samplingMode !== undefined) options.samplingMode = toEnum(samplingMode, SAMPLING_MODES, 'LanguageModelSamplingMode');
  // topK and temperature exist only in extension contexts; a window ignores them.
  const temperature = EXTENSION_CONTEXT ? dict.temperature : undefined;
  if (temperature !== undefined) options.temperature = wireDouble(toDouble(temperature));
  const tools = dict.tools;
  const declared = tools === undefined ? [] : sequence(tools, (t) => toolDeclaration(t, call), 'tools');
  options.tools = declared.map(({ wire }) => wire);
  const topK = EXTENSION_CONTEXT ? dict.topK : undefined;
  if (topK !== undefined) options.topK = wireDouble(toDouble(topK));
  return [options, dict, declared.map(({ tool }) => tool)];
}

/**
 * LanguageModelCreateOptions: the core options, then (IDL order) our closed-loop
 * members afterToolCall and beforeToolCall, initialPrompts, maxParallelToolCalls,
 * maxToolRounds, monitor, signal. `loop` is null unless the tools declare execute.
 * @returns {{options: import('./protocol.js').CreateOptionsWire, monitor: any,
 *   signal: AbortSignal | undefined, loop: LoopOptions | null}}
 */
export function convertCreateOptions(value, call) {
  const [options, dict, tools] = convertCoreOptions(value, call);
  const afterToolCall = callback(dict.afterToolCall, 'afterToolCall');
  const beforeToolCall = callback(dict.beforeToolCall, 'beforeToolCall');
  const initialPrompts = dict.initialPrompts;
  options.initialPrompts = initialPrompts === undefined ? []
    : sequence(initialPrompts, (m) => message(m, call), 'initialPrompts');
  const maxParallelToolCalls = positiveInteger(
    dict.maxParallelToolCalls, 'maxParallelToolCalls', DEFAULT_MAX_PARALLEL_TOOL_CALLS);
  const maxToolRounds = positiveInteger(dict.maxToolRounds, 'maxToolRounds', DEFAULT_MAX_TOOL_ROUNDS);
  const monitor = callback(dict.monitor, 'monitor');
  const signal = abortSignal(dict.signal, 'signal');
  const executing = tools.filter((tool) => tool.execute !== undefined).length;
  if (executing > 0 && executing < tools.length) {
    throw new TypeError('Either every tool declares execute (the closed loop) or none does (the open loop).');
  }
  if (executing === 0) return { options, monitor, signal, loop: null };
  // The runtime gives the model its tools' responses itself.
  const inputs = options.expectedInputs ?? [];
  if (!inputs.some((e) => e.type === 'tool-response')) {
    options.expectedInputs = [...inputs, { type: 'tool-response' }];
  }
  const loop = {
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    maxParallelToolCalls, maxToolRounds, beforeToolCall, afterToolCall,
  };
  return { options, monitor, signal, loop };
}

/** A LanguageModelMessageValue union member, described for the engine. */
function messageValue(value) {
  if (isObject(value)) {
    const tool = describeToolValue(value);
    if (tool) return tool;
    if (value instanceof Blob) return { kind: 'blob' };
    if (IMAGE_SOURCES.some((name) => globalThis[name] && value instanceof globalThis[name])) {
      return { kind: 'image-source' };
    }
    if (globalThis.AudioBuffer && value instanceof AudioBuffer) return { kind: 'audio-buffer' };
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return { kind: 'buffer-source' };
  }
  return { kind: 'string', string: toDOMString(value) };
}

const MEDIA_KINDS = ['blob', 'image-source', 'audio-buffer', 'buffer-source'];

const IMAGE_SOURCES = [
  'HTMLImageElement', 'SVGImageElement', 'HTMLVideoElement', 'HTMLCanvasElement', 'ImageBitmap',
  'ImageData', 'OffscreenCanvas', 'VideoFrame',
];

function messageContent(value, call) {
  const what = 'LanguageModelMessageContent';
  const dict = dictionary(value, what);
  const type = toEnum(required(dict.type, 'type', what), MESSAGE_TYPES, 'LanguageModelMessageType');
  const raw = required(dict.value, 'value', what);
  const described = messageValue(raw);
  if ((type === 'image' || type === 'audio') && MEDIA_KINDS.includes(described.kind)) {
    call.media.push({ type, value: raw, described });
  }
  return { type, value: described };
}

function message(value, call) {
  const what = 'LanguageModelMessage';
  const dict = dictionary(value, what);
  const content = required(dict.content, 'content', what);
  const converted = isIterableObject(content)
    ? sequence(content, (c) => messageContent(c, call), 'content')
    : toDOMString(content);
  const prefix = !!dict.prefix;
  const role = toEnum(required(dict.role, 'role', what), ROLES, 'LanguageModelMessageRole');
  return { role, content: converted, prefix };
}

/**
 * LanguageModelPrompt: (sequence<LanguageModelMessage> or DOMString).
 * @returns {import('./protocol.js').PromptWire}
 */
export function convertPrompt(value, call) {
  return isIterableObject(value) ? sequence(value, (m) => message(m, call), 'input') : toDOMString(value);
}

/**
 * The response constraint as the engine's prompt builder reads it.
 * @returns {import('./protocol.js').Constraint}
 */
function responseConstraint(value) {
  const constraint = toObject(value, 'responseConstraint');
  if (constraint instanceof RegExp) {
    return { kind: 'regexp', source: constraint.source, flags: constraint.flags };
  }
  const json = jsonOrNull(constraint);
  if (json === null) {
    throw new DOMException('The response constraint cannot be serialized.', 'NotSupportedError');
  }
  return { kind: 'json-schema', json };
}

/** LanguageModelPromptOptions. */
export function convertPromptOptions(value) {
  const dict = dictionary(value, 'LanguageModelPromptOptions');
  const omit = !!dict.omitResponseConstraintInput;
  const constraint = dict.responseConstraint;
  const signal = abortSignal(dict.signal, 'signal');
  return {
    constraint: constraint === undefined ? null : responseConstraint(constraint),
    omit,
    signal,
  };
}

/** LanguageModelAppendOptions and LanguageModelCloneOptions. */
export function convertSignalOptions(value, what) {
  return { signal: abortSignal(dictionary(value, what).signal, 'signal') };
}
