// META: title=LanguageModel prompt(), promptStreaming() and append(): inputs, order, aborts and validation
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';

// Inputs that carry no text of their own, with the text each echoes as.
const kEmptyInputs = [
  ['the empty string', '', ''],
  ['an empty list', [], ''],
  ['an object that is not a list', {}, '[object Object]'],
  ['null', null, 'null'],
  ['undefined', undefined, 'undefined'],
  ['a message with no content parts', [{role: 'user', content: []}], ''],
  ['a message with empty content', [{role: 'user', content: ''}], ''],
];

promise_test(async () => {
  await ensureLanguageModel();
  for (const [description, input, echoed] of kEmptyInputs) {
    const session = await createLanguageModel();
    const answer = await session.prompt(input);
    assert_equals(typeof answer, 'string', description);
    assert_equals(answer, kPrefix + echoed, description);
  }
}, 'prompt() resolves for empty inputs; non-list objects and null/undefined become strings');

promise_test(async () => {
  for (const [description, input, echoed] of kEmptyInputs) {
    const session = await createLanguageModel();
    const chunks = await Array.fromAsync(session.promptStreaming(input));
    for (const chunk of chunks) assert_equals(typeof chunk, 'string', description);
    assert_equals(chunks.join(''), kPrefix + echoed, description);
  }
}, 'promptStreaming() completes for empty inputs');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(await session.prompt('start'), kPrefix + 'start');
  for (const [description, input] of kEmptyInputs) {
    assert_equals(await session.append(input), undefined, description);
  }
  assert_equals(await session.prompt('end'), '[object Object]nullundefinedend');
}, 'append() accepts empty inputs; the next prompt() echoes what they carried');

promise_test(async () => {
  const session = await createLanguageModel();
  const results = [
    session.prompt('a '),
    session.append('b '),
    readStream(session.promptStreaming('c ')),
    session.measureContextUsage('not echoed'),
    session.prompt('d'),
  ];
  assert_equals(await results[0], kPrefix + 'a ');
  assert_equals(await results[1], undefined);
  assert_equals(await results[2], 'b c ');
  assert_equals(await results[3], 10);
  assert_equals(await results[4], 'd');
}, 'Concurrent calls on a session run in call order');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await testAbortPromise(t, (signal) => session.prompt('aborted', {signal}));
  await testAbortPromise(t, (signal) => session.append('aborted', {signal}));
  await testAbortPromise(t, (signal) => session.measureContextUsage('aborted', {signal}));
  await testAbortReadableStream(t, (signal) => session.promptStreaming('aborted', {signal}));
}, 'An aborted signal rejects prompt(), append(), measureContextUsage() and errors promptStreaming()');

promise_test(async (t) => {
  const session = await createLanguageModel({initialPrompts: [{role: 'system', content: 'Sys. '}]});
  const usage = session.contextUsage;
  for (const method of [
    (signal) => session.prompt('lost1 ', {signal}),
    (signal) => session.append('lost2 ', {signal}),
    (signal) => readStream(session.promptStreaming('lost3 ', {signal})),
  ]) {
    const controller = new AbortController();
    const reason = new Error('abort while pending');
    const pending = method(controller.signal);
    controller.abort(reason);
    await promise_rejects_exactly(t, reason, pending);
    assert_equals(session.contextUsage, usage, 'contextUsage unchanged by the aborted call');
  }
  assert_equals(await session.prompt('kept'), kPrefix + 'Sys. kept',
                'the aborted inputs were not kept');
}, 'A call aborted while pending changes nothing; the session stays usable');

promise_test(async (t) => {
  const session = await createLanguageModel();
  const controller = new AbortController();
  controller.abort();
  assert_throws_dom('AbortError', () => session.promptStreaming('x', {signal: controller.signal}));
  const reason = new Error('reason');
  assert_throws_exactly(reason, () => session.promptStreaming('x', {signal: AbortSignal.abort(reason)}));
  assert_equals(await session.prompt('still fine'), kPrefix + 'still fine');
}, 'promptStreaming() with an already-aborted signal throws synchronously');

promise_test(async () => {
  const session = await createLanguageModel();
  const inputs = [
    'plain',
    'ünïcödé €',
    [{role: 'user', content: 'one'}, {role: 'assistant', content: 'two'}],
    [{role: 'user', content: [{type: 'text', value: 'x'}, {type: 'text', value: 'yz'}]}],
  ];
  for (const input of inputs) {
    const measured = await session.measureContextUsage(input);
    const before = session.contextUsage;
    const result = await session.append(input);
    assert_equals(result, undefined);
    assert_equals(session.contextUsage, before + measured, JSON.stringify(input));
  }
  assert_equals(session.contextUsage, 5 + 15 + 6 + 3);
}, 'append() resolves undefined and grows contextUsage by measureContextUsage()');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(await session.prompt([
    {role: 'user', content: [{type: 'text', value: 'a'}, {type: 'text', value: 'b'}]},
    {role: 'assistant', content: 'c'},
    {role: 'user', content: 'd'},
  ]), kPrefix + 'abcd');
}, 'Content parts and messages are echoed in order with no separator');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(await session.prompt([
    {role: 'system', content: 'Be terse. '},
    {role: 'user', content: 'Hi'},
  ]), kPrefix + 'Be terse. Hi');
}, 'A system message is accepted first in a session with no context yet');

promise_test(async (t) => {
  const fresh = await createLanguageModel();
  await promise_rejects_js(t, TypeError, fresh.prompt(
      [{role: 'user', content: 'a'}, {role: 'system', content: 'b'}]), 'system after user');
  await promise_rejects_js(t, TypeError, fresh.append(
      [{role: 'user', content: 'a'}, {role: 'system', content: 'b'}]), 'append: system after user');
  await fresh.prompt('first');
  await promise_rejects_js(t, TypeError, fresh.prompt([{role: 'system', content: 'b'}]),
                           'system after an earlier prompt');
  await promise_rejects_js(t, TypeError, readStream(
      fresh.promptStreaming([{role: 'system', content: 'b'}])),
      'promptStreaming: system after an earlier prompt');
  const withInitial = await createLanguageModel({initialPrompts: [{role: 'user', content: 'i'}]});
  await promise_rejects_js(t, TypeError, withInitial.prompt([{role: 'system', content: 'b'}]),
                           'system after initialPrompts');
  await promise_rejects_js(t, TypeError, withInitial.append([{role: 'system', content: 'b'}]),
                           'append: system after initialPrompts');
}, 'A system message after other input is a TypeError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await promise_rejects_dom(t, 'SyntaxError', session.prompt(
      [{role: 'user', content: 'a', prefix: true}]), 'prefix on user');
  await promise_rejects_dom(t, 'SyntaxError', session.prompt(
      [{role: 'system', content: 'a', prefix: true}]), 'prefix on system');
  await promise_rejects_dom(t, 'SyntaxError', session.prompt([
    {role: 'assistant', content: 'a', prefix: true}, {role: 'user', content: 'b'},
  ]), 'prefix not on the last message');
  await promise_rejects_dom(t, 'SyntaxError', session.append(
      [{role: 'user', content: 'a', prefix: true}]), 'append: prefix on user');
  assert_equals(session.contextUsage, 0, 'nothing was kept');
  assert_equals(await session.prompt([
    {role: 'user', content: 'Q: '}, {role: 'assistant', content: 'A:', prefix: true},
  ]), kPrefix + 'Q: A:', 'a last assistant prefix is echoed');
}, 'prefix on a non-assistant or non-last message is a SyntaxError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await promise_rejects_dom(t, 'SyntaxError', session.prompt(
      [{role: 'user', content: [{type: 'text', value: new ArrayBuffer(4)}]}]));
  await promise_rejects_dom(t, 'SyntaxError', session.append(
      [{role: 'user', content: [{type: 'text', value: document.createElement('canvas')}]}]));
}, 'A text content part whose value is not a string is a SyntaxError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'robot', content: 'a'}]));
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'user'}]));
  await promise_rejects_js(t, TypeError, session.prompt([{content: 'a'}]));
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'user', content: [{type: 'smell', value: 'x'}]}]));
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'user', content: [{type: 'text'}]}]));
  await promise_rejects_js(t, TypeError, session.prompt([5]));
  assert_equals(session.contextUsage, 0);
  assert_equals(await session.prompt('ok'), kPrefix + 'ok', 'the session is still usable');
}, 'Malformed messages are TypeErrors and leave the session usable');

promise_test(async () => {
  const session = await createLanguageModel();
  const reader = session.promptStreaming('cancelled').getReader();
  await reader.cancel();
  const answer = await session.prompt('after');
  assert_true(answer.endsWith('after'), `got ${JSON.stringify(answer)}`);
  assert_true(answer.startsWith(kPrefix) || answer === 'after' || answer === 'cancelledafter',
              `got ${JSON.stringify(answer)}`);
  assert_equals(await readStream(session.promptStreaming('again')), 'again');
}, "Cancelling a stream's reader leaves the session usable");

promise_test(async () => {
  const session = await createLanguageModel();
  const stream = session.promptStreaming('streamed');
  assert_true(stream instanceof ReadableStream);
  const reader = stream.getReader();
  const {value, done} = await reader.read();
  assert_false(done);
  assert_equals(value, kPrefix + 'streamed');
  assert_true((await reader.read()).done);
  assert_equals(session.contextUsage, 8 + (kPrefix + 'streamed').length);
}, 'promptStreaming() returns a ReadableStream of strings and counts the answer');
