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

from dataclasses import dataclass

Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Chars:
    """One character out of ``ranges``."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """``node`` from ``low`` to ``high`` times (None: no upper bound)."""

    node: Node
    low: int
    high: int | None


Node = Chars | Seq | Alt | Repeat
EMPTY = Seq(())
#: Matches nothing (no option left).
NOTHING = Alt(())


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0

    def peek(self, chars: str) -> bool:
        return self.at < len(self.source) and self.source[self.at] in chars

    def char(self) -> int:
        """The next character's code point, an escape read as the character it stands for."""
        char = self.source[self.at]
        self.at += 1
        if char != "\\":
            return ord(char)
        if self.source.startswith("u", self.at):
            self.at += 5
            return int(self.source[self.at - 4 : self.at], 16)
        self.at += 1
        return ord(self.source[self.at - 1])

    def disjunction(self) -> Node:
        options = [self.sequence()]
        while self.peek("|"):
            self.at += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self) -> Node:
        items = []
        while self.at < len(self.source) and not self.peek("|)"):
            items.append(self.quantified(self.atom()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantified(self, node: Node) -> Node:
        if self.peek("*+?"):
            self.at += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[self.source[self.at - 1]]
            return Repeat(node, low, high)
        if self.peek("{"):
            end = self.source.index("}", self.at)
            low_text, comma, high_text = self.source[self.at + 1 : end].partition(",")
            self.at = end + 1
            low = int(low_text)
            high = (int(high_text) if high_text else None) if comma else low
            return Repeat(node, low, high)
        return node

    def atom(self) -> Node:
        if self.peek("("):
            self.at += 1
            inner = self.disjunction()
            self.at += 1  # ")"
            return inner
        if not self.peek("["):
            code = self.char()
            return Chars(((code, code),))
        self.at += 1
        ranges = []
        while not self.peek("]"):
            low = self.char()
            if self.peek("-") and self.source[self.at + 1] != "]":
                self.at += 1
                ranges.append((low, self.char()))
            else:
                ranges.append((low, low))
        self.at += 1
        return Chars(tuple(ranges))


def parse(source: str) -> Node:
    return _Parser(source).disjunction()


# -- derivatives -------------------------------------------------------------------


def nullable(node: Node) -> bool:
    """Whether ``node`` matches the empty string."""
    if isinstance(node, Chars):
        return False
    if isinstance(node, Seq):
        return all(nullable(item) for item in node.items)
    if isinstance(node, Alt):
        return any(nullable(option) for option in node.options)
    return node.low == 0 or nullable(node.node)


def _seq(*items: Node) -> Node:
    if NOTHING in items:
        return NOTHING
    flat = [part for item in items for part in (item.items if isinstance(item, Seq) else (item,))]
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _alt(*options: Node) -> Node:
    kept = tuple(dict.fromkeys(option for option in options if option != NOTHING))
    return kept[0] if len(kept) == 1 else Alt(kept)


def derivative(node: Node, code: int) -> Node:
    """What may follow the character ``code`` in a match of ``node``."""
    if isinstance(node, Chars):
        return EMPTY if any(low <= code <= high for low, high in node.ranges) else NOTHING
    if isinstance(node, Alt):
        return _alt(*(derivative(option, code) for option in node.options))
    if isinstance(node, Seq):
        if not node.items:
            return NOTHING
        head, rest = node.items[0], _seq(*node.items[1:])
        first = _seq(derivative(head, code), rest)
        return _alt(first, derivative(rest, code)) if nullable(head) else first
    if node.high == 0:
        return NOTHING
    high = None if node.high is None else node.high - 1
    rest = EMPTY if high == 0 else Repeat(node.node, max(node.low - 1, 0), high)
    return _seq(derivative(node.node, code), rest)


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
