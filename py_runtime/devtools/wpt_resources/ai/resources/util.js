// Our ai/resources/util.js: the helpers WPT-style Prompt API tests expect
// (the names Chromium's and WPT's copies define), written for this runner.

const kValidAvailabilities = ['unavailable', 'downloadable', 'downloading', 'available'];
const kAvailableAvailabilities = ['downloadable', 'downloading', 'available'];

const kTestPrompt = 'Please write a sentence in English.';
const kTestPrompt2 = 'Please write another sentence in English.';
const kTestContext = 'This is a test; this is only a test.';
const kAudioPrompt = 'transcribe this';
const kImagePrompt = 'describe this';

// Media served by the runner (py_runtime/devtools/wpt_resources/media, images).
const kValidAudioPath = '/media/speech.wav';
const kValidImagePath = '/images/computer.jpg';
const kValidSVGImagePath = '/images/pattern.svg';
const kValidVideoPath = '/media/test.webm';

const kAudioOptions = {expectedInputs: [{type: 'audio'}]};
const kImageOptions = {expectedInputs: [{type: 'image'}]};

function matchKeywordsRegex(keywords) {
  return new RegExp(`(${keywords.join('|')})`, 'i');
}

const kValidAudioKeywords = ['audio', 'speech', 'sentence', 'single', 'segment'];
const kValidCanvasImageKeywords = ['image', 'red', 'green', 'blue', 'yellow', 'grid', 'color'];
const kValidImageKeywords = ['image', 'computer', 'keyboard', 'desk', 'PC', 'monitor', 'screen'];
const kValidSVGImageKeywords = ['image', 'red', 'green', 'blue', 'black'];
const kValidVideoKeywords =
    ['image', 'bip', 'black', 'white', 'yellow', 'green', 'blue', 'red', 'video', 'screen'];
const kValidAudioRegex = matchKeywordsRegex(kValidAudioKeywords);
const kValidCanvasImageRegex = matchKeywordsRegex(kValidCanvasImageKeywords);
const kValidImageRegex = matchKeywordsRegex(kValidImageKeywords);
const kValidSVGImageRegex = matchKeywordsRegex(kValidSVGImageKeywords);
const kValidVideoRegex = matchKeywordsRegex(kValidVideoKeywords);

// Older suites take these two from util.js, newer ones from their own
// json-schema/util.js: global properties (not declarations), so that a later
// `const` or `function` of the same name still loads.
globalThis.kValidResponseSchema = {
  type: 'object',
  required: ['Rating'],
  additionalProperties: false,
  properties: {Rating: {type: 'number', minimum: 0, maximum: 5}},
};

// Older suites' tolerance check: |actual - expected| <= delta.
function isValueInRange(actual, expected, delta = 5) {
  return Math.abs(actual - expected) <= delta;
}

let nextId = 0;
const getId = () => nextId++;

// [{a: [1, 2]}, {b: ['x', undefined]}] -> [{a: 1, b: 'x'}, {a: 1}, {a: 2, b: 'x'}, {a: 2}]
function generateOptionCombinations(optionsSpec) {
  let combinations = [{}];
  for (const spec of optionsSpec) {
    const [[key, values]] = Object.entries(spec);
    combinations = combinations.flatMap((combination) => values.map(
        (value) => value === undefined ? {...combination} : {...combination, [key]: value}));
  }
  return combinations;
}

async function ensureLanguageModel(options = {}) {
  assert_true(!!self.LanguageModel, 'LanguageModel is defined');
  const availability = await LanguageModel.availability(options);
  assert_in_array(availability, kValidAvailabilities);
  assert_implements_optional(availability !== 'unavailable', 'LanguageModel is unavailable');
}

// create() may need user activation: give it with a real click first.
async function createLanguageModel(options = {}) {
  await test_driver.bless('create a LanguageModel');
  return LanguageModel.create(options);
}

function consumeTransientUserActivation() {
  window.open('about:blank', '_blank')?.close();
}

// `method(signal)` returns a promise: aborting rejects it with AbortError, or
// with the abort reason; an already-aborted signal does the same.
async function testAbortPromise(t, method) {
  for (const reason of [undefined, new Error('test')]) {
    const controller = new AbortController();
    const pending = method(controller.signal);
    controller.abort(reason);
    const check = (promise) => reason === undefined ?
        promise_rejects_dom(t, 'AbortError', promise) :
        promise_rejects_exactly(t, reason, promise);
    await check(pending);
    await check(method(controller.signal));
  }
}

// `method(signal)` returns a ReadableStream: aborting errors it; with an
// already-aborted signal, `method` throws.
async function testAbortReadableStream(t, method) {
  for (const reason of [undefined, new DOMException('test', 'VersionError')]) {
    const controller = new AbortController();
    const stream = method(controller.signal);
    controller.abort(reason);
    const check = (promise) => reason === undefined ?
        promise_rejects_dom(t, 'AbortError', promise) :
        promise_rejects_exactly(t, reason, promise);
    await check(stream.pipeTo(new WritableStream()));
    await check(new Promise(() => method(controller.signal)));
  }
}

// Checks the downloadprogress events of `createFunc(options)`; returns its result.
async function testMonitor(createFunc, options = {}) {
  let resolved = false;
  const events = [];
  const monitor = (m) => m.addEventListener('downloadprogress', (event) => {
    assert_false(resolved, 'no downloadprogress after create() resolved');
    events.push(event);
  });
  const result = await createFunc({...options, monitor});
  resolved = true;
  assert_greater_than_equal(events.length, 2);
  assert_equals(events[0].loaded, 0);
  assert_equals(events.at(-1).loaded, 1);
  let previous = -1;
  for (const event of events) {
    assert_true(event.lengthComputable);
    assert_equals(event.total, 1);
    assert_equals(event.loaded % (1 / 0x10000), 0, 'loaded is a multiple of 1/65536');
    assert_greater_than(event.loaded, previous, 'loaded increases');
    previous = event.loaded;
  }
  return result;
}

// Aborting when the event with `loaded` arrives rejects create with the reason.
async function testCreateMonitorWithAbortAt(t, loadedToAbortAt, method, options = {}) {
  const {promise: reached, resolve} = Promise.withResolvers();
  let seen = false;
  const monitor = (m) => m.addEventListener('downloadprogress', (event) => {
    if (event.loaded !== loadedToAbortAt) return;
    assert_false(seen, 'no more events after the abort');
    seen = true;
    resolve();
  });
  const controller = new AbortController();
  const created = method({...options, monitor, signal: controller.signal});
  await reached;
  const reason = new Error('test');
  controller.abort(reason);
  await promise_rejects_exactly(t, reason, created);
}

async function testCreateMonitorWithAbort(t, method, options = {}) {
  await testCreateMonitorWithAbortAt(t, 0, method, options);
  await testCreateMonitorWithAbortAt(t, 1, method, options);
}

async function testCreateMonitorCallbackThrowsError(t, createFunc, options = {}) {
  const error = new Error('CreateMonitorCallback threw an error');
  const monitor = (m) => {
    m.addEventListener('downloadprogress', () => assert_unreached('no events after the throw'));
    throw error;
  };
  await promise_rejects_exactly(t, error, createFunc({...options, monitor}));
}

// After destroy(), pending and new calls reject with `name`.
async function testDestroy(t, createMethod, options, instanceMethods, name = 'AbortError') {
  const instance = await createMethod(options);
  const promises = instanceMethods.map((method) => method(instance));
  instance.destroy();
  promises.push(...instanceMethods.map((method) => method(instance)));
  for (const promise of promises) await promise_rejects_dom(t, name, promise);
}

// Aborting the create() signal later destroys the instance with the reason.
async function testCreateAbort(t, createMethod, options, instanceMethods) {
  const controller = new AbortController();
  const instance = await createMethod({...options, signal: controller.signal});
  const promises = instanceMethods.map((method) => method(instance));
  const reason = new Error('The create abort signal was aborted.');
  controller.abort(reason);
  promises.push(...instanceMethods.map((method) => method(instance)));
  for (const promise of promises) await promise_rejects_exactly(t, reason, promise);
}

function load_iframe(src, permissionPolicy) {
  const iframe = document.createElement('iframe');
  const loaded = new Promise((resolve) => iframe.addEventListener('load', () => resolve(iframe)));
  iframe.src = src;
  iframe.allow = permissionPolicy;
  document.body.append(iframe);
  return loaded;
}

function run_iframe_test(iframe, testName) {
  const id = getId();
  const {promise, resolve, reject} = Promise.withResolvers();
  window.onmessage = ({data}) => {
    if (data.id !== id) return;
    if (data.success) resolve(data.success);
    else reject(data.err);
  };
  iframe.contentWindow.postMessage({id, type: testName}, '*');
  return promise;
}

function messageWithContent(prompt, type, value) {
  return [{role: 'user', content: [{type: 'text', value: prompt}, {type, value}]}];
}

// A canvas split into red, green, blue and yellow quarters.
function createColorGridCanvas(width, height, isOffscreen = false) {
  const canvas = isOffscreen ? new OffscreenCanvas(width, height) :
                               Object.assign(document.createElement('canvas'), {width, height});
  const context = canvas.getContext('2d');
  const [w, h] = [width / 2, height / 2];
  for (const [color, x, y] of [['red', 0, 0], ['green', w, 0], ['blue', 0, h], ['yellow', w, h]]) {
    context.fillStyle = color;
    context.fillRect(x, y, w, h);
  }
  return canvas;
}

globalThis.testResponseJsonSchema = function testResponseJsonSchema(response) {
  let parsed;
  try {
    parsed = JSON.parse(response);
  } catch (error) {
    assert_unreached(`The response is not JSON: ${response} (${error.message})`);
  }
  assert_equals(typeof parsed, 'object');
  assert_own_property(parsed, 'Rating');
  assert_equals(typeof parsed.Rating, 'number');
  assert_greater_than_equal(parsed.Rating, 0);
  assert_less_than_equal(parsed.Rating, 5);
};

// A ReadableStream of strings, joined.
async function readStream(stream) {
  return (await Array.fromAsync(stream)).join('');
}
const readStreamToString = readStream;
