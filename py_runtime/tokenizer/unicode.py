"""Unicode character classes for the tokenizer regexes, as code point ranges.

``\\p{L}``, ``\\p{N}``, ``\\p{Lu}``... and Unicode ``\\s`` (White_Space), built lazily
from ``unicodedata`` the first time a regex needs them. Unlike ``tokenizers``, which
uses Oniguruma's Unicode tables, the categories are those of the running Python's
Unicode version; they differ only on characters assigned since then.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from array import array
from collections.abc import Iterable, Iterator

__all__ = [
    "MAX_CODE_POINT",
    "WHITE_SPACE",
    "Ranges",
    "category_ranges",
    "complement",
    "precompute_classes",
]

#: Sorted, disjoint (first, last) code point ranges, both ends included.
Ranges = tuple[tuple[int, int], ...]

#: Unicode White_Space: what ``\s`` means in Oniguruma and Rust's regex.
WHITE_SPACE: Ranges = (
    (0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
    (0x3000, 0x3000),
)  # fmt: skip
MAX_CODE_POINT = 0x10FFFF

_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn"
).split()
_CATEGORY_NAMES = {
    "Letter": "L", "Mark": "M", "Number": "N", "Punctuation": "P", "Symbol": "S",
    "Separator": "Z", "Other": "C", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Decimal_Number": "Nd",
}  # fmt: skip
_CHUNK = 1 << 16  # code points per step: the tables are built without one huge string


def _chunks() -> Iterator[tuple[int, str]]:
    """Every code point, surrogates included, as (first, string) chunks."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
    for first in range(0, MAX_CODE_POINT + 1, _CHUNK):
        numbers = array("I", range(first, min(first + _CHUNK, MAX_CODE_POINT + 1)))
        if numbers.itemsize != 4:  # not on CPython's usual platforms nor on wasm32
            yield first, "".join(map(chr, numbers))
        else:
            yield first, numbers.tobytes().decode(codec, "surrogatepass")


def _runs(mask: bytes, first: int = 0) -> list[tuple[int, int]]:
    """The (first, last) ranges of the positions holding 1 in ``mask``, offset by ``first``."""
    return [(first + m.start(), first + m.end() - 1) for m in re.finditer(rb"\x01+", mask)]


def _joined(runs: Iterable[tuple[int, int]]) -> Ranges:
    """Ranges with the ones that touch (across chunk edges) merged."""
    merged: list[tuple[int, int]] = []
    for first, last in runs:
        if merged and merged[-1][1] == first - 1:
            merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return tuple(merged)


@functools.cache
def _category_bytes() -> bytes:
    """The general category of every code point, as an index into ``_CATEGORIES``."""
    index = {name: i for i, name in enumerate(_CATEGORIES)}
    return b"".join(
        bytes(map(index.__getitem__, map(unicodedata.category, chars))) for _, chars in _chunks()
    )


@functools.cache
def _letters_and_numbers() -> tuple[Ranges, Ranges]:
    """L (str.isalpha() is exactly L*) and N (N* lies within isalnum() minus isalpha():
    only those few are looked up), without the whole category table."""
    letters: list[tuple[int, int]] = []
    numbers: list[tuple[int, int]] = []
    for first, chars in _chunks():
        alpha = bytes(map(str.isalpha, chars))
        letters += _runs(alpha, first)
        alnum = int.from_bytes(bytes(map(str.isalnum, chars)), "big")
        others = (alnum & ~int.from_bytes(alpha, "big")).to_bytes(len(chars), "big")
        for start, last in _runs(others):
            numbers += [
                (first + cp, first + cp)
                for cp in range(start, last + 1)
                if unicodedata.category(chars[cp])[0] == "N"
            ]
    return _joined(letters), _joined(numbers)


@functools.cache
def category_ranges(name: str) -> Ranges:
    """The code point ranges of a general category (``L``, ``N``, ``Lu``, ...)."""
    name = _CATEGORY_NAMES.get(name, name)
    if name in ("L", "N"):
        letters, numbers = _letters_and_numbers()
        return letters if name == "L" else numbers
    wanted = [c for c in _CATEGORIES if c == name or (len(name) == 1 and c[0] == name)]
    if not wanted:
        raise ValueError(f"unsupported Unicode property in a tokenizer regex: {name!r}")
    table = bytearray(256)
    for c in wanted:
        table[_CATEGORIES.index(c)] = 1
    return tuple(_runs(_category_bytes().translate(table)))


def precompute_classes() -> None:
    """Compute \\p{L} and \\p{N}, which most pre-tokenizer regexes use (about 0.3 s in
    Pyodide); the build does it before it takes Pyodide's memory snapshot."""
    _letters_and_numbers()


def complement(ranges: Ranges) -> Ranges:
    """The code points not in ``ranges`` (sorted, disjoint)."""
    out: list[tuple[int, int]] = []
    start = 0
    for first, last in ranges:
        if first > start:
            out.append((start, first - 1))
        start = last + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)
