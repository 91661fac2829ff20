"""A pure-Python reader of Hugging Face ``tokenizer.json`` files.

It gives the same ids as the ``tokenizers`` library (``encode(text,
add_special_tokens=False)``) and the same text as its ``decode``, using only the
standard library, so it runs in Pyodide. The parts, in the order text goes through
them:

- ``added_tokens``: added tokens, matched first (leftmost-longest);
- ``normalizers``: the normalizer (NFC..., Replace, Prepend, Lowercase, Strip...);
- ``pretokenize``: the pre-tokenizer (Split, ByteLevel, Digits, Metaspace,
  Whitespace, Punctuation...), with ``bytelevel``, GPT-2's byte alphabet;
- ``regex`` and ``unicode``: the Oniguruma regexes of ``Split`` translated for
  Python's ``re``, with ``\\p{...}`` and Unicode ``\\s`` as explicit classes;
- ``bpe`` and ``unigram``: the models;
- ``decoders``: the decoder chain, run as a stream;
- ``tokenizer``: the ``Tokenizer`` that ties them together; ``errors``: its
  ``TokenizerError``;
- ``decoding``: ``StreamDecoder``, which never splits a UTF-8 character.
"""

from __future__ import annotations

from .decoding import StreamDecoder
from .errors import TokenizerError
from .regex import compile_regex, translate_regex
from .tokenizer import Tokenizer
from .unicode import precompute_classes

__all__ = [
    "StreamDecoder",
    "Tokenizer",
    "TokenizerError",
    "compile_regex",
    "precompute_classes",
    "translate_regex",
]
