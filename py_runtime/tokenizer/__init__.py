"""A pure-Python reader of Hugging Face ``tokenizer.json`` files (byte-level BPE).

It gives the same ids as the ``tokenizers`` library (``encode(text,
add_special_tokens=False)``) and the same text as its ``decode``, using only the
standard library, so it runs in Pyodide. The parts, in the order text goes through
them:

- ``added_tokens``: added tokens, matched first (leftmost-longest);
- ``pretokenize``: the normalizer, the pre-tokenizer and the byte-level alphabet;
- ``regex`` and ``unicode``: the Oniguruma regexes of ``Split`` translated for
  Python's ``re``, with ``\\p{...}`` and Unicode ``\\s`` as explicit classes;
- ``bpe``: the ``Tokenizer`` itself, rank-ordered BPE merging and ``decode``;
- ``decoding``: ``StreamDecoder``, which never splits a UTF-8 character.
"""

from __future__ import annotations

from .bpe import Tokenizer, TokenizerError
from .decoding import StreamDecoder
from .regex import compile_regex, translate_regex
from .unicode import precompute_classes

__all__ = [
    "StreamDecoder",
    "Tokenizer",
    "TokenizerError",
    "compile_regex",
    "precompute_classes",
    "translate_regex",
]
