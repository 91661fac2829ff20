"""Regular languages as trees: what the engine holds an answer to.

A translated RegExp (``engine/js_regex.translate``) is parsed into a tree of
characters, sequences, alternatives and repetitions; the engine's own JSON grammar
(``json_regular.py``) builds the same trees. From a tree the engine writes each
grammar library's syntax, takes derivatives (what may follow a text) and finds the
shortest completion of an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

Ranges = tuple[tuple[int, int], ...]


class _Hashed:
    """Trees are compared and hashed often (derivatives are cached by node): the hash
    of a node is computed once."""

    @cached_property
    def _hash(self) -> int:
        return hash((type(self).__name__, *vars(self).values()))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True)
class Chars(_Hashed):
    """One character out of ``ranges``."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq(_Hashed):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt(_Hashed):
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat(_Hashed):
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


# -- building ----------------------------------------------------------------------


def seq(*items: Node) -> Node:
    """The concatenation of ``items`` (flattened; NOTHING absorbs)."""
    return _seq(*items)


def alt(*options: Node) -> Node:
    """The union of ``options`` (duplicates and NOTHING dropped)."""
    return _alt(*options)


def literal(text: str) -> Node:
    """Exactly ``text``."""
    return _seq(*(Chars(((ord(c), ord(c)),)) for c in text)) if text else EMPTY


def chars(*ranges: tuple[int, int]) -> Chars:
    return Chars(tuple(ranges))


def repeat(node: Node, low: int, high: int | None) -> Node:
    if high == 0 or node == EMPTY:
        return EMPTY
    if node == NOTHING:
        return EMPTY if low == 0 else NOTHING
    if low == high == 1:
        return node
    return Repeat(node, low, high)


# -- what an answer can still become -----------------------------------------------


def shortest(node: Node, memo: dict[Node, str | None] | None = None) -> str | None:
    """The shortest string ``node`` matches (the first such in the tree's order), or
    None when it matches nothing."""
    memo = {} if memo is None else memo
    if node in memo:
        return memo[node]
    memo[node] = None  # a cycle cannot occur in a tree; this only guards re-entry
    found: str | None
    if isinstance(node, Chars):
        found = chr(node.ranges[0][0]) if node.ranges else None
    elif isinstance(node, Seq):
        parts = [shortest(item, memo) for item in node.items]
        found = None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    elif isinstance(node, Alt):
        options = [o for o in (shortest(option, memo) for option in node.options) if o is not None]
        found = min(options, key=len) if options else None
    else:
        inner = shortest(node.node, memo)
        found = "" if node.low == 0 else None if inner is None else inner * node.low
    memo[node] = found
    return found


class Prefix:
    """An answer's position in a regular language, advanced character by character:
    what may still follow (a derivative), whether it may end here, and the shortest
    text that completes it."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._derivatives: dict[tuple[Node, int], Node] = {}

    def after(self, text: str) -> Node:
        """What may follow ``text`` from here (NOTHING: no match continues it); nothing
        advanced."""
        node = self.node
        for char in text:
            key = (node, ord(char))
            if key not in self._derivatives:
                self._derivatives[key] = derivative(node, ord(char))
            node = self._derivatives[key]
            if node == NOTHING:
                break
        return node

    def feed(self, text: str) -> bool:
        """Advance over ``text``; False (and nothing advanced) when no match continues it."""
        node = self.after(text)
        if node == NOTHING:
            return False
        self.node = node
        return True

    def complete(self) -> bool:
        return nullable(self.node)

    def completion(self) -> str | None:
        """The shortest text that ends the answer in the language (None: none does)."""
        return shortest(self.node)


# -- the libraries' regex dialect --------------------------------------------------

_REGEX_META = set("\\.^$|?*+()[]{}/")
_CLASS_META = set("\\]^-[/")


def _regex_char(code: int, in_class: bool) -> str:
    char = chr(code)
    if code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    if char in (_CLASS_META if in_class else _REGEX_META):
        return "\\" + char
    return char


def to_regex(node: Node) -> str:
    """``node`` in the regex dialect ``js_regex.translate`` writes and ``parse`` reads
    (and llguidance compiles): classes of code-point ranges, groups, ``|``, quantifiers."""
    if isinstance(node, Chars):
        if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            return _regex_char(node.ranges[0][0], False)
        parts = (
            _regex_char(lo, True)
            if lo == hi
            else f"{_regex_char(lo, True)}-{_regex_char(hi, True)}"
            for lo, hi in node.ranges
        )
        return "[" + "".join(parts) + "]"
    if isinstance(node, Seq):
        return "".join(
            f"({to_regex(i)})" if isinstance(i, Alt) else to_regex(i) for i in node.items
        )
    if isinstance(node, Alt):
        if not node.options:
            raise ValueError("an empty language has no regex")
        return "|".join(to_regex(option) for option in node.options)
    inner = to_regex(node.node)
    if not (isinstance(node.node, Chars)):
        inner = f"({inner})"
    low, high = node.low, node.high
    suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
    if suffix is None:
        suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
    return inner + suffix
