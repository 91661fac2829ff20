"""A pure-Python reader of Hugging Face ``tokenizer.json`` files (byte-level BPE).

It covers what Qwen2/Qwen2.5 and Llama 3 use, and gives the same ids as the
``tokenizers`` library (``encode(text, add_special_tokens=False)``) and the same
text as its ``decode``: added tokens matched first (leftmost-longest), then the
normalizer (NFC/NFD/NFKC/NFKD), the pre-tokenizer (``Split`` on a regex,
``ByteLevel``), and rank-ordered BPE merging with a cache per pre-token.

Only the standard library is used, so it runs in Pyodide. The Oniguruma regexes
of ``tokenizers`` use ``\\p{L}``, ``\\p{N}`` and a Unicode ``\\s``; Python's ``re``
has no ``\\p{...}`` and its ``\\s`` differs (it includes U+001C..U+001F), so each
such escape is translated into an explicit character class, built lazily from
``unicodedata`` the first time a regex needs it. Unlike ``tokenizers``, which
uses Oniguruma's Unicode tables, the categories are those of the running
Python's Unicode version; they differ only on characters assigned since then.
"""

from __future__ import annotations

import functools
import heapq
import json
import re
import sys
import unicodedata
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["StreamDecoder", "Tokenizer"]

# The regex of the ByteLevel pre-tokenizer when ``use_regex`` is true (GPT-2's).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

# Unicode White_Space: what ``\s`` means in Oniguruma and Rust's regex.
_WHITE_SPACE: tuple[tuple[int, int], ...] = (
    (0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
    (0x3000, 0x3000),
)  # fmt: skip
_MAX_CODE_POINT = 0x10FFFF
_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn"
).split()
_CATEGORY_NAMES = {
    "Letter": "L", "Mark": "M", "Number": "N", "Punctuation": "P", "Symbol": "S",
    "Separator": "Z", "Other": "C", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Decimal_Number": "Nd",
}  # fmt: skip
_CACHE_LIMIT = 100_000  # pre-tokens kept in the BPE cache before it is cleared
_SURROGATES = re.compile("[\ud800-\udfff]")

Ranges = tuple[tuple[int, int], ...]


# --- Unicode character classes ----------------------------------------------------


_CHUNK = 1 << 16  # code points per step: the tables are built without one huge string


def _chunks() -> Iterator[tuple[int, str]]:
    """Every code point, surrogates included, as (first, string) chunks."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
    for first in range(0, _MAX_CODE_POINT + 1, _CHUNK):
        numbers = array("I", range(first, min(first + _CHUNK, _MAX_CODE_POINT + 1)))
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
def _category_ranges(name: str) -> Ranges:
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


def _complement(ranges: Ranges) -> Ranges:
    """The code points not in ``ranges`` (sorted, disjoint)."""
    out: list[tuple[int, int]] = []
    start = 0
    for first, last in ranges:
        if first > start:
            out.append((start, first - 1))
        start = last + 1
    if start <= _MAX_CODE_POINT:
        out.append((start, _MAX_CODE_POINT))
    return tuple(out)


def _class_char(cp: int) -> str:
    char = chr(cp)
    return "\\" + char if char in "\\]-[^&~|" else char


def _class_body(ranges: Ranges) -> str:
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
        return _WHITE_SPACE, kind == "S", i + 2
    if kind in "dD":
        return _category_ranges("Nd"), kind == "D", i + 2
    if kind in "pP":
        if pattern.startswith("{", i + 2):
            end = pattern.index("}", i + 3)
            name, after = pattern[i + 3 : end], end + 1
        else:
            name, after = pattern[i + 2], i + 3
        negated = kind == "P"
        if name.startswith("^"):
            name, negated = name[1:], not negated
        return _category_ranges(name), negated, after
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
                out.append(("[^" if negated else "[") + _class_body(ranges) + "]")
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
                out.append(_class_body(_complement(ranges) if negated else ranges))
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


# --- Byte-level alphabet -------------------------------------------------------------


@functools.cache
def _byte_to_char() -> dict[int, str]:
    """GPT-2's map from bytes to printable characters, keyed by code point 0..255."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@functools.cache
def _char_to_byte() -> dict[str, int]:
    return {char: b for b, char in _byte_to_char().items()}


def _byte_level(text: str) -> str:
    """The UTF-8 bytes of ``text``, written in the byte-level alphabet."""
    return text.encode("utf-8").decode("latin-1").translate(_byte_to_char())


# --- Pipeline parts ------------------------------------------------------------------


def _build_normalizer(spec: dict[str, Any] | None) -> Callable[[str], str] | None:
    if spec is None:
        return None
    kind = spec["type"]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return functools.partial(unicodedata.normalize, kind)
    if kind == "Sequence":
        steps = [s for s in map(_build_normalizer, spec["normalizers"]) if s is not None]

        def sequence(text: str) -> str:
            for step in steps:
                text = step(text)
            return text

        return sequence
    raise ValueError(f"unsupported normalizer: {kind}")


def _split_pieces(regex: re.Pattern[str], behavior: str, invert: bool, text: str) -> list[str]:
    """The ``Split`` pre-tokenizer on one piece, as ``tokenizers`` does it."""
    if behavior == "Isolated":  # the common case, without the general bookkeeping
        out: list[str] = []
        prev = 0
        for match in regex.finditer(text):
            start, end = match.span()
            if start > prev:
                out.append(text[prev:start])
            if end > start:
                out.append(text[start:end])
            prev = end
        if prev < len(text):
            out.append(text[prev:])
        return out
    marks: list[tuple[int, int, bool]] = []  # (start, end, is_match)
    prev = 0
    for match in regex.finditer(text):
        start, end = match.span()
        if start > prev:
            marks.append((prev, start, invert))
        marks.append((start, end, not invert))
        prev = end
    if prev < len(text):
        marks.append((prev, len(text), invert))
    if behavior == "Removed":
        kept = [(s, e) for s, e, is_match in marks if not is_match]
    elif behavior in ("Contiguous", "MergedWithPrevious"):
        kept = []
        previous = False
        for s, e, is_match in marks:
            merge = is_match == previous if behavior == "Contiguous" else is_match and not previous
            if merge and kept:
                kept[-1] = (kept[-1][0], e)
            else:
                kept.append((s, e))
            previous = is_match
    elif behavior == "MergedWithNext":
        kept = []
        previous = False
        for s, e, is_match in reversed(marks):
            if is_match and not previous and kept:
                kept[-1] = (s, kept[-1][1])
            else:
                kept.append((s, e))
            previous = is_match
        kept.reverse()
    else:
        raise ValueError(f"unsupported Split behavior: {behavior}")
    return [text[s:e] for s, e in kept if e > s]


Step = tuple[bool, Callable[[str], Any]]  # (splits: returns a list, else maps one piece)


def _build_pre_tokenizer(spec: dict[str, Any] | None) -> list[Step]:
    if spec is None:
        return []
    kind = spec["type"]
    if kind == "Sequence":
        return [step for s in spec["pretokenizers"] for step in _build_pre_tokenizer(s)]
    if kind == "Split":
        pattern = spec["pattern"]
        if "Regex" in pattern:
            regex = compile_regex(pattern["Regex"])
        else:
            regex = re.compile(re.escape(pattern["String"]))
        behavior = spec.get("behavior", "Isolated")
        invert = bool(spec.get("invert", False))
        return [(True, functools.partial(_split_pieces, regex, behavior, invert))]
    if kind == "ByteLevel":
        steps: list[Step] = []
        if spec.get("add_prefix_space", True):
            steps.append((False, lambda text: text if text.startswith(" ") else " " + text))
        if spec.get("use_regex", True):
            regex = compile_regex(GPT2_PATTERN)
            steps.append((True, functools.partial(_split_pieces, regex, "Isolated", False)))
        steps.append((False, _byte_level))
        return steps
    raise ValueError(f"unsupported pre_tokenizer: {kind}")


# --- Added tokens --------------------------------------------------------------------


def _is_word_char(char: str) -> bool:
    """Rust regex's Unicode ``\\w`` (Alphabetic, M, Nd, Pc, Join_Control).

    Other_Alphabetic is not in ``unicodedata``; the marks and the enclosed Latin
    letters cover it but for a few symbols."""
    if char.isalpha() or char in "\u200c\u200d":
        return True
    cat = unicodedata.category(char)
    if cat[0] == "M" or cat in ("Nd", "Nl", "Pc"):
        return True
    cp = ord(char)
    return 0x24B6 <= cp <= 0x24E9 or 0x1F130 <= cp <= 0x1F189


def _is_space(char: str) -> bool:
    cp = ord(char)
    return any(first <= cp <= last for first, last in _WHITE_SPACE)


class _AddedToken:
    __slots__ = ("content", "id", "special", "single_word", "lstrip", "rstrip", "normalized")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.content: str = spec["content"]
        self.id: int = spec["id"]
        self.special: bool = bool(spec.get("special", False))
        self.single_word: bool = bool(spec.get("single_word", False))
        self.lstrip: bool = bool(spec.get("lstrip", False))
        self.rstrip: bool = bool(spec.get("rstrip", False))
        self.normalized: bool = bool(spec.get("normalized", not self.special))


class _AddedMatcher:
    """Find added tokens in a piece of text, as ``AddedVocabulary::find_matches``."""

    def __init__(self, tokens: dict[str, _AddedToken]) -> None:
        self.tokens = tokens
        # Longest first: an alternation then matches leftmost-longest, like Aho-Corasick.
        alternatives = sorted((t for t in tokens if t), key=len, reverse=True)
        self.regex = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """(piece, None) for plain text and (content, id) for an added token."""
        if self.regex is None or not text:
            return [(text, None)]
        out: list[tuple[str, int | None]] = []
        offset = 0
        for match in self.regex.finditer(text):
            start, stop = match.span()
            token = self.tokens[match.group()]
            if token.single_word:
                before = start == 0 or not _is_word_char(text[start - 1])
                after = stop == len(text) or not _is_word_char(text[stop])
                if not (before and after):
                    continue
            if token.lstrip:
                new_start = start
                while new_start > 0 and _is_space(text[new_start - 1]):
                    new_start -= 1
                start = max(new_start, offset)
            if token.rstrip:
                while stop < len(text) and _is_space(text[stop]):
                    stop += 1
            if offset < start:
                out.append((text[offset:start], None))
            out.append((text[start:stop], token.id))
            offset = stop
        if offset != len(text):
            out.append((text[offset:], None))
        return out


# --- The tokenizer -------------------------------------------------------------------


class Tokenizer:
    """A byte-level BPE tokenizer read from a ``tokenizer.json``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        model = spec["model"]
        if model.get("type", "BPE") != "BPE":
            raise ValueError(f"unsupported model: {model.get('type')}")
        if model.get("dropout") not in (None, 0, 0.0):
            raise ValueError("BPE dropout is not supported")
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise ValueError("continuing_subword_prefix/end_of_word_suffix are not supported")
        self._vocab: dict[str, int] = model["vocab"]
        self._ignore_merges = bool(model.get("ignore_merges", False))
        self._byte_fallback = bool(model.get("byte_fallback", False))
        self._unk = model.get("unk_token")
        self._fuse_unk = bool(model.get("fuse_unk", False))
        self._stride = max(self._vocab.values(), default=0) + 1
        self._merges = self._build_merges(model.get("merges", []))
        self._id_to_model: dict[int, str] | None = None  # built on first use

        added = [_AddedToken(t) for t in spec.get("added_tokens") or []]
        self._added_by_content = {t.content: t for t in added}
        self._added_by_id = {t.id: t for t in added}
        self._special_contents = frozenset(t.content for t in added if t.special)
        self._raw_matcher = _AddedMatcher({t.content: t for t in added if not t.normalized})

        self._normalizer = _build_normalizer(spec.get("normalizer"))
        normalized: dict[str, _AddedToken] = {}
        for t in added:
            if t.normalized:
                key = self._normalizer(t.content) if self._normalizer else t.content
                normalized[key] = t
        self._normalized_matcher = _AddedMatcher(normalized)
        self._pre_steps = _build_pre_tokenizer(spec.get("pre_tokenizer"))

        decoder = spec.get("decoder")
        if decoder is not None and decoder.get("type") != "ByteLevel":
            raise ValueError(f"unsupported decoder: {decoder.get('type')}")
        self._byte_decoder = decoder is not None
        self._cache: dict[str, list[int]] = {}
        self._bytes_cache: dict[int, bytes] = {}

    @classmethod
    def from_json(cls, data: str | bytes | dict[str, Any]) -> Tokenizer:
        """Build from the content of a ``tokenizer.json`` (text, bytes or parsed)."""
        return cls(data if isinstance(data, dict) else json.loads(data))

    def _build_merges(self, merges: list[Any]) -> dict[int, int]:
        """Map ``left * stride + right`` to ``rank * stride + merged`` (later wins)."""
        vocab, stride = self._vocab, self._stride
        pairs = (m.split(" ") if isinstance(m, str) else m for m in merges)
        try:
            return {
                vocab[left] * stride + vocab[right]: rank * stride + vocab[left + right]
                for rank, (left, right) in enumerate(pairs)
            }
        except KeyError as error:
            raise ValueError(f"merge token not in the vocabulary: {error}") from None
        except (TypeError, ValueError):
            raise ValueError("a merge is not a pair of tokens") from None

    # --- encoding

    def encode(self, text: str) -> list[int]:
        """Like tokenizers' encode(text, add_special_tokens=False): added tokens (special
        or not) found in the text are matched first, the rest goes through normalizer,
        pre-tokenizer and BPE. Lone surrogates count as U+FFFD."""
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = _SURROGATES.sub("\ufffd", text)
        ids: list[int] = []
        for piece, token_id in self._raw_matcher.split(text):
            if token_id is not None:
                ids.append(token_id)
                continue
            if self._normalizer is not None:
                piece = self._normalizer(piece)
            for part, part_id in self._normalized_matcher.split(piece):
                if part_id is not None:
                    ids.append(part_id)
                elif part:
                    self._encode_piece(part, ids)
        return ids

    def _encode_piece(self, text: str, ids: list[int]) -> None:
        pieces = [text]
        for splits, step in self._pre_steps:
            if splits:
                pieces = [p for piece in pieces for p in step(piece)]
            else:
                pieces = [step(piece) for piece in pieces]
        cache = self._cache
        for piece in pieces:
            found = cache.get(piece)
            if found is None:
                found = self._tokenize(piece)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[piece] = found
            ids.extend(found)

    def _tokenize(self, word: str) -> list[int]:
        """BPE on one pre-token, as ``tokenizers``' ``Word::merge_all``."""
        if not word:
            return []
        vocab = self._vocab
        if self._ignore_merges and word in vocab:
            return [vocab[word]]
        symbols = self._symbols(word)
        count = len(symbols)
        if count < 2:
            return symbols
        merges, stride = self._merges, self._stride
        heap: list[tuple[int, int, int]] = []  # (rank, position, merged id)
        for pos in range(count - 1):
            found = merges.get(symbols[pos] * stride + symbols[pos + 1])
            if found is not None:
                rank, merged = divmod(found, stride)
                heap.append((rank, pos, merged))
        if not heap:
            return symbols
        heapq.heapify(heap)
        prev = list(range(-1, count - 1))
        nxt = list(range(1, count + 1))
        nxt[-1] = -1
        alive = [True] * count
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            _, pos, merged = pop(heap)
            right = nxt[pos]
            if not alive[pos] or right == -1:
                continue
            found = merges.get(symbols[pos] * stride + symbols[right])
            if found is None or found % stride != merged:
                continue  # an expired entry
            symbols[pos] = merged
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after != -1:
                prev[after] = pos
            before = prev[pos]
            if before != -1:
                found = merges.get(symbols[before] * stride + merged)
                if found is not None:
                    rank, new = divmod(found, stride)
                    push(heap, (rank, before, new))
            if after != -1:
                found = merges.get(merged * stride + symbols[after])
                if found is not None:
                    rank, new = divmod(found, stride)
                    push(heap, (rank, pos, new))
        return [symbol for symbol, keep in zip(symbols, alive, strict=True) if keep]

    def _symbols(self, word: str) -> list[int]:
        """The initial symbols: one per character (byte fallback or unk if unknown)."""
        vocab = self._vocab
        symbols: list[int] = []
        last_unk = False
        for char in word:
            token_id = vocab.get(char)
            if token_id is not None:
                symbols.append(token_id)
                last_unk = False
                continue
            if self._byte_fallback:
                names = [f"<0x{b:02X}>" for b in char.encode("utf-8")]
                if all(name in vocab for name in names):
                    symbols.extend(vocab[name] for name in names)
                    last_unk = False
                    continue
            if self._unk is not None and self._unk in vocab:
                if not (self._fuse_unk and last_unk):
                    symbols.append(vocab[self._unk])
                last_unk = True
            # else: tokenizers drops a character it cannot represent
        return symbols

    # --- vocabulary

    def token_to_id(self, token: str) -> int | None:
        """The id of a token (added tokens first), or None."""
        added = self._added_by_content.get(token)
        return added.id if added is not None else self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        """The token of an id (added tokens first), or None."""
        added = self._added_by_id.get(token_id)
        if added is not None:
            return added.content
        if self._id_to_model is None:
            self._id_to_model = {i: t for t, i in self._vocab.items()}
        return self._id_to_model.get(token_id)

    @property
    def vocab_size(self) -> int:
        """The size of the vocabulary, added tokens included."""
        return len(self._vocab.keys() | self._added_by_content.keys())

    def special_ids(self) -> set[int]:
        """The ids of the added tokens marked special."""
        return {t.id for t in self._added_by_id.values() if t.special}

    # --- decoding

    def _token_bytes(self, token_id: int, skip_special_tokens: bool) -> bytes | None:
        """What one id contributes to decoded text (None: nothing)."""
        token = self.id_to_token(token_id)
        if token is None or (skip_special_tokens and token in self._special_contents):
            return None
        if not self._byte_decoder:
            return token.encode("utf-8")
        data = self._bytes_cache.get(token_id)
        if data is None:
            table = _char_to_byte()
            if all(char in table for char in token):
                data = bytes(table[char] for char in token)
            else:  # not byte-level text (an added token): taken as it is
                data = token.encode("utf-8")
            self._bytes_cache[token_id] = data
        return data

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (unknown ids are skipped; bad UTF-8 becomes U+FFFD)."""
        parts = [self._token_bytes(i, skip_special_tokens) for i in ids]
        present = [p for p in parts if p is not None]
        if not self._byte_decoder:
            return " ".join(p.decode("utf-8") for p in present)
        return b"".join(present).decode("utf-8", "replace")


# The allowed second bytes of UTF-8 sequences, where not 0x80..0xBF.
_SECOND_BYTE = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}


def _complete_length(data: bytes) -> int:
    """How much of ``data`` can be decoded now: all but a trailing incomplete but
    still valid UTF-8 sequence, which more bytes may complete."""
    n = len(data)
    for start in range(n - 1, max(n - 4, -1), -1):
        lead = data[start]
        if 0x80 <= lead <= 0xBF:
            continue  # a continuation byte: look further back
        if 0xC2 <= lead <= 0xDF:
            need = 2
        elif 0xE0 <= lead <= 0xEF:
            need = 3
        elif 0xF0 <= lead <= 0xF4:
            need = 4
        else:
            return n
        tail = data[start:]
        if len(tail) >= need:
            return n
        if len(tail) > 1:
            low, high = _SECOND_BYTE.get(lead, (0x80, 0xBF))
            if not low <= tail[1] <= high:
                return n
        return start
    return n


class StreamDecoder:
    """Incremental decoding for streaming: feed ids one at a time, get the new text,
    never splitting a UTF-8 character across chunks (bytes of an incomplete character
    are held back until complete)."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = False) -> None:
        self._tokenizer = tokenizer
        self._skip = skip_special_tokens
        self._pending = b""
        self._started = False

    def feed(self, token_id: int) -> str:
        """The text that ``token_id`` completes (may be empty)."""
        data = self._tokenizer._token_bytes(token_id, self._skip)
        if data is None:
            return ""
        if not self._tokenizer._byte_decoder:  # tokens joined by spaces
            text = (" " if self._started else "") + data.decode("utf-8")
            self._started = True
            return text
        data = self._pending + data
        cut = _complete_length(data)
        self._pending = data[cut:]
        return data[:cut].decode("utf-8", "replace")

    def flush(self) -> str:
        """Whatever is left (incomplete bytes decoded with replacement)."""
        text = self._pending.decode("utf-8", "replace")
        self._pending = b""
        return text
