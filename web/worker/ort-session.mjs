// ONNX Runtime Web itself (the files in dist/ort/): started once per worker, a
// model's InferenceSession loaded (through the Cache API, ./model-cache.mjs), logits
// read back as float32, and the errors after which the runtime cannot be trusted.

import { modelBlob, modelBytes, modelFileSize } from './model-cache.mjs';
import { splitWeights } from './onnx-split.mjs';

// Bundled into dist/worker.mjs: the ORT files are in dist/ort/.
const base = new URL('./', import.meta.url);

// A one-node model (Identity of a float[1]; onnx.helper.make_model, IR 8, opset 13),
// to start ONNX Runtime before the model is known: its first session pays for the
// runtime's own start (wasm instantiation, its thread pool), about 0.8 s here.
const WARM_UP_MODEL = Uint8Array.from(atob(
  'CAgSADo9ChAKAXgSAXkiCElkZW50aXR5Egd3YXJtLXVwWg8KAXgSCgoICAESBAoCCAFiDwoBeRIKCggIARIECgIIAUIECgAQDQ==',
), (c) => c.charCodeAt(0));

let runtime = null;
/** Bytes from which a graph with its weights inside is split (JSPI only; onnx-split.mjs). */
const SPLIT_FROM = 256 * 2 ** 20;
/**
 * Weights past this many bytes are not prepacked. ONNX Runtime's prepacked copies of
 * the matrix weights cost as much memory again as the weights they copy, which a
 * bigger model cannot afford: a wasm heap holds 4 GiB at most (docs/performance.md).
 */
const PREPACK_UP_TO = 768 * 2 ** 20;
/**
 * The float dtypes, whose weights are never prepacked: the copies cost 86-163 MiB of
 * SmolLM2's peak (over the page's 1,024 MiB), and with ORT's JSPI build on two threads
 * they set off prefill rounds at a third of the speed (the `Gemm` head). A float
 * `MatMul` on its weight as it is decodes 1-16 % slower at two threads, by the machine
 * (docs/performance.md). The quantized kernels (MatMulNBits, MatMulInteger) need theirs.
 */
const FLOAT_DTYPES = new Set(['fp32', 'fp16']);
/** Whether the runtime started is ORT's JSPI build (external data read from Blobs). */
let streaming = false;

/**
 * ONNX Runtime Web for `device` ('wasm' or 'webgpu'), started once per worker with
 * `threads` wasm threads (0: every core; 1 where SharedArrayBuffer is unavailable).
 * Where the browser has JSPI (`WebAssembly.Suspending`) and `jspi` is not 'off', it
 * is the JSPI build (wasm and WebGPU), which reads a model's external data from a Blob,
 * range by range, as it loads each weight (docs/performance.md).
 */
export function startOrt({ device, threads, jspi = 'auto' }) {
  if (runtime) return runtime;
  const webgpu = device === 'webgpu';
  streaming = jspi !== 'off' && typeof (/** @type {any} */ (WebAssembly)).Suspending === 'function';
  runtime = (async () => {
    if (webgpu && !(await /** @type {any} */ (navigator).gpu?.requestAdapter())) {
      throw new Error('WebGPU was asked for, but this browser has no WebGPU adapter.');
    }
    // The JSPI build runs WebGPU too (in place of the asyncify build, 10 MB larger).
    const file = streaming ? 'ort/ort.jspi.min.mjs' : webgpu ? 'ort/ort.webgpu.min.mjs' : 'ort/ort.wasm.min.mjs';
    const ort = await import(new URL(file, base).href);
    ort.env.wasm.wasmPaths = new URL('ort/', base).href;
    // Threads need cross-origin isolation (SharedArrayBuffer); default: every core.
    ort.env.wasm.numThreads = self.crossOriginIsolated ? (threads || navigator.hardwareConcurrency) : 1;
    const warmUp = await ort.InferenceSession.create(WARM_UP_MODEL, { executionProviders: [device] });
    await warmUp.release();
    return ort;
  })();
  return runtime;
}

/**
 * Load `modelURL` + `file` (and its `.onnx_data` external weights, if any), the
 * model at `dtype`, into an InferenceSession on `device` ('wasm' or 'webgpu'),
 * reporting the share of its bytes loaded to `onProgress`. Returns the session and
 * ONNX Runtime's module.
 */
export async function loadSession({ modelURL, file, dtype, device, threads, jspi = 'auto', onProgress }) {
  const url = new URL(file, modelURL).href;
  performance.mark('prompt-api:session-load');
  const ortReady = startOrt({ device, threads, jspi });
  // Progress runs over the bytes of the model and of its external weights, if any.
  const dataSize = await modelFileSize(`${url}_data`);
  const totals = [0, dataSize ?? 0];
  const loaded = [0, 0];
  const track = (index) => (bytes, total) => {
    loaded[index] = bytes;
    if (total) totals[index] = total;
    if (totals[0]) onProgress?.(Math.min(1, (loaded[0] + loaded[1]) / (totals[0] + totals[1])));
  };
  // The external data as a Blob of the cached copy where ORT can read one (JSPI):
  // the weights are never all in memory at once.
  const data = async () => {
    if (dataSize === null) return null;
    return (streaming ? modelBlob : modelBytes)(`${url}_data`, track(1));
  };
  const name = file.split('/').pop();
  // A big graph with its weights inside, where ORT reads Blobs: the graph alone, its
  // weights read from the cached file itself as external data (./onnx-split.mjs).
  const graph = async () => {
    if (!streaming || dataSize !== null) return { model: await modelBytes(url, track(0)), inside: null };
    const stored = await modelBlob(url, track(0)); // bytes where the cache refused it
    const size = stored instanceof Blob ? stored.size : stored.byteLength;
    if (size <= SPLIT_FROM) {
      return { model: stored instanceof Blob ? new Uint8Array(await stored.arrayBuffer()) : stored, inside: null };
    }
    const blob = stored instanceof Blob ? stored : new Blob([/** @type {Uint8Array<ArrayBuffer>} */ (stored)]);
    return { model: await splitWeights(blob, name), inside: blob };
  };
  const [ort, { model, inside }, weights] = await Promise.all([ortReady, graph(), data()]);
  performance.mark('prompt-api:session-files');
  const reads = new Set();
  const externalData = weights ? [{ path: `${name}_data`, data: holdingReads(weights, reads) }]
    : inside ? [{ path: name, data: holdingReads(inside, reads) }] : [];
  const bytes = (dataSize ?? 0) + (inside ? inside.size : model.byteLength);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: [device],
    externalData,
    graphOptimizationLevel: 'all',
    // Let constant folding dequantize constant weights once, at load: Optimum's q8
    // exports dequantize the tied embedding / LM head (136 M weights) on every step
    // otherwise, 39 % of a native decode step (bench/kernels.py).
    extra: {
      session: {
        disable_quant_qdq: '1',
        ...((bytes > PREPACK_UP_TO || FLOAT_DTYPES.has(dtype)) && { disable_prepacking: '1' }),
      },
    },
    ...(device === 'webgpu' && { preferredOutputLocation: 'gpu-buffer' }),
  }).catch((error) => {
    stopIfFatal(error);
    throw loadError(file, error, weights === null && inside === null);
  }).finally(() => reads.clear());
  performance.mark('prompt-api:session-created');
  return { ort, session };
}

/**
 * `data` (a Blob, for ORT's JSPI build, or bytes), each range ONNX Runtime reads from it
 * held in `reads` with its stream until the read is done. ORT reads a weight as
 * `blob.slice(start, end).stream()` from a JS function its wasm stack is suspended on,
 * and nothing else holds that stream: where Chromium collects garbage in the middle of
 * a read, the read never settles and create() waits forever (a warm start hung in
 * about 1 of 12 visits; in every one with the worker collecting every 25 ms). A range
 * is let go once read: a slice of a Blob built from bytes is a copy in the browser's
 * blob storage, and a big model's would fill it.
 * @template T
 * @param {T} data
 * @param {Set<unknown>} reads
 * @returns {T}
 */
function holdingReads(data, reads) {
  if (!(data instanceof Blob)) return data;
  data.slice = (start, end) => {
    const range = Blob.prototype.slice.call(data, start, end);
    range.stream = () => {
      const stream = Blob.prototype.stream.call(range);
      const held = { range, stream };
      reads.add(held);
      stream.getReader = (/** @type {any} */ options) => {
        const reader = ReadableStream.prototype.getReader.call(stream, options);
        const read = reader.read.bind(reader);
        reader.read = (/** @type {any} */ view) => read(view).then((result) => {
          if (result.done) reads.delete(held);
          return result;
        }, (error) => {
          reads.delete(held);
          throw error;
        });
        return reader;
      };
      return stream;
    };
    return range;
  };
  return data;
}

/**
 * The OperationError create() rejects with when ONNX Runtime cannot load `file`: out
 * of memory on a graph with its weights inside names the fix (docs/models.md: a wasm
 * heap cannot hold a big protobuf and the session built from it at once).
 */
function loadError(file, error, oneFile) {
  const reason = String(error?.message ?? error);
  const fix = oneFile && /bad_alloc|out of memory|failed to allocate/i.test(reason)
    ? ` Its weights are inside the .onnx file: store them as external data beside it (onnx.save(model,`
      + ` path, save_as_external_data=True, location="${file.split('/').pop()}_data")), which the runtime`
      + ' reads a weight at a time.'
    : '';
  const failure = new Error(`${file}: ONNX Runtime could not load it: ${reason}.${fix}`);
  failure.name = 'OperationError';
  return failure;
}

/** Errors after which ONNX Runtime's wasm instance cannot be trusted: out of memory, aborted. */
const FATAL = /out of memory|\bOOM\b|Aborted\(|memory access out of bounds|Maximum memory size|bad_alloc|failed to allocate/i;

/**
 * After a fatal error the worker closes itself, a second after the failing call's
 * error reply has gone out (the engine sends it in the same turn): the page sees the
 * worker stop (./worker.mjs) and starts a fresh one for its next call.
 * @param {unknown} error
 */
export function stopIfFatal(error) {
  if (FATAL.test(String(/** @type {any} */ (error)?.message ?? error))) {
    setTimeout(() => self.close(), 1000);
  }
}

const FLOAT16 = new Float32Array(1);
const FLOAT16_BITS = new Uint32Array(FLOAT16.buffer);

function halfToFloat(bits) {
  const sign = (bits & 0x8000) << 16;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return (sign ? -1 : 1) * mantissa * 2 ** -24;
  if (exponent === 0x1f) FLOAT16_BITS[0] = sign | 0x7f800000 | (mantissa << 13);
  else FLOAT16_BITS[0] = sign | ((exponent + 112) << 23) | (mantissa << 13);
  return FLOAT16[0];
}

/**
 * The last `count` rows of a [1, n, vocab] logits tensor (n of them if fewer), in
 * order, as float32.
 * @returns {Float32Array[]}
 */
export function lastRows(tensor, count) {
  const vocab = tensor.dims.at(-1);
  const end = tensor.data.length;
  const rows = [];
  for (let r = Math.min(count, tensor.dims.at(-2)); r >= 1; r--) {
    const row = tensor.data.subarray(end - r * vocab, end - (r - 1) * vocab);
    if (row instanceof Float32Array) rows.push(row.slice());
    else if (row instanceof Uint16Array) rows.push(Float32Array.from(row, halfToFloat));
    else rows.push(Float32Array.from(row)); // Float16Array and the like
  }
  return rows;
}
