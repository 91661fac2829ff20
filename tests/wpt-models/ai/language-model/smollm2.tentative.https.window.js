// META: title=A real instruct model behind LanguageModel: SmolLM2-135M-Instruct
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// Run with SmolLM2 as the page's model (python -m py_runtime.wpt --model smollm2
// --dtype q8 FILE; `python -m py_runtime models prepare smollm2` makes it). The
// answers are a real model's: the tests check what any faithful run of it gives
// (greedy decoding, "most-predictable"), not text fitted to it.

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
// SmolLM2's template has no tool format: the runtime writes the declarations into the
// system prompt, and one worked example (a question and the assistant's call) in the
// initial prompts is what makes a 135M model call (docs/models.md).
const kWithTools = {
  ...kGreedy,
  expectedInputs: [{type: 'tool-call'}, {type: 'tool-response'}],
  expectedOutputs: [{type: 'tool-call'}],
  tools: [kWeatherTool],
  initialPrompts: [
    {role: 'user', content: 'What is the weather in Rome?'},
    {role: 'assistant', content: [{
      type: 'tool-call',
      value: new LanguageModelToolCall(
          {callId: 'call_example', name: 'get_weather', arguments: {location: 'Rome'}}),
    }]},
  ],
};

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel(kGreedy);
  const answer = await session.prompt('What is the capital of France?');
  assert_equals(typeof answer, 'string');
  assert_true(answer.includes('Paris'), `the answer names Paris: ${answer}`);
  assert_less_than(answer.length, 400, 'a short question gets a short answer');
}, 'SmolLM2 answers a factual question, greedily');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  const other = await createLanguageModel(kGreedy);
  const text = await session.prompt('Name a color of the sky.');
  let streamed = '';
  let chunks = 0;
  for await (const chunk of other.promptStreaming('Name a color of the sky.')) {
    assert_equals(typeof chunk, 'string');
    streamed += chunk;
    chunks++;
  }
  assert_greater_than(chunks, 1, 'the answer streams token by token');
  assert_equals(streamed, text, 'streaming gives the same greedy answer');
}, 'promptStreaming() streams the same answer prompt() gives');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  await session.prompt('My favourite fruit is the mango.');
  const usage = session.contextUsage;
  const measured = await session.measureContextUsage('What is my favourite fruit?');
  assert_greater_than(measured, 0);
  const second = await session.prompt('What is my favourite fruit?');
  assert_true(second.toLowerCase().includes('mango'),
              `the session remembers the first turn: ${second}`);
  assert_greater_than(session.contextUsage, usage + measured - 1);
  assert_equals(session.contextWindow, 8192);
}, 'A conversation keeps its history (KV reuse) and counts real tokens');

promise_test(async (t) => {
  const session = await createLanguageModel(kGreedy);
  await session.prompt('What is the capital of France?');
  const usage = session.contextUsage;
  const controller = new AbortController();
  const reader = session.promptStreaming('Write a long story about a dragon.',
                                         {signal: controller.signal}).getReader();
  await reader.read();
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', reader.read());
  assert_equals(session.contextUsage, usage, 'the aborted call left no trace');
  const again = await session.prompt('What is the capital of France?');
  assert_true(again.includes('Paris'), 'the session still answers');
}, 'An abort mid-answer stops it and rolls the session back');

promise_test(async () => {
  const session = await createLanguageModel(kGreedy);
  await session.prompt('What is the capital of France?');
  const clone = await session.clone();
  assert_equals(clone.contextUsage, session.contextUsage);
  const question = 'And of Italy?';
  const fromClone = await clone.prompt(question);
  const fromSession = await session.prompt(question);
  assert_equals(fromClone, fromSession, 'the clone holds the same context');
}, 'clone() copies the conversation and its cache');

promise_test(async () => {
  const session = await createLanguageModel(kWithTools);
  const result = await session.prompt('What is the weather in Paris?');
  assert_true(Array.isArray(result), `a tool call makes the result a list: ${result}`);
  const calls = result.filter((part) => part.type === 'tool-call');
  assert_equals(calls.length, 1);
  const call = calls[0].value;
  assert_true(call instanceof LanguageModelToolCall);
  assert_equals(call.name, 'get_weather');
  assert_object_equals(call.arguments, {location: 'Paris'});
  const answer = await session.prompt([{
    role: 'user',
    content: [{
      type: 'tool-response',
      value: new LanguageModelToolSuccess({
        callId: call.callId,
        name: call.name,
        result: [{type: 'object', value: {temperature: 18, condition: 'sunny'}}],
      }),
    }],
  }]);
  assert_equals(typeof answer, 'string', 'the model answers the result in text');
  assert_true(answer.includes('Paris'), answer);
  assert_true(answer.includes('sunny'), answer);
}, 'SmolLM2 calls a declared tool and answers from its result (the tool loop)');

promise_test(async () => {
  const calls = [];
  const session = await createLanguageModel({
    ...kWithTools,
    tools: [{
      ...kWeatherTool,
      execute: async (args) => {
        calls.push(args);
        return {temperature: 18, condition: 'sunny'};
      },
    }],
  });
  const answer = await session.prompt('What is the weather in Paris?');
  assert_equals(typeof answer, 'string');
  assert_equals(JSON.stringify(calls), JSON.stringify([{location: 'Paris'}]), 'the runtime ran the call');
  assert_true(answer.includes('Paris'), answer);
  assert_true(answer.includes('sunny'), answer);
}, 'SmolLM2 in a closed loop: the runtime runs the call and the model answers from its result');
