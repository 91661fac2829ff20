// META: title=LanguageModel context: contextUsage, contextWindow, measureContextUsage(), overflow and quota
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const utf8Length = (text) => new TextEncoder().encode(text).length;

promise_test(async () => {
  await ensureLanguageModel();
  const session = await createLanguageModel();
  assert_equals(typeof session.contextUsage, 'number');
  assert_equals(typeof session.contextWindow, 'number');
  assert_equals(session.contextUsage, 0);
  assert_equals(session.contextWindow, 1000);
}, 'A new session has contextUsage 0 and contextWindow 1000');

promise_test(async () => {
  const text = 'aé€😀';  // 1 + 2 + 3 + 4 bytes
  const session = await createLanguageModel({
    initialPrompts: [{role: 'system', content: text}, {role: 'user', content: [{type: 'text', value: 'bc'}]}],
  });
  assert_equals(session.contextUsage, 12);
  const answer = await session.prompt(text);
  assert_equals(answer, kPrefix + text + 'bc' + text);
  assert_equals(session.contextUsage, 12 + 10 + utf8Length(answer));
}, 'contextUsage counts UTF-8 bytes of the initial prompts, the input and the answer');

promise_test(async () => {
  const session = await createLanguageModel();
  const measured = await session.measureContextUsage('measure me');
  assert_equals(typeof measured, 'number');
  assert_equals(measured, 10);
  assert_equals(await session.measureContextUsage(''), 0);
  assert_equals(await session.measureContextUsage([]), 0);
  assert_equals(await session.measureContextUsage([
    {role: 'user', content: 'ab'}, {role: 'assistant', content: [{type: 'text', value: 'çd'}]},
  ]), 5);
}, 'measureContextUsage() gives the UTF-8 byte count of the input');

promise_test(async () => {
  const session = await createLanguageModel();
  await session.prompt('warm up');
  const before = session.contextUsage;
  const measured = await session.measureContextUsage('counted later');
  assert_equals(session.contextUsage, before, 'measuring changes no usage');
  const answer = await session.prompt('counted later');
  assert_equals(answer, 'counted later', 'the measured input was not added to the context');
  assert_equals(session.contextUsage, before + measured + utf8Length(answer));
}, 'measureContextUsage() matches the growth of a prompt and adds nothing itself');

promise_test(async () => {
  const session = await createLanguageModel();
  const input = [{role: 'user', content: 'x'.repeat(50)}, {role: 'assistant', content: 'é'.repeat(25)}];
  const measured = await session.measureContextUsage(input);
  const before = session.contextUsage;
  await session.append(input);
  assert_equals(session.contextUsage - before, measured);
  assert_equals(measured, 100);
}, 'measureContextUsage() matches the growth of an append');

promise_test(async () => {
  const session = await createLanguageModel();
  const order = [];
  let event = null;
  session.addEventListener('contextoverflow', (e) => {
    order.push('event');
    event = e;
  });
  const input = 'x'.repeat(300);
  await session.prompt(input);  // 300 + 388
  assert_array_equals(order, [], 'no overflow yet');
  const second = session.prompt(input).then(() => order.push('resolved'));
  await second;
  assert_array_equals(order, ['event', 'resolved'], 'the event fires before the prompt resolves');
  assert_true(event instanceof Event);
  assert_equals(event.type, 'contextoverflow');
  assert_equals(event.target, session);
  assert_less_than_equal(session.contextUsage, session.contextWindow);
  assert_greater_than_equal(session.contextUsage, 600, 'the latest input and answer stay');
}, 'Going over the window evicts old history and fires contextoverflow before the prompt resolves');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_equals(session.oncontextoverflow, null);
  const events = [];
  const handler = function(e) { events.push([this, e.type]); };
  session.oncontextoverflow = handler;
  assert_equals(session.oncontextoverflow, handler);
  await session.append('x'.repeat(600));
  await session.append('y'.repeat(600));
  assert_equals(events.length, 1);
  assert_equals(events[0][0], session, 'the handler is called on the session');
  assert_equals(events[0][1], 'contextoverflow');
  assert_equals(session.contextUsage, 600, 'only the second append is still counted');
}, 'oncontextoverflow is called when append() evicts history');

promise_test(async () => {
  const session = await createLanguageModel({initialPrompts: [{role: 'system', content: 's'.repeat(200)}]});
  let overflows = 0;
  session.oncontextoverflow = () => overflows++;
  await session.append('a'.repeat(500));
  await session.append('b'.repeat(500));
  assert_equals(overflows, 1);
  assert_equals(session.contextUsage, 700, 'the initial prompts stay; the oldest append went');
  session.oncontextoverflow = null;
  await session.append('c'.repeat(500));
  assert_equals(overflows, 1, 'a null handler is not called');
}, 'Eviction never removes the initial prompts');

promise_test(async (t) => {
  const session = await createLanguageModel();
  await session.prompt('keep');
  const usage = session.contextUsage;
  let overflows = 0;
  session.oncontextoverflow = () => overflows++;
  await promise_rejects_quotaexceedederror(t, session.prompt('z'.repeat(1001)), 1001, 1000);
  await promise_rejects_quotaexceedederror(t, session.append('z'.repeat(1200)), 1200, 1000);
  await promise_rejects_quotaexceedederror(
      t, readStream(session.promptStreaming('€'.repeat(334))), 1002, 1000);
  assert_equals(overflows, 0, 'no contextoverflow for an input that cannot fit');
  assert_equals(session.contextUsage, usage, 'usage unchanged');
  assert_equals(await session.prompt('next'), 'next', 'the session is still usable');
  assert_equals(await session.measureContextUsage('m'.repeat(1500)), 1500,
                'measureContextUsage() does not check the quota');
}, 'An input larger than the window alone rejects with QuotaExceededError; the session stays usable');

promise_test(async (t) => {
  const session = await createLanguageModel({initialPrompts: [{role: 'system', content: 'i'.repeat(100)}]});
  await promise_rejects_quotaexceedederror(t, session.prompt('w'.repeat(950)), 1050, 1000);
  assert_equals(session.contextUsage, 100);
}, 'QuotaExceededError counts the initial prompts in requested');

promise_test(async () => {
  assert_equals(typeof QuotaExceededError, 'function', 'a global QuotaExceededError');
  assert_true(QuotaExceededError.prototype instanceof DOMException);
  const session = await createLanguageModel();
  const error = await session.prompt('q'.repeat(1001)).then(
      () => assert_unreached('must reject'), (e) => e);
  assert_true(error instanceof QuotaExceededError);
  assert_true(error instanceof DOMException);
  assert_equals(error.constructor, QuotaExceededError);
  assert_equals(error.name, 'QuotaExceededError');
  assert_equals(error.code, 22);
  assert_equals(error.requested, 1001);
  assert_equals(error.quota, 1000);
}, 'QuotaExceededError is a DOMException subclass with code 22 and requested/quota');

promise_test(async () => {
  const session = await createLanguageModel();
  assert_false('measureInputUsage' in session, 'measureInputUsage');
  assert_equals(session.inputUsage, undefined, 'inputUsage');
  assert_equals(session.inputQuota, undefined, 'inputQuota');
  assert_false('inputUsage' in session, 'inputUsage is not a member');
  assert_false('onquotaoverflow' in session, 'onquotaoverflow');
  let fired = 0;
  session.onquotaoverflow = () => fired++;  // an ordinary expando property
  session.addEventListener('quotaoverflow', () => fired++);
  await session.append('x'.repeat(600));
  await session.append('x'.repeat(600));
  assert_equals(fired, 0, 'no quotaoverflow event in a window');
}, 'The deprecated extension-only members are absent in a window');
