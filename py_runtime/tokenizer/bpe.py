"""Byte-level BPE: the ``Tokenizer`` read from a Hugging Face ``tokenizer.json``.

It covers what Qwen2/Qwen2.5 and Llama 3 use, and gives the same ids as the
``tokenizers`` library (``encode(text, add_special_tokens=False)``) and the same
text as its ``decode``: added tokens matched first (leftmost-longest), then the
normalizer, the pre-tokenizer, and rank-ordered BPE merging with a cache per
pre-token. Malformed content raises ``TokenizerError``.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Iterable
from typing import Any, cast

from .added_tokens import AddedMatcher, AddedToken
from .pretokenize import build_normalizer, build_pre_tokenizer, char_to_byte

__all__ = ["Tokenizer", "TokenizerError"]

_CACHE_LIMIT = 100_000  # pre-tokens kept in the BPE cache before it is cleared
_SURROGATES = re.compile("[\ud800-\udfff]")


class TokenizerError(ValueError):
    """A ``tokenizer.json`` that is not valid JSON or lacks or mistypes what it needs.

    Well-formed content that uses an unsupported feature (a Unigram model, a
    Metaspace pre-tokenizer...) raises a plain ``ValueError``."""


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"missing key {error.args[0]!r}"
    if isinstance(error, re.error):
        return f"bad regex: {error}"
    return str(error)


class Tokenizer:
    """A byte-level BPE tokenizer read from a ``tokenizer.json``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        part = "top level"  # where a malformed spec is reported
        try:
            if not isinstance(spec, dict):
                raise TypeError(f"a JSON object is expected, not {type(spec).__name__}")
            model = spec["model"]
            part = "model"
            self._read_model(model)
            part = "added_tokens"
            added = [AddedToken(t) for t in spec.get("added_tokens") or []]
            self._added_by_content = {t.content: t for t in added}
            self._added_by_id = {t.id: t for t in added}
            self._special_contents = frozenset(t.content for t in added if t.special)
            self._raw_matcher = AddedMatcher({t.content: t for t in added if not t.normalized})
            part = "normalizer"
            self._normalizer = build_normalizer(spec.get("normalizer"))
            normalized: dict[str, AddedToken] = {}
            for t in added:
                if t.normalized:
                    key = self._normalizer(t.content) if self._normalizer else t.content
                    normalized[key] = t
            self._normalized_matcher = AddedMatcher(normalized)
            part = "pre_tokenizer"
            self._pre_steps = build_pre_tokenizer(spec.get("pre_tokenizer"))
            part = "decoder"
            decoder = spec.get("decoder")
            if decoder is not None and decoder.get("type") != "ByteLevel":
                raise ValueError(f"unsupported decoder: {decoder.get('type')}")
        except (KeyError, IndexError, TypeError, AttributeError, re.error) as error:
            raise TokenizerError(f"malformed tokenizer.json ({part}): {_reason(error)}") from error
        self._byte_decoder = decoder is not None
        self._cache: dict[str, list[int]] = {}
        self._bytes_cache: dict[int, bytes] = {}

    def _read_model(self, model: dict[str, Any]) -> None:
        if model.get("type", "BPE") != "BPE":
            raise ValueError(f"unsupported model: {model.get('type')}")
        if model.get("dropout") not in (None, 0, 0.0):
            raise ValueError("BPE dropout is not supported")
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise ValueError("continuing_subword_prefix/end_of_word_suffix are not supported")
        self._vocab: dict[str, int] = model["vocab"]
        self._ignore_merges = bool(model.get("ignore_merges", False))
        self._byte_fallback = bool(model.get("byte_fallback", False))
        self._unk = model.get("unk_token")
        self._fuse_unk = bool(model.get("fuse_unk", False))
        self._stride = max(self._vocab.values(), default=0) + 1
        self._merges = self._build_merges(model.get("merges", []))
        self._id_to_model: dict[int, str] | None = None  # built on first use

    @classmethod
    def from_json(cls, data: str | bytes | dict[str, Any]) -> Tokenizer:
        """Build from the content of a ``tokenizer.json`` (text, bytes or parsed).

        Raises ``TokenizerError`` for malformed content, ``ValueError`` for an
        unsupported feature."""
        if not isinstance(data, dict):
            try:
                data = cast(dict[str, Any], json.loads(data))
            except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
                raise TokenizerError(f"tokenizer.json is not valid JSON: {error}") from error
        return cls(data)

    def _build_merges(self, merges: list[Any]) -> dict[int, int]:
        """Map ``left * stride + right`` to ``rank * stride + merged`` (later wins)."""
        vocab, stride = self._vocab, self._stride
        pairs = (m.split(" ") if isinstance(m, str) else m for m in merges)
        try:
            return {
                vocab[left] * stride + vocab[right]: rank * stride + vocab[left + right]
                for rank, (left, right) in enumerate(pairs)
            }
        except KeyError as error:
            raise TokenizerError(f"merge token not in the vocabulary: {error}") from None
        except (TypeError, ValueError):
            raise TokenizerError("a merge is not a pair of tokens") from None

    # --- encoding

    def encode(self, text: str) -> list[int]:
        """Like tokenizers' encode(text, add_special_tokens=False): added tokens (special
        or not) found in the text are matched first, the rest goes through normalizer,
        pre-tokenizer and BPE. Lone surrogates count as U+FFFD."""
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = _SURROGATES.sub("\ufffd", text)
        ids: list[int] = []
        for piece, token_id in self._raw_matcher.split(text):
            if token_id is not None:
                ids.append(token_id)
                continue
            if self._normalizer is not None:
                piece = self._normalizer(piece)
            for part, part_id in self._normalized_matcher.split(piece):
                if part_id is not None:
                    ids.append(part_id)
                elif part:
                    self._encode_piece(part, ids)
        return ids

    def _encode_piece(self, text: str, ids: list[int]) -> None:
        pieces = [text]
        for splits, step in self._pre_steps:
            if splits:
                pieces = [p for piece in pieces for p in step(piece)]
            else:
                pieces = [step(piece) for piece in pieces]
        cache = self._cache
        for piece in pieces:
            found = cache.get(piece)
            if found is None:
                found = self._tokenize(piece)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[piece] = found
            ids.extend(found)

    def _tokenize(self, word: str) -> list[int]:
        """BPE on one pre-token, as ``tokenizers``' ``Word::merge_all``."""
        if not word:
            return []
        vocab = self._vocab
        if self._ignore_merges and word in vocab:
            return [vocab[word]]
        symbols = self._symbols(word)
        count = len(symbols)
        if count < 2:
            return symbols
        merges, stride = self._merges, self._stride
        heap: list[tuple[int, int, int]] = []  # (rank, position, merged id)
        for pos in range(count - 1):
            found = merges.get(symbols[pos] * stride + symbols[pos + 1])
            if found is not None:
                rank, merged = divmod(found, stride)
                heap.append((rank, pos, merged))
        if not heap:
            return symbols
        heapq.heapify(heap)
        prev = list(range(-1, count - 1))
        nxt = list(range(1, count + 1))
        nxt[-1] = -1
        alive = [True] * count
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            _, pos, merged = pop(heap)
            right = nxt[pos]
            if not alive[pos] or right == -1:
                continue
            found = merges.get(symbols[pos] * stride + symbols[right])
            if found is None or found % stride != merged:
                continue  # an expired entry
            symbols[pos] = merged
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after != -1:
                prev[after] = pos
            before = prev[pos]
            if before != -1:
                found = merges.get(symbols[before] * stride + merged)
                if found is not None:
                    rank, new = divmod(found, stride)
                    push(heap, (rank, before, new))
            if after != -1:
                found = merges.get(merged * stride + symbols[after])
                if found is not None:
                    rank, new = divmod(found, stride)
                    push(heap, (rank, pos, new))
        return [symbol for symbol, keep in zip(symbols, alive, strict=True) if keep]

    def _symbols(self, word: str) -> list[int]:
        """The initial symbols: one per character (byte fallback or unk if unknown)."""
        vocab = self._vocab
        symbols: list[int] = []
        last_unk = False
        for char in word:
            token_id = vocab.get(char)
            if token_id is not None:
                symbols.append(token_id)
                last_unk = False
                continue
            if self._byte_fallback:
                names = [f"<0x{b:02X}>" for b in char.encode("utf-8")]
                if all(name in vocab for name in names):
                    symbols.extend(vocab[name] for name in names)
                    last_unk = False
                    continue
            if self._unk is not None and self._unk in vocab:
                if not (self._fuse_unk and last_unk):
                    symbols.append(vocab[self._unk])
                last_unk = True
            # else: tokenizers drops a character it cannot represent
        return symbols

    # --- vocabulary

    def token_to_id(self, token: str) -> int | None:
        """The id of a token (added tokens first), or None."""
        added = self._added_by_content.get(token)
        return added.id if added is not None else self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        """The token of an id (added tokens first), or None."""
        added = self._added_by_id.get(token_id)
        if added is not None:
            return added.content
        if self._id_to_model is None:
            self._id_to_model = {i: t for t, i in self._vocab.items()}
        return self._id_to_model.get(token_id)

    @property
    def vocab_size(self) -> int:
        """The size of the vocabulary, added tokens included."""
        return len(self._vocab.keys() | self._added_by_content.keys())

    def special_ids(self) -> set[int]:
        """The ids of the added tokens marked special."""
        return {t.id for t in self._added_by_id.values() if t.special}

    # --- decoding

    @property
    def byte_level(self) -> bool:
        """Whether decoding joins the tokens' bytes (a ByteLevel decoder); without a
        decoder, the tokens' texts are joined with spaces."""
        return self._byte_decoder

    def token_bytes(self, token_id: int, skip_special_tokens: bool = False) -> bytes | None:
        """What one id contributes to decoded text (None: nothing)."""
        token = self.id_to_token(token_id)
        if token is None or (skip_special_tokens and token in self._special_contents):
            return None
        if not self._byte_decoder:
            return token.encode("utf-8")
        data = self._bytes_cache.get(token_id)
        if data is None:
            table = char_to_byte()
            if all(char in table for char in token):
                data = bytes(table[char] for char in token)
            else:  # not byte-level text (an added token): taken as it is
                data = token.encode("utf-8")
            self._bytes_cache[token_id] = data
        return data

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (unknown ids are skipped; bad UTF-8 becomes U+FFFD)."""
        parts = [self.token_bytes(i, skip_special_tokens) for i in ids]
        present = [p for p in parts if p is not None]
        if not self._byte_decoder:
            return " ".join(p.decode("utf-8") for p in present)
        return b"".join(present).decode("utf-8", "replace")
