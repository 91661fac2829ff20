"""Added tokens of a ``tokenizer.json`` and how they are found in text.

Matching is ``tokenizers``' ``AddedVocabulary::find_matches``: leftmost-longest,
with the ``single_word``, ``lstrip`` and ``rstrip`` flags of each token.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .unicode import WHITE_SPACE

__all__ = ["AddedMatcher", "AddedToken"]


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
    """Find added tokens in a piece of text, as ``AddedVocabulary::find_matches``."""

    def __init__(self, tokens: dict[str, AddedToken]) -> None:
        self.tokens = tokens
        # Longest first: an alternation then matches leftmost-longest, like Aho-Corasick.
        alternatives = sorted((t for t in tokens if t), key=len, reverse=True)
        self.regex = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """(piece, None) for plain text and (content, id) for an added token."""
        if self.regex is None or not text:
            return [(text, None)]
        out: list[tuple[str, int | None]] = []
        offset = 0
        for match in self.regex.finditer(text):
            start, stop = match.span()
            token = self.tokens[match.group()]
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
            if offset < start:
                out.append((text[offset:start], None))
            out.append((text[start:stop], token.id))
            offset = stop
        if offset != len(text):
            out.append((text[offset:], None))
        return out
