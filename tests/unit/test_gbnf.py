"""RegExp response constraints as llama.cpp grammars (the server backend)."""

from __future__ import annotations

import pytest

from py_runtime.engine.js_regex import translate
from py_runtime.models.gbnf import regex_to_gbnf


@pytest.mark.parametrize(
    ("source", "flags", "grammar"),
    [
        (r"\d{4}-\d{2}", "", r'[0-9]{4} "\x2D" [0-9]{2}'),
        ("(yes|no)", "i", "[Yy] [Ee] [Ss] | [Nn] [Oo]"),
        ("[a-z]{1,3}(, [a-z]){2}", "", r'[a-z]{1,3} ("\x2C" "\x20" [a-z]){2}'),
        ("a(b|c)d", "", '"a" ("b" | "c") "d"'),
        (r"[a-z]{1,10}@x\.com", "", r'[a-z]{1,10} "\x40" "x" "\x2E" "c" "o" "m"'),
        (r"[\]\-^]+|x*?", "", r'[\x2D\x5D-\x5E]+ | "x"*'),
        (r"\u{1F600}\n", "u", r'"\U0001F600" "\x0A"'),
        (r"a{2,}b?", "", r'"a"{2,} "b"?'),
        ("a|", "", '"a" | ""'),
        ('"q\\\\', "", r'"\x22" "q" "\x5C"'),
    ],
)
def test_a_translated_regexp_becomes_the_same_language_in_gbnf(
    source: str, flags: str, grammar: str
) -> None:
    assert regex_to_gbnf(translate(source, flags)) == f"root ::= {grammar}\n"


@pytest.mark.parametrize(
    ("source", "prefix", "grammar"),
    [
        (r"\d{4}-\d{2}", "20", r'[0-9]{2} "\x2D" [0-9]{2}'),
        (r"\d{4}-\d{2}", "2026-", "[0-9]{2}"),
        ("(yes|no)", "n", '"o"'),
        ("a*b", "aa", '"a"* "b"'),
        ("(ab)+", "aba", '"b" ("a" "b")*'),
        ("ab?", "ab", '""'),
    ],
)
def test_after_a_prefix_the_grammar_is_what_may_follow_it(
    source: str, prefix: str, grammar: str
) -> None:
    assert regex_to_gbnf(translate(source), prefix) == f"root ::= {grammar}\n"


@pytest.mark.parametrize(("source", "prefix"), [(r"\d{4}-\d{2}", "2026/"), ("ab", "abc")])
def test_a_prefix_no_match_starts_with_has_no_grammar(source: str, prefix: str) -> None:
    assert regex_to_gbnf(translate(source), prefix) is None
