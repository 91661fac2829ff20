// META: title=LanguageModel image and audio input: value types, placeholders, usage and errors
// META: script=/resources/testdriver.js
// META: script=/resources/testdriver-vendor.js
// META: script=../resources/util.js
// META: timeout=long

'use strict';

const kPrefix =
    'On-device model is not available in Chromium, this API is just echoing back the input:\n';
const kMultimodalOptions = {expectedInputs: [{type: 'image'}, {type: 'audio'}]};

async function fetchBytes(path) {
  return new Uint8Array(await (await fetch(path)).arrayBuffer());
}

// The bytes inside a larger buffer, viewed at an offset.
function viewWithOffset(bytes, ViewType = Uint8Array) {
  const buffer = new ArrayBuffer(bytes.byteLength + 24);
  new Uint8Array(buffer).fill(0);
  new Uint8Array(buffer, 16, bytes.byteLength).set(bytes);
  return new ViewType(buffer, 16, bytes.byteLength);
}

// One session per value: its first answer is the prefix, the text and the placeholder.
async function checkMedia(type, value, description) {
  const session = await createLanguageModel(kMultimodalOptions);
  const message = messageWithContent('look: ', type, value);
  assert_equals(await session.measureContextUsage(message), 6 + 100, `${description}: measured`);
  assert_equals(await session.prompt(message), `${kPrefix}look: <${type}>`, `${description}: echo`);
  assert_equals(session.contextUsage, 106 + (`${kPrefix}look: <${type}>`).length,
                `${description}: usage`);
}

function loadImage(path) {
  const image = new Image();
  image.src = path;
  return image.decode().then(() => image);
}

promise_test(async () => {
  await ensureLanguageModel(kMultimodalOptions);
  const blob = await (await fetch(kValidImagePath)).blob();
  await checkMedia('image', blob, 'JPEG Blob');
  const canvasBlob = await new Promise((resolve) => createColorGridCanvas(8, 8).toBlob(resolve));
  await checkMedia('image', canvasBlob, 'PNG Blob from a canvas');
}, 'An image Blob is accepted, echoed as <image> and counted 100');

promise_test(async () => {
  const bytes = await fetchBytes(kValidImagePath);
  await checkMedia('image', bytes.buffer.slice(0), 'ArrayBuffer');
  await checkMedia('image', viewWithOffset(bytes), 'Uint8Array at an offset');
  await checkMedia('image', viewWithOffset(bytes, DataView), 'DataView at an offset');
}, 'Image bytes as ArrayBuffer, typed array view with offset and DataView are accepted');

promise_test(async () => {
  const canvas = createColorGridCanvas(16, 16);
  await checkMedia('image', await createImageBitmap(canvas), 'ImageBitmap');
  await checkMedia('image', canvas.getContext('2d').getImageData(0, 0, 16, 16), 'ImageData');
  await checkMedia('image', new ImageData(2, 2), 'blank ImageData');
}, 'ImageBitmap and ImageData are accepted');

promise_test(async () => {
  await checkMedia('image', createColorGridCanvas(16, 16), 'HTMLCanvasElement');
  await checkMedia('image', createColorGridCanvas(16, 16, true), 'OffscreenCanvas');
}, 'HTMLCanvasElement and OffscreenCanvas are accepted');

promise_test(async () => {
  await checkMedia('image', await loadImage(kValidImagePath), 'JPEG <img>');
  await checkMedia('image', await loadImage(kValidSVGImagePath), 'SVG <img>');
}, 'HTMLImageElement (JPEG and SVG) is accepted');

promise_test(async (t) => {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const image = document.createElementNS('http://www.w3.org/2000/svg', 'image');
  image.setAttribute('width', '32');
  image.setAttribute('height', '32');
  const loaded = new Promise((resolve, reject) => {
    image.addEventListener('load', resolve, {once: true});
    image.addEventListener('error', () => reject(new Error('SVG image failed to load')), {once: true});
  });
  image.setAttribute('href', kValidImagePath);
  svg.append(image);
  document.body.append(svg);
  t.add_cleanup(() => svg.remove());
  await loaded;
  await checkMedia('image', image, 'SVGImageElement');
}, 'SVGImageElement is accepted once loaded');

promise_test(async () => {
  const frame = new VideoFrame(createColorGridCanvas(16, 16), {timestamp: 0});
  try {
    await checkMedia('image', frame, 'VideoFrame');
  } finally {
    frame.close();
  }
}, 'VideoFrame is accepted');

promise_test(async (t) => {
  const video = document.createElement('video');
  video.muted = true;
  video.autoplay = true;
  video.playsInline = true;
  video.src = kValidVideoPath;
  document.body.append(video);
  t.add_cleanup(() => video.remove());
  await video.play();
  if (video.readyState < HTMLMediaElement.HAVE_CURRENT_DATA) {
    await new Promise((resolve) => video.addEventListener('loadeddata', resolve, {once: true}));
  }
  await checkMedia('image', video, 'HTMLVideoElement');
}, 'HTMLVideoElement (muted, playing) is accepted');

promise_test(async () => {
  const buffer = new AudioBuffer({length: 16000, sampleRate: 16000, numberOfChannels: 1});
  buffer.getChannelData(0).fill(0.25);
  await checkMedia('audio', buffer, 'AudioBuffer');
  const decoded = await new OfflineAudioContext(1, 1, 16000).decodeAudioData(
      (await fetchBytes(kValidAudioPath)).buffer);
  await checkMedia('audio', decoded, 'decoded AudioBuffer');
}, 'AudioBuffer is accepted, echoed as <audio> and counted 100');

promise_test(async () => {
  const bytes = await fetchBytes(kValidAudioPath);
  await checkMedia('audio', await (await fetch(kValidAudioPath)).blob(), 'Blob');
  await checkMedia('audio', bytes.buffer.slice(0), 'ArrayBuffer');
  await checkMedia('audio', viewWithOffset(bytes), 'Uint8Array at an offset');
  await checkMedia('audio', viewWithOffset(bytes, DataView), 'DataView at an offset');
}, 'Audio as Blob, ArrayBuffer, typed array view with offset and DataView is accepted');

promise_test(async () => {
  const canvas = createColorGridCanvas(8, 8);
  const audio = await (await fetch(kValidAudioPath)).blob();
  const session = await createLanguageModel({
    ...kMultimodalOptions,
    initialPrompts: [{role: 'user', content: [{type: 'image', value: canvas}, {type: 'text', value: 'i'}]}],
  });
  assert_equals(session.contextUsage, 101);
  await session.append([{role: 'user', content: [{type: 'audio', value: audio}]}]);
  assert_equals(session.contextUsage, 201);
  const input = [{role: 'user', content: [
    {type: 'text', value: 'a'}, {type: 'image', value: canvas}, {type: 'audio', value: audio},
    {type: 'image', value: canvas}, {type: 'text', value: 'b'},
  ]}];
  assert_equals(await session.measureContextUsage(input), 302);
  assert_equals(await session.prompt(input), kPrefix + '<image>i<audio>a<image><audio><image>b');
}, 'Several media parts in initialPrompts, append() and prompt() echo in order and count 100 each');

promise_test(async (t) => {
  const session = await createLanguageModel(kMultimodalOptions);
  const values = [
    ['bytes that are no image', new Uint8Array([1, 2, 3, 4, 5])],
    ['a text Blob', new Blob(['not an image'], {type: 'text/plain'})],
    ['an empty ArrayBuffer', new ArrayBuffer(0)],
  ];
  for (const [description, value] of values) {
    const message = messageWithContent('x', 'image', value);
    await promise_rejects_dom(t, 'InvalidStateError', session.prompt(message), `prompt: ${description}`);
    await promise_rejects_dom(t, 'InvalidStateError', session.append(message), `append: ${description}`);
    await promise_rejects_dom(t, 'InvalidStateError', session.measureContextUsage(message),
                              `measureContextUsage: ${description}`);
  }
  assert_equals(session.contextUsage, 0);
  assert_equals(await session.prompt('ok'), kPrefix + 'ok');
}, 'Image bytes or Blobs that do not decode reject with InvalidStateError');

promise_test(async (t) => {
  const session = await createLanguageModel(kMultimodalOptions);
  const values = [
    ['bytes that are no audio', new Uint8Array(64).fill(7)],
    ['a text Blob', new Blob(['not audio'])],
    ['an image file', await fetchBytes(kValidImagePath)],
  ];
  for (const [description, value] of values) {
    const message = messageWithContent('x', 'audio', value);
    await promise_rejects_dom(t, 'DataError', session.prompt(message), `prompt: ${description}`);
    await promise_rejects_dom(t, 'DataError', session.append(message), `append: ${description}`);
  }
  assert_equals(session.contextUsage, 0);
  assert_equals(await session.prompt('ok'), kPrefix + 'ok');
}, 'Audio that does not decode rejects with DataError');

promise_test(async (t) => {
  const session = await createLanguageModel(kMultimodalOptions);
  const audioBuffer = new AudioBuffer({length: 10, sampleRate: 8000});
  const wrong = [
    ['image', 'a string', 'not an image'],
    ['image', 'a number', 42],
    ['image', 'an AudioBuffer', audioBuffer],
    ['audio', 'a string', 'not audio'],
    ['audio', 'a canvas', createColorGridCanvas(4, 4)],
    ['audio', 'an ImageData', new ImageData(1, 1)],
  ];
  for (const [type, description, value] of wrong) {
    await promise_rejects_js(t, TypeError, session.prompt(messageWithContent('x', type, value)),
                             `${type}: ${description}`);
  }
}, 'An image or audio value of the wrong type is a TypeError');

promise_test(async (t) => {
  const canvas = createColorGridCanvas(4, 4);
  const audio = new AudioBuffer({length: 10, sampleRate: 8000});
  const textOnly = await createLanguageModel();
  await promise_rejects_dom(t, 'NotSupportedError', textOnly.prompt(messageWithContent('x', 'image', canvas)));
  await promise_rejects_dom(t, 'NotSupportedError', textOnly.append(messageWithContent('x', 'audio', audio)));
  await promise_rejects_dom(t, 'NotSupportedError',
                            textOnly.measureContextUsage(messageWithContent('x', 'image', canvas)));
  const imageOnly = await createLanguageModel(kImageOptions);
  await promise_rejects_dom(t, 'NotSupportedError', imageOnly.prompt(messageWithContent('x', 'audio', audio)));
  const audioOnly = await createLanguageModel(kAudioOptions);
  await promise_rejects_dom(t, 'NotSupportedError', audioOnly.prompt(messageWithContent('x', 'image', canvas)));
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel({
    initialPrompts: messageWithContent('x', 'image', canvas),
  }), 'initialPrompts without expectedInputs');
}, 'Image or audio not listed in expectedInputs is a NotSupportedError');

promise_test(async (t) => {
  const session = await createLanguageModel(kMultimodalOptions);
  const canvas = createColorGridCanvas(4, 4);
  const audio = new AudioBuffer({length: 10, sampleRate: 8000});
  for (const [type, value] of [['image', canvas], ['audio', audio]]) {
    await promise_rejects_dom(t, 'NotSupportedError', session.prompt([
      {role: 'user', content: 'q'}, {role: 'assistant', content: [{type, value}]},
    ]), `${type} in an assistant message`);
    await promise_rejects_dom(t, 'NotSupportedError', session.append([
      {role: 'assistant', content: [{type, value}]},
    ]), `append: ${type} in an assistant message`);
  }
  await promise_rejects_dom(t, 'NotSupportedError', createLanguageModel({
    ...kMultimodalOptions,
    initialPrompts: [{role: 'assistant', content: [{type: 'image', value: canvas}]}],
  }), 'initialPrompts: image in an assistant message');
}, 'Image or audio in an assistant message is a NotSupportedError');

promise_test(async (t) => {
  const session = await createLanguageModel(kMultimodalOptions);
  await promise_rejects_dom(t, 'SyntaxError', session.prompt(
      [{role: 'user', content: [{type: 'text', value: createColorGridCanvas(4, 4)}]}]));
  await promise_rejects_dom(t, 'SyntaxError', session.prompt(
      [{role: 'user', content: [{type: 'text', value: new AudioBuffer({length: 1, sampleRate: 8000})}]}]));
}, 'A text part whose value is an image or audio object is a SyntaxError');
