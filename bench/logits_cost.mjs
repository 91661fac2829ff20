// The per-token cost of the worker's logits handling at a vocabulary's size: choosing
// (greedy, top-k), the grammar's mask, the repetition penalty (web/worker/sampling.mjs,
// grammar.mjs), on random logits; medians of batches are not needed at this scale.
//
//   node bench/logits_cost.mjs [vocabulary=262144]
import { applyBitmask } from '../web/worker/grammar.mjs';
import { choose, penalize } from '../web/worker/sampling.mjs';

const size = Number(process.argv[2] ?? 262144);
const logits = Float32Array.from({ length: size }, () => Math.random() * 20 - 10);
const bitmask = new Int32Array(Math.ceil(size / 32)).map(() => Math.floor(Math.random() * 2 ** 32));
const masked = new Float32Array(size);
const seen = Array.from({ length: 500 }, (_, i) => (i * 7919) % size);

/** Milliseconds per call, after a warm-up. */
function time(task, calls = 200) {
  for (let i = 0; i < 20; i++) task();
  const started = performance.now();
  for (let i = 0; i < calls; i++) task();
  return ((performance.now() - started) / calls).toFixed(2);
}

console.log(`vocabulary ${size}: greedy ${time(() => choose(logits, 1, 1))} ms,`
  + ` top-k 40 at 0.7 ${time(() => choose(logits, 40, 0.7))} ms,`
  + ` mask ${time(() => { masked.set(logits); applyBitmask(masked, bitmask); })} ms,`
  + ` repetition penalty over 500 ids ${time(() => penalize(logits, seen, 1.1))} ms per token`);
