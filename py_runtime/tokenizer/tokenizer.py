"""The ``Tokenizer`` read from a Hugging Face ``tokenizer.json``.

It gives the same ids as the ``tokenizers`` library (``encode(text,
add_special_tokens=False)``) and the same text as its ``decode``: added tokens
matched first (leftmost-longest), then the normalizer, the pre-tokenizer and the
model (BPE or Unigram, with a cache per word); decoding runs the decoder chain. The
post-processor is not used (no special tokens are added). What cannot be used
raises ``TokenizerError``, naming the part.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, cast

from . import prepared
from .added_tokens import AddedVocabulary
from .bpe import BPE, MergeTable
from .decoders import DecodeStream, build_decoder
from .errors import TokenizerError
from .normalizers import build_normalizer
from .pretokenize import build_pre_tokenizer
from .serde import serde_float
from .unigram import Unigram

__all__ = ["Tokenizer"]

_CACHE_LIMIT = 100_000  # words kept in the cache before it is cleared
_CACHE_WORD = 256  # longer words (a whole text without pre-tokenizer) are not kept
_SURROGATES = re.compile("[\ud800-\udfff]")


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"missing key {error.args[0]!r}"
    if isinstance(error, re.error):
        return f"bad regex: {error}"
    return str(error)


def _build_model(spec: dict[str, Any], merges: MergeTable | None) -> BPE | Unigram:
    kind = spec.get("type") or ("Unigram" if isinstance(spec.get("vocab"), list) else "BPE")
    if kind == "BPE":
        return BPE(spec, merges)
    if kind == "Unigram":
        return Unigram(spec)
    raise TokenizerError(f"unsupported model: {kind}")


def _parse(data: str | bytes) -> dict[str, Any]:
    """tokenizer.json's text, parsed as ``tokenizers`` parses it (its floats, the Unigram
    scores, can differ by one unit in the last place from ``json``'s)."""
    try:
        return cast(dict[str, Any], json.loads(data, parse_float=serde_float))
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise TokenizerError(f"tokenizer.json is not valid JSON: {error}") from error


class Tokenizer:
    """A tokenizer read from a ``tokenizer.json``: ``encode`` and ``decode``."""

    def __init__(self, spec: dict[str, Any], merges: MergeTable | None = None) -> None:
        """From a parsed tokenizer.json (``merges``: a BPE's merge table, already built)."""
        part = "top level"  # where a malformed spec is reported
        try:
            if not isinstance(spec, dict):
                raise TypeError(f"a JSON object is expected, not {type(spec).__name__}")
            model = spec["model"]
            part = "model"
            self._model = _build_model(model, merges)
            part = "normalizer"
            self._normalizer = build_normalizer(spec.get("normalizer"))
            part = "added_tokens"
            self._added = AddedVocabulary(
                spec.get("added_tokens") or [],
                self._model.vocab,
                self._model.size,
                self._normalizer,
            )
            part = "pre_tokenizer"
            self._pre_tokenizer = build_pre_tokenizer(spec.get("pre_tokenizer"))
            part = "decoder"
            self._decoder = build_decoder(spec.get("decoder"))
        except TokenizerError as error:
            raise TokenizerError(f"tokenizer.json ({part}): {error}") from error
        except (KeyError, IndexError, TypeError, AttributeError, re.error) as error:
            raise TokenizerError(f"malformed tokenizer.json ({part}): {_reason(error)}") from error
        except ValueError as error:  # a regex that cannot be translated...
            raise TokenizerError(f"unsupported tokenizer.json ({part}): {error}") from error
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def from_json(cls, data: str | bytes | dict[str, Any]) -> Tokenizer:
        """Build from the content of a ``tokenizer.json`` (text, bytes or parsed).

        Text is parsed as ``_parse`` says; an already parsed object is taken as it is.
        Raises ``TokenizerError`` (a ``ValueError``) for
        malformed content or an unsupported component."""
        if not isinstance(data, dict):
            data = _parse(data)
        return cls(data)

    @classmethod
    def from_json_prepared(cls, text: str, blob: bytes | None) -> tuple[Tokenizer, bytes | None]:
        """From a tokenizer.json's text and its prepared form where one was kept
        (prepared.py: the page keeps it in its model cache); also the prepared form to
        keep, when there was none or it was made from another text (None otherwise, and
        for tokenizers without one: Unigram models)."""
        if blob is not None and (found := prepared.load(text, blob)) is not None:
            spec, merges = found
            return cls(spec, merges), None
        spec = _parse(text)
        tokenizer = cls(spec)
        model = tokenizer._model
        table = model.merge_table if isinstance(model, BPE) else None
        if table is None or not prepared.contiguous(spec):
            return tokenizer, None
        return tokenizer, prepared.dump(text, spec, table)

    # --- encoding

    def encode(self, text: str) -> list[int]:
        """Like tokenizers' encode(text, add_special_tokens=False): added tokens (special
        or not) found in the text are matched first, the rest goes through normalizer,
        pre-tokenizer and model. Lone surrogates count as U+FFFD."""
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = _SURROGATES.sub("\ufffd", text)
        ids: list[int] = []
        position = 0
        normalizer = self._normalizer
        for piece, token_id in self._added.raw.split(text):
            # At the start: where Metaspace's prepend_scheme "first" prepends. Not if the
            # normalizer drops the first character (the text then starts further on).
            at_start = position == 0 and (normalizer is None or normalizer(piece[:1]) != "")
            position += len(piece)
            if token_id is not None:
                ids.append(token_id)
                continue
            if normalizer is not None:
                piece = normalizer(piece)
            for index, (part, part_id) in enumerate(self._added.normalized.split(piece)):
                if part_id is not None:
                    ids.append(part_id)
                elif part:
                    self._encode_words(part, at_start and index == 0, ids)
        return ids

    def _encode_words(self, text: str, at_start: bool, ids: list[int]) -> None:
        cache, tokenize = self._cache, self._model.tokenize
        for word in self._pre_tokenizer(text, at_start):
            found = cache.get(word)
            if found is None:
                found = tokenize(word)
                if len(word) <= _CACHE_WORD:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[word] = found
            ids.extend(found)

    # --- vocabulary

    def token_to_id(self, token: str) -> int | None:
        """The id of a token (added tokens first), or None."""
        added = self._added.by_content.get(token)
        return added.id if added is not None else self._model.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        """The token of an id (added tokens first, normalized ones in their normalized
        form, as tokenizers gives them), or None."""
        added = self._added.decoded.get(token_id)
        return added if added is not None else self._model.id_to_token(token_id)

    @property
    def vocab_size(self) -> int:
        """The size of the vocabulary, added tokens included."""
        return len(self._model.vocab.keys() | self._added.by_content.keys())

    def special_ids(self) -> set[int]:
        """The ids of the added tokens marked special."""
        return {t.id for t in self._added.by_id.values() if t.special}

    # --- decoding

    def token_text(self, token_id: int, skip_special_tokens: bool = False) -> str | None:
        """The token an id gives the decoder (None: unknown, or skipped as special)."""
        token = self.id_to_token(token_id)
        if token is None or (skip_special_tokens and token in self._added.special):
            return None
        return token

    def decode_stream(self) -> DecodeStream:
        """A new incremental run of the decoder (what ``StreamDecoder`` uses)."""
        return self._decoder.stream()

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids``, as tokenizers' decode (unknown ids are skipped)."""
        tokens = [self.token_text(i, skip_special_tokens) for i in ids]
        return self._decoder.decode([t for t in tokens if t is not None])
