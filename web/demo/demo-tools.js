// The demo's two closed-loop tools (a calculator and the time in a city) and the worked
// example that makes a small model (SmolLM2-135M) call them.

/* global LanguageModelToolCall, LanguageModelToolSuccess */

// The calculator --------------------------------------------------------------
// A small recursive-descent parser: numbers, + - * / and parentheses, nothing else
// (never eval or new Function: the page runs under a strict CSP).
//   expression := term (("+" | "-") term)*
//   term       := factor (("*" | "/") factor)*
//   factor     := ("+" | "-") factor | number | "(" expression ")"

const TOKEN = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([-+*/()]))/y;

/** Split `text` into numbers and operators; a SyntaxError at anything else. */
function tokenize(text) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match) {
      if (/^\s*$/.test(text.slice(start))) break;
      throw new SyntaxError(`Unexpected character at position ${start + 1} in "${text}".`);
    }
    tokens.push(match[1] !== undefined ? { number: Number(match[1]) } : { op: match[2] });
  }
  return tokens;
}

/**
 * Evaluate an arithmetic expression: numbers, + - * / and parentheses.
 * @param {string} text
 * @returns {number} the value, rounded to 12 significant digits (0.1 + 0.2 is 0.3)
 */
export function calculate(text) {
  if (typeof text !== 'string') throw new TypeError('The expression must be a string, e.g. "2 * (3 + 4)".');
  const tokens = tokenize(text);
  let position = 0;
  const peek = () => tokens[position]?.op;
  const fail = (what) => {
    throw new SyntaxError(`${what} in "${text}".`);
  };

  function factor() {
    const token = tokens[position++];
    if (!token) fail('Unexpected end of expression');
    if (token.number !== undefined) return token.number;
    if (token.op === '-') return -factor();
    if (token.op === '+') return factor();
    if (token.op === '(') {
      const value = expression();
      if (tokens[position++]?.op !== ')') fail('Missing ")"');
      return value;
    }
    return fail(`Unexpected "${token.op}"`);
  }

  function term() {
    let value = factor();
    while (peek() === '*' || peek() === '/') {
      const op = tokens[position++].op;
      const right = factor();
      if (op === '/' && right === 0) throw new RangeError('Division by zero.');
      value = op === '*' ? value * right : value / right;
    }
    return value;
  }

  function expression() {
    let value = term();
    while (peek() === '+' || peek() === '-') {
      const op = tokens[position++].op;
      value = op === '+' ? value + term() : value - term();
    }
    return value;
  }

  if (tokens.length === 0) fail('Empty expression');
  const value = expression();
  if (position < tokens.length) fail(`Unexpected "${tokens[position].op ?? tokens[position].number}"`);
  if (!Number.isFinite(value)) throw new RangeError(`The result of "${text}" is not a finite number.`);
  return Number(value.toPrecision(12));
}

// The tools -------------------------------------------------------------------

/**
 * The IANA time zone of a city its name ends ("Tokyo": "Asia/Tokyo"); the page's own
 * zone for "here" or no city.
 * @param {string} [city]
 */
export function timeZoneOf(city) {
  const local = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const wanted = (city ?? '').trim().toLowerCase();
  if (!wanted || wanted === 'here') return local;
  const zones = [local, ...Intl.supportedValuesOf('timeZone')];
  const zone = zones.find((name) => name.split('/').pop().replaceAll('_', ' ').toLowerCase() === wanted);
  if (!zone) throw new RangeError(`No time zone is named after "${city}": try a larger city nearby, or "here".`);
  return zone;
}

/** The date and time now in a city (or here), with the time zone's name. */
export function localTime(city, date = new Date()) {
  const timeZone = timeZoneOf(city);
  return `${date.toLocaleString('en-GB', { dateStyle: 'full', timeStyle: 'short', timeZone })} (${timeZone})`;
}

/** Closed-loop tool declarations (docs/tools.md): each has `execute`. */
export const TOOLS = [
  {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression with + - * / and parentheses',
    inputSchema: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. 2 * (3 + 4)' } },
      required: ['expression'],
    },
    annotations: { readOnlyHint: true },
    // A throw becomes a LanguageModelToolError the model reads (a missing argument too).
    execute: async ({ expression }) => calculate(expression),
  },
  {
    name: 'local_time',
    description: 'Get the current date and time in a city',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, or here for the local time' } },
      required: ['city'],
    },
    annotations: { readOnlyHint: true },
    execute: async ({ city }) => localTime(city),
  },
];

const call = (callId, expression) => ({
  role: 'assistant',
  content: [{
    type: 'tool-call',
    value: new LanguageModelToolCall({ callId, name: 'calculator', arguments: { expression } }),
  }],
});

const response = (callId, value) => ({
  role: 'user',
  content: [{
    type: 'tool-response',
    value: new LanguageModelToolSuccess({ callId, name: 'calculator', result: [{ type: 'text', value }] }),
  }],
});

/**
 * Worked examples for initialPrompts (docs/models.md):
 * a question ending in the assistant's call is what makes SmolLM2-135M call a tool;
 * one whole exchange before it (call, result, a short answer) shows it how to answer
 * from a result, instead of imitating the <tool_response> it was given.
 */
export function toolExamples() {
  return [
    { role: 'user', content: 'What is 12 * 7?' },
    call('example_1', '12 * 7'),
    response('example_1', '84'),
    { role: 'assistant', content: '12 * 7 = 84.' },
    { role: 'user', content: 'What is 9 + 15?' },
    call('example_2', '9 + 15'),
  ];
}
