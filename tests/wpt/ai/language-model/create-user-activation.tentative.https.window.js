// META: title=LanguageModel.create(): user activation while the model is "downloadable"
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

// The subtests run in order: the first ones have no user activation at all,
// then one gives activation and lets it lapse to sticky-only.

promise_test(async (t) => {
  assert_false(navigator.userActivation.hasBeenActive, 'the page has had no activation');
  assert_equals(await LanguageModel.availability(), 'downloadable');
  await promise_rejects_dom(t, 'NotAllowedError', LanguageModel.create());
  await promise_rejects_dom(t, 'NotAllowedError', LanguageModel.create({
    initialPrompts: [{role: 'system', content: 'Be brief.'}],
  }));
}, 'Without any user activation, create() rejects with NotAllowedError while "downloadable"');

promise_test(async () => {
  assert_false(navigator.userActivation.hasBeenActive);
  let events = 0;
  const created = LanguageModel.create({
    monitor: (m) => m.addEventListener('downloadprogress', () => events++),
  });
  await created.then(() => assert_unreached('create() must not resolve'), () => {});
  assert_equals(events, 0, 'no downloadprogress event');
  assert_equals(await LanguageModel.availability(), 'downloadable');
}, 'A create() refused for lack of activation starts no download and leaves availability "downloadable"');

promise_test(async (t) => {
  assert_false(navigator.userActivation.hasBeenActive);
  await promise_rejects_dom(t, 'NotSupportedError', LanguageModel.create(
      {expectedInputs: [{type: 'text', languages: ['fr']}]}));
  await promise_rejects_dom(t, 'NotSupportedError', LanguageModel.create(
      {expectedOutputs: [{type: 'image'}]}));
}, 'Without activation, options that are "unavailable" still reject with NotSupportedError');

promise_test(async (t) => {
  assert_false(navigator.userActivation.hasBeenActive);
  await promise_rejects_js(t, RangeError, LanguageModel.create(
      {expectedInputs: [{type: 'text', languages: ['not a tag']}]}));
  await promise_rejects_js(t, TypeError, LanguageModel.create(
      {expectedInputs: [{type: 'soup'}]}));
  await promise_rejects_js(t, TypeError, LanguageModel.create({
    initialPrompts: [{role: 'user', content: 'hi'}, {role: 'system', content: 'late'}],
  }));
}, 'Without activation, invalid options reject with their own TypeError or RangeError');

promise_test(async (t) => {
  assert_false(navigator.userActivation.hasBeenActive);
  const controller = new AbortController();
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', LanguageModel.create({signal: controller.signal}));
  const reason = new Error('already aborted');
  await promise_rejects_exactly(
      t, reason, LanguageModel.create({signal: AbortSignal.abort(reason)}));
}, 'Without activation, an already-aborted signal rejects with its reason, not NotAllowedError');

promise_test(async () => {
  assert_equals(await LanguageModel.availability(), 'downloadable');
  await test_driver.bless('activate the page');
  consumeTransientUserActivation();
  // create() is called in the same task, before anything can activate the page again.
  assert_false(navigator.userActivation.isActive, 'the transient activation was consumed');
  assert_true(navigator.userActivation.hasBeenActive, 'sticky activation remains');
  const loaded = [];
  const session = await LanguageModel.create({
    monitor: (m) => m.addEventListener('downloadprogress', (e) => loaded.push(e.loaded)),
  });
  assert_true(session instanceof LanguageModel);
  assert_array_equals(loaded, [0, 1], 'the first create() reports the download');
  assert_equals(await session.prompt('hi'),
                'On-device model is not available in Chromium, this API is just echoing back the input:\nhi');
}, 'Sticky user activation alone is enough for the first create()');

promise_test(async () => {
  // No activation check here: activation is not needed once "available" (the
  // NotAllowedError subtest above covers the "downloadable" side).
  assert_equals(await LanguageModel.availability(), 'available');
  const session = await LanguageModel.create({initialPrompts: [{role: 'system', content: 'x'}]});
  assert_true(session instanceof LanguageModel);
  assert_equals(session.contextUsage, 1);
}, 'Once "available", create() works without new activation');
