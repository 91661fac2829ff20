// Image and audio values are decoded in the page before the engine sees them,
// as Chromium does: the engine then rejects undecodable ones (InvalidStateError
// for images, DataError for audio) at the right step of the prompt validation.

function bytesOf(source) {
  const view = ArrayBuffer.isView(source)
    ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : new Uint8Array(source);
  return view.slice(); // decoders may detach what they are given
}

async function imageDecodes(value) {
  if (value instanceof HTMLImageElement) await value.decode();
  const source = value instanceof Blob || value instanceof ArrayBuffer || ArrayBuffer.isView(value)
    ? new Blob([value instanceof Blob ? value : bytesOf(value)])
    : value;
  (await createImageBitmap(source)).close();
}

async function audioDecodes(value) {
  if (globalThis.AudioBuffer && value instanceof AudioBuffer) return;
  const bytes = value instanceof Blob ? await value.arrayBuffer() : bytesOf(value).buffer;
  await new OfflineAudioContext(1, 1, 16000).decodeAudioData(bytes);
}

/** Mark each collected media value's descriptor with `decoded: true/false`. */
export async function decodeMedia(media) {
  await Promise.all(media.map(async ({ type, value, described }) => {
    try {
      await (type === 'image' ? imageDecodes(value) : audioDecodes(value));
      described.decoded = true;
    } catch {
      described.decoded = false;
    }
  }));
}
