// META: title=Echo model: what it answers and how it counts (Chromium's test model)
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const utf8Length = (text) => new TextEncoder().encode(text).length;

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel({
    initialPrompts: [{role: 'system', content: 'Be brief. '}, {role: 'user', content: 'Hi. '}],
  });
  assert_equals(session.contextWindow, 1000);
  assert_equals(session.contextUsage, utf8Length('Be brief. Hi. '));
  const first = await session.prompt('Héllo');
  assert_equals(first, kPrefix + 'Be brief. Hi. Héllo');
  assert_equals(session.contextUsage, utf8Length('Be brief. Hi. Héllo') + utf8Length(first));
  assert_equals(await session.prompt('again'), 'again');
}, 'The first answer echoes the prefix, the initial prompts and the input; later ones the new input');

promise_test(async () => {
  const session = await createLanguageModel();
  await session.prompt('one');
  const before = session.contextUsage;
  assert_equals(await session.append([{role: 'user', content: 'two '}]), undefined);
  assert_equals(session.contextUsage, before + 4);
  assert_equals(await session.prompt('three'), 'two three');
}, 'append() input is echoed by the next prompt() and counted at once');

promise_test(async () => {
  const session = await createLanguageModel({expectedInputs: [{type: 'image'}, {type: 'audio'}]});
  const canvas = document.createElement('canvas');
  const audio = await (await fetch(kValidAudioPath)).arrayBuffer();
  const measured = await session.measureContextUsage([{
    role: 'user',
    content: [{type: 'text', value: 'a'}, {type: 'image', value: canvas},
              {type: 'audio', value: audio}, {type: 'text', value: 'b'}],
  }]);
  assert_equals(measured, 202);
  const answer = await session.prompt([{
    role: 'user', content: [{type: 'text', value: 'a'}, {type: 'image', value: canvas}],
  }]);
  assert_equals(answer, kPrefix + 'a<image>');
}, 'Images and audio echo as placeholders and count 100 each');

promise_test(async () => {
  const session = await createLanguageModel();
  const chunks = [];
  for await (const chunk of session.promptStreaming('streamed')) chunks.push(chunk);
  assert_array_equals(chunks, [kPrefix + 'streamed']);
}, 'promptStreaming() gives the answer text as one chunk');

promise_test(async () => {
  const session = await createLanguageModel();
  const schema = {type: 'object', properties: {rating: {type: 'number'}}};
  const guidance = '\n\nRemember to respond in JSON that follows this "JSON Schema" specification:\n' +
      JSON.stringify(schema);
  assert_equals(await session.measureContextUsage('x', {responseConstraint: schema}),
                1 + utf8Length(guidance));
  assert_equals(await session.measureContextUsage('x', {responseConstraint: schema,
                                                        omitResponseConstraintInput: true}), 1);
  assert_equals(await session.prompt('x', {responseConstraint: schema}), kPrefix + 'x' + guidance);
}, 'A JSON schema constraint is appended to the input, unless omitted');

promise_test(async () => {
  const session = await createLanguageModel();
  const first = session.prompt('first ');
  const second = session.prompt('second');
  const third = session.promptStreaming('third');
  assert_equals(await first, kPrefix + 'first ');
  assert_equals(await second, 'second');
  assert_equals(await readStreamToString(third), 'third');
}, 'Concurrent calls on one session run in call order, each with its own answer');

promise_test(async (t) => {
  const session = await createLanguageModel();
  let overflows = 0;
  session.oncontextoverflow = () => overflows++;
  const input = 'x'.repeat(300);
  await session.prompt(input);  // 300 + (88 + 300)
  assert_equals(overflows, 0);
  await session.prompt(input);  // +600: the first input is evicted
  assert_equals(overflows, 1);
  assert_less_than_equal(session.contextUsage, session.contextWindow);
  await promise_rejects_quotaexceedederror(t, session.prompt('y'.repeat(1001)), 1001, 1000);
}, 'The oldest history is evicted with contextoverflow; an input larger than the window is QuotaExceededError');

