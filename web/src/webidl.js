// WebIDL-style argument conversion. Dictionary members are read once each, in
// WebIDL order (inherited dictionaries first, then members sorted by name), so
// getters and Proxy traps run as in a browser and their exceptions propagate.
// Where the spec performs an ECMAScript operation on a page object for the
// engine (Get, IsArray, JSON serialisation), it is done here in spec order and
// its outcome is recorded as plain data (a "probe") for the Python steps.

export function isObject(value) {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

export function toDOMString(value) {
  return `${value}`; // ToString: throws for symbols, like WebIDL.
}

/**
 * @template {string} T
 * @param {unknown} value
 * @param {readonly T[]} values
 * @param {string} what
 * @returns {T}
 */
export function toEnum(value, values, what) {
  const string = /** @type {T} */ (toDOMString(value));
  if (!values.includes(string)) {
    throw new TypeError(`The provided value '${string}' is not a valid enum value of type ${what}.`);
  }
  return string;
}

export function toDouble(value) {
  return +value; // ToNumber: throws for symbols and BigInts.
}

/** An unrestricted double for the JSON wire: Infinity and NaN go as strings. */
export function wireDouble(number) {
  return Number.isFinite(number) ? number : String(number);
}

export function toObject(value, what) {
  if (!isObject(value)) throw new TypeError(`${what} is not an object.`);
  return value;
}

export function dictionary(value, what) {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new TypeError(`${what} is not an object.`);
  return value;
}

export function required(value, member, what) {
  if (value === undefined) {
    throw new TypeError(`Failed to read the '${member}' property from '${what}': Required member is undefined.`);
  }
  return value;
}

/** Whether a value takes the sequence branch of a union (an iterable object). */
export function isIterableObject(value) {
  if (!isObject(value)) return false;
  const method = value[Symbol.iterator];
  return method !== undefined && method !== null;
}

export function sequence(value, convert, what) {
  if (!isObject(value)) throw new TypeError(`${what} is not an iterable object.`);
  const method = value[Symbol.iterator];
  if (typeof method !== 'function') throw new TypeError(`${what} is not an iterable object.`);
  return Array.from({ [Symbol.iterator]: () => method.call(value) }, convert);
}

export function abortSignal(value, what) {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw new TypeError(`${what} is not of type 'AbortSignal'.`);
  return value;
}

/** Run a page operation; on an exception keep it and record its index. */
export function attempt(thrown, operation) {
  try {
    return { value: operation() };
  } catch (error) {
    thrown.push(error);
    return { threw: thrown.length - 1 };
  }
}

/** JSON text of a value, or null when it cannot be serialised (JSON.stringify throws). */
export function jsonOrNull(value) {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
}

function rejectNonJson(key, value) {
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new TypeError(`${typeof value} values are not JSON`);
  }
  return value;
}

/**
 * JSON text of a tool value, or null: unlike JSON.stringify, a function or
 * symbol anywhere inside makes it unserialisable rather than being dropped
 * (tool-call arguments and results must be data, spec step 6.5.7-8).
 */
export function strictJsonOrNull(value) {
  try {
    return JSON.stringify(value, rejectNonJson) ?? null;
  } catch {
    return null;
  }
}

const ECMASCRIPT_TAGS = new Set([
  'Object', 'Array', 'Function', 'Arguments', 'Error', 'Boolean', 'Number', 'String', 'Date',
  'RegExp', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'Promise', 'ArrayBuffer',
  'SharedArrayBuffer', 'DataView', 'Symbol', 'BigInt', 'Math', 'JSON', 'Atomics', 'Reflect',
  'Generator', 'AsyncGenerator', 'GeneratorFunction', 'AsyncFunction', 'AsyncGeneratorFunction',
  'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
  'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
  'Intl.Locale', 'FinalizationRegistry', 'Iterator',
]);

/** A platform object: its class string names a native global interface that is not ECMAScript's. */
export function isPlatformObject(value) {
  if (!isObject(value)) return false;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (ECMASCRIPT_TAGS.has(tag)) return false;
  const constructor = globalThis[tag];
  return typeof constructor === 'function' && constructor.prototype !== undefined &&
    Object.prototype.isPrototypeOf.call(constructor.prototype, value);
}

/** A plain-data description of an `any` value (tool results, tool-call arguments). */
export function describeAny(value) {
  if (typeof value === 'string') return { kind: 'string', string: value };
  if (isPlatformObject(value)) return { kind: 'platform', json: null };
  const kind = Array.isArray(value) ? 'array' : isObject(value) ? 'object' : 'primitive';
  return { kind, json: strictJsonOrNull(value) };
}
