"""The Unigram model of a ``tokenizer.json`` (SentencePiece's): the best segmentation.

As ``tokenizers``' ``Unigram::encode_optimized``: Viterbi over the pieces' scores
(ties keep the first path found), characters without a piece scored as unknown
(``min score - 10``), consecutive unknowns fused, and with ``byte_fallback`` an
unknown run written as its bytes' ``<0xNN>`` tokens when they all exist.
"""

from __future__ import annotations

from typing import Any

from .errors import TokenizerError

__all__ = ["Unigram"]

_UNK_PENALTY = 10.0


class Unigram:
    """A Unigram model: ``tokenize(word)`` gives the ids of one pre-token."""

    def __init__(self, spec: dict[str, Any]) -> None:
        pieces: list[str] = []
        self._scores: list[float] = []
        for piece, score in spec["vocab"]:
            if not isinstance(piece, str):
                raise TypeError("a Unigram piece is not a string")
            pieces.append(piece)
            self._scores.append(float(score))
        if not pieces:
            raise TokenizerError("the Unigram model has an empty vocabulary")
        self.pieces = pieces
        self.size = len(pieces)
        self.vocab: dict[str, int] = {piece: i for i, piece in enumerate(pieces)}  # later wins
        unk_id = spec.get("unk_id")
        if unk_id is not None and not 0 <= unk_id < len(pieces):
            raise TokenizerError(f"the Unigram unk_id {unk_id} is not in the vocabulary")
        self._unk_id: int | None = unk_id
        self._byte_fallback = bool(spec.get("byte_fallback", False))
        self._unk_score = min(self._scores) - _UNK_PENALTY
        lengths: dict[str, set[int]] = {}  # first character -> lengths of the pieces
        for piece in self.vocab:
            if piece:
                lengths.setdefault(piece[0], set()).add(len(piece))
        self._lengths = {char: sorted(found) for char, found in lengths.items()}

    def tokenize(self, word: str) -> list[int]:
        """The ids of the best segmentation of ``word``."""
        ids: list[int] = []
        vocab = self.vocab
        for piece in self._segment(word):
            token_id = vocab.get(piece)
            if token_id is None:  # a run of unknown characters
                if self._byte_fallback:
                    names = [f"<0x{b:02X}>" for b in piece.encode("utf-8")]
                    if all(name in vocab for name in names):
                        ids.extend(vocab[name] for name in names)
                        continue
                token_id = self._unk()
            ids.append(token_id)
        return ids

    def id_to_token(self, token_id: int) -> str | None:
        """The piece of an id, or None."""
        return self.pieces[token_id] if 0 <= token_id < len(self.pieces) else None

    def _unk(self) -> int:
        if self._unk_id is None:
            raise TokenizerError("the Unigram model has no unk_id for an unknown character")
        return self._unk_id

    def _segment(self, word: str) -> list[str]:
        """The pieces of the best path (unknown runs fused), in order."""
        size = len(word)
        if not size:
            return []
        vocab, scores, lengths = self.vocab, self._scores, self._lengths
        best = [0.0] * (size + 1)  # the best score of a path ending here
        starts = [-1] * (size + 1)  # where its last piece starts (-1: none yet)
        ends_id = [0] * (size + 1)  # and that piece's id
        for start in range(size):
            base = best[start]
            single = False
            for length in lengths.get(word[start], ()):
                end = start + length
                if end > size:
                    break
                token_id = vocab.get(word[start:end])
                if token_id is None:
                    continue
                score = scores[token_id] + base
                if starts[end] < 0 or score > best[end]:
                    best[end], starts[end], ends_id[end] = score, start, token_id
                if length == 1:
                    single = True
            if not single:
                end = start + 1
                score = self._unk_score + base
                if starts[end] < 0 or score > best[end]:
                    best[end], starts[end], ends_id[end] = score, start, self._unk()
        out: list[str] = []
        unknown: list[str] = []  # consecutive unknown pieces, backwards
        unk_id = self._unk_id
        end = size
        while end > 0:
            start = starts[end]
            if unk_id is not None and ends_id[end] == unk_id:
                unknown.append(word[start:end])
            else:
                if unknown:
                    out.append("".join(reversed(unknown)))
                    unknown = []
                out.append(word[start:end])
            end = start
        if unknown:
            out.append("".join(reversed(unknown)))
        out.reverse()
        return out
