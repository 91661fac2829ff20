// META: title=LanguageModel responseConstraint and omitResponseConstraintInput
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const utf8Length = (text) => new TextEncoder().encode(text).length;
const guidance = (schema) =>
    '\n\nRemember to respond in JSON that follows this "JSON Schema" specification:\n' +
    JSON.stringify(schema);

const kSchema = {type: 'object', properties: {answer: {type: 'string', enum: ['yés', 'no']}}};

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel();
  const answer = await session.prompt('Rate it', {responseConstraint: kSchema});
  assert_equals(answer, kPrefix + 'Rate it' + guidance(kSchema));
  assert_equals(session.contextUsage,
                utf8Length('Rate it' + guidance(kSchema)) + utf8Length(answer));
}, 'A JSON schema is appended to the input, echoed and counted');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(await session.measureContextUsage('Rate it', {responseConstraint: kSchema}),
                utf8Length('Rate it' + guidance(kSchema)));
  assert_equals(await readStream(session.promptStreaming('S', {responseConstraint: kSchema})),
                kPrefix + 'S' + guidance(kSchema));
}, 'measureContextUsage() and promptStreaming() include the schema text too');

promise_test(async () => {
  const session = await createLanguageModel();
  const answer = await session.prompt([
    {role: 'user', content: 'Q1 '},
    {role: 'assistant', content: 'A1 '},
    {role: 'user', content: 'Q2'},
    {role: 'assistant', content: '{"answer":', prefix: true},
  ], {responseConstraint: kSchema});
  assert_equals(answer, kPrefix + 'Q1 A1 Q2' + guidance(kSchema) + '{"answer":');
}, 'The schema text goes at the end of the last user message');

promise_test(async () => {
  const session = await createLanguageModel();
  const options = {responseConstraint: kSchema, omitResponseConstraintInput: true};
  assert_equals(await session.measureContextUsage('Rate it', options), 7);
  assert_equals(await session.prompt('Rate it', options), kPrefix + 'Rate it');
  assert_equals(await readStream(session.promptStreaming('again', options)), 'again');
  assert_equals(session.contextUsage, 7 + utf8Length(kPrefix + 'Rate it') + 10);
}, 'omitResponseConstraintInput leaves the schema out of the input and the usage');

promise_test(async (t) => {
  const session = await createLanguageModel();
  const circular = {type: 'object'};
  circular.self = circular;
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt('x', {responseConstraint: circular}), 'circular');
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt('x', {responseConstraint: {type: 'object', max: 10n}}),
                            'BigInt');
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.measureContextUsage('x', {responseConstraint: circular}),
                            'measureContextUsage, circular');
  // promptStreaming() may throw at once or error the stream.
  await promise_rejects_dom(t, 'NotSupportedError',
                            (async () => readStream(session.promptStreaming(
                                'x', {responseConstraint: circular})))(),
                            'promptStreaming, circular');
  assert_equals(session.contextUsage, 0);
  assert_equals(await session.prompt('ok'), kPrefix + 'ok', 'the session is still usable');
}, 'A schema that cannot be serialised is a NotSupportedError');

promise_test(async () => {
  const session = await createLanguageModel();
  const regexp = /[a-z]+/;
  assert_equals(await session.prompt('letters', {responseConstraint: regexp}), kPrefix + 'letters',
                'a RegExp adds no text to the input');
  assert_equals(await session.measureContextUsage('abc', {responseConstraint: /^\d+$/}), 3);
  assert_equals(await readStream(session.promptStreaming('more', {responseConstraint: /x/g})),
                'more');
}, 'A RegExp constraint is accepted and adds nothing to the input');

promise_test(async (t) => {
  const session = await createLanguageModel();
  const input = [{role: 'user', content: 'Pick: '}, {role: 'assistant', content: 'yes', prefix: true}];
  assert_equals(await session.prompt(input, {responseConstraint: /^yes|no/}),
                kPrefix + 'Pick: yes', 'a pattern that starts with the prefix');
  assert_equals(await session.prompt(input, {responseConstraint: /^yes, indeed/}),
                'Pick: yes', 'a pattern that continues the prefix');
  assert_equals(await session.prompt(input, {responseConstraint: /no$/}),
                'Pick: yes', 'an unanchored pattern is not checked');
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt(input, {responseConstraint: /^no/}),
                            'an anchored pattern that deviates');
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt(input, {responseConstraint: /^ye$/}),
                            'an anchored pattern shorter than the prefix');
  await promise_rejects_dom(t, 'NotSupportedError',
                            readStream(session.promptStreaming(input, {responseConstraint: /^x/})),
                            'promptStreaming, deviating');
}, 'An anchored RegExp must agree with the assistant prefix, else NotSupportedError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  for (const constraint of ['{"type":"string"}', 42, true]) {
    await promise_rejects_js(t, TypeError, session.prompt('x', {responseConstraint: constraint}),
                             `prompt, ${typeof constraint}`);
    await promise_rejects_js(t, TypeError,
                             session.measureContextUsage('x', {responseConstraint: constraint}),
                             `measureContextUsage, ${typeof constraint}`);
    assert_throws_js(TypeError,
                     () => session.promptStreaming('x', {responseConstraint: constraint}),
                     `promptStreaming, ${typeof constraint}`);
  }
}, 'A responseConstraint that is not an object is a TypeError');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await promise_rejects_js(t, TypeError,
                           session.measureContextUsage('x', {omitResponseConstraintInput: true}));
  assert_equals(await session.measureContextUsage('x', {omitResponseConstraintInput: false}), 1);
}, 'measureContextUsage() with omitResponseConstraintInput but no responseConstraint is a TypeError');

promise_test(async () => {
  const session = await createLanguageModel();
  const schema = {type: 'object', properties: {n: {type: 'number'}}};
  await session.prompt('first');
  const answer = await session.prompt('second', {responseConstraint: schema});
  assert_equals(answer, 'second' + guidance(schema));
  assert_equals(await session.prompt('third'), 'third', 'the constraint applies to one call only');
}, 'A constraint applies only to the call it is given to');

promise_test(async () => {
  const session = await createLanguageModel();
  const schema = {toJSON: () => ({type: 'string'})};
  assert_equals(await session.prompt('x', {responseConstraint: schema}),
                kPrefix + 'x' + guidance({type: 'string'}));
}, 'The schema text is the JSON serialisation of the object');
