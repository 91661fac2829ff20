// The closed loop: when a session's tools declare `execute`, prompt() and
// promptStreaming() run the model's calls in the page and give it their results,
// round after round, until it answers in text (docs/tools.md).

import { convertPrompt, newCall } from './convert.js';
import { messageOf, runToolCalls } from './tool-scheduler.js';
import { LanguageModelToolError, LanguageModelToolSuccess } from './tools.js';
import { describeAny } from './webidl.js';

/** @typedef {import('./convert.js').LoopOptions} LoopOptions */
/** @typedef {import('./tools.js').LanguageModelToolCall} ToolCall */
/** @typedef {import('./tool-scheduler.js').ToolResponse} ToolResponse */
/** @typedef {import('./protocol.js').MessageWire} MessageWire */

/**
 * One model turn's input: engine data and its conversion state (page exceptions,
 * media), sent once `before` settles.
 * @typedef {{converted: import('./protocol.js').PromptWire, call: {thrown: unknown[], media: any[]},
 *   before?: Promise<unknown>}} Round
 */

/**
 * What the loop needs from its session.
 * @typedef {object} Turns
 * @property {(round: Round) => Promise<{text: string, calls: ToolCall[]}>} prompt one model
 *   turn; its text is streamed as it comes
 * @property {(round: Round) => Promise<void>} commit append a round's input to the
 *   conversation without a model turn
 */

/** The prompt's engine data as a list of messages. */
function messages(converted) {
  return typeof converted === 'string' ? [{ role: 'user', content: converted, prefix: false }] : converted;
}

/**
 * A tool's return value as its response: a string is a text result, a JSON object
 * or array an object result, another JSON value the text of its JSON; undefined
 * an empty result. Anything else (a function, a cycle, a platform object) is an error.
 */
function responseFor(call, value) {
  const { callId, name } = call;
  if (value === undefined) return new LanguageModelToolSuccess({ callId, name, result: [] });
  if (typeof value === 'string') {
    return new LanguageModelToolSuccess({ callId, name, result: [{ type: 'text', value }] });
  }
  const described = describeAny(value);
  if (described.kind === 'platform' || described.json === null) {
    return new LanguageModelToolError({ callId, name, errorMessage: 'The tool returned a value that is not JSON.' });
  }
  const result = described.kind === 'primitive'
    ? [{ type: 'text', value: described.json }]
    : [{ type: 'object', value }];
  return new LanguageModelToolSuccess({ callId, name, result });
}

function errorFor(call, errorMessage) {
  return new LanguageModelToolError({ callId: call.callId, name: call.name, errorMessage });
}

/**
 * Run the scheduler over one turn's calls; the next round's input holds their
 * responses, then the context the post-hooks accepted, in model order.
 * @param {LoopOptions} loop
 * @param {ToolCall[]} calls
 * @param {AbortSignal} signal
 */
async function runRound(loop, calls, signal) {
  const call = newCall();
  /** @type {MessageWire[]} */
  const context = [];
  const { responses, failure } = await runToolCalls(calls, {
    signal,
    maxParallel: loop.maxParallelToolCalls,
    parallel: (toolCall) => {
      const tool = loop.tools.get(toolCall.name);
      return tool ? tool.readOnly : null;
    },
    run: async (toolCall) => {
      const tool = /** @type {import('./convert.js').PageTool} */ (loop.tools.get(toolCall.name));
      try {
        const value = await tool.execute?.call(undefined, toolCall.arguments ?? {},
          { callId: toolCall.callId, signal });
        return responseFor(toolCall, value);
      } catch (error) {
        return errorFor(toolCall, messageOf(error));
      }
    },
    error: errorFor,
    before: async (toolCall) => {
      if (!loop.beforeToolCall) return null;
      const decision = await loop.beforeToolCall.call(undefined, toolCall, { signal });
      if (decision === undefined || decision === null) return null;
      if (typeof decision === 'object' && 'deny' in decision) return String(decision.deny);
      throw new TypeError('beforeToolCall must return undefined or {deny: reason}.');
    },
    after: async (toolCall, response) => {
      if (!loop.afterToolCall) return;
      const decision = await loop.afterToolCall.call(undefined, toolCall, response);
      if (decision === undefined || decision === null) return;
      if (typeof decision !== 'object' || decision.context === undefined) {
        throw new TypeError('afterToolCall must return undefined or {context: prompt}.');
      }
      context.push(...messages(convertPrompt(decision.context, call)));
    },
  });
  const results = convertPrompt([{
    role: 'user', content: responses.map((value) => ({ type: 'tool-response', value })),
  }], call);
  /** @type {Round} */
  const round = { converted: [...messages(results), ...context], call };
  return { round, failure };
}

/**
 * Run the loop from the page's input; resolves to the last turn's text.
 * A turn aborted while the model answers is not kept (as any prompt); once calls
 * have run, their responses are committed before the prompt rejects.
 * @param {LoopOptions} loop
 * @param {Round} first
 * @param {Turns} turns
 * @param {AbortSignal} signal
 * @returns {Promise<string>}
 */
export async function closedLoop(loop, first, turns, signal) {
  let round = first;
  for (let rounds = 0; ; rounds++) {
    const { text, calls } = await turns.prompt(round);
    if (calls.length === 0) return text;
    if (rounds === loop.maxToolRounds) {
      const message = `OperationError: the prompt reached maxToolRounds (${loop.maxToolRounds}).`;
      const call = newCall();
      const results = convertPrompt([{
        role: 'user',
        content: calls.map((toolCall) => ({ type: 'tool-response', value: errorFor(toolCall, message) })),
      }], call);
      await turns.commit({ converted: results, call }).catch(() => {});
      throw new DOMException(
        `The model still asked for tools after ${loop.maxToolRounds} rounds (maxToolRounds).`,
        'OperationError');
    }
    const { round: next, failure } = await runRound(loop, calls, signal);
    if (failure || signal.aborted) {
      await turns.commit(next).catch(() => {});
      throw failure ? failure.error : signal.reason;
    }
    round = next;
  }
}
