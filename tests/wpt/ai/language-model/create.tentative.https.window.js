// META: title=LanguageModel.create(): signals, monitors, initialPrompts, sampling modes and unsupported options
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const kSamplingModes = [
  'most-predictable', 'predictable', 'slightly-predictable', 'balanced',
  'slightly-creative', 'creative', 'most-creative',
];

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel();
  assert_true(session instanceof LanguageModel);
  assert_true(session instanceof EventTarget);
  assert_equals(session.contextUsage, 0);
  assert_equals(await session.prompt('hello'), kPrefix + 'hello');
}, 'create() resolves to a LanguageModel that answers');

promise_test(async (t) => {
  const controller = new AbortController();
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', createLanguageModel({signal: controller.signal}));
  const reason = new Error('stop');
  await promise_rejects_exactly(t, reason, createLanguageModel({signal: AbortSignal.abort(reason)}));
  const reasonString = 'just a string';
  await promise_rejects_exactly(
      t, reasonString, createLanguageModel({signal: AbortSignal.abort(reasonString)}));
}, 'An already-aborted signal rejects create() with AbortError, or exactly its reason');

promise_test(async (t) => {
  // The model is "available" by now, so create() needs no new activation
  // and the abort below lands while create() is pending.
  await testAbortPromise(t, (signal) => LanguageModel.create({signal}));
}, 'Aborting the signal while create() is pending rejects it with AbortError or the reason');

promise_test(async () => {
  const session = await testMonitor(createLanguageModel);
  assert_true(session instanceof LanguageModel);
  const withOptions = await testMonitor(createLanguageModel, {
    initialPrompts: [{role: 'system', content: 'Be brief.'}],
  });
  assert_equals(withOptions.contextUsage, 9);
}, 'The monitor gets downloadprogress events from 0 to 1 before create() resolves');

promise_test(async () => {
  let monitorObject = null;
  let calls = 0;
  const session = await createLanguageModel({
    monitor(m) {
      calls++;
      monitorObject = m;
      assert_equals(this, undefined, 'called with an undefined this');
    },
  });
  assert_equals(calls, 1, 'the monitor callback runs once');
  assert_true(monitorObject instanceof EventTarget, 'the monitor is an EventTarget');
  assert_true('ondownloadprogress' in monitorObject);
  assert_true(session instanceof LanguageModel);
}, 'The monitor callback is called once, with an EventTarget');

promise_test(async (t) => {
  await testCreateMonitorWithAbort(t, createLanguageModel);
}, 'Aborting from a downloadprogress listener rejects create() with the reason');

promise_test(async (t) => {
  await testCreateMonitorCallbackThrowsError(t, createLanguageModel);
}, 'A monitor callback that throws rejects create() with that exception');

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, createLanguageModel({monitor: 'not callable'}));
  await promise_rejects_js(t, TypeError, createLanguageModel({signal: 'not a signal'}));
}, 'A monitor that is not callable or a signal that is not an AbortSignal is a TypeError');

promise_test(async (t) => {
  await testCreateAbort(t, createLanguageModel, {}, [
    (s) => s.prompt('x'),
    async (s) => readStream(s.promptStreaming('y')),
    (s) => s.append('z'),
    (s) => s.measureContextUsage('w'),
    (s) => s.clone(),
  ]);
}, 'Aborting the create() signal later destroys the session with that reason');

promise_test(async () => {
  const session = await createLanguageModel({
    initialPrompts: [
      {role: 'system', content: 'Sys. '},
      {role: 'user', content: 'Q. '},
      {role: 'assistant', content: 'A. '},
    ],
  });
  assert_equals(session.contextUsage, 11);
  assert_equals(await session.prompt('Go'), kPrefix + 'Sys. Q. A. Go');
}, 'initialPrompts with a system message first are accepted and echoed in order');

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, createLanguageModel({
    initialPrompts: [{role: 'user', content: 'hi'}, {role: 'system', content: 'late'}],
  }), 'system after user');
  await promise_rejects_js(t, TypeError, createLanguageModel({
    initialPrompts: [{role: 'system', content: 'one'}, {role: 'system', content: 'two'}],
  }), 'a second system message');
  await promise_rejects_js(t, TypeError, createLanguageModel({
    initialPrompts: [{role: 'wizard', content: 'hi'}],
  }), 'an unknown role');
}, 'A system message after other initial prompts is a TypeError');

promise_test(async (t) => {
  await promise_rejects_dom(t, 'SyntaxError', createLanguageModel({
    initialPrompts: [{role: 'user', content: 'hi', prefix: true}],
  }), 'prefix on a user message');
  await promise_rejects_dom(t, 'SyntaxError', createLanguageModel({
    initialPrompts: [{role: 'system', content: 'hi', prefix: true}],
  }), 'prefix on a system message');
  await promise_rejects_dom(t, 'SyntaxError', createLanguageModel({
    initialPrompts: [{role: 'assistant', content: 'A', prefix: true}, {role: 'user', content: 'Q'}],
  }), 'prefix on an assistant message that is not the last');
}, 'prefix on a non-assistant or non-last initial prompt is a SyntaxError');

promise_test(async (t) => {
  await promise_rejects_quotaexceedederror(t, createLanguageModel({
    initialPrompts: [{role: 'system', content: 'x'.repeat(1001)}],
  }), 1001, 1000);
  await promise_rejects_quotaexceedederror(t, createLanguageModel({
    initialPrompts: [
      {role: 'system', content: 'x'.repeat(600)},
      {role: 'user', content: 'é'.repeat(201)},  // 402 bytes
    ],
  }), 1002, 1000);
  const full = await createLanguageModel({initialPrompts: [{role: 'user', content: 'y'.repeat(1000)}]});
  assert_equals(full.contextUsage, 1000, 'exactly the window fits');
}, 'initialPrompts over 1000 bytes reject with QuotaExceededError (requested, quota)');

promise_test(async () => {
  for (const samplingMode of kSamplingModes) {
    const session = await createLanguageModel({samplingMode});
    assert_equals(session.samplingMode, samplingMode);
  }
}, 'Each of the seven sampling modes is kept on the session');

promise_test(async (t) => {
  assert_equals((await createLanguageModel()).samplingMode, 'balanced');
  assert_equals((await createLanguageModel({samplingMode: undefined})).samplingMode, 'balanced');
  await promise_rejects_js(t, TypeError, createLanguageModel({samplingMode: 'chaotic'}));
}, 'samplingMode defaults to "balanced"; an unknown mode is a TypeError');

promise_test(async () => {
  const session = await createLanguageModel({samplingMode: 'most-creative'});
  const clone = await session.clone();
  assert_equals(clone.samplingMode, 'most-creative');
  const windowOnly = await createLanguageModel({samplingMode: 'predictable', topK: 2, temperature: 0.1});
  assert_equals(windowOnly.samplingMode, 'predictable', 'topK/temperature are ignored in a window');
  assert_equals((await windowOnly.clone()).samplingMode, 'predictable');
}, 'samplingMode is preserved by clone(); topK/temperature do not conflict with it in a window');

promise_test(async (t) => {
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel(
      {expectedInputs: [{type: 'text', languages: ['fr']}]}), 'French input');
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel(
      {expectedOutputs: [{type: 'text', languages: ['ja']}]}), 'Japanese output');
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel(
      {expectedOutputs: [{type: 'image'}]}), 'image output');
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel(
      {expectedOutputs: [{type: 'audio'}]}), 'audio output');
  const english = await createLanguageModel(
      {expectedInputs: [{type: 'text', languages: ['EN-us']}]});
  assert_true(english instanceof LanguageModel);
}, 'Unsupported languages or output types reject with NotSupportedError');

promise_test(async (t) => {
  await promise_rejects_js(t, RangeError, createLanguageModel(
      {expectedInputs: [{type: 'text', languages: ['not a tag']}]}));
  await promise_rejects_js(t, TypeError, createLanguageModel({expectedOutputs: [{type: 'soup'}]}));
}, 'An invalid language tag is a RangeError; an unknown type a TypeError');

promise_test(async (t) => {
  const schema = {type: 'object', properties: {q: {type: 'string'}}};
  const outputs = [{type: 'tool-call'}];
  const tool = (fields) => ({name: 'search', description: 'Searches.', inputSchema: schema, ...fields});
  await promise_rejects_js(t, TypeError, createLanguageModel({tools: [tool()]}), 'no tool-call output');
  await promise_rejects_js(t, TypeError, createLanguageModel(
      {tools: [tool({name: ''})], expectedOutputs: outputs}), 'empty name');
  await promise_rejects_js(t, TypeError, createLanguageModel(
      {tools: [tool({description: ''})], expectedOutputs: outputs}), 'empty description');
  await promise_rejects_js(t, TypeError, createLanguageModel(
      {tools: [tool(), tool()], expectedOutputs: outputs}), 'duplicate names');
  await promise_rejects_js(t, TypeError, createLanguageModel(
      {tools: [tool({inputSchema: {type: 'string'}})], expectedOutputs: outputs}), 'schema type');
  await promise_rejects_js(t, TypeError, createLanguageModel(
      {tools: [tool({inputSchema: {type: 'object', required: 'q'}})], expectedOutputs: outputs}),
      'required is not an array');
  const error = new Error('getter');
  await promise_rejects_exactly(t, error, createLanguageModel({
    tools: [tool({inputSchema: {get type() { throw error; }}})], expectedOutputs: outputs,
  }), 'a throwing getter');
  const session = await createLanguageModel({tools: [tool()], expectedOutputs: outputs});
  assert_true(session instanceof LanguageModel);
}, 'Invalid tool declarations reject with TypeError; a throwing getter propagates');
