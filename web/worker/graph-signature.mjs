// What a causal LM's ONNX graph takes and gives, read from the session's own input
// and output metadata, by the rules of py_runtime/hosts/graph_signature.py (the
// CPython backend's): input_ids in and logits out; attention_mask, position_ids and
// num_logits_to_keep / logits_to_keep where the graph has them; each past… input
// carried from its present… output: a KV cache grows along its one symbolic axis
// after the batch and starts empty, a state without one (LFM2's convolutions) is
// replaced whole and starts as zeros. Anything else: an OperationError naming it.

export const KEEP_INPUTS = ['num_logits_to_keep', 'logits_to_keep'];
const PLAIN_INPUTS = ['input_ids', 'attention_mask', 'position_ids'];

/**
 * @typedef {{input: string, output: string, shape: number[], type: string, axis: number | null}} State
 * @typedef {{inputs: Set<string>, keepInput: string | null, keepDims: number[], states: State[], recurrent: boolean}} Signature
 */

function operationError(message) {
  const error = new Error(message);
  error.name = 'OperationError';
  return error;
}

/** `past_key_values.0.key` -> `present.0.key`; `past_conv.0` -> `present_conv.0`. */
export function presentName(past) {
  return past.startsWith('past_key_values')
    ? `present${past.slice('past_key_values'.length)}`
    : `present${past.slice('past'.length)}`;
}

function state(input, shape, type, outputs, config) {
  const output = presentName(input);
  if (!outputs.has(output)) {
    throw operationError(`The model's graph has the input '${input}' but no output '${output}' to carry it.`);
  }
  const kind = type === 'float16' ? 'float16' : 'float32';
  const symbolic = shape.flatMap((dim, i) => (i > 0 && typeof dim !== 'number' ? [i] : []));
  if (!symbolic.length) return { input, output, shape: [1, ...shape.slice(1)], type: kind, axis: null };
  if (input.startsWith('past_key_values') && shape.length === 4) {
    // [batch, KV heads, past length, head dim]: a dim left symbolic (the model
    // builder's "kv_cache_dim") comes from config.json.
    const heads = Number(config.num_attention_heads) || 0;
    const kvHeads = typeof shape[1] === 'number' ? shape[1] : Number(config.num_key_value_heads ?? heads);
    const headDim = typeof shape[3] === 'number'
      ? shape[3] : Number(config.head_dim) || Math.floor(Number(config.hidden_size) / Math.max(heads, 1));
    if (kvHeads && headDim) return { input, output, shape: [1, kvHeads, 0, headDim], type: kind, axis: 2 };
  }
  if (symbolic.length === 1) {
    const axis = symbolic[0];
    const dims = shape.map((dim, i) => (i === axis ? 0 : i === 0 ? 1 : dim));
    return { input, output, shape: dims, type: kind, axis };
  }
  throw operationError(`The runtime cannot tell the shape of the model's state input '${input}' (${JSON.stringify(shape)}).`);
}

/**
 * The session's signature; `config` is the model's config.json (for KV shapes the
 * graph leaves symbolic).
 * @returns {Signature}
 */
export function readSignature(session, config) {
  const metadata = /** @type {any} */ (session);
  const outputs = new Set(session.outputNames);
  const names = new Set(session.inputNames);
  if (!names.has('input_ids')) {
    throw operationError("The model's graph has no 'input_ids' input: not a causal LM export the runtime drives.");
  }
  if (!outputs.has('logits')) {
    throw operationError("The model's graph has no 'logits' output: not a causal LM export the runtime drives.");
  }
  const spec = (name) => metadata.inputMetadata?.find((m) => m.name === name) ?? {};
  const keepInput = KEEP_INPUTS.find((name) => names.has(name)) ?? null;
  const states = [];
  for (const name of session.inputNames) {
    if (PLAIN_INPUTS.includes(name) || KEEP_INPUTS.includes(name)) continue;
    if (!name.startsWith('past')) throw operationError(`The model's graph takes an input the runtime cannot feed: '${name}'.`);
    const { shape, type } = spec(name);
    if (!Array.isArray(shape)) throw operationError(`ONNX Runtime gave no shape for the model's input '${name}'.`);
    states.push(state(name, shape, type, outputs, config));
  }
  return {
    inputs: new Set(PLAIN_INPUTS.filter((name) => names.has(name))),
    keepInput,
    keepDims: keepInput && spec(keepInput).shape?.length === 1 ? [1] : [],
    states,
    recurrent: states.some((s) => s.axis === null),
  };
}
