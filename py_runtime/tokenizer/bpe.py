"""The BPE model of a ``tokenizer.json``: rank-ordered merging of one word's symbols.

As ``tokenizers``' ``BPE``: ``byte_fallback`` (``<0xNN>`` tokens for characters not
in the vocabulary), ``unk_token`` and ``fuse_unk``, ``ignore_merges``,
``continuing_subword_prefix`` and ``end_of_word_suffix``; ``dropout`` must be null.
"""

from __future__ import annotations

import heapq
from typing import Any, Protocol

from .errors import TokenizerError

__all__ = ["BPE", "MergeTable"]


class MergeTable(Protocol):
    """``left * stride + right`` -> ``rank * stride + merged``: a dict, or the prepared
    form's sorted arrays (prepared.py)."""

    def get(self, key: int, /) -> int | None: ...


class BPE:
    """A BPE model: ``tokenize(word)`` gives the ids of one pre-token."""

    def __init__(self, spec: dict[str, Any], merges: MergeTable | None = None) -> None:
        """``merges``: the merge table already built (``merge_table``), from a tokenizer's
        prepared form (prepared.py)."""
        if spec.get("dropout") not in (None, 0, 0.0):
            raise TokenizerError("unsupported BPE option: dropout")
        self.vocab: dict[str, int] = dict(spec["vocab"])
        self.size = len(self.vocab)
        self._ignore_merges = bool(spec.get("ignore_merges", False))
        self._byte_fallback = bool(spec.get("byte_fallback", False))
        self._unk: str | None = spec.get("unk_token")
        self._fuse_unk = bool(spec.get("fuse_unk", False))
        self._prefix: str = spec.get("continuing_subword_prefix") or ""
        self._suffix: str = spec.get("end_of_word_suffix") or ""
        self._stride = max(self.vocab.values(), default=0) + 1
        self._merges: MergeTable = (
            merges if merges is not None else self._build_merges(spec.get("merges", []))
        )
        self._id_to_token: dict[int, str] | None = None  # built on first use

    def _build_merges(self, merges: list[Any]) -> dict[int, int]:
        """Map ``left * stride + right`` to ``rank * stride + merged`` (later wins)."""
        vocab, stride = self.vocab, self._stride
        skip = len(self._prefix.encode("utf-8"))  # the right side's prefix is dropped
        out: dict[int, int] = {}
        try:
            for rank, merge in enumerate(merges):
                left, right = merge.split(" ") if isinstance(merge, str) else merge
                merged = left + (right.encode("utf-8")[skip:].decode("utf-8") if skip else right)
                out[vocab[left] * stride + vocab[right]] = rank * stride + vocab[merged]
        except KeyError as error:
            raise TokenizerError(f"merge token not in the vocabulary: {error}") from None
        except (TypeError, ValueError, AttributeError):
            raise TokenizerError("a merge is not a pair of tokens") from None
        return out

    @property
    def merge_table(self) -> dict[int, int] | None:
        """The merge table as a dict, for the prepared form (None: read from one)."""
        return self._merges if isinstance(self._merges, dict) else None

    def tokenize(self, word: str) -> list[int]:
        """BPE on one pre-token, as ``tokenizers``' ``Word::merge_all``."""
        if not word:
            return []
        vocab = self.vocab
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
        """The initial symbols, as ``BPE::merge_word``: one per character (with the
        prefix and suffix), else its bytes' ``<0xNN>`` tokens, else the unknown token."""
        vocab = self.vocab
        if not (self._prefix or self._suffix):
            found = [vocab.get(char) for char in word]
            if None not in found:
                return found  # type: ignore[return-value]  # no None in it
        symbols: list[int] = []
        unk: int | None = None  # an unknown token not yet added (fuse_unk joins them)
        last = len(word) - 1
        for i, char in enumerate(word):
            piece = char if i == 0 else self._prefix + char
            if i == last:
                piece += self._suffix
            token_id = vocab.get(piece)
            if token_id is not None:
                if unk is not None:
                    symbols.append(unk)
                    unk = None
                symbols.append(token_id)
                continue
            if self._byte_fallback:
                names = [f"<0x{b:02X}>" for b in piece.encode("utf-8")]
                if all(name in vocab for name in names):
                    symbols.extend(vocab[name] for name in names)
                    continue  # tokenizers leaves a pending unknown token for later
            if self._unk is not None:
                unk_id = vocab.get(self._unk)
                if unk_id is None:
                    raise TokenizerError(
                        f"the BPE unk_token {self._unk!r} is not in the vocabulary"
                    )
                if unk is not None and not self._fuse_unk:
                    symbols.append(unk)
                unk = unk_id
            # else: tokenizers drops a character it cannot represent
        if unk is not None:
            symbols.append(unk)
        return symbols

    def id_to_token(self, token_id: int) -> str | None:
        """The token of an id, or None."""
        if self._id_to_token is None:
            self._id_to_token = {i: t for t, i in self.vocab.items()}
        return self._id_to_token.get(token_id)
