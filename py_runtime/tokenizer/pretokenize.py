"""The normalizer and pre-tokenizer of a ``tokenizer.json``, and the byte-level alphabet.

Normalizers: NFC/NFD/NFKC/NFKD and ``Sequence``. Pre-tokenizers: ``Split`` (on a
regex or a string, every ``behavior``), ``ByteLevel`` (optional prefix space,
GPT-2's regex, then the bytes written in GPT-2's printable alphabet) and
``Sequence``. Each is built once from its JSON spec, as ``tokenizers`` applies it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from .regex import compile_regex

__all__ = [
    "GPT2_PATTERN",
    "Normalizer",
    "Step",
    "build_normalizer",
    "build_pre_tokenizer",
    "char_to_byte",
]

#: The regex of the ByteLevel pre-tokenizer when ``use_regex`` is true (GPT-2's).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

Normalizer = Callable[[str], str]
#: A pre-tokenizer step: (splits: returns a list of pieces, else maps one piece).
Step = tuple[bool, Callable[[str], Any]]


# --- Byte-level alphabet -------------------------------------------------------------


@functools.cache
def _byte_to_char() -> dict[int, str]:
    """GPT-2's map from bytes to printable characters, keyed by code point 0..255."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@functools.cache
def char_to_byte() -> dict[str, int]:
    """The inverse of GPT-2's byte-level alphabet: character -> byte."""
    return {char: b for b, char in _byte_to_char().items()}


def _byte_level(text: str) -> str:
    """The UTF-8 bytes of ``text``, written in the byte-level alphabet."""
    return text.encode("utf-8").decode("latin-1").translate(_byte_to_char())


# --- Normalizer ----------------------------------------------------------------------


def build_normalizer(spec: dict[str, Any] | None) -> Normalizer | None:
    """The ``normalizer`` of a tokenizer.json as a function (None: no normalizer)."""
    if spec is None:
        return None
    kind = spec["type"]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return functools.partial(unicodedata.normalize, kind)
    if kind == "Sequence":
        steps = [s for s in map(build_normalizer, spec["normalizers"]) if s is not None]

        def sequence(text: str) -> str:
            for step in steps:
                text = step(text)
            return text

        return sequence
    raise ValueError(f"unsupported normalizer: {kind}")


# --- Pre-tokenizer -------------------------------------------------------------------


def _split_pieces(regex: re.Pattern[str], behavior: str, invert: bool, text: str) -> list[str]:
    """The ``Split`` pre-tokenizer on one piece, as ``tokenizers`` does it."""
    if behavior == "Isolated":  # the common case, without the general bookkeeping
        out: list[str] = []
        prev = 0
        for match in regex.finditer(text):
            start, end = match.span()
            if start > prev:
                out.append(text[prev:start])
            if end > start:
                out.append(text[start:end])
            prev = end
        if prev < len(text):
            out.append(text[prev:])
        return out
    marks: list[tuple[int, int, bool]] = []  # (start, end, is_match)
    prev = 0
    for match in regex.finditer(text):
        start, end = match.span()
        if start > prev:
            marks.append((prev, start, invert))
        marks.append((start, end, not invert))
        prev = end
    if prev < len(text):
        marks.append((prev, len(text), invert))
    if behavior == "Removed":
        kept = [(s, e) for s, e, is_match in marks if not is_match]
    elif behavior in ("Contiguous", "MergedWithPrevious"):
        kept = []
        previous = False
        for s, e, is_match in marks:
            merge = is_match == previous if behavior == "Contiguous" else is_match and not previous
            if merge and kept:
                kept[-1] = (kept[-1][0], e)
            else:
                kept.append((s, e))
            previous = is_match
    elif behavior == "MergedWithNext":
        kept = []
        previous = False
        for s, e, is_match in reversed(marks):
            if is_match and not previous and kept:
                kept[-1] = (s, kept[-1][1])
            else:
                kept.append((s, e))
            previous = is_match
        kept.reverse()
    else:
        raise ValueError(f"unsupported Split behavior: {behavior}")
    return [text[s:e] for s, e in kept if e > s]


def build_pre_tokenizer(spec: dict[str, Any] | None) -> list[Step]:
    """The ``pre_tokenizer`` of a tokenizer.json as steps applied in order."""
    if spec is None:
        return []
    kind = spec["type"]
    if kind == "Sequence":
        return [step for s in spec["pretokenizers"] for step in build_pre_tokenizer(s)]
    if kind == "Split":
        pattern = spec["pattern"]
        if "Regex" in pattern:
            regex = compile_regex(pattern["Regex"])
        else:
            regex = re.compile(re.escape(pattern["String"]))
        behavior = spec.get("behavior", "Isolated")
        invert = bool(spec.get("invert", False))
        return [(True, functools.partial(_split_pieces, regex, behavior, invert))]
    if kind == "ByteLevel":
        steps: list[Step] = []
        if spec.get("add_prefix_space", True):
            steps.append((False, lambda text: text if text.startswith(" ") else " " + text))
        if spec.get("use_regex", True):
            regex = compile_regex(GPT2_PATTERN)
            steps.append((True, functools.partial(_split_pieces, regex, "Isolated", False)))
        steps.append((False, _byte_level))
        return steps
    raise ValueError(f"unsupported pre_tokenizer: {kind}")
