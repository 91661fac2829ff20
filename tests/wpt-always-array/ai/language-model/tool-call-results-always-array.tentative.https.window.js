// META: title=prompt()'s result with tools under toolCallResults "always-array"
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// Run with the rule switched on by the script tag: python -m py_runtime.wpt
// --tool-call-results always-array FILE (data-tool-call-results="always-array"), as
// Chromium's newer WPT expects: a session whose expectedOutputs lists tool-call gets a
// list from prompt() for every answer.

const kTools = {
  expectedInputs: [{type: 'tool-call'}, {type: 'tool-response'}],
  expectedOutputs: [{type: 'text'}, {type: 'tool-call'}],
  tools: [{
    name: 'getWeather',
    description: 'Weather for a city. Args: {"city": "Oslo"}',
    inputSchema: {type: 'object', properties: {city: {type: 'string'}}},
  }],
};

promise_test(async () => {
  await ensureLanguageModel(kTools);
  const session = await createLanguageModel(kTools);
  const result = await session.prompt('Hello');
  assert_true(Array.isArray(result), 'a text-only answer is a list too');
  assert_equals(result.length, 1);
  assert_equals(result[0].type, 'text');
  assert_true(result[0].value.endsWith('Hello'), result[0].value);
  const withCall = await session.prompt('<GenerateSimpleToolCalls>weather?');
  assert_true(Array.isArray(withCall));
  assert_true(withCall.some((part) => part.type === 'tool-call'));
}, 'With tool-call expected, every answer is a list of contents');

promise_test(async () => {
  const clone = await (await createLanguageModel(kTools)).clone();
  assert_true(Array.isArray(await clone.prompt('Hi')), 'clone() keeps the rule');
}, 'A clone answers with a list too');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(typeof await session.prompt('Hello'), 'string');
}, 'Without tool-call in expectedOutputs, answers stay strings');
