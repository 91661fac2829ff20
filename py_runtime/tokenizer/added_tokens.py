"""Added tokens of a ``tokenizer.json``: their ids, and how they are found in text.

As ``tokenizers``' ``AddedVocabulary``: the ids in the file are not used (a token of
the model's vocabulary keeps its id, the others get the next ones); unnormalized
tokens are matched in the input, normalized ones in the normalized text, both
leftmost-longest with the ``single_word``, ``lstrip`` and ``rstrip`` flags; a
normalized token decodes as its normalized form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from .unicode import WHITE_SPACE

__all__ = ["AddedMatcher", "AddedToken", "AddedVocabulary"]


def _is_word_char(char: str) -> bool:
    """Rust regex's Unicode ``\\w`` (Alphabetic, M, Nd, Pc, Join_Control).

    Other_Alphabetic is not in ``unicodedata``; the marks and the enclosed Latin
    letters cover it but for a few symbols."""
    if char.isalpha() or char in "\u200c\u200d":
        return True
    cat = unicodedata.category(char)
    if cat[0] == "M" or cat in ("Nd", "Nl", "Pc"):
        return True
    cp = ord(char)
    return 0x24B6 <= cp <= 0x24E9 or 0x1F130 <= cp <= 0x1F189


def _is_space(char: str) -> bool:
    cp = ord(char)
    return any(first <= cp <= last for first, last in WHITE_SPACE)


class AddedToken:
    """One entry of ``added_tokens``, with the defaults of ``tokenizers``."""

    __slots__ = ("content", "id", "special", "single_word", "lstrip", "rstrip", "normalized")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.content: str = spec["content"]
        self.id: int = spec["id"]
        self.special: bool = bool(spec.get("special", False))
        self.single_word: bool = bool(spec.get("single_word", False))
        self.lstrip: bool = bool(spec.get("lstrip", False))
        self.rstrip: bool = bool(spec.get("rstrip", False))
        self.normalized: bool = bool(spec.get("normalized", not self.special))


class AddedMatcher:
    """Find added tokens in a piece of text, as ``AddedVocabulary::find_matches``:
    leftmost-longest. A regex finds where a token may start (its first characters);
    there the longest token that follows is looked up by length. (One alternation of
    every token compiled for about a second with Gemma's 6,414.)"""

    def __init__(self, tokens: dict[str, AddedToken]) -> None:
        self.tokens = tokens
        lengths: dict[str, set[int]] = {}
        for content in tokens:
            if content:
                lengths.setdefault(content[0], set()).add(len(content))
        #: first character -> the lengths of the tokens it starts, longest first
        self._lengths = {char: sorted(found, reverse=True) for char, found in lengths.items()}
        firsts = "".join(re.escape(char) for char in sorted(lengths))
        self._starts = re.compile(f"[{firsts}]") if firsts else None

    def _find(self, text: str, start: int) -> tuple[int, int] | None:
        """The leftmost-longest token at or after ``start``: its span."""
        assert self._starts is not None
        tokens, end = self.tokens, len(text)
        while (found := self._starts.search(text, start)) is not None:
            position = found.start()
            for length in self._lengths[text[position]]:
                stop = position + length
                if stop <= end and text[position:stop] in tokens:
                    return position, stop
            start = position + 1
        return None

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """(piece, None) for plain text and (content, id) for an added token."""
        if self._starts is None or not text:
            return [(text, None)]
        out: list[tuple[str, int | None]] = []
        offset = search = 0
        while (span := self._find(text, search)) is not None:
            start, stop = span
            search = stop
            token = self.tokens[text[start:stop]]
            if token.single_word:
                before = start == 0 or not _is_word_char(text[start - 1])
                after = stop == len(text) or not _is_word_char(text[stop])
                if not (before and after):
                    continue
            if token.lstrip:
                new_start = start
                while new_start > 0 and _is_space(text[new_start - 1]):
                    new_start -= 1
                start = max(new_start, offset)
            if token.rstrip:
                while stop < len(text) and _is_space(text[stop]):
                    stop += 1
            search = stop
            if offset < start:
                out.append((text[offset:start], None))
            out.append((text[start:stop], token.id))
            offset = stop
        if offset != len(text):
            out.append((text[offset:], None))
        return out


class AddedVocabulary:
    """The ``added_tokens`` of a tokenizer.json, read as ``tokenizers`` reads them."""

    def __init__(
        self,
        specs: list[dict[str, Any]],
        vocab: dict[str, int],
        size: int,
        normalizer: Callable[[str], str] | None,
    ) -> None:
        by_content: dict[str, AddedToken] = {}
        self.by_id: dict[int, AddedToken] = {}
        self.decoded: dict[int, str] = {}  # what an id gives the decoder
        special: set[str] = set()
        next_id = size
        for token in map(AddedToken, specs):
            if not token.content:
                continue
            known = by_content.get(token.content)
            token_id = known.id if known is not None else vocab.get(token.content)
            if token_id is None:
                token_id, next_id = next_id, next_id + 1
            token.id = token_id
            by_content[token.content] = self.by_id[token_id] = token
            normal = normalizer(token.content) if token.normalized and normalizer else None
            self.decoded[token_id] = normal or token.content
            if token.special:
                special.add(token.content)
        self.by_content = by_content
        self.special = frozenset(special)
        self.raw = AddedMatcher({t.content: t for t in by_content.values() if not t.normalized})
        self.normalized = AddedMatcher(
            {
                normalizer(t.content) if normalizer else t.content: t
                for t in by_content.values()
                if t.normalized
            }
        )
