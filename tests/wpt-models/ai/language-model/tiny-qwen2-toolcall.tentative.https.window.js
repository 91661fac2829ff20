// META: title=A real model behind LanguageModel: the tiny-qwen2-toolcall fixture
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// Run with the fixture as the page's model (python -m py_runtime.wpt --model
// tests/fixtures/tiny-qwen2-toolcall --dtype q4 FILE). Its README lists what it
// answers under greedy decoding; "most-predictable" is greedy here.

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
const kWithTools = {
  ...kGreedy,
  expectedInputs: [{type: 'tool-response'}],
  expectedOutputs: [{type: 'tool-call'}],
  tools: [kWeatherTool],
};
const kWeatherQuestion = 'What is the weather like in Paris today?';
const kWeatherAnswer = 'It is sunny and 18 degrees in Paris.';

function toolResult(call) {
  return [{
    role: 'user',
    content: [{
      type: 'tool-response',
      value: new LanguageModelToolSuccess({
        callId: call.callId,
        name: call.name,
        result: [{type: 'object', value: {temperature: 18, condition: 'sunny'}}],
      }),
    }],
  }];
}

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel(kGreedy);
  assert_equals(await session.prompt('Hello!'), 'Hello! How can I help you today?');
  const other = await createLanguageModel(kGreedy);
  assert_equals(await other.prompt('What is the capital of France?'),
                'The capital of France is Paris.');
}, 'The fixture answers its plain questions exactly');

promise_test(async () => {
  const session = await createLanguageModel(kWithTools);
  assert_equals(await session.prompt('Hello!'), 'Hello! How can I help you today?');
}, 'With a tool declared, a greeting is still answered with text');

promise_test(async () => {
  const session = await createLanguageModel(kWithTools);
  const result = await session.prompt(kWeatherQuestion);
  assert_true(Array.isArray(result), 'a tool call makes the result a list');
  assert_equals(result.length, 1);
  assert_equals(result[0].type, 'tool-call');
  const call = result[0].value;
  assert_true(call instanceof LanguageModelToolCall);
  assert_equals(call.name, 'get_weather');
  assert_equals(Object.getPrototypeOf(call.arguments), Object.prototype);
  assert_object_equals(call.arguments, {location: 'Paris'});
  assert_true(call.callId.length > 0);
  assert_equals(call.callID, call.callId);
  assert_equals(await session.prompt(toolResult(call)), kWeatherAnswer);
}, 'The tool loop through prompt(): call, LanguageModelToolSuccess, final answer');

promise_test(async () => {
  const session = await createLanguageModel(kWithTools);
  const chunks = await Array.fromAsync(session.promptStreaming(kWeatherQuestion));
  assert_equals(chunks.length, 1);
  assert_equals(chunks[0].type, 'tool-call');
  const call = chunks[0].value;
  assert_object_equals(call.arguments, {location: 'Paris'});
  const answer = await Array.fromAsync(session.promptStreaming(toolResult(call)));
  assert_greater_than(answer.length, 1, 'the answer streams in several chunks');
  assert_true(answer.every((chunk) => typeof chunk === 'string'));
  assert_equals(answer.join(''), kWeatherAnswer);
}, 'The tool loop through promptStreaming()');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  assert_equals(session.contextWindow, 2048);
  const measured = await session.measureContextUsage('Hello!');
  assert_greater_than(measured, 0);
  const before = session.contextUsage;
  await session.prompt('Hello!');
  assert_greater_than(session.contextUsage, before + measured);
}, 'Context is counted in tokens of the model');

promise_test(async (t) => {
  const session = await createLanguageModel(kGreedy);
  await session.prompt('Hello!');
  const usage = session.contextUsage;
  const controller = new AbortController();
  const stream = session.promptStreaming('What is the capital of France?',
                                         {signal: controller.signal});
  const reader = stream.getReader();
  await reader.read();  // generation has started
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', reader.read());
  assert_equals(session.contextUsage, usage, 'the aborted call left no trace');
  assert_equals(await session.prompt('What is the capital of France?'),
                'The capital of France is Paris.');
}, 'Aborting during generation leaves the session as it was');

promise_test(async () => {
  const session = await createLanguageModel(kWithTools);
  const [{value: call}] = await session.prompt(kWeatherQuestion);
  const clone = await session.clone();
  assert_equals(clone.contextUsage, session.contextUsage);
  assert_equals(await clone.prompt(toolResult(call)), kWeatherAnswer);
  assert_equals(await session.prompt(toolResult(call)), kWeatherAnswer);
  clone.destroy();
  assert_greater_than(await session.measureContextUsage('Hello!'), 0, 'the original still works');
}, 'A clone carries the conversation and its cache, and is independent');

// The closed loop: the same exchange, with the runtime running the tool.
const kClosedLoop = {
  ...kGreedy,
  expectedOutputs: [{type: 'tool-call'}],
  tools: [{
    ...kWeatherTool,
    annotations: {readOnlyHint: true},
    execute: async ({location}) => {
      assert_equals(location, 'Paris');
      return {temperature: 18, condition: 'sunny'};
    },
  }],
};

promise_test(async () => {
  const closed = await createLanguageModel(kClosedLoop);
  const seen = [];
  const streamed = await createLanguageModel({
    ...kClosedLoop,
    afterToolCall: (call, response) => { seen.push([call.name, response.result[0].value]); },
  });
  assert_equals(await closed.prompt(kWeatherQuestion), kWeatherAnswer);
  const chunks = await Array.fromAsync(streamed.promptStreaming(kWeatherQuestion));
  assert_equals(chunks.join(''), kWeatherAnswer);
  assert_equals(JSON.stringify(seen), JSON.stringify([['get_weather', {temperature: 18, condition: 'sunny'}]]));

  // The open loop by hand holds the same conversation, so the same usage.
  const open = await createLanguageModel(kWithTools);
  const [{value: call}] = await open.prompt(kWeatherQuestion);
  assert_equals(await open.prompt(toolResult(call)), kWeatherAnswer);
  assert_equals(closed.contextUsage, open.contextUsage, 'the call and its result are counted');
}, 'The closed loop on a real model: the runtime runs the call and the model answers from its result');

promise_test(async (t) => {
  const controller = new AbortController();
  const session = await createLanguageModel({
    ...kClosedLoop,
    tools: [{...kClosedLoop.tools[0], execute: async () => {
      controller.abort();
      return {temperature: 18, condition: 'sunny'};
    }}],
  });
  await promise_rejects_dom(t, 'AbortError', session.prompt(kWeatherQuestion, {signal: controller.signal}));
  // The call and its result were committed: the next turn answers from them.
  assert_equals(await session.prompt([]), kWeatherAnswer);
}, 'An abort while a real model\'s tool runs commits its result for the next turn');
