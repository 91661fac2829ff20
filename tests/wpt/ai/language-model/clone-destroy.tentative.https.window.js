// META: title=LanguageModel clone() and destroy()
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';

function assertInOrder(text, parts) {
  let from = 0;
  for (const part of parts) {
    const index = text.indexOf(part, from);
    assert_greater_than_equal(index, from, `${JSON.stringify(part)} in order in ${JSON.stringify(text)}`);
    from = index + part.length;
  }
}

const kTools = [{
  name: 'getWeather',
  description: 'Gets the weather. Args: {"city": "Paris"}',
  inputSchema: {type: 'object', properties: {city: {type: 'string'}}},
}];

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel({
    initialPrompts: [{role: 'system', content: 'Sys. '}],
    samplingMode: 'slightly-creative',
  });
  await session.prompt('one ');
  await session.append('two ');
  const clone = await session.clone();
  assert_true(clone instanceof LanguageModel);
  assert_not_equals(clone, session);
  assert_equals(clone.contextUsage, session.contextUsage, 'usage is copied');
  assert_equals(clone.contextWindow, session.contextWindow);
  assert_equals(clone.samplingMode, 'slightly-creative');
}, 'clone() gives a new LanguageModel with the same usage, window and samplingMode');

promise_test(async () => {
  const session = await createLanguageModel({initialPrompts: [{role: 'system', content: 'Sys. '}]});
  const first = await session.prompt('one ');
  assert_equals(first, kPrefix + 'Sys. one ');
  await session.append('two ');
  const clone = await session.clone();
  const reply = await clone.prompt('three');
  assert_true(reply.startsWith(kPrefix), 'the clone answers for the first time');
  assertInOrder(reply.slice(kPrefix.length), ['Sys. ', 'one ', 'two ', 'three']);
  assert_true(reply.endsWith('two three'), 'the pending append and the input come last');
  assert_equals(await session.prompt('four'), 'two four', 'the original continues as before');
}, "The clone's first reply echoes the prefix, the initial prompts and all history");

promise_test(async () => {
  const session = await createLanguageModel({initialPrompts: [{role: 'user', content: 'Init. '}]});
  const clone = await session.clone();
  assert_equals(clone.contextUsage, 6);
  assert_equals(await clone.prompt('c1'), kPrefix + 'Init. c1');
  assert_equals(session.contextUsage, 6, 'the original is untouched by the clone\'s prompt');
  assert_equals(await session.prompt('o1'), kPrefix + 'Init. o1', 'the original answers its own first reply');
  assert_equals(await clone.prompt('c2'), 'c2');
  assert_equals(await session.prompt('o2'), 'o2');
  assert_not_equals(clone.contextUsage, 0);
  assert_equals(clone.contextUsage, session.contextUsage, 'symmetric histories, equal usage');
  await clone.append('x'.repeat(50));
  assert_equals(clone.contextUsage, session.contextUsage + 50);
}, 'A clone and its original are independent afterwards');

promise_test(async () => {
  const session = await createLanguageModel({tools: kTools, expectedOutputs: [{type: 'tool-call'}]});
  const clone = await session.clone();
  const result = await clone.prompt('<GenerateSimpleToolCalls>call it');
  assert_true(Array.isArray(result), 'the clone has the tools');
  const call = result.find((part) => part.type === 'tool-call');
  assert_true(!!call, 'a tool call');
  assert_equals(call.value.name, 'getWeather');
  assert_equals(call.value.callId, 'call_1');
  assert_equals(call.value.arguments.city, 'Paris');
}, 'A clone keeps the declared tools');

promise_test(async () => {
  const session = await createLanguageModel({expectedInputs: [{type: 'image'}]});
  const clone = await session.clone();
  assert_equals(await clone.measureContextUsage(
      messageWithContent('a', 'image', document.createElement('canvas'))), 101,
      'the clone accepts images as its original does');
}, 'A clone keeps the expected inputs');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await testAbortPromise(t, (signal) => session.clone({signal}));
  assert_equals(await session.prompt('fine'), kPrefix + 'fine', 'the original is still usable');
}, 'clone() honours an aborted signal');

promise_test(async (t) => {
  const session = await createLanguageModel({
    initialPrompts: [{role: 'system', content: 'Sys.'}],
    samplingMode: 'predictable',
  });
  const pending = session.prompt('pending');
  const pendingStream = readStream(session.promptStreaming('pending stream'));
  const pendingAppend = session.append('pending append');
  const usage = session.contextUsage;
  assert_equals(session.destroy(), undefined);
  await promise_rejects_dom(t, 'InvalidStateError', pending);
  await promise_rejects_dom(t, 'InvalidStateError', pendingStream);
  await promise_rejects_dom(t, 'InvalidStateError', pendingAppend);
  assert_equals(session.contextUsage, usage, 'contextUsage stays readable');
  assert_equals(session.contextWindow, 1000, 'contextWindow stays readable');
  assert_equals(session.samplingMode, 'predictable', 'samplingMode stays readable');
}, 'destroy() rejects pending calls with InvalidStateError; attributes stay readable');

promise_test(async (t) => {
  const session = await createLanguageModel();
  session.destroy();
  await promise_rejects_dom(t, 'InvalidStateError', session.prompt('x'), 'prompt');
  await promise_rejects_dom(t, 'InvalidStateError', session.append('x'), 'append');
  await promise_rejects_dom(t, 'InvalidStateError', session.measureContextUsage('x'), 'measure');
  await promise_rejects_dom(t, 'InvalidStateError', session.clone(), 'clone');
  let stream;
  try {
    stream = session.promptStreaming('x');
  } catch (e) {
    assert_throws_dom('InvalidStateError', () => { throw e; }, 'promptStreaming throws');
    return;
  }
  await promise_rejects_dom(t, 'InvalidStateError', readStream(stream), 'promptStreaming errors');
}, 'Every call after destroy() rejects (or promptStreaming throws or errors) with InvalidStateError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  session.destroy();
  const controller = new AbortController();
  controller.abort(new Error('late abort'));
  await promise_rejects_dom(t, 'InvalidStateError', session.prompt('x', {signal: controller.signal}),
                            'the destruction comes first');
}, 'After destroy(), a call with an aborted signal still rejects with InvalidStateError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await session.prompt('before ');
  const clone = await session.clone();
  clone.destroy();
  await promise_rejects_dom(t, 'InvalidStateError', clone.prompt('x'));
  assert_equals(await session.prompt('after'), 'after', 'the original still answers');
  const other = await session.clone();
  session.destroy();
  const reply = await other.prompt('still');
  assert_true(reply.startsWith(kPrefix) && reply.endsWith('still'), 'a clone survives its original');
}, 'Destroying a clone does not affect the original, nor the original a clone');

promise_test(async (t) => {
  const session = await createLanguageModel();
  session.destroy();
  session.destroy();
  assert_equals(session.destroy(), undefined);
  await promise_rejects_dom(t, 'InvalidStateError', session.prompt('x'));
}, 'destroy() twice is fine');
