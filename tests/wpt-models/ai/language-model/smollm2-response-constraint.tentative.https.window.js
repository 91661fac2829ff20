// META: title=responseConstraint held token by token, on a real model: SmolLM2-135M-Instruct
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: script=../resources/json-schema.js
// META: timeout=long

'use strict';

// Run with SmolLM2 as the page's model (python -m py_runtime.wpt --model smollm2 FILE).
// A 135M model rarely writes valid JSON on its own; with a constraint every answer
// must parse and match, whatever the model would have said. Values are mostly bounded:
// an unbounded value can run on to the response cap (the answer then ends with its
// shortest valid completion), valid but slow in the page.

const kGreedy = {samplingMode: 'most-predictable'};
const kSampled = {topK: 40, temperature: 1.2};

const kTypes = [
  ['Is the sky blue?', {type: 'boolean'}],
  ['What is nothing?', {type: 'null'}],
  ['How many legs has a cat?', {type: 'integer', minimum: 0, maximum: 10}],
  ['How old is a teenager?', {type: 'integer', exclusiveMinimum: 12, exclusiveMaximum: 20}],
  ['Rate the movie Titanic from 0 to 5.', {type: 'number', minimum: 0, maximum: 5}],
  ['How warm is it in Oslo in winter, in degrees?',
   {type: 'number', exclusiveMinimum: -40.5, exclusiveMaximum: 10}],
  ['How many people live in Paris?', {type: 'integer'}],
  ['Name a fruit.', {type: 'string', minLength: 1, maxLength: 12}],
  ['Pick a color.', {enum: ['red', 'green', 'blue']}],
  ['List three animals.', {type: 'array', items: {type: 'string', maxLength: 10},
                           minItems: 3, maxItems: 3}],
];

for (const [question, schema] of kTypes) {
  promise_test(async () => {
    await ensureLanguageModel();
    const session = await createLanguageModel(kGreedy);
    const answer = await session.prompt(question, {responseConstraint: schema});
    assertMatches(JSON.parse(answer), schema);
  }, `A ${schema.type ?? 'enum'} schema holds SmolLM2's answer to "${question}"`);
}

const kPerson = {
  type: 'object',
  properties: {
    name: {type: 'string', minLength: 1, maxLength: 20},
    age: {type: 'integer', minimum: 0, maximum: 120},
    address: {
      type: 'object',
      properties: {
        city: {type: 'string', maxLength: 20},
        zip: {type: 'string', pattern: '^[0-9]{5}$'},
      },
      required: ['city', 'zip'],
      additionalProperties: false,
    },
    pets: {type: 'array', items: {
      type: 'object',
      properties: {kind: {enum: ['cat', 'dog']}, legs: {type: 'integer', minimum: 0, maximum: 4}},
      required: ['kind', 'legs'],
      additionalProperties: false,
    }, maxItems: 2},
  },
  required: ['name', 'age', 'address', 'pets'],
  additionalProperties: false,
};

promise_test(async () => {
  for (let i = 0; i < 3; i++) {
    const session = await createLanguageModel(kSampled);
    const answer = await session.prompt('Describe a person.', {responseConstraint: kPerson});
    assertMatches(JSON.parse(answer), kPerson);
    assert_false(/\n/.test(answer), 'one line');
  }
}, 'Nested objects and arrays hold sampled answers');

const kRegExps = [
  ['When is new year 2027?', /\d{4}-\d{2}-\d{2}/],
  ['What is the email of the support team at example.com?', /[a-z]{1,10}@[a-z]{1,10}\.com/],
  ['Is water wet? Answer yes or no.', /(yes|no)/i],
  ['List three colors.', /[A-Za-z]{1,10}(, [A-Za-z]{1,10}){2}/],
];

for (const [question, regexp] of kRegExps) {
  promise_test(async () => {
    const session = await createLanguageModel(kGreedy);
    const answer = await session.prompt(question, {responseConstraint: regexp});
    assert_regexp_match(answer, new RegExp(`^(?:${regexp.source})$`, regexp.flags));
  }, `The RegExp ${regexp} holds the whole answer to "${question}"`);
}

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  const prefix = '{"name": "Ada';
  const answer = await session.prompt([
    {role: 'user', content: 'Describe a person.'},
    {role: 'assistant', content: prefix, prefix: true},
  ], {responseConstraint: kPerson});
  const value = JSON.parse(prefix + answer);
  assertMatches(value, kPerson);
  assert_true(value.name.startsWith('Ada'));
}, 'An assistant prefix is continued within the schema');

promise_test(async (t) => {
  const session = await createLanguageModel(kGreedy);
  await promise_rejects_dom(t, 'NotSupportedError', session.prompt([
    {role: 'user', content: 'Describe a person.'},
    {role: 'assistant', content: '{"nickname": ', prefix: true},
  ], {responseConstraint: kPerson}));
  await promise_rejects_dom(t, 'NotSupportedError', session.prompt([
    {role: 'user', content: 'When?'},
    {role: 'assistant', content: '2026/', prefix: true},
  ], {responseConstraint: /\d{4}-\d{2}/}));
  assert_equals(session.contextUsage, 0, 'nothing was kept');
  const answer = await session.prompt('Is the sky blue?', {responseConstraint: {type: 'boolean'}});
  assert_in_array(answer, ['true', 'false']);
}, 'A prefix the constraint rejects is NotSupportedError, and the session stays usable');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  const schema = {type: 'integer', minimum: 0, maximum: 10};
  const withText = await session.measureContextUsage('How many legs has a cat?',
                                                     {responseConstraint: schema});
  const omitted = await session.measureContextUsage(
      'How many legs has a cat?', {responseConstraint: schema, omitResponseConstraintInput: true});
  assert_less_than(omitted, withText, 'the schema text is not in the input');
  const answer = await session.prompt('How many legs has a cat?',
                                      {responseConstraint: schema, omitResponseConstraintInput: true});
  assertMatches(JSON.parse(answer), schema);
}, 'omitResponseConstraintInput leaves the schema out of the input, and it still holds');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  let streamed = '';
  for await (const chunk of session.promptStreaming('Describe a person.',
                                                    {responseConstraint: kPerson})) {
    assert_equals(typeof chunk, 'string');
    streamed += chunk;
  }
  assertMatches(JSON.parse(streamed), kPerson);
}, 'promptStreaming() streams an answer that holds');

promise_test(async (t) => {
  const session = await createLanguageModel(kGreedy);
  const controller = new AbortController();
  const stream = session.promptStreaming('Describe a person.',
                                         {responseConstraint: kPerson, signal: controller.signal});
  const reader = stream.getReader();
  await reader.read();
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', reader.read().then(function drain(r) {
    return r.done ? r : reader.read().then(drain);
  }));
  const answer = await session.prompt('Is the sky blue?', {responseConstraint: {type: 'boolean'}});
  assert_in_array(answer, ['true', 'false']);
}, 'An aborted constrained answer leaves the session answering, held to a new constraint');

promise_test(async (t) => {
  const session = await createLanguageModel(kGreedy);
  const error = await session.prompt('Pick a number.',
                                     {responseConstraint: {type: 'integer', multipleOf: 3}})
      .then(() => null, (e) => e);
  assert_true(error instanceof DOMException, 'a DOMException');
  assert_equals(error.name, 'NotSupportedError');
  assert_true(error.message.includes('multipleOf'), `it names the keyword: ${error.message}`);
  await promise_rejects_dom(t, 'NotSupportedError', session.prompt(
      'Pick a number.', {responseConstraint: {type: 'number', multipleOf: 0.5}}));
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt('Say a word.', {responseConstraint: /(?=a)b/}));
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt('Say a word.', {responseConstraint: /a/v}));
}, 'What a grammar cannot hold is NotSupportedError at prompt() time');

promise_test(async () => {
  const kWeatherTool = {
    name: 'get_weather',
    description: 'Get the current weather for a location',
    inputSchema: {
      type: 'object',
      properties: {location: {type: 'string', maxLength: 30}},
      required: ['location'],
      additionalProperties: false,
    },
  };
  const session = await createLanguageModel({
    ...kGreedy,
    expectedInputs: [{type: 'tool-call'}, {type: 'tool-response'}],
    expectedOutputs: [{type: 'tool-call'}],
    tools: [kWeatherTool],
    initialPrompts: [
      {role: 'user', content: 'What is the weather in Rome?'},
      {role: 'assistant', content: [{type: 'tool-call', value: new LanguageModelToolCall(
          {callId: 'call_example', name: 'get_weather', arguments: {location: 'Rome'}})}]},
    ],
  });
  let calls = 0;
  for (const question of ['What is the weather in Paris?', 'Is it raining in Oslo?']) {
    const result = await session.prompt(question);
    for (const {type, value} of Array.isArray(result) ? result : []) {
      if (type !== 'tool-call') continue;
      assert_true(value instanceof LanguageModelToolCall);
      assert_equals(value.name, 'get_weather');
      assertMatches(value.arguments, kWeatherTool.inputSchema, 'arguments');
      calls++;
    }
  }
  assert_greater_than(calls, 0, 'SmolLM2 called the tool');
}, 'Tool calls are held to the declared tool and its inputSchema');
