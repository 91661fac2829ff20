// META: title=Constrained decoding on a model that answers noise: the tiny fixture
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: script=../resources/json-schema.js
// META: timeout=long

'use strict';

// Run with the fixture as the page's model (python -m py_runtime.wpt --model
// tests/fixtures/tiny-qwen2-toolcall FILE). The fixture answers six dialogues exactly
// and anything else with noise: sampled answers to other questions are what a model
// does worst, and every one must still parse and match. Values are bounded (noise
// never closes an unbounded string within the response's token limit).

const kSampled = {topK: 40, temperature: 1.5};
const kQuestions = ['Hello!', 'Tell me about the sea.', 'x'];

const kSchemas = [
  {type: 'boolean'},
  {type: 'integer', minimum: -5, maximum: 5},
  {type: 'integer', exclusiveMinimum: -3, exclusiveMaximum: 300},
  {type: 'string', maxLength: 8},
  {enum: ['red', 'green', 3, null]},
  {type: 'string', format: 'date-time'},
  {type: 'string', format: 'date'},
  {type: 'array', items: {type: 'integer', minimum: 0, maximum: 99}, minItems: 2, maxItems: 3},
  {
    type: 'object',
    properties: {
      name: {type: 'string', minLength: 1, maxLength: 10},
      zip: {type: 'string', pattern: '^[0-9]{5}$'},
      tags: {type: 'array', items: {enum: ['a', 'b']}, maxItems: 2},
    },
    required: ['name', 'zip', 'tags'],
    additionalProperties: false,
  },
];

for (const schema of kSchemas) {
  promise_test(async () => {
    await ensureLanguageModel();
    for (const question of kQuestions) {
      const session = await createLanguageModel(kSampled);
      const answer = await session.prompt(question, {responseConstraint: schema});
      assertMatches(JSON.parse(answer), schema);
    }
  }, `Noise held to ${JSON.stringify(schema)}`);
}

const kRegExps = [/\d{4}-\d{2}-\d{2}/, /(red|green|blue)/i, /[a-z]{1,8}@[a-z]{1,8}\.(com|org)/];

for (const regexp of kRegExps) {
  promise_test(async () => {
    for (const question of kQuestions) {
      const session = await createLanguageModel(kSampled);
      const answer = await session.prompt(question, {responseConstraint: regexp});
      assert_regexp_match(answer, new RegExp(`^(?:${regexp.source})$`, regexp.flags));
    }
  }, `Noise held whole to ${regexp}`);
}

promise_test(async () => {
  const schema = {
    type: 'object',
    properties: {location: {type: 'string', maxLength: 12}},
    required: ['location'],
    additionalProperties: false,
  };
  let calls = 0;
  for (const question of [...kQuestions, 'What is the weather like in Paris today?',
    'What is the weather like in Rome today?']) {
    for (let i = 0; i < 2; i++) {
      const session = await createLanguageModel({
        ...kSampled,
        expectedInputs: [{type: 'tool-response'}],
        expectedOutputs: [{type: 'tool-call'}],
        tools: [{name: 'get_weather', description: 'Get the current weather for a location',
                 inputSchema: schema}],
      });
      const result = await session.prompt(question);
      const parts = Array.isArray(result) ? result : [{type: 'text', value: result}];
      for (const {type, value} of parts) {
        if (type === 'text') {
          assert_false(value.includes('<tool_call>'), `no call left unfinished: ${value}`);
          continue;
        }
        assert_true(value instanceof LanguageModelToolCall);
        assert_equals(value.name, 'get_weather');
        assertMatches(value.arguments, schema, 'arguments');
        calls++;
      }
    }
  }
  assert_greater_than(calls, 0, 'the model called');
}, 'Every tool call the page gets names the declared tool with valid arguments');

promise_test(async (t) => {
  const session = await createLanguageModel(kSampled);
  await promise_rejects_dom(t, 'NotSupportedError',
                            session.prompt('x', {responseConstraint: {type: 'array', uniqueItems: true}}));
  await promise_rejects_dom(t, 'NotSupportedError', session.prompt('x', {responseConstraint: /\bx/}));
  const answer = await session.prompt('x', {responseConstraint: {type: 'boolean'}});
  assert_in_array(answer, ['true', 'false']);
}, 'What cannot be held is NotSupportedError, and the session stays usable');
