// A graph with its weights inside (one big .onnx file) as a small graph whose weights
// are external data in that same file: each initializer's raw_data is left where it is
// and referenced by offset and length, so ONNX Runtime's JSPI build reads them from a
// Blob of the cached file, a weight at a time, instead of parsing the whole file in its
// wasm heap (which fails from about 1.5 GB: std::bad_alloc). Only the protobuf's
// structure is read, through small slices of the Blob; the weights are never read here.
//
// ModelProto.graph = 7; GraphProto.initializer = 5; TensorProto.raw_data = 9,
// .external_data = 13 (StringStringEntryProto: key = 1, value = 2), .data_location = 14
// (EXTERNAL = 1). Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.

const GRAPH = 7;
const INITIALIZER = 5;
const RAW_DATA = 9;
const EXTERNAL_DATA = 13;
const DATA_LOCATION = 14;
/** What is read of the Blob at a time while walking its fields. */
const WINDOW = 1 << 16;

/** Reads a Blob's bytes through a moving window. */
class Reader {
  constructor(blob) {
    this.blob = blob;
    this.start = 0;
    this.bytes = new Uint8Array(0);
  }

  /** At least `count` bytes from `at` (fewer at the end of the Blob). */
  async at(at, count) {
    if (at < this.start || at + count > this.start + this.bytes.length) {
      const end = Math.min(this.blob.size, at + Math.max(count, WINDOW));
      this.bytes = new Uint8Array(await this.blob.slice(at, end).arrayBuffer());
      this.start = at;
    }
    return this.bytes.subarray(at - this.start, at - this.start + count);
  }

  /** The varint at `at`: [value, its length in bytes]. */
  async varint(at) {
    const bytes = await this.at(at, 10);
    let value = 0;
    let scale = 1;
    for (let i = 0; i < bytes.length; i++) {
      value += (bytes[i] & 0x7f) * scale;
      if (bytes[i] < 0x80) return [value, i + 1];
      scale *= 128;
    }
    throw new Error('a malformed protobuf varint');
  }

  /** The field at `at`: its number, wire type, where its value starts and ends. */
  async field(at) {
    const [key, keyLength] = await this.varint(at);
    const number = Math.floor(key / 8);
    const type = key % 8;
    let start = at + keyLength;
    let end;
    if (type === 0) end = start + (await this.varint(start))[1];
    else if (type === 1) end = start + 8;
    else if (type === 5) end = start + 4;
    else if (type === 2) {
      const [length, lengthBytes] = await this.varint(start);
      start += lengthBytes;
      end = start + length;
    } else throw new Error(`an unsupported protobuf wire type ${type}`);
    return { number, type, at, start, end };
  }
}

function varint(value) {
  const out = [];
  while (value >= 128) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}

function delimited(number, parts) {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return [Uint8Array.from([...varint(number * 8 + 2), ...varint(length)]), ...parts];
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const text = (value) => new TextEncoder().encode(value);
const entry = (key, value) => concat(delimited(EXTERNAL_DATA, [
  ...delimited(1, [text(key)]), ...delimited(2, [text(String(value))]),
]));

/** A TensorProto whose raw_data becomes a reference to the same bytes in `location`. */
async function externalTensor(reader, tensor, location) {
  const parts = [];
  let at = tensor.start;
  let moved = false;
  while (at < tensor.end) {
    const field = await reader.field(at);
    if (field.number === RAW_DATA && field.type === 2) {
      parts.push(entry('location', location), entry('offset', field.start),
        entry('length', field.end - field.start));
      moved = true;
    } else {
      parts.push(await reader.at(field.at, field.end - field.at).then((b) => b.slice()));
    }
    at = field.end;
  }
  if (moved) parts.push(Uint8Array.from([DATA_LOCATION * 8, 1]));
  return delimited(INITIALIZER, parts);
}

/**
 * The graph of the one-file model in `blob` (named `location` in its folder) with every
 * initializer's raw_data as external data in that same file: the small graph's bytes,
 * for InferenceSession.create() with `externalData: [{path: location, data: blob}]`.
 * @param {Blob} blob
 * @param {string} location
 * @returns {Promise<Uint8Array>}
 */
export async function splitWeights(blob, location) {
  const reader = new Reader(blob);
  const model = [];
  let at = 0;
  while (at < blob.size) {
    const field = await reader.field(at);
    if (field.number !== GRAPH || field.type !== 2) {
      model.push(await reader.at(field.at, field.end - field.at).then((b) => b.slice()));
    } else {
      const graph = [];
      let inner = field.start;
      while (inner < field.end) {
        const part = await reader.field(inner);
        if (part.number === INITIALIZER && part.type === 2) graph.push(...await externalTensor(reader, part, location));
        else graph.push(await reader.at(part.at, part.end - part.at).then((b) => b.slice()));
        inner = part.end;
      }
      model.push(...delimited(GRAPH, graph));
    }
    at = field.end;
  }
  return concat(model);
}
