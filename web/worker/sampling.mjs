// Choosing the next token from a position's logits, in the worker (no per-token work
// over the vocabulary happens in Python): argmax or top-k sampling at a temperature,
// speculative decoding's judgement of a draft token, and Transformers' repetition
// penalty.

function greedy(topK, temperature) {
  return topK <= 1 || temperature <= 0;
}

/** Argmax (`topK` <= 1 or `temperature` <= 0), else top-k sampling. */
export function choose(logits, topK, temperature) {
  return greedy(topK, temperature) ? argmax(logits) : sample(logits, topK, temperature);
}

/**
 * choose() with a draft's `proposed` token, as speculative decoding judges it: greedy
 * takes the argmax as ever (the proposal when it is that); sampling keeps the proposal
 * with its probability, else samples the other tokens renormalised, which together is
 * sampling from the distribution itself (the draft is deterministic).
 */
export function judge(logits, topK, temperature, proposed) {
  if (greedy(topK, temperature)) return argmax(logits);
  const { top, weights } = topWeights(logits, topK, temperature);
  const total = weights.reduce((a, b) => a + b, 0);
  const at = top.indexOf(proposed);
  const kept = at < 0 ? 0 : weights[at];
  if (Math.random() * total < kept || kept === total) return proposed;
  if (at >= 0) {
    top.splice(at, 1);
    weights.splice(at, 1);
  }
  return pick(top, weights);
}

function argmax(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/** Top-k sampling with temperature. */
function sample(logits, topK, temperature) {
  const { top, weights } = topWeights(logits, topK, temperature);
  return pick(top, weights);
}

/** The `topK` largest logits' ids and their weights at `temperature` (k is small: a sorted insertion list suffices). */
function topWeights(logits, topK, temperature) {
  const top = [];
  for (let i = 0; i < logits.length; i++) {
    const value = logits[i];
    if (top.length === topK && value <= logits[top[topK - 1]]) continue;
    let at = top.length === topK ? topK - 1 : top.length;
    while (at > 0 && logits[top[at - 1]] < value) {
      top[at] = top[at - 1];
      at--;
    }
    top[at] = i;
  }
  const max = logits[top[0]];
  const weights = top.map((i) => Math.exp((logits[i] - max) / temperature));
  return { top, weights };
}

/** One of `ids`, drawn in proportion to `weights`. */
function pick(ids, weights) {
  let left = Math.random() * weights.reduce((a, b) => a + b, 0);
  for (let j = 0; j < ids.length; j++) {
    left -= weights[j];
    if (left <= 0) return ids[j];
  }
  return ids.at(-1);
}

/**
 * Transformers' repetition penalty over the tokens already in the cache: positive
 * logits divided by `penalty`, negative ones multiplied (into `penalized`: a copy
 * of `logits` unless given).
 * @param {Float32Array} logits
 * @param {number[]} ids
 * @param {number} penalty
 * @param {Float32Array} [penalized]
 */
export function penalize(logits, ids, penalty, penalized = logits.slice()) {
  for (const id of new Set(ids)) {
    const value = logits[id];
    penalized[id] = value > 0 ? value / penalty : value * penalty;
  }
  return penalized;
}

/** The log of the softmax's denominator: log-softmax at `id` is `logits[id]` minus it. */
export function logNormalizer(logits) {
  let top = -Infinity;
  for (const value of logits) if (value > top) top = value;
  let sum = 0;
  for (const value of logits) sum += Math.exp(value - top);
  return top + Math.log(sum);
}
