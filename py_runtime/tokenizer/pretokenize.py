"""The ``pre_tokenizer`` of a ``tokenizer.json``: text split into the model's words.

Supported: ``Sequence``, ``Split`` (regex or string, every ``behavior``, ``invert``),
``ByteLevel``, ``Digits``, ``Metaspace`` (every ``prepend_scheme``, ``split``),
``Whitespace``, ``WhitespaceSplit``, ``Punctuation``, ``BertPreTokenizer`` and
``CharDelimiterSplit``, as ``tokenizers`` applies them; others raise
``TokenizerError``. Each is built once from its JSON spec.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from .bytelevel import byte_level
from .errors import TokenizerError
from .regex import class_body, compile_regex, find_spans
from .unicode import WHITE_SPACE, punctuation_ranges, word_ranges

__all__ = ["GPT2_PATTERN", "PreTokenizer", "build_pre_tokenizer", "split_pieces"]

#: The regex of the ByteLevel pre-tokenizer when ``use_regex`` is true (GPT-2's).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# Step kinds: a map (str -> str), a split that keeps every character, one that may
# drop some (Removed), and Metaspace's (piece, first -> pieces).
_MAP, _SPLIT, _REMOVE, _FIRST = range(4)
Step = tuple[int, Callable[..., Any]]


def split_pieces(regex: re.Pattern[str], behavior: str, invert: bool, text: str) -> list[str]:
    """Split ``text`` on the matches of ``regex`` as ``tokenizers``' ``split`` does."""
    if behavior == "Isolated":  # the common case, without the general bookkeeping
        out: list[str] = []
        prev = 0
        for start, end in find_spans(regex, text):
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
    for start, end in find_spans(regex, text):
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
    else:  # MergedWithNext
        kept = []
        previous = False
        for s, e, is_match in reversed(marks):
            if is_match and not previous and kept:
                kept[-1] = (s, kept[-1][1])
            else:
                kept.append((s, e))
            previous = is_match
        kept.reverse()
    return [text[s:e] for s, e in kept if e > s]


class PreTokenizer:
    """The pre-tokenizer steps, applied in order to a piece of normalized text."""

    def __init__(self, steps: list[Step]) -> None:
        self._steps = steps

    def __call__(self, text: str, at_start: bool = True) -> list[str]:
        """The words of ``text``; ``at_start``: it begins the input (for Metaspace's
        ``prepend_scheme: first``, which prepends only there)."""
        if not text:
            return []
        pieces = [text]
        for kind, step in self._steps:
            if kind == _MAP:
                pieces = [step(piece) for piece in pieces]
                continue
            if kind == _FIRST:
                out = [
                    p for i, piece in enumerate(pieces) for p in step(piece, at_start and i == 0)
                ]
            else:
                out = [p for piece in pieces for p in step(piece)]
                if kind == _REMOVE and at_start:  # still at the start: nothing dropped there
                    at_start = bool(out) and pieces[0].startswith(out[0])
            pieces = out
        return pieces


def _splitter(regex: re.Pattern[str], behavior: str, invert: bool = False) -> Step:
    if behavior not in _BEHAVIORS:
        raise TokenizerError(f"unsupported Split behavior: {behavior}")
    kind = _REMOVE if behavior == "Removed" else _SPLIT
    return kind, functools.partial(split_pieces, regex, behavior, invert)


@functools.cache
def _char_class(name: str) -> re.Pattern[str]:
    """One character of a class: "space" (White_Space) or "punctuation"."""
    ranges = WHITE_SPACE if name == "space" else punctuation_ranges()
    return re.compile(f"[{class_body(ranges)}]")


@functools.cache
def _words() -> re.Pattern[str]:
    """The Whitespace pre-tokenizer's ``\\w+|[^\\w\\s]+`` (Rust regex's classes)."""
    word, space = class_body(word_ranges()), class_body(WHITE_SPACE)
    return re.compile(f"[{word}]+|[^{word}{space}]+")


def _prefix_space(text: str) -> str:
    return text if text.startswith(" ") else " " + text


def _metaspace(
    replacement: str, scheme: str, regex: re.Pattern[str] | None, text: str, first: bool
) -> list[str]:
    text = text.replace(" ", replacement)
    if (scheme == "always" or (scheme == "first" and first)) and not text.startswith(replacement):
        text = replacement + text
    return [text] if regex is None else split_pieces(regex, "MergedWithNext", False, text)


def _metaspace_step(spec: dict[str, Any]) -> Step:
    replacement = spec["replacement"]
    if not isinstance(replacement, str) or len(replacement) != 1:
        raise TypeError("the Metaspace replacement is not one character")
    scheme = spec.get("prepend_scheme")
    add_prefix_space = spec.get("add_prefix_space")  # the older form
    if add_prefix_space is not None:
        scheme = "never" if not add_prefix_space else scheme or "always"
    scheme = scheme or "always"
    if scheme not in ("always", "first", "never"):
        raise TokenizerError(f"unsupported Metaspace prepend_scheme: {scheme}")
    regex = re.compile(re.escape(replacement)) if spec.get("split", True) else None
    return _FIRST, functools.partial(_metaspace, replacement, scheme, regex)


def _steps(spec: dict[str, Any]) -> list[Step]:
    kind = spec["type"]
    if kind == "Sequence":
        return [step for s in spec["pretokenizers"] for step in _steps(s)]
    if kind == "Split":
        pattern = spec["pattern"]
        if "Regex" in pattern:
            regex = compile_regex(pattern["Regex"])
        else:
            regex = re.compile(re.escape(pattern["String"]))
        return [_splitter(regex, spec.get("behavior", "Isolated"), bool(spec.get("invert")))]
    if kind == "ByteLevel":
        steps: list[Step] = []
        if spec.get("add_prefix_space", True):
            steps.append((_MAP, _prefix_space))
        if spec.get("use_regex", True):
            steps.append(_splitter(compile_regex(GPT2_PATTERN), "Isolated"))
        return [*steps, (_MAP, byte_level)]
    if kind == "Digits":  # Rust's char::is_numeric (Nd, Nl, No): each alone, or runs
        digits = r"\p{N}" if spec.get("individual_digits") else r"\p{N}+"
        return [_splitter(compile_regex(digits), "Isolated")]
    if kind == "Metaspace":
        return [_metaspace_step(spec)]
    if kind == "Whitespace":
        return [(_REMOVE, _words().findall)]
    if kind == "WhitespaceSplit":
        return [_splitter(_char_class("space"), "Removed")]
    if kind == "Punctuation":
        return [_splitter(_char_class("punctuation"), spec.get("behavior", "Isolated"))]
    if kind == "BertPreTokenizer":
        return [
            _splitter(_char_class("space"), "Removed"),
            _splitter(_char_class("punctuation"), "Isolated"),
        ]
    if kind == "CharDelimiterSplit":
        delimiter = spec["delimiter"]
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise TypeError("the CharDelimiterSplit delimiter is not one character")
        return [_splitter(re.compile(re.escape(delimiter)), "Removed")]
    raise TokenizerError(f"unsupported pre_tokenizer: {kind}")


def build_pre_tokenizer(spec: dict[str, Any] | None) -> PreTokenizer:
    """The ``pre_tokenizer`` of a tokenizer.json (None: the text is one word)."""
    return PreTokenizer([] if spec is None else _steps(spec))
