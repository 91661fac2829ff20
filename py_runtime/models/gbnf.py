"""A translated RegExp (``engine/js_regex.translate``) as llama.cpp's GBNF grammar.

The translation's dialect is small: literal characters (``\\`` before a
metacharacter, ``\\uHHHH`` for control characters), classes of code-point ranges,
groups, ``|`` and the quantifiers ``* + ? {n} {n,} {n,m}``. It is parsed into a
tree that GBNF spells directly, so the server holds the answer to the same language
the page's grammar library would.

llama.cpp starts a grammar where the answer continues an assistant prefix, so the
grammar for a prefixed answer is the pattern's derivative by the prefix (Brzozowski):
what may follow the prefix in a whole match. None is left when the pattern cannot
start with the prefix.
"""

from __future__ import annotations

from ..engine.regular import EMPTY, NOTHING, Alt, Chars, Node, Repeat, Seq, derivative, parse

# -- GBNF ----------------------------------------------------------------------------


def _code(code: int) -> str:
    """One code point as GBNF writes it (inside a string or a class)."""
    char = chr(code)
    if char.isascii() and char.isalnum():
        return char
    return f"\\x{code:02X}" if code < 0x80 else f"\\U{code:08X}"


def _gbnf(node: Node) -> str:
    if isinstance(node, Chars):
        if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            return f'"{_code(node.ranges[0][0])}"'
        parts = (_code(lo) if lo == hi else f"{_code(lo)}-{_code(hi)}" for lo, hi in node.ranges)
        return "[" + "".join(parts) + "]"
    if isinstance(node, Seq):
        return " ".join(_group(item, Alt) for item in node.items) or '""'
    if isinstance(node, Alt):
        return " | ".join(_gbnf(option) for option in node.options)
    inner = _group(node.node, (Seq, Alt, Repeat))
    low, high = node.low, node.high
    suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
    if suffix is None:
        suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
    return inner + suffix


def _group(node: Node, kinds: type | tuple[type, ...]) -> str:
    text = _gbnf(node)
    return f"({text})" if isinstance(node, kinds) and node not in (EMPTY,) else text


def regex_to_gbnf(source: str, prefix: str = "") -> str | None:
    """The grammar whose ``root`` matches what may follow ``prefix`` in a whole match of
    ``source``; None when no match starts with ``prefix``."""
    node = parse(source)
    for char in prefix:
        node = derivative(node, ord(char))
        if node == NOTHING:
            return None
    return f"root ::= {_gbnf(node)}\n"
