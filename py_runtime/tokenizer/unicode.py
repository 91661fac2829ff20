"""Unicode character classes for the tokenizer regexes, as code point ranges.

``\\p{L}``, ``\\p{N}``, ``\\p{Lu}``..., Unicode ``\\s`` (White_Space) and ``\\w``, built
lazily from ``unicodedata`` the first time a regex needs them, and ``tokenizers``'
punctuation (a fixed table). Unlike ``tokenizers``, which uses Oniguruma's and Rust's
Unicode tables, the categories are those of the running Python's Unicode version;
they differ only on characters assigned since then.
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
    "punctuation_ranges",
    "union",
    "word_ranges",
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


def union(*sets: Ranges) -> Ranges:
    """The code points in any of ``sets`` (sorted, disjoint)."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(r for ranges in sets for r in ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return tuple(merged)


# Other_Alphabetic outside the marks (the circled and squared Latin letters).
_OTHER_ALPHABETIC: Ranges = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
                             (0x1F170, 0x1F189))  # fmt: skip


@functools.cache
def word_ranges() -> Ranges:
    """Rust regex's Unicode ``\\w``: Alphabetic, marks, Nd, Pc and Join_Control."""
    parts = [category_ranges(name) for name in ("L", "M", "Nd", "Nl", "Pc")]
    return union(*parts, _OTHER_ALPHABETIC, ((0x200C, 0x200D),))


# The non-ASCII punctuation of ``tokenizers`` (the ``unicode_categories`` crate: general
# category P as of Unicode 8.0), as hexadecimal code points and ranges.
_PUNCTUATION = """
A1 A7 AB B6-B7 BB BF 37E 387 55A-55F 589-58A 5BE 5C0 5C3 5C6 5F3-5F4 609-60A 60C-60D 61B
61E-61F 66A-66D 6D4 700-70D 7F7-7F9 830-83E 85E 964-965 970 AF0 DF4 E4F E5A-E5B F04-F12
F14 F3A-F3D F85 FD0-FD4 FD9-FDA 104A-104F 10FB 1360-1368 1400 166D-166E 169B-169C
16EB-16ED 1735-1736 17D4-17D6 17D8-17DA 1800-180A 1944-1945 1A1E-1A1F 1AA0-1AA6
1AA8-1AAD 1B5A-1B60 1BFC-1BFF 1C3B-1C3F 1C7E-1C7F 1CC0-1CC7 1CD3 2010-2027 2030-2043
2045-2051 2053-205E 207D-207E 208D-208E 2308-230B 2329-232A 2768-2775 27C5-27C6
27E6-27EF 2983-2998 29D8-29DB 29FC-29FD 2CF9-2CFC 2CFE-2CFF 2D70 2E00-2E2E 2E30-2E42
3001-3003 3008-3011 3014-301F 3030 303D 30A0 30FB A4FE-A4FF A60D-A60F A673 A67E
A6F2-A6F7 A874-A877 A8CE-A8CF A8F8-A8FA A8FC A92E-A92F A95F A9C1-A9CD A9DE-A9DF
AA5C-AA5F AADE-AADF AAF0-AAF1 ABEB FD3E-FD3F FE10-FE19 FE30-FE52 FE54-FE61 FE63 FE68
FE6A-FE6B FF01-FF03 FF05-FF0A FF0C-FF0F FF1A-FF1B FF1F-FF20 FF3B-FF3D FF3F FF5B FF5D
FF5F-FF65 10100-10102 1039F 103D0 1056F 10857 1091F 1093F 10A50-10A58 10A7F 10AF0-10AF6
10B39-10B3F 10B99-10B9C 11047-1104D 110BB-110BC 110BE-110C1 11140-11143 11174-11175
111C5-111C9 111CD 111DB 111DD-111DF 11238-1123D 112A9 114C6 115C1-115D7 11641-11643
1173C-1173E 12470-12474 16A6E-16A6F 16AF5 16B37-16B3B 16B44 1BC9F 1DA87-1DA8B
"""


@functools.cache
def punctuation_ranges() -> Ranges:
    """``tokenizers``' punctuation (``Punctuation``, ``BertPreTokenizer``): ASCII
    punctuation, or general category P in its (older) Unicode tables."""
    ranges = [(ord(c), ord(c)) for c in r"""!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"""]
    for item in _PUNCTUATION.split():
        first, _, last = item.partition("-")
        ranges.append((int(first, 16), int(last or first, 16)))
    return union(tuple(ranges))
