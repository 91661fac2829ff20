"""JSON strings as the engine's regular languages (``regular.py``): one character of a
string as JSON writes it, a string value's language written as JSON (escapes
included), the formats held as patterns of the engine's own, and a pattern's
language fitted to a ``maxLength``.
"""

from __future__ import annotations

from .regular import Alt, Chars, Node, Repeat, Seq, alt, literal, repeat, seq

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
#: One character of a JSON string, as written.
_PLAIN = Chars(((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)))
STRING_CHAR = alt(
    _PLAIN,
    seq(
        literal("\\"),
        Chars(
            (
                (0x22, 0x22),
                (0x2F, 0x2F),
                (0x5C, 0x5C),
                (0x62, 0x62),
                (0x66, 0x66),
                (0x6E, 0x6E),
                (0x72, 0x72),
                (0x74, 0x74),
            )
        ),
    ),
)
#: Formats held as patterns of the engine's own (``json_schema.FORMAT_PATTERNS`` too).
_IPV4_PART = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_H16 = "[0-9a-fA-F]{1,4}"
FORMAT_REGEXES = {
    # Labels of letters and digits joined by hyphens (no length cap: XGrammar takes
    # seconds to compile a bounded repetition), a top-level domain of 2+ letters.
    "email": (
        "[A-Za-z0-9_%+\\-]+(\\.[A-Za-z0-9_%+\\-]+)*@"
        "([A-Za-z0-9]+(\\-[A-Za-z0-9]+)*\\.)+[A-Za-z][A-Za-z]+"
    ),
    "uuid": "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": f"{_IPV4_PART}(\\.{_IPV4_PART}){{3}}",
    "ipv6": f"({_H16}:){{7}}{_H16}|(({_H16}:){{0,6}}{_H16})?::(({_H16}:){{0,6}}{_H16})?",
}


def string_value(node: Node) -> Node:
    """The JSON string body whose value is a string of ``node``: each character as it
    is written in JSON (quotes and backslashes escaped; controls with a short escape;
    other controls left out)."""
    if isinstance(node, Chars):
        plain: list[tuple[int, int]] = []
        escaped: list[Node] = []
        for lo, hi in node.ranges:
            for cut_lo, cut_hi in _split(lo, hi):
                if cut_lo == cut_hi and chr(cut_lo) in _ESCAPES:
                    escaped.append(literal(_ESCAPES[chr(cut_lo)]))
                elif cut_lo >= 0x20:
                    plain.append((cut_lo, cut_hi))
        return alt(*([Chars(tuple(plain))] if plain else []), *escaped)
    if isinstance(node, Seq):
        return seq(*(string_value(item) for item in node.items))
    if isinstance(node, Alt):
        return alt(*(string_value(option) for option in node.options))
    assert isinstance(node, Repeat)
    return repeat(string_value(node.node), node.low, node.high)


def _split(lo: int, hi: int) -> list[tuple[int, int]]:
    """``lo..hi`` cut so that every character with a JSON escape (and every control)
    stands alone or in a range of controls."""
    special = sorted({ord(c) for c in _ESCAPES} | {0x22, 0x5C})
    out: list[tuple[int, int]] = []
    start = lo
    for code in special:
        if start <= code <= hi:
            if start < code:
                out.append((start, code - 1))
            out.append((code, code))
            start = code + 1
    if start <= hi:
        out.append((start, hi))
    # Controls other than the escaped ones are dropped by the caller (below 0x20).
    return [(a, b) for a, b in out if a >= 0x20 or a == b]


def lengths(node: Node) -> tuple[int, int | None]:
    """The fewest and most characters ``node`` matches (None: no most)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Seq):
        low = 0
        total: int | None = 0
        for item in node.items:
            a, b = lengths(item)
            low += a
            total = None if total is None or b is None else total + b
        return low, total
    if isinstance(node, Alt):
        spans = [lengths(option) for option in node.options]
        highs = [b for _, b in spans]
        return min(a for a, _ in spans), None if None in highs else max(
            h for h in highs if h is not None
        )
    a, b = lengths(node.node)
    return a * node.low, None if node.high is None or b is None else b * node.high


def _capped(node: Node, top: int) -> Node:
    """``node`` with every unbounded repetition repeated at most ``top`` times (a subset)."""
    if isinstance(node, Seq):
        return seq(*(_capped(item, top) for item in node.items))
    if isinstance(node, Alt):
        return alt(*(_capped(option, top) for option in node.options))
    if isinstance(node, Repeat):
        high = max(node.low, top) if node.high is None else node.high
        return repeat(_capped(node.node, top), node.low, high)
    return node


def within(node: Node, most: int) -> Node:
    """A subset of ``node`` whose texts are at most ``most`` characters long: unbounded
    repetitions capped as high as that allows (``maxLength`` beside a ``pattern``)."""
    low, high = 0, most
    best = _capped(node, 0)
    while low <= high:
        middle = (low + high) // 2
        capped = _capped(node, middle)
        longest = lengths(capped)[1]
        if longest is not None and longest <= most:
            best, low = capped, middle + 1
        else:
            high = middle - 1
    return best
