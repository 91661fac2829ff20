"""JavaScript regular expressions, translated for the grammar libraries.

A RegExp response constraint holds the whole answer to the pattern: the answer is
a string the pattern matches from its start to its end, so ``re.test(answer)``
holds. The libraries (XGrammar, llguidance) read a common regex dialect with other
meanings for some escapes (``\\d`` is Unicode digits in Rust's syntax, ``.`` differs
on line terminators), so the pattern is parsed with JavaScript's rules and written
again with every class spelled out as code point ranges:

- ``.``, ``\\d \\w \\s`` and their negations, classes, ``\\xHH \\uHHHH \\u{H...} \\cX \\0``,
  groups (capturing, named, non-capturing), alternation, greedy and lazy
  quantifiers (the same language), Annex B's literal ``{`` and ``]``;
- flags ``i`` (simple case folding of each character), ``s``, ``u`` (without it a
  class or ``.`` matches no astral character, as one UTF-16 unit cannot), ``m``,
  and ``g y d`` (no effect on what a whole answer is);
- ``^`` at the start and ``$`` at the end of a top-level alternative: the answer
  is matched whole anyway.

What a matcher cannot enforce is ``NotSupportedError``: lookaround, ``\\b \\B``,
back-references, ``\\p{...}``, anchors elsewhere, and the ``v`` flag.
"""

from __future__ import annotations

from .errors import PromptAPIError

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
_DIGITS = [(0x30, 0x39)]
_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
#: JavaScript's WhiteSpace and LineTerminator code points.
_SPACE = [
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
]
_LINE_TERMINATORS = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
_META = set("\\.^$|?*+()[]{}")
_CLASS_META = set("\\]^-[")
_IGNORED_FLAGS = set("gyd")

Ranges = list[tuple[int, int]]


def _unsupported(what: str) -> PromptAPIError:
    return PromptAPIError(
        "NotSupportedError", f"Unsupported response constraint: the RegExp uses {what}."
    )


def normalize(ranges: Ranges) -> Ranges:
    """Sorted, merged ranges, without the surrogate block (not text)."""
    cut: Ranges = []
    for lo, hi in ranges:
        if lo < _SURROGATES[0] <= hi or lo <= _SURROGATES[1] < hi:
            if lo < _SURROGATES[0]:
                cut.append((lo, _SURROGATES[0] - 1))
            if hi > _SURROGATES[1]:
                cut.append((_SURROGATES[1] + 1, hi))
        elif not _SURROGATES[0] <= lo <= _SURROGATES[1]:
            cut.append((lo, hi))
    merged: Ranges = []
    for lo, hi in sorted(cut):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def complement(ranges: Ranges) -> Ranges:
    out: Ranges = []
    start = 0
    for lo, hi in normalize(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return normalize(out)


def _case_variants(ranges: Ranges) -> Ranges:
    """Add each character's other cases (simple folding, per character)."""
    out = list(ranges)
    for lo, hi in ranges:
        if hi - lo > 0x3000:
            lo, hi = lo, min(hi, lo + 0x3000)  # folding beyond this adds nothing new here
        for code in range(lo, hi + 1):
            char = chr(code)
            for other in {char.lower(), char.upper()}:
                # Never across ASCII's edge ("ı" and "I", "K" and "k"): JavaScript
                # keeps those apart without u, and folds only some of them with it.
                if len(other) == 1 and other != char and (ord(other) < 128) == (code < 128):
                    out.append((ord(other), ord(other)))
    return normalize(out)


def _char(code: int, in_class: bool) -> str:
    char = chr(code)
    if code < 0x20 or code == 0x7F:
        return f"\\u{code:04x}"
    if char in (_CLASS_META if in_class else _META):
        return "\\" + char
    return char


def _class(ranges: Ranges) -> str:
    ranges = normalize(ranges)
    if not ranges:
        raise _unsupported("an empty character class (it matches nothing)")
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0], False)
    parts = []
    for lo, hi in ranges:
        parts.append(_char(lo, True) if lo == hi else f"{_char(lo, True)}-{_char(hi, True)}")
    return "[" + "".join(parts) + "]"


class _Parser:
    def __init__(self, source: str, flags: str) -> None:
        unknown = set(flags) - set("gimsuyvd")
        if unknown:
            raise _unsupported(f"the unknown flags {''.join(sorted(unknown))!r}")
        if "v" in flags:
            raise _unsupported("the v flag (set notation)")
        self.source = source
        self.at = 0
        self.ignore_case = "i" in flags
        self.dot_all = "s" in flags
        self.unicode = "u" in flags
        # Without u, a class or "." matches one UTF-16 unit: never an astral character.
        self.top = MAX_CODE_POINT if self.unicode else 0xFFFF
        self.groups = 0

    def cap(self, ranges: Ranges) -> Ranges:
        return [(lo, min(hi, self.top)) for lo, hi in ranges if lo <= self.top]

    def peek(self, text: str) -> bool:
        return self.source.startswith(text, self.at)

    def take(self) -> str:
        char = self.source[self.at]
        self.at += 1
        return char

    # -- structure ---------------------------------------------------------

    def disjunction(self, depth: int) -> str:
        alternatives = [self.alternative(depth)]
        while self.peek("|"):
            self.at += 1
            alternatives.append(self.alternative(depth))
        return "|".join(alternatives)

    def alternative(self, depth: int) -> str:
        out: list[str] = []
        first = True
        while self.at < len(self.source) and not self.peek("|") and not self.peek(")"):
            if self.peek("^"):
                self.at += 1
                if depth or not first:
                    raise _unsupported("^ inside the pattern")
                continue
            if self.peek("$"):
                self.at += 1
                if depth or not (self.at == len(self.source) or self.peek("|")):
                    raise _unsupported("$ inside the pattern")
                continue
            first = False
            atom = self.atom(depth)
            out.append(atom + self.quantifier())
        return "".join(out)

    def quantifier(self) -> str:
        if self.at >= len(self.source):
            return ""
        char = self.source[self.at]
        if char in "*+?":
            self.at += 1
            out = char
        elif char == "{" and (bounds := self.bounds()) is not None:
            out = bounds
        else:
            return ""
        if self.peek("?"):
            self.at += 1  # lazy: the same set of whole matches
        return out

    def bounds(self) -> str | None:
        """``{n}``, ``{n,}``, ``{n,m}`` at the cursor, or None (a literal ``{``)."""
        end = self.source.find("}", self.at)
        if end < 0:
            return None
        body = self.source[self.at + 1 : end]
        low, comma, high = body.partition(",")
        if not low.isdigit() or (high and not high.isdigit()):
            return None
        if high and int(high) < int(low):
            raise _unsupported("a quantifier whose bounds are out of order")
        self.at = end + 1
        return "{" + low + comma + high + "}"

    def atom(self, depth: int) -> str:
        if self.peek("{"):
            saved = self.at
            if self.bounds() is not None:
                raise _unsupported("a quantifier with nothing to repeat")
            self.at = saved
        char = self.take()
        if char == "(":
            return self.group(depth)
        if char == ".":
            dot = [(0, MAX_CODE_POINT)] if self.dot_all else complement(_LINE_TERMINATORS)
            return _class(self.cap(dot))
        if char == "[":
            return _class(self.class_ranges())
        if char == "\\":
            return self.atom_escape()
        if char in "*+?":
            raise _unsupported("a quantifier with nothing to repeat")
        if char == ")":
            raise _unsupported("an unbalanced parenthesis")
        return self.literal(ord(char))

    def group(self, depth: int) -> str:
        if self.peek("?"):
            for look in ("?=", "?!", "?<=", "?<!"):
                if self.peek(look):
                    raise _unsupported("a lookaround assertion")
            if self.peek("?:"):
                self.at += 2
            elif self.peek("?<"):
                end = self.source.find(">", self.at)
                if end < 0:
                    raise _unsupported("an unterminated group name")
                self.at = end + 1
                self.groups += 1
            else:
                raise _unsupported("a group modifier")
        else:
            self.groups += 1
        inner = self.disjunction(depth + 1)
        if not self.peek(")"):
            raise _unsupported("an unbalanced parenthesis")
        self.at += 1
        return f"({inner})"

    def literal(self, code: int) -> str:
        ranges = [(code, code)]
        return _class(_case_variants(ranges) if self.ignore_case else ranges)

    # -- escapes -----------------------------------------------------------

    def class_escape(self) -> Ranges | None:
        """``\\d \\D \\w \\W \\s \\S`` at the cursor (after the backslash), or None."""
        char = self.source[self.at] if self.at < len(self.source) else ""
        sets = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
        if char.lower() in sets:
            self.at += 1
            ranges = sets[char.lower()]
            return self.cap(complement(ranges)) if char.isupper() else list(ranges)
        return None

    def atom_escape(self) -> str:
        if self.at >= len(self.source):
            raise _unsupported("a trailing backslash")
        ranges = self.class_escape()
        if ranges is not None:
            if self.ignore_case:
                ranges = _case_variants(ranges)
            return _class(ranges)
        char = self.source[self.at]
        if char in "bB":
            raise _unsupported(f"the \\{char} word-boundary assertion")
        if char.isdigit() and char != "0":
            raise _unsupported("a back-reference")
        if char == "k" and self.peek("k<"):
            raise _unsupported("a back-reference")
        if char in "pP" and self.unicode:
            raise _unsupported("a Unicode property escape")
        return self.literal(self.character_escape())

    def character_escape(self) -> int:
        """The code point of the escape at the cursor (after the backslash)."""
        char = self.take()
        if char in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[char]
        if char == "0" and not (self.at < len(self.source) and self.source[self.at].isdigit()):
            return 0
        if char == "c" and self.at < len(self.source) and self.source[self.at].isalpha():
            return ord(self.take()) % 32
        if char == "x" and self._hex_ahead(2):
            return self._hex(2)
        if char == "u":
            if self.unicode and self.peek("{"):
                end = self.source.find("}", self.at)
                code = int(self.source[self.at + 1 : end], 16)
                self.at = end + 1
                return code
            if self._hex_ahead(4):
                code = self._hex(4)
                # A surrogate pair written as two escapes is one code point.
                if 0xD800 <= code <= 0xDBFF and self.peek("\\u"):
                    saved = self.at
                    self.at += 2
                    if self._hex_ahead(4):
                        low = self._hex(4)
                        if 0xDC00 <= low <= 0xDFFF:
                            return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    self.at = saved
                return code
        return ord(char)  # an identity escape: the character itself

    def _hex_ahead(self, count: int) -> bool:
        digits = self.source[self.at : self.at + count]
        return len(digits) == count and all(c in "0123456789abcdefABCDEF" for c in digits)

    def _hex(self, count: int) -> int:
        code = int(self.source[self.at : self.at + count], 16)
        self.at += count
        return code

    # -- classes -----------------------------------------------------------

    def class_ranges(self) -> Ranges:
        """The code points of the class at the cursor (after ``[``), negation applied."""
        negated = self.peek("^")
        if negated:
            self.at += 1
        ranges: Ranges = []
        while True:
            if self.at >= len(self.source):
                raise _unsupported("an unterminated character class")
            if self.peek("]"):
                self.at += 1
                break
            low = self.class_atom()
            if self.peek("-") and not self.source.startswith("-]", self.at):
                self.at += 1
                high = self.class_atom()
                if isinstance(low, int) and isinstance(high, int):
                    if high < low:
                        raise _unsupported("a class range out of order")
                    ranges.append((low, high))
                    continue
                # Annex B: a class escape beside "-" makes the "-" literal.
                for part in (low, ord("-"), high):
                    ranges.extend([(part, part)] if isinstance(part, int) else part)
                continue
            ranges.extend([(low, low)] if isinstance(low, int) else low)
        if self.ignore_case:
            ranges = _case_variants(ranges)
        return self.cap(complement(ranges)) if negated else normalize(ranges)

    def class_atom(self) -> int | Ranges:
        char = self.take()
        if char != "\\":
            return ord(char)
        if self.at >= len(self.source):
            raise _unsupported("a trailing backslash")
        ranges = self.class_escape()
        if ranges is not None:
            return ranges
        if self.peek("b"):
            self.at += 1
            return 0x08  # backspace inside a class
        if self.source[self.at] in "pP" and self.unicode:
            raise _unsupported("a Unicode property escape")
        if self.source[self.at] == "-":
            self.at += 1
            return ord("-")
        return self.character_escape()


def translate(source: str, flags: str = "") -> str:
    """``source`` (a RegExp's ``source``) as a regex both grammar libraries read, for
    the strings the RegExp matches whole; NotSupportedError for what cannot be held."""
    parser = _Parser(source, flags)
    out = parser.disjunction(0)
    if parser.at != len(source):
        raise _unsupported("an unbalanced parenthesis")
    return out
