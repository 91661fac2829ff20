// The model's vocabulary as XGrammar's TokenizerInfo takes it, from tokenizer.json:
// the vocabulary type (byte-level, byte-fallback, raw) and prepend-space flag, and
// every token's text encoded the way that type writes it.

/** GPT-2's bytes_to_unicode(): the character standing for each byte in byte-level vocabularies. */
function byteLevelChars() {
  const chars = [];
  let extra = 256;
  for (let byte = 0; byte < 256; byte++) {
    const printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174;
    chars.push(String.fromCodePoint(printable ? byte : extra++));
  }
  return chars;
}

/**
 * XGrammar's vocabulary type and prepend-space flag for a tokenizer.json, as its
 * TokenizerInfo.from_huggingface detects them (cpp/tokenizer_info.cc).
 * @param {any} spec the parsed tokenizer.json
 * @returns {{vocabType: 'byte_level' | 'byte_fallback' | 'raw', prependSpace: boolean}}
 */
export function detectVocabType(spec) {
  const decoder = spec.decoder ?? {};
  const decoders = decoder.type === 'Sequence' ? decoder.decoders ?? [] : [decoder];
  let vocabType = /** @type {'byte_level' | 'byte_fallback' | 'raw'} */ ('raw');
  for (const { type } of decoders) {
    if (type === 'ByteLevel') { vocabType = 'byte_level'; break; }
    if (type === 'ByteFallback') { vocabType = 'byte_fallback'; break; }
  }
  const normalizer = spec.normalizer ?? {};
  const normalizers = normalizer.type === 'Sequence' ? normalizer.normalizers ?? [] : [normalizer];
  const prepends = normalizers.some((n) => n?.type === 'Prepend' && n.prepend === '\u2581');
  const metaspace = spec.pre_tokenizer?.type === 'Metaspace'
    && ['always', 'first'].includes(spec.pre_tokenizer.prepend_scheme);
  return { vocabType, prependSpace: prepends || metaspace };
}

/**
 * The encoded vocabulary XGrammar takes, indexed by token id and cut at `width`
 * (the logits' width): the model's tokens, the added tokens (their text written the
 * way the vocabulary type encodes it), "" for special added tokens (XGrammar never
 * allows "" tokens, except the stop tokens) and for ids without a token.
 * @param {any} spec the parsed tokenizer.json
 * @param {string} vocabType
 * @param {number} width
 */
export function encodedVocab(spec, vocabType, width) {
  const model = spec.model?.vocab ?? {};
  const pieces = Array.isArray(model) ? model.map((entry) => [entry[0], null]) : Object.entries(model);
  let size = 0;
  for (let id = 0; id < pieces.length; id++) {
    const index = Array.isArray(model) ? id : pieces[id][1];
    if (index >= size) size = index + 1;
  }
  for (const added of spec.added_tokens ?? []) if (added.id >= size) size = added.id + 1;
  const vocab = new Array(Math.min(size, width)).fill('');
  for (let id = 0; id < pieces.length; id++) {
    const index = Array.isArray(model) ? id : pieces[id][1];
    if (index < vocab.length) vocab[index] = pieces[id][0];
  }
  const chars = vocabType === 'byte_level' ? byteLevelChars() : null;
  const utf8 = new TextEncoder();
  for (const added of spec.added_tokens ?? []) {
    if (added.id >= vocab.length) continue;
    if (added.special) vocab[added.id] = '';
    else if (chars) vocab[added.id] = Array.from(utf8.encode(added.content), (b) => chars[b]).join('');
    else vocab[added.id] = added.content;
  }
  return vocab;
}
