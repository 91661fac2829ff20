"""Oniguruma regexes of ``tokenizers`` translated for Python's ``re``, same matches.

Python's ``re`` has no ``\\p{...}`` and its ``\\s`` differs (it includes
U+001C..U+001F), so each such escape becomes an explicit character class built
from the tables of ``unicode``; ``\\x{HHHH}``, ``\\z``, ``\\Z`` and ``\\e`` are
rewritten, and what cannot be translated faithfully raises ``ValueError``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from .unicode import WHITE_SPACE, Ranges, category_ranges, complement

__all__ = ["class_body", "compile_regex", "find_spans", "replace_all", "translate_regex"]


def _class_char(cp: int) -> str:
    char = chr(cp)
    return "\\" + char if char in "\\]-[^&~|" else char


def class_body(ranges: Ranges) -> str:
    """The inside of a ``re`` character class holding ``ranges``."""
    parts = []
    for first, last in ranges:
        if first == last:
            parts.append(_class_char(first))
        else:
            sep = "" if last == first + 1 else "-"
            parts.append(_class_char(first) + sep + _class_char(last))
    return "".join(parts)


def _escape_set(pattern: str, i: int) -> tuple[Ranges | None, bool, int]:
    """Parse a class escape at ``pattern[i] == '\\'``: (ranges, negated, next index).

    Ranges is None when the escape is not a set (it is then copied as it is)."""
    kind = pattern[i + 1]
    if kind in "sS":
        return WHITE_SPACE, kind == "S", i + 2
    if kind in "dD":
        return category_ranges("Nd"), kind == "D", i + 2
    if kind in "pP":
        if pattern.startswith("{", i + 2):
            end = pattern.index("}", i + 3)
            name, after = pattern[i + 3 : end], end + 1
        else:
            name, after = pattern[i + 2], i + 3
        negated = kind == "P"
        if name.startswith("^"):
            name, negated = name[1:], not negated
        return category_ranges(name), negated, after
    if kind in "wWbBhHRXKGQE":
        raise ValueError(f"unsupported escape in a tokenizer regex: \\{kind}")
    return None, False, i


def _escape_literal(pattern: str, i: int) -> tuple[int | None, int]:
    """A ``\\x{HHHH}`` escape at ``i`` as (code point, next index), else (None, i)."""
    if pattern.startswith("x{", i + 1):
        end = pattern.index("}", i + 3)
        return int(pattern[i + 3 : end], 16), end + 1
    return None, i


def _copy_escape(pattern: str, i: int) -> tuple[str, int]:
    """An escape that means the same in Python (``\\n``, ``\\.``, ``\\x41``...)."""
    kind = pattern[i + 1]
    if kind == "z":
        return r"\Z", i + 2
    if kind == "Z":
        return r"(?=\n?\Z)", i + 2
    if kind == "e":
        return r"\x1b", i + 2
    return pattern[i : i + 2], i + 2


def translate_regex(pattern: str) -> str:
    """Rewrite a ``tokenizers`` (Oniguruma) regex for Python's ``re``, same matches."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            ranges, negated, after = _escape_set(pattern, i)
            if ranges is not None:
                out.append(("[^" if negated else "[") + class_body(ranges) + "]")
                i = after
                continue
            cp, after = _escape_literal(pattern, i)
            if cp is not None:
                out.append(re.escape(chr(cp)))
                i = after
                continue
            text, i = _copy_escape(pattern, i)
            out.append(text)
        elif char == "[":
            text, i = _translate_class(pattern, i)
            out.append(text)
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _translate_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the character class starting at ``pattern[i] == '['``."""
    out = ["["]
    i += 1
    if pattern.startswith("^", i):
        out.append("^")
        i += 1
    first = True
    while True:
        if i >= len(pattern):
            raise ValueError("unterminated character class in a tokenizer regex")
        char = pattern[i]
        if char == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        first = False
        if char == "\\":
            ranges, negated, after = _escape_set(pattern, i)
            if ranges is not None:
                out.append(class_body(complement(ranges) if negated else ranges))
                i = after
                continue
            cp, after = _escape_literal(pattern, i)
            if cp is not None:
                out.append(_class_char(cp))
                i = after
                continue
            out.append(pattern[i : i + 2])
            i += 2
        elif char == "[" or pattern.startswith("&&", i):
            raise ValueError("nested classes and set operations are not supported")
        elif char in "&~|":
            out.append("\\" + char)
            i += 1
        else:
            out.append(char)
            i += 1


@functools.cache
def compile_regex(pattern: str) -> re.Pattern[str]:
    """Compile a ``tokenizers`` regex (translated once, cached)."""
    return re.compile(translate_regex(pattern))


def find_spans(regex: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """The matches of ``regex`` as Oniguruma finds them: unlike Python's, an empty
    match right where the previous match ended is not one."""
    last = -1
    for match in regex.finditer(text):
        start, end = match.span()
        if start == end == last:
            continue
        last = end
        yield start, end


def replace_all(regex: re.Pattern[str], content: str, text: str) -> str:
    """Every match of ``regex`` (as ``find_spans``) replaced with ``content``, literally;
    an empty text has no match."""
    if not text:
        return text
    out: list[str] = []
    prev = 0
    for start, end in find_spans(regex, text):
        out += (text[prev:start], content)
        prev = end
    out.append(text[prev:])
    return "".join(out)
