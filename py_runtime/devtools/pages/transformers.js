// Transformers.js, served from the same origin, loading the page's model (/_model/, or
// the folder the query's `model` names) from there only, with the dtype and the wasm
// thread count of the page's query string (?dtype=q8&threads=2).
import { AutoModelForCausalLM, AutoTokenizer, Tensor, env } from '/_tjs/transformers.min.js';

const query = new URLSearchParams(location.search);
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = '/';
env.backends.onnx.wasm.wasmPaths = '/_tjs_ort/';
env.backends.onnx.wasm.numThreads = Number(query.get('threads'));

export { Tensor };

/** The tokenizer and the model, loaded. */
export const load = async (folder = query.get('model') ?? '_model') => ({
  tokenizer: await AutoTokenizer.from_pretrained(folder),
  model: await AutoModelForCausalLM.from_pretrained(
    folder, { dtype: query.get('dtype'), device: 'wasm' }),
});
