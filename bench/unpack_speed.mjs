// What unpacking a model's packed external data costs in JS (web/worker/packed-data.mjs,
// which the page runs once, on the first visit): the whole file from memory, three
// times, beside a bare typed-array store loop over as many 4-byte words, the floor of
// any JS pass that writes the unpacked weights.
//
//   node bench/unpack_speed.mjs MODEL.onnx_data.packed
import { readFileSync } from 'node:fs';
import { unpack } from '../web/worker/packed-data.mjs';

const file = readFileSync(process.argv[2]);

/** Fills `words` with a pattern: the store loop. */
function store(words, seed) {
  for (let i = 0; i < words.length; i++) words[i] = i ^ seed;
}

for (let round = 0; round < 3; round++) {
  let at = 0;
  let started = performance.now();
  const { size, chunks } = await unpack(async () => {
    if (at >= file.length) return null;
    const chunk = file.subarray(at, at + 2 ** 20).slice();
    at += chunk.length;
    return chunk;
  });
  let produced = 0;
  for await (const chunk of chunks) produced += chunk.length;
  if (produced !== size) throw new Error(`unpacked ${produced} bytes, not ${size}`);
  const unpackMs = performance.now() - started;
  const words = new Uint32Array(2 ** 22);
  started = performance.now();
  for (let done = 0; done < size / 4; done += words.length) store(words, done);
  const storeMs = performance.now() - started;
  console.log(
    `${(file.length / 1e6).toFixed(0)} MB -> ${(size / 1e6).toFixed(0)} MB: unpack ${(unpackMs / 1000).toFixed(2)} s`
      + ` (${((unpackMs * 1e6) / (size / 4)).toFixed(1)} ns per weight); a store loop over as many words`
      + ` ${(storeMs / 1000).toFixed(2)} s (${((storeMs * 1e6) / (size / 4)).toFixed(1)} ns)`,
  );
}
