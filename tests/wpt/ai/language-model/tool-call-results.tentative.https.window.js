// META: title=prompt()'s result with tools: the default rule ("when-called"), and configuring the rule
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// With the default rule (../shared/wpt/'s), prompt() returns a list only when the
// answer holds a tool call. tests/wpt-always-array/ has the other rule's file.

const kTools = {
  expectedInputs: [{type: 'tool-call'}, {type: 'tool-response'}],
  expectedOutputs: [{type: 'text'}, {type: 'tool-call'}],
  tools: [{
    name: 'getWeather',
    description: 'Weather for a city. Args: {"city": "Oslo"}',
    inputSchema: {type: 'object', properties: {city: {type: 'string'}}},
  }],
};

test(() => {
  assert_throws_js(TypeError, () => promptAPIRuntime.configure({toolCallResults: 'sometimes'}));
}, 'configure() rejects an unknown toolCallResults rule with a TypeError');

promise_test(async () => {
  await ensureLanguageModel(kTools);
  const session = await createLanguageModel(kTools);
  assert_equals(typeof await session.prompt('Hello'), 'string');
  const result = await session.prompt('<GenerateSimpleToolCalls>weather?');
  assert_true(Array.isArray(result), 'a tool call makes a list');
  assert_true(result.some((part) => part.type === 'tool-call'));
}, 'When-called: a text answer is a string, an answer with a call is a list');

promise_test(async () => {
  assert_throws_dom('InvalidStateError',
                    () => promptAPIRuntime.configure({toolCallResults: 'always-array'}));
}, 'The rule cannot change once the runtime has started');
