"""Regular languages as trees: what the engine holds an answer to.

A translated RegExp (``engine/js_regex.translate``) is parsed into a tree of
characters, sequences, alternatives and repetitions; the engine's own JSON grammar
(``json_regular.py``) builds the same trees. From a tree the engine writes each
grammar library's syntax, takes derivatives (what may follow a text) and finds the
shortest completion of an answer.
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
