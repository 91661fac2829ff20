"""JSON numbers within JSON Schema's numeric keywords, as regular-language trees.

``number_node`` turns ``{"type": "integer" | "number"}`` with any of ``minimum``,
``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum`` and ``multipleOf`` into a tree
(``regular.py``) that matches only texts a validator accepts when it parses them as
IEEE doubles (Python ``jsonschema``, JavaScript Ajv), and all such texts the rules
below allow:

- The text is ``-?(0|[1-9][0-9]*)``, and for numbers an optional ``.`` and digits;
  integers have no fraction and no exponent. No ``+``, no leading zeros, and a ``-``
  before a zero (``-0``, ``-0.0``) only where zero is admitted (it parses to -0.0,
  which equals 0; ``multipleOf`` texts never have it).
- At most 15 digits: integer digits plus fraction digits (an integer part ``0`` is
  not counted, the zeros of ``0.000x`` are, trailing zeros too). Distinct decimals of
  15 significant digits are distinct doubles and rounding keeps their order, so
  every text parses to a double that orders like its decimal.
- Bounds compare decimal-exactly: an int as it is, a float as its shortest
  ``repr`` (the decimal the double round-trips through). A text equal to a bound
  parses to that double; any other text of at most 15 digits lies on the same side
  of the double as of the decimal (``exclusiveMaximum: 0.1`` admits 0.09, never 0.1).
- Only a number with no bound and no ``multipleOf`` may have an exponent,
  ``[eE][+-]?[0-9]{1,2}`` (every such text is a finite double); one bound makes it
  bounded.
- The tree follows the bounds digit by digit (like to-regex-range, extended to
  fractions, which compare digit by digit with zeros after the last): an integer
  part strictly between the bounds' takes any fraction. Negative ranges mirror
  positive ones. Bounds beyond 15 digits clamp to the texts there are.
- ``multipleOf`` (a positive integer, for integers or numbers alike; the texts are
  integers): the multiples themselves when the bounds leave at most 1024 of them,
  else a rule on the last digits when it divides 1000.

NotSupportedError names the keyword for what cannot be held exactly (any other
``multipleOf``, a bound that is not a finite number) and for bounds that admit no
text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from .errors import PromptAPIError
from .regular import EMPTY, NOTHING, Alt, Chars, Node, Repeat, Seq

#: Digits a text has at most: decimals this short are distinct, ordered doubles.
DIGITS = 15
#: A ``multipleOf`` range of at most this many multiples is held as their alternatives.
MAX_MULTIPLES = 1024
#: Magnitudes stay below this.
LIMIT = 10**DIGITS

#: A bound's value and whether the value itself is admitted.
Bound = tuple[Decimal, bool]
#: A bound within a group: its digits from the current position on, and whether equal is in.
_Limit = tuple[str, bool]
_Trie = dict[str, "_Trie"]

_LOWER = (("minimum", True), ("exclusiveMinimum", False))
_UPPER = (("maximum", True), ("exclusiveMaximum", False))


def _char(char: str) -> Chars:
    return Chars(((ord(char), ord(char)),))


_DIGIT = Chars(((ord("0"), ord("9")),))
_NONZERO = Chars(((ord("1"), ord("9")),))
_ZERO = _char("0")
_DOT = _char(".")
_MINUS = _char("-")
_EXPONENT = Seq(
    (
        Chars(((ord("E"), ord("E")), (ord("e"), ord("e")))),
        Repeat(Chars(((ord("+"), ord("+")), (ord("-"), ord("-")))), 0, 1),
        Repeat(_DIGIT, 1, 2),
    )
)


def number_node(schema: Mapping[str, Any]) -> Node:
    """The texts of the numbers ``schema`` admits (see the module's rules)."""
    kind = schema.get("type")
    if kind not in ("integer", "number"):
        raise _unsupported(f"type {kind!r} is not integer or number.")
    low = _tightest(schema, _LOWER, lambda bound: (bound[0], not bound[1]))
    high = _tightest(schema, _UPPER, lambda bound: (bound[0].copy_negate(), not bound[1]))
    if "multipleOf" in schema:
        node = _multiples(low, high, _step(schema["multipleOf"]))
    else:
        node = _signed(low, high, partial(_magnitudes, fraction=kind == "number"))
        if kind == "number" and low is None and high is None:
            node = _seq(node, Repeat(_EXPONENT, 0, 1))
    if node == NOTHING:
        keys = (*(key for key, _ in (*_LOWER, *_UPPER)), "multipleOf")
        named = ", ".join(f"{key} {schema[key]!r}" for key in keys if key in schema)
        raise _unsupported(f"{named} admit no {kind} of at most {DIGITS} digits.")
    return node


def _unsupported(message: str) -> PromptAPIError:
    return PromptAPIError("NotSupportedError", f"Unsupported response constraint: {message}")


def _number(keyword: str, value: Any) -> Decimal:
    """``value`` as the exact decimal it stands for: an int's, a float's shortest repr."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _unsupported(f"{keyword} {value!r} is not a number.")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _unsupported(f"{keyword} {value!r} is not a finite number.")
        return Decimal(repr(value))
    return Decimal(value)


def _tightest(
    schema: Mapping[str, Any],
    keywords: tuple[tuple[str, bool], ...],
    tightness: Callable[[Bound], tuple[Decimal, bool]],
) -> Bound | None:
    """The tightest of the bounds ``keywords`` give (exclusive wins a tie), if any."""
    bounds = [
        (_number(key, schema[key]), inclusive) for key, inclusive in keywords if key in schema
    ]
    return max(bounds, key=tightness, default=None)


def _signed(
    low: Bound | None, high: Bound | None, magnitudes: Callable[[Bound, Bound | None], Node]
) -> Node:
    """The values within ``low`` and ``high``: non-negative ones, and ``-`` and the
    magnitudes of negative ones (zero among them only where zero is admitted)."""
    zero = Decimal(0)
    options = []
    if high is None or high[0] >= zero:
        options.append(
            magnitudes(low if low is not None and low[0] >= zero else (zero, True), high)
        )
    if low is None or low[0] < zero:
        if high is not None and high[0] < zero:
            near = (high[0].copy_negate(), high[1])
        else:
            near = (zero, high is None or high[0] > zero or high[1])
        far = None if low is None else (low[0].copy_negate(), low[1])
        options.append(_seq(_MINUS, magnitudes(near, far)))
        if len(options) == 2 and options[1] == _seq(_MINUS, options[0]):
            return _seq(Repeat(_MINUS, 0, 1), options[0])
    return _alt(*options)


def _magnitudes(low: Bound, high: Bound | None, fraction: bool) -> Node:
    """Unsigned texts of the values within ``low`` (at least 0) and ``high``, grouped by
    the length of their integer part (0 for the integer part ``0``)."""
    options = []
    free = []
    for length in range(DIGITS + 1):
        least = Decimal(10 ** (length - 1) if length else 0)
        limit = Decimal(10**length)
        if low[0] >= limit or (high is not None and high[0] < least):
            continue
        group_low = None if low[0] < least or low == (least, True) else _limit(low, length)
        group_high = None if high is None or high[0] >= limit else _limit(high, length)
        if length and group_low is None and group_high is None:
            free.append(length)
        else:
            options.append(_Group(length, fraction).node(group_low, group_high))
    if free:
        options.append(_free_run(free[0], free[-1], fraction))
    return _alt(*options)


def _limit(bound: Bound, length: int) -> _Limit:
    """``bound``'s digits in the group of integer parts of ``length`` digits."""
    whole, _, part = format(bound[0].copy_abs(), "f").partition(".")
    return (part if length == 0 else whole + part), bound[1]


@dataclass(frozen=True)
class _Group:
    """Texts whose integer part has ``length`` digits (0: the integer part ``0``).

    Positions count the digits after any ``0`` integer part; the ``.`` goes before
    position ``length``, and a text may end at any position from ``length`` on.
    """

    length: int
    fraction: bool

    @property
    def most(self) -> int:
        """How many digits (positions) a text has at most."""
        return DIGITS if self.fraction else self.length

    def node(self, low: _Limit | None, high: _Limit | None) -> Node:
        return _seq(_ZERO if self.length == 0 else EMPTY, self._tail(0, low, high))

    def _tail(self, at: int, low: _Limit | None, high: _Limit | None) -> Node:
        """The rest of a text from position ``at`` within the limits ``low`` and ``high``."""
        if low is not None and low[1] and not low[0].strip("0"):
            low = None  # every rest is at least zeros
        if low is None and high is None:
            return self.rest(at, _DIGIT)
        if low is None and high is not None and high[1] and not high[0].strip("0"):
            return self.rest(at, _ZERO)  # only zeros: the rest equals the limit
        options: list[Node] = [EMPTY] if at >= self.length and _may_end(low, high) else []
        if at < self.most:
            least = 1 if at == 0 and self.length else 0
            if low is not None:
                least = max(least, _head(low))
            largest = 9 if high is None else _head(high)
            follows: dict[Node, list[int]] = {}
            for digit in range(least, largest + 1):
                tail = self._tail(at + 1, _after(low, digit), _after(high, digit))
                follows.setdefault(tail, []).append(ord("0") + digit)
            dot = _DOT if at == self.length else EMPTY
            options += [_seq(dot, _chars(codes), tail) for tail, codes in follows.items()]
        return _alt(*options)

    def rest(self, at: int, digit: Chars) -> Node:
        """Any rest of a text from position ``at`` of ``digit`` characters (a first
        digit is not ``0``)."""
        if at < self.length:
            lead = _NONZERO if at == 0 and digit == _DIGIT else digit
            count = self.length - at - 1
            return _seq(lead, _repeat(digit, count, count), self.rest(self.length, digit))
        room = self.most - at
        if room == 0:
            return EMPTY
        if at > self.length:
            return Repeat(digit, 0, room)
        return Repeat(Seq((_DOT, Repeat(digit, 1, room))), 0, 1)


def _head(limit: _Limit) -> int:
    """The limit's digit at the current position (zeros after its last)."""
    return int(limit[0][0]) if limit[0] else 0


def _after(limit: _Limit | None, digit: int) -> _Limit | None:
    """What ``limit`` asks of the positions after ``digit``: nothing unless it is equal."""
    if limit is None or digit != _head(limit):
        return None
    return limit[0][1:], limit[1]


def _may_end(low: _Limit | None, high: _Limit | None) -> bool:
    """Whether a text may end here: its digits left are zeros, compared with the limits'."""
    if low is not None and (low[0].strip("0") or not low[1]):
        return False
    return high is None or bool(high[0].strip("0")) or high[1]


def _free_run(first: int, last: int, fraction: bool) -> Node:
    """All texts whose integer part has ``first`` to ``last`` digits (at least 1)."""
    if not fraction:
        return _seq(_NONZERO, _repeat(_DIGIT, first - 1, last - 1))
    rest = _Group(last, fraction).rest(last, _DIGIT)
    for length in range(last - 1, first - 1, -1):
        rest = _alt(_Group(length, fraction).rest(length, _DIGIT), _seq(_DIGIT, rest))
    return _seq(_NONZERO, _repeat(_DIGIT, first - 1, first - 1), rest)


# -- multipleOf --------------------------------------------------------------------


def _step(value: Any) -> int:
    """A ``multipleOf`` as the positive integer it must be here."""
    step = _number("multipleOf", value)
    if step <= 0 or step != step.to_integral_value():
        raise _unsupported(f"multipleOf {value!r} is held only as a positive integer.")
    return int(step)


def _multiples(low: Bound | None, high: Bound | None, step: int) -> Node:
    """Integer texts of the multiples of ``step`` within ``low`` and ``high``."""
    if step == 1:
        return _signed(low, high, partial(_magnitudes, fraction=False))
    least = 1 - LIMIT if low is None else max(1 - LIMIT, _integer(low, up=True))
    greatest = LIMIT - 1 if high is None else min(LIMIT - 1, _integer(high, up=False))
    first = -(-least // step) * step
    if first > greatest or (greatest - first) // step < MAX_MULTIPLES:
        return _trie(str(value) for value in range(first, greatest + 1, step))
    places = next((places for places in range(4) if 10**places % step == 0), None)
    if places is None:
        raise _unsupported(
            f"multipleOf {step} is held only for at most {MAX_MULTIPLES} multiples "
            "or when it divides 1000."
        )
    positive = _multiples_by_ending(max(least, 0), greatest, step, places)
    negative = _multiples_by_ending(max(-greatest, 1), -least, step, places)
    return _alt(positive, _seq(_MINUS, negative))


def _integer(bound: Bound, up: bool) -> int:
    """The integer nearest ``bound`` on its admitted side (``up``: a lower bound)."""
    value, inclusive = bound
    if up:
        return math.ceil(value) if inclusive else math.floor(value) + 1
    return math.floor(value) if inclusive else math.ceil(value) - 1


def _multiples_by_ending(least: int, greatest: int, step: int, places: int) -> Node:
    """Texts of the multiples of ``step`` (which divides ``10**places``) from ``least``
    to ``greatest`` (both at least 0): a multiple is a number whose last ``places``
    digits are one."""
    unit = 10**places
    start = -(-least // step) * step
    options = [_trie(str(value) for value in range(start, min(greatest, unit - 1) + 1, step))]
    least = max(least, unit)
    if least <= greatest:
        (head, first), (last, final) = divmod(least, unit), divmod(greatest, unit)
        endings = range(0, unit, step)
        options.append(
            _trie(
                f"{head}{ending:0{places}}"
                for ending in endings
                if first <= ending and (head < last or ending <= final)
            )
        )
        if head < last:
            options.append(
                _trie(f"{last}{ending:0{places}}" for ending in endings if ending <= final)
            )
        if head + 1 < last:
            middle = _magnitudes((Decimal(head + 1), True), (Decimal(last - 1), True), False)
            options.append(_seq(middle, _trie(f"{ending:0{places}}" for ending in endings)))
    return _alt(*options)


def _trie(texts: Iterable[str]) -> Node:
    """The alternatives ``texts`` as a tree sharing prefixes and equal continuations."""
    root: _Trie = {}
    for text in texts:
        node = root
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_node(root)


def _trie_node(trie: _Trie) -> Node:
    follows: dict[Node, list[int]] = {}
    for char, rest in sorted(trie.items()):
        if char:
            follows.setdefault(_trie_node(rest), []).append(ord(char))
    options: list[Node] = [EMPTY] if "" in trie else []
    options += [_seq(_chars(codes), rest) for rest, codes in follows.items()]
    return _alt(*options)


# -- tree building -----------------------------------------------------------------


def _repeat(node: Node, low: int, high: int) -> Node:
    if high == 0:
        return EMPTY
    return node if low == high == 1 else Repeat(node, low, high)


def _chars(codes: Iterable[int]) -> Chars:
    """One of the characters ``codes`` (ascending)."""
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return Chars(tuple(ranges))


def _seq(*items: Node) -> Node:
    if NOTHING in items:
        return NOTHING
    flat = [part for item in items for part in (item.items if isinstance(item, Seq) else (item,))]
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _alt(*options: Node) -> Node:
    flat = (
        part
        for option in options
        for part in (option.options if isinstance(option, Alt) else (option,))
    )
    kept = tuple(dict.fromkeys(flat))
    return kept[0] if len(kept) == 1 else Alt(kept)
