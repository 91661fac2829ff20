// META: title=LanguageModel.availability(): values, expected types, languages and sampling modes
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// The order of the first and last subtests matters: nothing creates a session
// until the last one, which checks how the first create() changes availability.

const kAllTypes = ['text', 'image', 'audio', 'tool-call', 'tool-response'];
const kSamplingModes = [
  'most-predictable', 'predictable', 'slightly-predictable', 'balanced',
  'slightly-creative', 'creative', 'most-creative',
];

promise_test(async () => {
  assert_equals(typeof LanguageModel.availability, 'function');
  const result = LanguageModel.availability();
  assert_true(result instanceof Promise, 'availability() returns a promise');
  assert_equals(await result, 'downloadable');
  assert_equals(await LanguageModel.availability({}), 'downloadable');
}, 'Before any create() in the page, availability() is "downloadable"');

promise_test(async () => {
  for (const options of [undefined, {}, null, {expectedInputs: []}, {expectedOutputs: []}]) {
    const availability = await LanguageModel.availability(options);
    assert_in_array(availability, kValidAvailabilities, `options ${JSON.stringify(options)}`);
    assert_not_equals(availability, 'unavailable', `options ${JSON.stringify(options)}`);
  }
}, 'availability() without options (or with empty ones) gives one of the four values, not "unavailable"');

promise_test(async () => {
  for (const type of kAllTypes) {
    const availability = await LanguageModel.availability({expectedInputs: [{type}]});
    assert_in_array(availability, kAvailableAvailabilities, `input type ${type}`);
  }
  const all = await LanguageModel.availability({expectedInputs: kAllTypes.map((type) => ({type}))});
  assert_in_array(all, kAvailableAvailabilities, 'all input types together');
}, 'Every message type is available as an expected input');

promise_test(async () => {
  for (const type of ['text', 'tool-call']) {
    const availability = await LanguageModel.availability({expectedOutputs: [{type}]});
    assert_in_array(availability, kAvailableAvailabilities, `output type ${type}`);
  }
}, 'text and tool-call are available as expected outputs');

promise_test(async () => {
  for (const type of ['image', 'audio']) {
    assert_equals(await LanguageModel.availability({expectedOutputs: [{type}]}), 'unavailable',
                  `output type ${type}`);
    assert_equals(await LanguageModel.availability(
                      {expectedOutputs: [{type: 'text'}, {type}]}), 'unavailable',
                  `text and ${type} outputs`);
  }
}, 'image and audio outputs are "unavailable", alone or next to text');

promise_test(async (t) => {
  for (const tag of ['not a tag', 'en_US', '', '123456789']) {
    await promise_rejects_js(t, RangeError, LanguageModel.availability(
        {expectedInputs: [{type: 'text', languages: [tag]}]}), `input language "${tag}"`);
    await promise_rejects_js(t, RangeError, LanguageModel.availability(
        {expectedOutputs: [{type: 'text', languages: ['en', tag]}]}), `output language "${tag}"`);
  }
}, 'An invalid language tag rejects with RangeError');

promise_test(async () => {
  for (const languages of [['en'], ['EN'], ['en-US'], ['en-us', 'EN-GB']]) {
    assert_in_array(await LanguageModel.availability(
                        {expectedInputs: [{type: 'text', languages}]}),
                    kAvailableAvailabilities, `input languages ${languages}`);
    assert_in_array(await LanguageModel.availability(
                        {expectedOutputs: [{type: 'text', languages}]}),
                    kAvailableAvailabilities, `output languages ${languages}`);
  }
}, 'English tags in any case or region are supported');

promise_test(async () => {
  for (const languages of [['fr'], ['ja'], ['en', 'fr']]) {
    assert_equals(await LanguageModel.availability(
                      {expectedInputs: [{type: 'text', languages}]}), 'unavailable',
                  `input languages ${languages}`);
    assert_equals(await LanguageModel.availability(
                      {expectedOutputs: [{type: 'text', languages}]}), 'unavailable',
                  `output languages ${languages}`);
  }
}, 'An unsupported language makes availability() "unavailable"');

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, LanguageModel.availability(
      {expectedInputs: [{type: 'soup'}]}), 'unknown input type');
  await promise_rejects_js(t, TypeError, LanguageModel.availability(
      {expectedOutputs: [{type: 'soup'}]}), 'unknown output type');
  await promise_rejects_js(t, TypeError, LanguageModel.availability(
      {expectedInputs: [{languages: ['en']}]}), 'missing required type');
}, 'An unknown or missing expected type rejects with TypeError');

promise_test(async (t) => {
  for (const samplingMode of kSamplingModes) {
    assert_in_array(await LanguageModel.availability({samplingMode}), kAvailableAvailabilities,
                    samplingMode);
  }
  await promise_rejects_js(t, TypeError, LanguageModel.availability({samplingMode: 'wild'}));
}, 'Each of the seven sampling modes is accepted; another string is a TypeError');

promise_test(async () => {
  // topK and temperature are extension-only; a window ignores them, so they
  // neither fail on their own nor conflict with samplingMode.
  assert_in_array(await LanguageModel.availability({topK: 3, temperature: 0.5}),
                  kAvailableAvailabilities);
  assert_in_array(await LanguageModel.availability(
                      {samplingMode: 'creative', topK: 3, temperature: 0.5}),
                  kAvailableAvailabilities);
}, 'topK and temperature are ignored in a window, even next to samplingMode');

promise_test(async (t) => {
  const tools = [{name: 'lookup', description: 'Looks up a word.', inputSchema: {type: 'object'}}];
  await promise_rejects_js(t, TypeError, LanguageModel.availability({tools}));
  assert_in_array(await LanguageModel.availability(
                      {tools, expectedOutputs: [{type: 'tool-call'}]}),
                  kAvailableAvailabilities);
}, 'Tools need a tool-call expected output');

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, LanguageModel.availability(5));
  await promise_rejects_js(t, TypeError, LanguageModel.availability('options'));
  await promise_rejects_js(t, TypeError, LanguageModel.availability({expectedInputs: 5}));
}, 'Options that are not a dictionary, or a sequence member that is not one, reject with TypeError');

promise_test(async () => {
  assert_equals(await LanguageModel.availability(), 'downloadable',
                'still downloadable before the first create()');
  const session = await createLanguageModel();
  assert_true(session instanceof LanguageModel);
  assert_equals(await LanguageModel.availability(), 'available');
  assert_equals(await LanguageModel.availability({expectedInputs: [{type: 'image'}]}),
                'available');
  assert_equals(await LanguageModel.availability({expectedOutputs: [{type: 'audio'}]}),
                'unavailable');
}, 'After the first successful create(), availability() is "available"');
