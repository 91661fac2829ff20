// Shared helpers for the ai/ WPT tests, in the spirit of Chromium's
// third_party/blink/web_tests/external/wpt/ai/resources/util.js.

const kTestPrompt = 'Please write a sentence in English.';

// Fails (as "not implemented") when there is no LanguageModel, and asserts
// the model is not unavailable for `options`.
async function ensureLanguageModel(options = {}) {
  assert_implements(!!self.LanguageModel, 'LanguageModel is not supported');
  assert_not_equals(await LanguageModel.availability(options), 'unavailable');
}

// Creates a session with real user activation (create() may need it).
async function createLanguageModel(options = {}) {
  await test_driver.bless('Create LanguageModel');
  return await LanguageModel.create(options);
}

// Like `promise_rejects_dom`, for an already-aborted `signal` passed to a
// call built by `createPromise(signal)`.
async function testAbortPromise(t, createPromise) {
  const controller = new AbortController();
  controller.abort();
  await promise_rejects_dom(t, 'AbortError', createPromise(controller.signal));
  const reason = new Error('custom abort reason');
  const reasonController = new AbortController();
  reasonController.abort(reason);
  await promise_rejects_exactly(t, reason, createPromise(reasonController.signal));
}

// Reads a ReadableStream of strings into one string.
async function readStreamToString(stream) {
  let result = '';
  for await (const chunk of stream) {
    result += chunk;
  }
  return result;
}
