// META: title=LanguageModel tool-call and tool-response content, and the LanguageModelTool* classes
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const kToolInputs = {expectedInputs: [{type: 'tool-call'}, {type: 'tool-response'}]};

// The JSON objects echoed inside <tag>...</tag>, in order.
function echoedJSON(text, tag) {
  const pattern = new RegExp(`<${tag}>(.*?)</${tag}>`, 'gs');
  return [...text.matchAll(pattern)].map((match) => JSON.parse(match[1]));
}

const weatherCall = () => new LanguageModelToolCall(
    {callId: 'c1', name: 'getWeather', arguments: {city: 'Paris', days: 2}});
const weatherSuccess = () => new LanguageModelToolSuccess({
  callId: 'c1', name: 'getWeather',
  result: [{type: 'text', value: 'sunny'}, {type: 'object', value: {high: 21, unit: 'C'}}],
});
const toolCallMessage = (value) => ({role: 'assistant', content: [{type: 'tool-call', value}]});
const toolResponseMessage = (value) => ({role: 'user', content: [{type: 'tool-response', value}]});

promise_test(async () => {
  await ensureLanguageModel(kToolInputs);
  const session = await createLanguageModel(kToolInputs);
  const answer = await session.prompt([
    {role: 'user', content: 'Weather? '},
    toolCallMessage(weatherCall()),
    toolResponseMessage(weatherSuccess()),
  ]);
  assert_true(answer.startsWith(kPrefix + 'Weather? <tool-call>'), answer);
  const [call] = echoedJSON(answer, 'tool-call');
  assert_equals(call.callId, 'c1');
  assert_equals(call.name, 'getWeather');
  assert_object_equals(call.arguments, {city: 'Paris', days: 2});
  const [response] = echoedJSON(answer, 'tool-response');
  assert_equals(response.callId, 'c1');
  assert_equals(response.name, 'getWeather');
  assert_array_equals(response.result.slice(0, 1), ['sunny'], 'the type field is dropped');
  assert_object_equals(response.result[1], {high: 21, unit: 'C'});
  assert_equals(response.result.length, 2);
  assert_false('errorMessage' in response);
  assert_true(answer.endsWith('</tool-response>'));
}, 'A tool call and a successful tool response echo as tagged JSON');

promise_test(async () => {
  const session = await createLanguageModel(kToolInputs);
  const answer = await session.prompt([toolResponseMessage(new LanguageModelToolError(
      {callId: 'c9', name: 'lookup', errorMessage: 'Not found: "x" <y>'}))]);
  const [response] = echoedJSON(answer, 'tool-response');
  assert_equals(response.callId, 'c9');
  assert_equals(response.name, 'lookup');
  assert_equals(response.errorMessage, 'Not found: "x" <y>');
  assert_false('result' in response);
}, 'A tool error echoes its errorMessage');

promise_test(async () => {
  const session = await createLanguageModel(kToolInputs);
  const answer = await session.prompt([
    toolCallMessage(new LanguageModelToolCall({callId: 'n1', name: 'noArgs'})),
    toolResponseMessage(new LanguageModelToolSuccess(
        {callID: 'n1', name: 'noArgs', result: [{type: 'text', value: 7}]})),
  ]);
  const [call] = echoedJSON(answer, 'tool-call');
  assert_object_equals(call.arguments, {}, 'absent arguments echo as {}');
  assert_equals(call.callId, 'n1');
  const [response] = echoedJSON(answer, 'tool-response');
  assert_equals(response.callId, 'n1', 'a callID init is echoed under callId');
  assert_array_equals(response.result, [7], 'a JSON value of type "text" is accepted');
}, 'Absent arguments echo as {}; callID in an init is accepted');

promise_test(async () => {
  const session = await createLanguageModel({
    ...kToolInputs,
    initialPrompts: [
      {role: 'user', content: 'Q'},
      toolCallMessage(weatherCall()),
      toolResponseMessage(weatherSuccess()),
    ],
  });
  assert_equals(session.contextUsage, 1 + 100 + 100, 'each tool part counts 100');
  await session.append([toolCallMessage(new LanguageModelToolCall(
      {callId: 'c2', name: 'getTime', arguments: {zone: 'UTC'}}))]);
  assert_equals(session.contextUsage, 301);
  assert_equals(await session.measureContextUsage(
      [toolResponseMessage(weatherSuccess()), {role: 'user', content: 'ok'}]), 102);
  const answer = await session.prompt('Done?');
  assert_true(answer.startsWith(kPrefix + 'Q<tool-call>'));
  assert_true(answer.endsWith('Done?'));
  const calls = echoedJSON(answer, 'tool-call');
  assert_array_equals(calls.map((c) => c.callId), ['c1', 'c2']);
  assert_object_equals(calls[1].arguments, {zone: 'UTC'});
  assert_equals(echoedJSON(answer, 'tool-response').length, 1);
}, 'Tool content in initialPrompts and append() is counted 100 and echoed by the next prompt()');

promise_test(async () => {
  const tools = [{
    name: 'getWeather',
    description: 'Weather for a city. Args: {"city": "Oslo"}',
    inputSchema: {type: 'object', properties: {city: {type: 'string'}}},
  }];
  const session = await createLanguageModel(
      {...kToolInputs, tools, expectedOutputs: [{type: 'text'}, {type: 'tool-call'}]});
  const result = await session.prompt('<GenerateSimpleToolCalls>weather?');
  assert_true(Array.isArray(result));
  const callPart = result.find((part) => part.type === 'tool-call');
  assert_true(callPart.value instanceof LanguageModelToolCall);
  const call = callPart.value;
  await session.append([toolCallMessage(call), toolResponseMessage(new LanguageModelToolSuccess(
      {callId: call.callId, name: call.name, result: [{type: 'object', value: {temp: -3}}]}))]);
  const answer = await session.prompt('so?');
  assert_equals(typeof answer, 'string');
  const [echoedCall] = echoedJSON(answer, 'tool-call');
  assert_equals(echoedCall.callId, 'call_1');
  assert_object_equals(echoedCall.arguments, {city: 'Oslo'});
  const [response] = echoedJSON(answer, 'tool-response');
  assert_equals(response.callId, 'call_1');
  assert_object_equals(response.result[0], {temp: -3});
}, 'A tool call the model made can be sent back with its response');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  const call = weatherCall();
  const response = weatherSuccess();
  await promise_rejects_js(t, TypeError, session.prompt(
      [{role: 'user', content: [{type: 'tool-call', value: call}]}]), 'tool-call in a user message');
  await promise_rejects_js(t, TypeError, session.prompt(
      [{role: 'system', content: [{type: 'tool-call', value: call}]}]), 'tool-call in a system message');
  await promise_rejects_js(t, TypeError, session.prompt(
      [{role: 'assistant', content: [{type: 'tool-response', value: response}]}]),
      'tool-response in an assistant message');
  await promise_rejects_js(t, TypeError, session.append(
      [{role: 'system', content: [{type: 'tool-response', value: response}]}]),
      'tool-response in a system message');
  await promise_rejects_js(t, TypeError, createLanguageModel({
    ...kToolInputs, initialPrompts: [{role: 'user', content: [{type: 'tool-call', value: call}]}],
  }), 'initialPrompts: tool-call in a user message');
}, 'Tool content in the wrong role is a TypeError');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'assistant', content: [
    {type: 'tool-call', value: {callId: 'c', name: 'n', arguments: {}}}]}]), 'a plain object');
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'assistant', content: [
    {type: 'tool-call', value: weatherSuccess()}]}]), 'a tool response as a tool call');
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'user', content: [
    {type: 'tool-response', value: weatherCall()}]}]), 'a tool call as a tool response');
  await promise_rejects_js(t, TypeError, session.prompt([{role: 'user', content: [
    {type: 'tool-response', value: 'done'}]}]), 'a string as a tool response');
}, 'A tool-call or tool-response value of the wrong class is a TypeError');

promise_test(async (t) => {
  const plain = await createLanguageModel();
  await promise_rejects_dom(t, 'NotSupportedError', plain.prompt([toolCallMessage(weatherCall())]),
                            'tool-call without expectedInputs');
  await promise_rejects_dom(t, 'NotSupportedError', plain.append([toolResponseMessage(weatherSuccess())]),
                            'tool-response without expectedInputs');
  const callsOnly = await createLanguageModel({expectedInputs: [{type: 'tool-call'}]});
  await promise_rejects_dom(t, 'NotSupportedError',
                            callsOnly.prompt([toolResponseMessage(weatherSuccess())]),
                            'tool-response with only tool-call expected');
  const responsesOnly = await createLanguageModel({expectedInputs: [{type: 'tool-response'}]});
  await promise_rejects_dom(t, 'NotSupportedError',
                            responsesOnly.prompt([toolCallMessage(weatherCall())]),
                            'tool-call with only tool-response expected');
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel({
    initialPrompts: [toolCallMessage(weatherCall())],
  }), 'initialPrompts without expectedInputs');
}, 'Tool content not listed in expectedInputs is a NotSupportedError');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  const circular = {a: 1};
  circular.self = circular;
  const cases = [
    ['an array', [1, 2]],
    ['a circular object', circular],
    ['a function', () => 1],
    ['an object holding a BigInt', {n: 1n}],
    ['a platform object', document.createElement('div')],
    ['a Blob', new Blob(['x'])],
  ];
  for (const [description, args] of cases) {
    const call = new LanguageModelToolCall({callId: 'x', name: 'n', arguments: args});
    await promise_rejects_dom(t, 'DataError', session.prompt([toolCallMessage(call)]), description);
  }
  assert_equals(session.contextUsage, 0);
}, 'Tool-call arguments that are not a serialisable JSON object are a DataError');

promise_test(async (t) => {
  // JSON.stringify() would silently drop a function member: the value is not
  // representable as JSON, so it is refused rather than sent without it.
  const session = await createLanguageModel(kToolInputs);
  const call = new LanguageModelToolCall(
      {callId: 'x', name: 'n', arguments: {q: 'a', callback() {}}});
  await promise_rejects_dom(t, 'DataError', session.prompt([toolCallMessage(call)]),
                            'a function in the arguments');
  const response = new LanguageModelToolSuccess({
    callId: 'x', name: 'n', result: [{type: 'object', value: {q: 'a', callback() {}}}],
  });
  await promise_rejects_dom(t, 'DataError', session.prompt([toolResponseMessage(response)]),
                            'a function in an object result');
  const topLevel = new LanguageModelToolSuccess(
      {callId: 'x', name: 'n', result: [{type: 'text', value: function() {}}]});
  await promise_rejects_dom(t, 'DataError', session.prompt([toolResponseMessage(topLevel)]),
                            'a function as a result value');
}, 'A function inside tool-call arguments or a tool result is a DataError');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  const canvas = document.createElement('canvas');
  for (const [type, value] of [['image', canvas], ['audio', new ArrayBuffer(8)]]) {
    const response = new LanguageModelToolSuccess({callId: 'x', name: 'n', result: [{type, value}]});
    await promise_rejects_dom(t, 'NotSupportedError', session.prompt([toolResponseMessage(response)]),
                              `${type} result`);
  }
}, 'Image or audio in a tool result is a NotSupportedError');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  for (const value of [5, 'text', true, null]) {
    const response = new LanguageModelToolSuccess(
        {callId: 'x', name: 'n', result: [{type: 'object', value}]});
    await promise_rejects_js(t, TypeError, session.prompt([toolResponseMessage(response)]),
                             `object result ${String(value)}`);
  }
}, 'An "object" tool result whose value is not an object is a TypeError');

promise_test(async (t) => {
  const session = await createLanguageModel(kToolInputs);
  const circular = {};
  circular.self = circular;
  const cases = [
    ['a circular object', 'object', circular],
    ['an object holding a BigInt', 'object', {n: 2n}],
    ['a platform object', 'object', document.createElement('span')],
    ['a BigInt text value', 'text', 3n],
  ];
  for (const [description, type, value] of cases) {
    const response = new LanguageModelToolSuccess({callId: 'x', name: 'n', result: [{type, value}]});
    await promise_rejects_dom(t, 'DataError', session.prompt([toolResponseMessage(response)]),
                              description);
  }
  assert_equals(session.contextUsage, 0);
}, 'A tool result value that cannot be serialised is a DataError');

promise_test(() => {
  const args = {q: 'x'};
  const call = new LanguageModelToolCall({callId: 'id1', name: 'search', arguments: args});
  assert_equals(call.callId, 'id1');
  assert_equals(call.callID, 'id1');
  assert_equals(call.name, 'search');
  assert_equals(call.arguments, args);
  const upper = new LanguageModelToolCall({callID: 'id2', name: 'search'});
  assert_equals(upper.callId, 'id2');
  assert_equals(upper.callID, 'id2');
  assert_equals(upper.arguments, null);
  const error = new LanguageModelToolError({callID: 'id3', name: 'search', errorMessage: 'bad'});
  assert_equals(error.callId, 'id3');
  assert_equals(error.callID, 'id3');
  assert_equals(error.errorMessage, 'bad');
  const success = new LanguageModelToolSuccess({callId: 4, name: 'search', result: []});
  assert_equals(success.callId, '4', 'converted to a string');
  assert_equals(success.callID, '4');
  return Promise.resolve();
}, 'The tool classes accept callId or callID and expose both getters');

promise_test(() => {
  assert_throws_js(TypeError, () => new LanguageModelToolCall({name: 'n'}), 'call without id');
  assert_throws_js(TypeError, () => new LanguageModelToolCall({callId: 'c'}), 'call without name');
  assert_throws_js(TypeError, () => new LanguageModelToolCall(), 'call without init');
  assert_throws_js(TypeError, () => new LanguageModelToolCall({callId: 'c', name: 'n', arguments: 5}),
                   'non-object arguments');
  assert_throws_js(TypeError, () => new LanguageModelToolCall({callId: 'c', name: 'n', arguments: null}),
                   'null arguments');
  assert_throws_js(TypeError, () => new LanguageModelToolSuccess({callId: 'c', name: 'n'}),
                   'success without result');
  assert_throws_js(TypeError, () => new LanguageModelToolSuccess({callId: 'c', name: 'n', result: 5}),
                   'result not a sequence');
  assert_throws_js(TypeError, () => new LanguageModelToolSuccess(
      {callId: 'c', name: 'n', result: [{type: 'video', value: 1}]}), 'unknown result type');
  assert_throws_js(TypeError, () => new LanguageModelToolSuccess(
      {callId: 'c', name: 'n', result: [{type: 'text'}]}), 'result item without value');
  assert_throws_js(TypeError, () => new LanguageModelToolError({callId: 'c', name: 'n'}),
                   'error without errorMessage');
  assert_throws_js(TypeError, () => new LanguageModelToolError({name: 'n', errorMessage: 'm'}),
                   'error without id');
  assert_throws_js(TypeError, () => LanguageModelToolCall({callId: 'c', name: 'n'}), 'without new');
  return Promise.resolve();
}, 'Missing required members, wrong types or a call without new are TypeErrors');

promise_test(() => {
  const value = {temp: 20};
  const input = [{type: 'object', value}, {type: 'text', value: 'ok'}];
  const success = new LanguageModelToolSuccess({callId: 'c', name: 'n', result: input});
  const result = success.result;
  assert_true(Array.isArray(result));
  assert_true(Object.isFrozen(result), 'the result array is frozen');
  assert_not_equals(result, input, 'a new array');
  assert_equals(result.length, 2);
  assert_equals(result[0].type, 'object');
  assert_equals(result[0].value, value, 'the value itself');
  assert_equals(result[1].value, 'ok');
  input.push({type: 'text', value: 'later'});
  assert_equals(success.result.length, 2, 'later changes to the init do not show');
  assert_throws_js(TypeError, () => { 'use strict'; result.push({type: 'text', value: 'x'}); });
  return Promise.resolve();
}, 'LanguageModelToolSuccess.result is a frozen copy of the result list');
