"""The engine's grammars in XGrammar's EBNF, written around its character classes.

XGrammar's web build (0.1.27) holds a character class right only when its members
are ASCII: a class with a member from U+0080 up matches wrong characters or none
(``[à-ÿ]`` rejects ``é``, ``[\\u000e-\\u2027]`` rejects ``x``), and a negated class
treats its non-ASCII members as absent (``[^\\n\\u2028]`` admits U+2028). RegExps
written with JavaScript's ``.`` and ``\\s`` (whose sets reach past ASCII) were held
to garbage: ``/^(\\* .*\\n?)+$/`` admitted a blank line. Literal strings and negated
classes of ASCII members are held right, so each class is written as

- its ASCII members as an ASCII class;
- all of U+0080 and up, when the class has them all, as ``[^\\x00-\\x7F]``;
- else its non-ASCII members one by one as literals, when there are at most
  ``MAX_LITERALS``; a larger part of Unicode is narrowed to the characters of
  ``COMMON`` in it (a subset: every answer still matches the constraint).
"""

from __future__ import annotations

from ..engine.grammar import Grammar
from ..engine.regular import Alt, Chars, Node, Repeat, Seq, parse

MAX_LITERALS = 300
#: Non-ASCII characters a class that holds most of Unicode keeps: Latin-1 and Latin
#: Extended-A letters and signs, Greek, Cyrillic, and common punctuation and currency.
COMMON = (
    (0x00A0, 0x017F),
    (0x0391, 0x03C9),
    (0x0401, 0x045F),
    (0x2013, 0x2014),
    (0x2018, 0x201E),
    (0x2020, 0x2022),
    (0x2026, 0x2026),
    (0x2030, 0x2030),
    (0x20AC, 0x20AC),
    (0x2122, 0x2122),
)
_NON_ASCII = ((0x80, 0xD7FF), (0xE000, 0x10FFFF))


def _escape(code: int) -> str:
    """One code point in a string or a class: letters, digits, space and ``_`` as they
    are, others as ``\\uHHHH`` (four digits: XGrammar reads ``\\xHH`` on into the
    letters after it, so ``[\\x3fA]`` would be a range up to U+03FA)."""
    char = chr(code)
    if char.isascii() and (char.isalnum() or char in " _"):
        return char
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _ascii_class(ranges: list[tuple[int, int]], negated: bool = False) -> str:
    parts = (_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}" for lo, hi in ranges)
    return "[" + ("^" if negated else "") + "".join(parts) + "]"


def _covers(ranges: tuple[tuple[int, int], ...], part: tuple[tuple[int, int], ...]) -> bool:
    return all(any(lo <= a and b <= hi for lo, hi in ranges) for a, b in part)


def _intersect(
    ranges: tuple[tuple[int, int], ...], others: tuple[tuple[int, int], ...]
) -> list[tuple[int, int]]:
    out = []
    for lo, hi in ranges:
        for a, b in others:
            if max(lo, a) <= min(hi, b):
                out.append((max(lo, a), min(hi, b)))
    return out


def write_class(node: Chars) -> str:
    """One character of ``node``, as XGrammar holds it."""
    ascii_part = _intersect(node.ranges, ((0, 0x7F),))
    if _covers(node.ranges, _NON_ASCII):
        missing = []
        start = 0
        for lo, hi in ascii_part:
            if lo > start:
                missing.append((start, lo - 1))
            start = hi + 1
        if start <= 0x7F:
            missing.append((start, 0x7F))
        # Everything (a NUL included) cannot be written: NUL is left out.
        return _ascii_class(missing or [(0, 0)], negated=True)
    wide = _intersect(node.ranges, _NON_ASCII)
    if sum(hi - lo + 1 for lo, hi in wide) > MAX_LITERALS:
        wide = _intersect(tuple(wide), COMMON)
    options = [_ascii_class(ascii_part)] if ascii_part else []
    options += [f'"{_escape(code)}"' for lo, hi in wide for code in range(lo, hi + 1)]
    if not options:
        raise ValueError("a class with no character XGrammar can hold")
    return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"


def write(node: Node) -> str:
    """``node`` as an XGrammar EBNF expression."""
    if isinstance(node, Chars):
        if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            return f'"{_escape(node.ranges[0][0])}"'
        return write_class(node)
    if isinstance(node, Seq):
        if not node.items:
            return '""'
        return " ".join(f"({write(i)})" if isinstance(i, Alt) else write(i) for i in node.items)
    if isinstance(node, Alt):
        if not node.options:
            raise ValueError("an empty language has no grammar")
        return " | ".join(write(option) for option in node.options)
    assert isinstance(node, Repeat)
    inner = write(node.node)
    if not isinstance(node.node, Chars) or inner.startswith("("):
        inner = f"({inner})"
    low, high = node.low, node.high
    suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
    if suffix is None:
        suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
    return inner + suffix


def ebnf(regex: str) -> str:
    """A grammar of the engine's regex dialect, with its rule ``root``."""
    return f"root ::= {write(parse(regex))}\n"


def to_xgrammar(grammar: Grammar) -> dict[str, object]:
    """The plain object web/worker/grammar.mjs compiles."""
    if grammar.kind == "regex":
        return {"kind": "ebnf", "source": ebnf(grammar.source)}
    return {
        "kind": "tool-calls",
        "triggers": list(grammar.triggers),
        "tags": [
            {"begin": t.begin, "grammar": ebnf(t.arguments), "end": t.end} for t in grammar.tags
        ],
    }
