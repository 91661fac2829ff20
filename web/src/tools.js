// LanguageModelToolCall, LanguageModelToolSuccess and LanguageModelToolError.
// Chromium first shipped `callID`, the spec says `callId`: both getters exist and
// either key is accepted in the init dictionaries (`callId` wins if both are set).

import {
  describeAny, dictionary, isPlatformObject, required, sequence, strictJsonOrNull,
  toDOMString, toEnum, toObject,
} from './webidl.js';

const RESULT_TYPES = ['text', 'image', 'audio', 'object'];

// Each class adds a function (from a static block, to reach its private fields)
// that describes one of its instances for the engine, or returns null.
const describers = [];

function readCallId(init, what) {
  const upper = init.callID;
  const lower = init.callId;
  return toDOMString(required(lower !== undefined ? lower : upper, 'callId', what));
}

export class LanguageModelToolCall {
  #callId;
  #name;
  #arguments;

  constructor(init) {
    const what = 'LanguageModelToolCallInit';
    init = dictionary(init, what);
    const args = init.arguments;
    this.#callId = readCallId(init, what);
    this.#name = toDOMString(required(init.name, 'name', what));
    this.#arguments = args === undefined ? null : toObject(args, 'arguments');
  }

  get callId() { return this.#callId; }
  get callID() { return this.#callId; }
  get name() { return this.#name; }
  get arguments() { return this.#arguments; }

  static {
    // The engine's descriptor; arguments are probed as validation step 6.5.7.4 needs.
    describers.push((value) => {
    if (!(#callId in value)) return null;
    const args = value.#arguments;
    return {
      kind: 'tool-call',
      callId: value.#callId,
      name: value.#name,
      arguments: args === null ? null : {
        isArray: Array.isArray(args),
        platform: isPlatformObject(args),
        json: strictJsonOrNull(args),
      },
    };
    });
  }
}

export class LanguageModelToolSuccess {
  #callId;
  #name;
  #result;

  constructor(init) {
    const what = 'LanguageModelToolSuccessInit';
    init = dictionary(init, what);
    this.#callId = readCallId(init, what);
    this.#name = toDOMString(required(init.name, 'name', what));
    const result = sequence(required(init.result, 'result', what), (item) => {
      item = dictionary(item, 'LanguageModelToolResultContent');
      const type = toEnum(required(item.type, 'type', 'LanguageModelToolResultContent'),
        RESULT_TYPES, 'LanguageModelToolResultType');
      const value = required(item.value, 'value', 'LanguageModelToolResultContent');
      return { type, value };
    }, 'result');
    this.#result = Object.freeze(result);
  }

  get callId() { return this.#callId; }
  get callID() { return this.#callId; }
  get name() { return this.#name; }
  get result() { return this.#result; }

  static {
    describers.push((value) => {
      if (!(#callId in value)) return null;
      return {
        kind: 'tool-success',
        callId: value.#callId,
        name: value.#name,
        result: value.#result.map(({ type, value: v }) => ({ type, value: describeAny(v) })),
      };
    });
  }
}

export class LanguageModelToolError {
  #callId;
  #name;
  #errorMessage;

  constructor(init) {
    const what = 'LanguageModelToolErrorInit';
    init = dictionary(init, what);
    this.#callId = readCallId(init, what);
    this.#errorMessage = toDOMString(required(init.errorMessage, 'errorMessage', what));
    this.#name = toDOMString(required(init.name, 'name', what));
  }

  get callId() { return this.#callId; }
  get callID() { return this.#callId; }
  get name() { return this.#name; }
  get errorMessage() { return this.#errorMessage; }

  static {
    describers.push((value) => {
      if (!(#callId in value)) return null;
      return {
        kind: 'tool-error', callId: value.#callId, name: value.#name,
        errorMessage: value.#errorMessage,
      };
    });
  }
}

for (const cls of [LanguageModelToolCall, LanguageModelToolSuccess, LanguageModelToolError]) {
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: cls.name, configurable: true });
}

/**
 * A tool call chunk from the engine, as a page-realm LanguageModelToolCall.
 * @param {import('./protocol.js').ToolCallChunk} chunk
 */
export function toolCallFromWire({ callId, name, arguments: args }) {
  return new LanguageModelToolCall({ callId, name, arguments: args ?? undefined });
}

/** The engine's descriptor of a tool call or response, or null for other values. */
export function describeToolValue(value) {
  for (const describe of describers) {
    const description = describe(value);
    if (description) return description;
  }
  return null;
}
