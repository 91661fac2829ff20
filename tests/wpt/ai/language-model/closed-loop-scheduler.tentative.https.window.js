// META: title=Closed-loop tools: the scheduler's grouping, barriers, order, cap and hooks
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: script=../resources/gated-tools.js
// META: timeout=long

'use strict';

// The cases of ../shared/seeds/agent-loop-tool-scheduler.spec.ts.txt, through the
// public API: the echo model calls every declared tool, so one tool per call.

promise_test(async () => {
  await ensureLanguageModel();
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
    gates.tool('p3', '3', {readOnly: true}),
  ]));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 3, 'all three started');
  assert_array_equals(gates.started, ['1', '2', '3']);
  gates.release('1'); gates.release('2'); gates.release('3');
  assert_array_equals(echoedCallIds(await answer), ['call_1', 'call_2', 'call_3']);
}, 'Parallel-safe siblings run concurrently (all start before any completes)');

promise_test(async () => {
  const order = [];
  const session = await createLanguageModel(closedLoop([
    loggingTool('r', 'A1', order, {readOnly: true}), loggingTool('w', 'A2', order),
    loggingTool('r3', 'A3', order, {readOnly: true}),
  ]));
  await session.prompt(kGo);
  assert_array_equals(order, ['r-start-A1', 'r-end-A1', 'w-start-A2', 'w-end-A2', 'r3-start-A3', 'r3-end-A3']);

  const gates = new Gates();
  const gated = await createLanguageModel(closedLoop([
    gates.tool('r1', '1', {readOnly: true}), gates.tool('r2', '2', {readOnly: true}), gates.tool('w', '3'),
    gates.tool('r4', '4', {readOnly: true}), gates.tool('r5', '5', {readOnly: true}),
  ]));
  const answer = gated.prompt(kGo);
  await until(() => gates.started.length === 2);
  await settleFor();
  assert_array_equals(gates.started, ['1', '2'], 'the exclusive call waits for the group before it');
  gates.release('2');
  await settleFor();
  assert_array_equals(gates.started, ['1', '2']);
  gates.release('1');
  await until(() => gates.started.length === 3);
  await settleFor();
  assert_array_equals(gates.started, ['1', '2', '3'], 'nothing starts beside the exclusive call');
  gates.release('3');
  await until(() => gates.started.length === 5, 'the last group starts together');
  gates.release('4'); gates.release('5');
  assert_array_equals(echoedCallIds(await answer), ['call_1', 'call_2', 'call_3', 'call_4', 'call_5']);
}, 'An exclusive call between parallel-safe calls is a barrier (three groups, in order)');

// The seed replaces a tool while a batch runs, so a call's class must be read when
// it is dispatched. Our sessions fix their tools at create(): a declaration's
// readOnlyHint is read once, so no call changes class within a batch. What remains
// to hold is the class of each call at its dispatch: an exclusive call after a
// barrier runs alone, and a full pool is not replenished past an exclusive call.

promise_test(async () => {
  const gates = new Gates();
  const declarations = [gates.tool('replace', '0'), gates.tool('x1', '1', {readOnly: true}),
                        gates.tool('x2', '2', {readOnly: true})];
  const session = await createLanguageModel(closedLoop(declarations));
  // Changing the declarations now (the seed's "replace") cannot reclassify calls.
  declarations[1].annotations.readOnlyHint = false;
  declarations[2].annotations = {readOnlyHint: false};
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 1);
  await settleFor();
  assert_array_equals(gates.started, ['0'], 'the exclusive call runs alone');
  gates.release('0');
  await until(() => gates.started.length === 3, 'x1 and x2 stay parallel-safe, as declared at create()');
  gates.release('1'); gates.release('2');
  await answer;
}, 'A call is classed by the tools fixed at create(), and an exclusive call is a barrier');

promise_test(async () => {
  const gates = new Gates();
  const results = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('x1', '1', {readOnly: true}), gates.tool('x2', '2', {readOnly: true}), gates.tool('x3', '3'),
  ], {maxParallelToolCalls: 2, afterToolCall: (call) => { results.push(call.callId); }}));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 2);
  gates.release('1');
  await until(() => results.length === 1, "call_1's result is committed");
  await settleFor();
  assert_array_equals(gates.started, ['1', '2'], 'a free slot is not given to an exclusive call');
  gates.release('2');
  await until(() => gates.started.length === 3);
  assert_array_equals(gates.started, ['1', '2', '3']);
  gates.release('3');
  await answer;
}, 'The pool stops replenishing when the next call is exclusive');

promise_test(async () => {
  const gates = new Gates();
  const committed = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
  ], {afterToolCall: (call, response) => { committed.push([call.callId, response.callId]); }}));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 2);
  gates.release('2');
  await settleFor();
  assert_array_equals(committed, [], 'the later call settled first: nothing is committed yet');
  gates.release('1');
  const text = await answer;
  assert_equals(JSON.stringify(committed), JSON.stringify([['call_1', 'call_1'], ['call_2', 'call_2']]));
  assert_array_equals(echoedCallIds(text), ['call_1', 'call_2'],
                      "the model's next turn pairs the results with the calls in call order");
}, "Results are committed in the model's call order even when a later call settles first");

promise_test(async () => {
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
  ]));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 2);
  gates.release('2'); gates.release('1');
  await answer;
  // A clone's first reply echoes the whole conversation: the results (in call
  // order), then the model's turn that echoed them.
  const history = await (await session.clone()).prompt('');
  assert_array_equals(echoedCallIds(history), ['call_1', 'call_2', 'call_1', 'call_2']);
}, 'The conversation holds the results in call order, whatever order they settled in');

promise_test(async () => {
  const gates = new Gates();
  const log = [];
  const tools = [1, 2, 3, 4].map((n) => gates.tool(`p${n}`, String(n), {readOnly: true}));
  const session = await createLanguageModel(closedLoop(tools, {
    maxParallelToolCalls: 2,
    beforeToolCall: (call) => { log.push(`call:${call.callId}`); },
    afterToolCall: (call) => { log.push(`result:${call.callId}`); },
  }));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 2);
  await settleFor();
  assert_array_equals(gates.started, ['1', '2']);
  gates.release('1');
  await until(() => gates.started.length === 3);
  assert_array_equals(gates.started, ['1', '2', '3']);
  assert_array_equals(log.slice(0, 4), ['call:call_1', 'call:call_2', 'result:call_1', 'call:call_3']);
  gates.release('2'); gates.release('3');
  await until(() => gates.started.length === 4);
  gates.release('4');
  assert_array_equals(echoedCallIds(await answer), ['call_1', 'call_2', 'call_3', 'call_4']);
  assert_array_equals(log.filter((e) => e.startsWith('result')),
                      ['result:call_1', 'result:call_2', 'result:call_3', 'result:call_4']);
}, 'At most maxParallelToolCalls run at once, replenished as calls settle');

promise_test(async () => {
  for (const make of [
    (tools) => createLanguageModel(closedLoop(tools, {maxParallelToolCalls: 1})),
    async (tools) => (await createLanguageModel(closedLoop(tools, {maxParallelToolCalls: 1}))).clone(),
  ]) {
    const gates = new Gates();
    const session = await make([gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true})]);
    const answer = session.prompt(kGo);
    await until(() => gates.started.length === 1);
    await settleFor();
    assert_array_equals(gates.started, ['1'], 'no second start before the first settles');
    gates.release('1');
    await until(() => gates.started.length === 2);
    gates.release('2');
    await answer;
  }
}, 'maxParallelToolCalls: 1 is fully serial, in a session and in its clone');

promise_test(async () => {
  const gates = new Gates();
  const tools = [1, 2, 3, 4, 5].map((n) => gates.tool(`p${n}`, String(n), {readOnly: true}));
  const session = await createLanguageModel(closedLoop(tools));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 4);
  await settleFor();
  assert_array_equals(gates.started, ['1', '2', '3', '4'], 'the default cap is 4');
  for (const id of ['1', '2', '3', '4']) gates.release(id);
  await until(() => gates.started.length === 5);
  gates.release('5');
  await answer;
}, 'The default maxParallelToolCalls is 4');

promise_test(async () => {
  const gates = new Gates();
  const pre = [];
  const post = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
    gates.tool('p3', '3', {readOnly: true}),
  ], {
    beforeToolCall: async (call) => { pre.push(call.callId); },
    afterToolCall: async (call) => { post.push(call.callId); },
  }));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 3);
  gates.release('3'); gates.release('2'); gates.release('1');
  await answer;
  assert_array_equals(pre, ['call_1', 'call_2', 'call_3']);
  assert_array_equals(post, ['call_1', 'call_2', 'call_3']);
}, 'beforeToolCall and afterToolCall observe the model call order');

promise_test(async () => {
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
  ], {maxParallelToolCalls: 2, afterToolCall: (call) => ({context: `ctx-${call.callId}`})}));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 2);
  gates.release('2'); gates.release('1');
  const text = await answer;
  assert_equals(text, echoedSuccess('call_1', 'p1', ['done-1']) + echoedSuccess('call_2', 'p2', ['done-2']) +
                'ctx-call_1ctx-call_2', 'the contexts follow all the results, in call order');
}, "Post-hooks' context is injected in model call order, after all the results");

promise_test(async () => {
  const gates = new Gates();
  const post = [];
  const session = await createLanguageModel(closedLoop([
    gates.tool('p1', '1', {readOnly: true}), gates.tool('p2', '2', {readOnly: true}),
    gates.tool('p3', '3', {readOnly: true}),
  ], {
    beforeToolCall: async (call) => {
      if (call.callId === 'call_2') return {deny: 'blocked by policy'};
      if (call.callId === 'call_3') throw new Error('pre exploded');
    },
    afterToolCall: (call) => { post.push(call.callId); },
  }));
  const answer = session.prompt(kGo);
  await until(() => gates.started.length === 1);
  gates.release('1');
  const text = await answer;
  assert_array_equals(gates.started, ['1']);
  assert_array_equals(post, ['call_1', 'call_2'], 'a denial is observed; a pre-hook that threw is not');
  assert_equals(text, echoedSuccess('call_1', 'p1', ['done-1']) +
                echoedError('call_2', 'p2', 'The call was denied: blocked by policy') +
                echoedError('call_3', 'p3', 'The call was not run: pre exploded'));
}, 'A pre-hook that denies or throws gives that call an error result, in order, without running it');
