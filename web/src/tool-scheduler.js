// The closed loop's scheduler: runs one model turn's tool calls in the page and
// gives back their responses in the model's call order (docs/tools.md).
//
// - A run of consecutive parallel-safe calls (annotations.readOnlyHint) is a group:
//   its calls run concurrently, at most `maxParallel` at once, a new one starting
//   as one settles. Any other call is exclusive: it starts once everything before
//   it has settled, and nothing after it starts before it settles.
// - Calls are dispatched in model order; `before` (the pre-hook) runs just before
//   each dispatch, one at a time. `after` (the post-hook) runs in model order once
//   a call and every call before it have settled; what it returns is `accept`ed as
//   context for the model's next turn.
// - Once the signal aborts or the scheduler fails (a post-hook throws, or its
//   context is invalid), no call starts: the rest get error responses, running
//   calls are drained, and the run ends. The first failure is returned.

/** @typedef {import('./tools.js').LanguageModelToolCall} ToolCall */
/** @typedef {import('./tools.js').LanguageModelToolSuccess} ToolSuccess */
/** @typedef {import('./tools.js').LanguageModelToolError} ToolError */
/** @typedef {ToolSuccess | ToolError} ToolResponse */

/**
 * @typedef {object} Schedule
 * @property {(call: ToolCall) => boolean | null} parallel whether a call is
 *   parallel-safe, or null when it names no declared tool
 * @property {(call: ToolCall) => Promise<ToolResponse>} run the call's tool; never rejects
 * @property {(call: ToolCall, message: string) => ToolError} error a call's error response
 * @property {(call: ToolCall) => Promise<string | null>} before the pre-hook: a reason
 *   to deny the call, or null; a rejection gives the call an error response
 * @property {(call: ToolCall, response: ToolResponse) => Promise<void>} after the
 *   post-hook, context included; a rejection fails the scheduler
 * @property {number} maxParallel
 * @property {AbortSignal} signal
 */

/** The errorMessage of a call that was not run because the prompt was aborted. */
export const ABORTED_BEFORE_DISPATCH = 'AbortError: the prompt was aborted before this call was dispatched.';
/** The errorMessage of a call that was not run because the scheduler failed. */
export const FAILED_BEFORE_DISPATCH = 'OperationError: the tool loop failed before this call was dispatched.';

/** The message of a thrown value: its `message` if it has one, else the value as text. */
export function messageOf(error) {
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
}

/**
 * Run `calls` under `schedule`.
 * @param {ToolCall[]} calls in model order
 * @param {Schedule} schedule
 * @returns {Promise<{responses: ToolResponse[], failure: {error: unknown} | null}>}
 */
export async function runToolCalls(calls, schedule) {
  const { signal, maxParallel } = schedule;
  /** @type {{error: unknown} | null} */
  let failure = null;
  const stopped = () => signal.aborted || failure !== null;
  const notRun = (call) => schedule.error(call, failure ? FAILED_BEFORE_DISPATCH : ABORTED_BEFORE_DISPATCH);

  // One settlement per call, in model order: its response, and whether the
  // post-hook sees it (not for calls that never reached dispatch).
  /** @type {((settled: {response: ToolResponse, observed: boolean}) => void)[]} */
  const settle = [];
  const settlements = calls.map(() => new Promise((resolve) => { settle.push(resolve); }));

  const committed = (async () => {
    const responses = [];
    for (const [index, settlement] of settlements.entries()) {
      const { response, observed } = await settlement;
      responses.push(response);
      if (!observed || failure) continue;
      try {
        await schedule.after(calls[index], response);
      } catch (error) {
        failure ??= { error };
      }
    }
    return responses;
  })();

  /** @type {Set<Promise<void>>} */
  const running = new Set();
  const drain = () => Promise.all(running);
  let previousExclusive = false;
  for (const [index, call] of calls.entries()) {
    const parallel = schedule.parallel(call);
    if (parallel === null) {
      settle[index]({ response: schedule.error(call, `No tool named "${call.name}" was declared.`), observed: false });
      continue;
    }
    if (!parallel || previousExclusive) await drain();
    while (running.size >= maxParallel) await Promise.race(running);
    previousExclusive = !parallel;
    if (stopped()) {
      settle[index]({ response: notRun(call), observed: false });
      continue;
    }
    let denial;
    try {
      denial = await schedule.before(call);
    } catch (error) {
      settle[index]({ response: schedule.error(call, `The call was not run: ${messageOf(error)}`), observed: false });
      continue;
    }
    if (stopped()) {
      settle[index]({ response: notRun(call), observed: false });
      continue;
    }
    if (denial !== null) {
      settle[index]({ response: schedule.error(call, `The call was denied: ${denial}`), observed: true });
      continue;
    }
    const body = schedule.run(call).then((response) => {
      running.delete(body);
      settle[index]({ response, observed: true });
    });
    running.add(body);
  }
  await drain();
  const responses = await committed;
  return { responses, failure };
}
