// META: title=Closed-loop tools: abort, destroy and failure quiescence
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: script=../resources/gated-tools.js
// META: timeout=long

'use strict';

// After an abort no call is dispatched; calls not yet dispatched get error results;
// running calls drain and their results (and accepted context) are committed, so
// the next prompt's turn sees them; the prompt rejects with the signal's reason.

const kAborted = 'AbortError: the prompt was aborted before this call was dispatched.';
const kFailed = 'OperationError: the tool loop failed before this call was dispatched.';

promise_test(async (t) => {
  await ensureLanguageModel();
  const gates = new Gates();
  const controller = new AbortController();
  const session = await createLanguageModel(closedLoop([
    gates.tool('x0', '0'), gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
  ]));
  const answer = session.prompt(kGo, {signal: controller.signal});
  await until(() => gates.started.length === 1);
  controller.abort();
  gates.release('0');
  await promise_rejects_dom(t, 'AbortError', answer);
  assert_array_equals(gates.started, ['0'], 'the parallel group after the abort never starts');
  const next = await session.prompt('wake');
  assert_equals(next, echoedSuccess('call_1', 'x0', ['done-0']) + echoedError('call_2', 'p1', kAborted) +
                echoedError('call_3', 'p2', kAborted) + 'wake');
}, 'No call of a parallel group starts once the signal has aborted');

promise_test(async (t) => {
  const gates = new Gates();
  const controller = new AbortController();
  const pre = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
  ], {
    beforeToolCall: (call) => {
      pre.push(call.callId);
      if (call.callId === 'call_1') controller.abort();
    },
  }));
  await promise_rejects_dom(t, 'AbortError', session.prompt(kGo, {signal: controller.signal}));
  assert_array_equals(gates.started, []);
  assert_array_equals(pre, ['call_1'], 'no later pre-hook runs');
  assert_equals(await session.prompt('wake'),
                echoedError('call_1', 'p1', kAborted) + echoedError('call_2', 'p2', kAborted) + 'wake');
}, 'An abort during an ordered pre-hook skips that dispatch and every later one');

promise_test(async (t) => {
  const gates = new Gates();
  const controller = new AbortController();
  const tools = [1, 2, 3, 4].map((n) => gates.tool(`p${n}`, String(n), {readOnly: true}));
  const session = await createLanguageModel(closedLoop(tools, {
    maxParallelToolCalls: 2, afterToolCall: (call) => ({context: `ctx-${call.callId}`}),
  }));
  const answer = session.prompt(kGo, {signal: controller.signal});
  await until(() => gates.started.length === 2);
  controller.abort();
  gates.release('1');
  gates.release('2');
  await promise_rejects_dom(t, 'AbortError', answer);
  assert_array_equals(gates.started, ['1', '2'], 'no slot is refilled after the abort');
  assert_equals(await session.prompt('wake'),
                echoedSuccess('call_1', 'p1', ['done-1']) + echoedSuccess('call_2', 'p2', ['done-2']) +
                echoedError('call_3', 'p3', kAborted) + echoedError('call_4', 'p4', kAborted) +
                'ctx-call_1ctx-call_2wake', 'results in order, then the accepted context, for the next turn');
}, 'After an abort the pool stops, started results are committed and accepted context is kept');

promise_test(async (t) => {
  const gates = new Gates();
  const controller = new AbortController();
  const exclusive = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
    loggingTool('x', '3', exclusive),
  ], {maxParallelToolCalls: 2}));
  const answer = session.prompt(kGo, {signal: controller.signal});
  await until(() => gates.started.length === 2);
  controller.abort();
  gates.release('1');
  gates.release('2');
  await promise_rejects_dom(t, 'AbortError', answer);
  assert_array_equals(exclusive, []);
  assert_true((await session.prompt('wake')).includes(echoedError('call_3', 'x', kAborted)));
}, 'No exclusive barrier runs after an aborted parallel group');

promise_test(async (t) => {
  const gates = new Gates();
  const controller = new AbortController();
  const reason = new Error('my reason');
  let toolSignal;
  const declaration = gates.tool('p', '1');
  const execute = declaration.execute;
  declaration.execute = (args, info) => { toolSignal = info.signal; return execute(args); };
  const session = await createLanguageModel(closedLoop([declaration]));
  const answer = session.prompt(kGo, {signal: controller.signal});
  await until(() => gates.started.length === 1);
  controller.abort(reason);
  assert_true(toolSignal.aborted, "the tool's signal aborts with the prompt's");
  let settled = false;
  answer.catch(() => { settled = true; });
  await settleFor();
  assert_false(settled, 'the prompt waits for its running call to drain');
  gates.release('1');
  await promise_rejects_exactly(t, reason, answer);
  assert_equals(await session.prompt('wake'), echoedSuccess('call_1', 'p', ['done-1']) + 'wake');
}, "The prompt rejects with the signal's reason once running calls drain; the session stays usable");

promise_test(async (t) => {
  const controller = new AbortController();
  controller.abort();
  let ran = false;
  const session = await createLanguageModel(closedLoop([loggingTool('t', '1', [])]));
  const tools = closedLoop([{...loggingTool('t', '1', []), execute: () => { ran = true; }}]);
  const other = await createLanguageModel(tools);
  await promise_rejects_dom(t, 'AbortError', other.prompt(kGo, {signal: controller.signal}));
  assert_throws_dom('AbortError', () => other.promptStreaming(kGo, {signal: controller.signal}));
  assert_false(ran);
  assert_equals(typeof await session.prompt(kGo), 'string');
}, 'An already-aborted signal runs nothing');

promise_test(async (t) => {
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([gates.tool('p', '1')]));
  const reader = session.promptStreaming(kGo).getReader();
  await reader.read();
  await until(() => gates.started.length === 1);
  await reader.cancel();
  gates.release('1');
  await settleFor();
  assert_equals(await session.prompt('wake'), echoedSuccess('call_1', 'p', ['done-1']) + 'wake');
}, "Cancelling promptStreaming()'s stream aborts the loop the same way");

promise_test(async (t) => {
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([gates.tool('p', '1'), gates.tool('q', '2')]));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 1);
  session.destroy();
  gates.release('1');
  await promise_rejects_dom(t, 'InvalidStateError', answer);
  assert_array_equals(gates.started, ['1'], 'nothing is dispatched after destroy()');
}, 'destroy() during the loop stops dispatching and rejects with InvalidStateError');

promise_test(async (t) => {
  const gates = new Gates();
  const failure = new Error('scheduler exploded');
  let releasePre;
  const prePending = new Promise((resolve) => { releasePre = resolve; });
  let thirdPreEntered = false;
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
    gates.tool('p3', '3', {readOnly: true}),
  ], {
    maxParallelToolCalls: 3,
    beforeToolCall: async (call) => {
      if (call.callId === 'call_3') {
        thirdPreEntered = true;
        await prePending;
      }
    },
    afterToolCall: (call) => {
      if (call.callId === 'call_1') throw failure;
      throw new Error('a later failure, while draining');
    },
  }));
  let settled = false;
  const answer = session.prompt(kGo);
  answer.catch(() => { settled = true; });
  await until(() => gates.started.length === 2 && thirdPreEntered);
  gates.release('1');
  await settleFor();
  releasePre();
  await settleFor();
  assert_array_equals(gates.started, ['1', '2'], 'no call starts after the failure');
  assert_false(settled, 'the prompt waits for the started call to drain');
  gates.release('2');
  await promise_rejects_exactly(t, failure, answer, 'the first failure surfaces');
  assert_array_equals(gates.pending(), []);
  assert_equals(await session.prompt('wake'), echoedSuccess('call_1', 'p1', ['done-1']) +
                echoedSuccess('call_2', 'p2', ['done-2']) + echoedError('call_3', 'p3', kFailed) + 'wake');
}, 'When the scheduler fails, no call starts, started calls drain, then the first failure surfaces');

promise_test(async (t) => {
  const session = await createLanguageModel(closedLoop([loggingTool('t', '1', [])], {
    afterToolCall: () => ({context: [{role: 'system', content: 'too late'}]}),
  }));
  await promise_rejects_js(t, TypeError, session.prompt(kGo),
                           "the engine's error for the context's system message");
  const bad = await createLanguageModel(closedLoop([loggingTool('t', '1', [])], {
    afterToolCall: () => 'not a decision',
  }));
  await promise_rejects_js(t, TypeError, bad.prompt(kGo));
  assert_equals(typeof await bad.prompt('still usable'), 'string');
}, 'Invalid context from a post-hook rejects the prompt with the spec error; the session stays usable');
