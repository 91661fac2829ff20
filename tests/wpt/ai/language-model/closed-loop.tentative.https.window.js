// META: title=Closed-loop tools: execute, results, rounds, streaming, usage and options
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: script=../resources/gated-tools.js
// META: timeout=long

'use strict';

// A declaration with `execute` makes prompt() run the model's calls in the page
// and give it their results until it answers in text (docs/tools.md).

function valueTool(name, execute, args = '{}') {
  return {
    name,
    description: `A tool. Args: ${args}`,
    inputSchema: {type: 'object', properties: {}},
    execute,
  };
}

promise_test(async () => {
  await ensureLanguageModel();
  const seen = [];
  const session = await createLanguageModel(closedLoop([
    valueTool('weather', (args, info) => {
      seen.push({args, callId: info.callId, aborted: info.signal.aborted});
      return 'sunny';
    }, '{"city": "Oslo"}'),
  ]));
  const answer = await session.prompt(kGo);
  assert_equals(typeof answer, 'string');
  assert_equals(answer, echoedSuccess('call_1', 'weather', ['sunny']));
  assert_equals(seen.length, 1);
  assert_object_equals(seen[0].args, {city: 'Oslo'});
  assert_equals(seen[0].callId, 'call_1');
  assert_false(seen[0].aborted);
  assert_equals(await session.prompt('plain'), 'plain', 'a text answer needs no tools');
}, 'prompt() runs the call, gives the model its result and resolves to the final text');

promise_test(async () => {
  const session = await createLanguageModel(closedLoop([
    valueTool('text', () => 'words'),
    valueTool('object', async () => ({a: [1, 2]})),
    valueTool('array', () => [1, 'two']),
    valueTool('number', () => 42),
    valueTool('nothing', () => undefined),
    valueTool('throws', () => { throw new Error('boom'); }),
    valueTool('rejects', () => Promise.reject(new TypeError('no luck'))),
    valueTool('function', () => () => 1),
    valueTool('cycle', () => { const o = {}; o.o = o; return o; }),
  ]));
  const answer = await session.prompt(kGo);
  assert_equals(answer, [
    echoedSuccess('call_1', 'text', ['words']),
    echoedSuccess('call_2', 'object', [{a: [1, 2]}]),
    echoedSuccess('call_3', 'array', [[1, 'two']]),
    echoedSuccess('call_4', 'number', ['42']),
    echoedSuccess('call_5', 'nothing', []),
    echoedError('call_6', 'throws', 'boom'),
    echoedError('call_7', 'rejects', 'no luck'),
    echoedError('call_8', 'function', 'The tool returned a value that is not JSON.'),
    echoedError('call_9', 'cycle', 'The tool returned a value that is not JSON.'),
  ].join(''));
}, 'A string is a text result, JSON an object result, a throw or rejection a LanguageModelToolError');

promise_test(async () => {
  const session = await createLanguageModel({
    ...closedLoop([valueTool('t', () => 'x')]), expectedOutputs: [{type: 'text'}, {type: 'tool-call'}],
  });
  assert_equals(typeof await session.prompt(kGo), 'string');
  const first = await createLanguageModel(closedLoop([valueTool('t', () => 'x')]));
  assert_equals(typeof await first.prompt('no call'), 'string');
}, 'A closed loop always resolves to a string, whatever expectedOutputs lists');

promise_test(async () => {
  const session = await createLanguageModel(closedLoop([valueTool('t', () => 'x')]));
  const chunks = await Array.fromAsync(session.promptStreaming(kGo));
  assert_array_equals(chunks, [
    'On-device model is not available in Chromium, this API is just echoing back the input:\ngo',
    echoedSuccess('call_1', 't', ['x']),
  ]);
}, "promptStreaming() streams every model turn's text, in order, and no calls");

promise_test(async () => {
  const session = await createLanguageModel(closedLoop([
    valueTool('a', () => 'x'), valueTool('b', () => ({k: 1})),
  ]));
  const before = session.contextUsage;
  const answer = await session.prompt(kGo);
  const firstTurn =
      'On-device model is not available in Chromium, this API is just echoing back the input:\ngo';
  // The echo model: UTF-8 bytes of text, 100 for each tool response; its calls add nothing.
  assert_equals(session.contextUsage, before + kGo.length + firstTurn.length + 2 * 100 + answer.length);
}, 'contextUsage counts the rounds: the input, each turn, and every result');

promise_test(async () => {
  let rounds = 0;
  const session = await createLanguageModel(closedLoop([valueTool('t', () => { rounds++; return 'x'; })], {
    afterToolCall: () => rounds < 3 ? {context: kGo} : undefined,
  }));
  const answer = await session.prompt(kGo);
  assert_equals(rounds, 3, 'the context asked for two more rounds');
  assert_equals(answer, echoedSuccess('call_1', 't', ['x']));
}, "A post-hook's context can lead the model to more rounds");

promise_test(async (t) => {
  let calls = 0;
  const forever = closedLoop([valueTool('t', () => { calls++; return 'x'; })], {
    afterToolCall: () => ({context: kGo}), maxToolRounds: 3,
  });
  const session = await createLanguageModel(forever);
  await promise_rejects_dom(t, 'OperationError', session.prompt(kGo));
  assert_equals(calls, 3, 'three rounds ran; the fourth turn asked again and was cut');
  const next = await session.prompt('next');
  assert_true(next.includes(
      'OperationError: the prompt reached maxToolRounds (3).'), 'the unrun calls got error results');
  assert_true(next.endsWith('next'));
  calls = 0;
  const byDefault = await createLanguageModel({...forever, maxToolRounds: undefined});
  await promise_rejects_dom(t, 'OperationError', byDefault.prompt(kGo));
  assert_equals(calls, 10, 'the default is 10 rounds');
}, 'A loop that never ends is cut after maxToolRounds with an OperationError');

promise_test(async (t) => {
  const tool = valueTool('t', () => 'x');
  for (const [value, error] of [[0, RangeError], [-1, RangeError], [1.5, TypeError], [NaN, TypeError],
      [Infinity, TypeError], ['many', TypeError]]) {
    await promise_rejects_js(t, error, createLanguageModel(closedLoop([tool], {maxParallelToolCalls: value})),
                             `maxParallelToolCalls: ${value}`);
    await promise_rejects_js(t, error, createLanguageModel(closedLoop([tool], {maxToolRounds: value})),
                             `maxToolRounds: ${value}`);
  }
  await createLanguageModel(closedLoop([tool], {maxParallelToolCalls: '2', maxToolRounds: 1}));
}, 'maxParallelToolCalls and maxToolRounds: a positive integer, else TypeError or RangeError');

promise_test(async (t) => {
  const open = {name: 'open', description: 'Open loop.', inputSchema: {type: 'object'}};
  await promise_rejects_js(t, TypeError,
                           createLanguageModel(closedLoop([open, valueTool('closed', () => 'x')])));
  await promise_rejects_js(t, TypeError, createLanguageModel(closedLoop([{...open, execute: 'run'}])));
  await promise_rejects_js(t, TypeError, createLanguageModel(closedLoop([{...open, annotations: 5}])));
  await promise_rejects_js(t, TypeError,
                           createLanguageModel(closedLoop([open], {beforeToolCall: {}})));
  await promise_rejects_js(t, TypeError,
                           createLanguageModel(closedLoop([open], {afterToolCall: 'x'})));
  await promise_rejects_js(t, TypeError, createLanguageModel({tools: [{...open, execute() {}}]}),
                           'closed-loop tools still need expectedOutputs to list tool-call');
}, 'Mixing open- and closed-loop tools, or a non-function execute or hook, is a TypeError');

promise_test(async () => {
  const session = await createLanguageModel({
    expectedInputs: [{type: 'tool-response'}], expectedOutputs: [{type: 'tool-call'}],
    tools: [{name: 'open', description: 'Open loop.', inputSchema: {type: 'object'}}],
  });
  const result = await session.prompt(kGo);
  assert_true(Array.isArray(result), 'without execute the calls come back to the page');
}, 'Declarations without execute stay open-loop');

promise_test(async () => {
  const log = [];
  const session = await createLanguageModel(closedLoop([valueTool('t', () => { log.push('run'); return 'x'; })], {
    beforeToolCall: () => { log.push('before'); },
    afterToolCall: () => { log.push('after'); },
    maxParallelToolCalls: 1,
  }));
  const clone = await session.clone();
  await clone.prompt(kGo);
  assert_array_equals(log, ['before', 'run', 'after'], 'the clone keeps the tools and hooks');
}, 'clone() keeps the closed loop: tools, hooks and caps');

promise_test(async () => {
  const gates = new Gates();
  const session = await createLanguageModel(closedLoop([gates.tool('g', '1')]));
  const first = session.prompt(kGo);
  const second = session.prompt('next');
  let secondDone = false;
  second.then(() => { secondDone = true; });
  await until(() => gates.started.length === 1);
  await settleFor();
  assert_false(secondDone, 'a later prompt waits for the whole loop');
  gates.release('1');
  assert_equals(await first, echoedSuccess('call_1', 'g', ['done-1']));
  assert_equals(await second, 'next');
}, 'Calls made while the loop runs wait for it');

promise_test(async () => {
  const declaration = valueTool('t', () => 'first');
  const session = await createLanguageModel(closedLoop([declaration]));
  declaration.execute = () => 'second';
  assert_equals(await session.prompt(kGo), echoedSuccess('call_1', 't', ['first']));
}, 'Tools are fixed at create(): changing the declaration later changes nothing');
