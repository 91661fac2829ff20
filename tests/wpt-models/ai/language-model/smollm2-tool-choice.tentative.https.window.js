// META: title=SmolLM2 chooses a tool: the runtime's tool choice for prompted-tools models
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// Run with SmolLM2 as the page's model (python -m py_runtime.wpt --model smollm2 FILE).
// The choice is the in-page engine's (docs/tool-use.md): over a server engine
// (data-model="openai:URL") the engine's own chat template and tool format decide,
// so this file runs in the page only.

const kGreedy = {samplingMode: 'most-predictable'};
const kWeatherTool = {
  name: 'get_weather',
  description: 'Get the current weather for a location',
  inputSchema: {
    type: 'object',
    properties: {location: {type: 'string', description: 'City name'}},
    required: ['location'],
  },
};

promise_test(async () => {
  await ensureLanguageModel();
  // No worked example: the runtime asks the model which declared tool it leans to,
  // calibrated against a request for nothing, and opens that call when the margin is
  // wide (docs/tool-use.md). The arguments are the model's, held to the schema.
  const session = await createLanguageModel({
    ...kGreedy,
    expectedInputs: [{type: 'tool-response'}],
    expectedOutputs: [{type: 'tool-call'}],
    tools: [kWeatherTool, {
      name: 'set_timer',
      description: 'Start a countdown timer',
      inputSchema: {type: 'object', properties: {minutes: {type: 'number'}}, required: ['minutes']},
    }],
  });
  const result = await session.prompt('Set a timer for 10 minutes');
  assert_true(Array.isArray(result), `a tool call makes the result a list: ${result}`);
  assert_equals(result.length, 1, 'the call the runtime opened ends the answer');
  assert_equals(result[0].type, 'tool-call');
  assert_equals(result[0].value.name, 'set_timer');
  assert_object_equals(result[0].value.arguments, {minutes: 10});
  const answer = await session.prompt('What is the capital of France?');
  assert_equals(typeof answer, 'string', 'a request no tool serves is answered in text');
}, 'SmolLM2 calls the tool a request needs without a worked example, and none otherwise');
