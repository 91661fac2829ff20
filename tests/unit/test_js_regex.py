"""JavaScript RegExps translated for the grammar libraries (engine/js_regex.py).

The truth is JavaScript itself: Node decides whether ``^(?:source)$`` matches each
string, Python's ``re`` (which reads the translated dialect) must agree, and
llguidance must accept exactly the same strings.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import llguidance
import pytest

from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.js_regex import translate

TOKENIZER = (
    Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall" / "tokenizer.json"
)

#: (source, flags, strings that match whole)
CASES = [
    (r"\d{4}-\d{2}-\d{2}", "", ["2026-12-01"]),
    (r"^(red|green|blue)$", "i", ["Red", "GREEN", "blue"]),
    (r"[a-z]+@[a-z]+\.(com|org)", "", ["ada@example.org"]),
    (r"a.c", "", ["abc", "a c", "aéc"]),
    (r"a.c", "s", ["a\nc", "abc"]),
    (r"[^\s,]+(, [^\s,]+)*", "", ["a, b", "x"]),
    (r"\w+\W\S\s", "", ["ab-x\t", "_.x "]),
    (r"[\w-]{2,3}", "", ["a-b", "--"]),
    (r"x{,3}|y{2}", "", ["x{,3}", "yy"]),
    (r"\u00e9\x41\u{1F600}", "u", ["éA😀"]),
    (r"(?:ab)+?c*?", "", ["ab", "ababcc"]),
    (r"(?<year>\d\d)[/.](\d\d)", "", ["26/12", "26.12"]),
    (r"[\]\-\\^]+", "", ["]-\\^"]),
    (r"\t\n\r\f\v\0\cJ", "", ["\t\n\r\f\v\0\n"]),
    (r"[^]a|b", "", ["ba", "b", "\na"]),
    (r"[A-Fa-f0-9]{2}(:[A-Fa-f0-9]{2}){2}", "i", ["0A:bC:ff"]),
    (r"ß|ǅ|[à-å]x", "i", ["ß", "Ǆ", "Àx"]),
    (r"[a-z]+|I|S|k", "i", ["ABC", "i", "s", "K"]),
    (r"[a-z]+|I|S|k", "iu", ["ABC", "i", "s", "K"]),
    (r"\[\]\{\}\(\)\*\+\?\.\|\/", "", ["[]{}()*+?.|/"]),
]


JS_TEST = """
let text = '';
process.stdin.on('data', (d) => { text += d; }).on('end', () => {
  const out = JSON.parse(text).map(([source, flags, strings]) => {
    const re = new RegExp(`^(?:${source})$`, flags.replace('m', ''));
    return strings.map((s) => re.test(s));
  });
  console.log(JSON.stringify(out));
});
"""


def samples(source: str, positives: list[str], seed: int) -> list[str]:
    """The positives, their one-character edits, and random strings over the pattern's
    own characters and a few others."""
    rng = random.Random(seed)
    alphabet = sorted(set(source + "".join(positives) + "aZ09 \n-é😀ıİſK"))
    out = list(positives)
    for text in positives:
        for _ in range(20):
            at = rng.randrange(len(text) + 1)
            out.append(text[:at] + rng.choice(alphabet) + text[at + 1 :])
            out.append(text[:at] + text[at + 1 :])
    out += ["".join(rng.choices(alphabet, k=rng.randrange(8))) for _ in range(150)]
    return out


@pytest.fixture(scope="module")
def judged() -> list[tuple[str, str, list[tuple[str, bool]]]]:
    """Every case's samples with JavaScript's answer: does ``^(?:source)$`` match?"""
    if shutil.which("node") is None:
        pytest.skip("needs Node for JavaScript's answers")
    cases = [(src, flags, samples(src, pos, i)) for i, (src, flags, pos) in enumerate(CASES)]
    run = subprocess.run(
        ["node", "-e", JS_TEST], input=json.dumps(cases), capture_output=True, text=True
    )
    truth = json.loads(run.stdout)
    return [
        (s, f, list(zip(xs, t, strict=True))) for (s, f, xs), t in zip(cases, truth, strict=True)
    ]


def test_the_positives_are_positive(judged: list[tuple[str, str, list[tuple[str, bool]]]]) -> None:
    for (source, _, positives), (_, _, strings) in zip(CASES, judged, strict=True):
        assert all(want for _, want in strings[: len(positives)]), source


def test_translations_match_exactly_what_javascript_matches(
    judged: list[tuple[str, str, list[tuple[str, bool]]]],
) -> None:
    for source, flags, strings in judged:
        translated = re.compile(translate(source, flags))
        for text, want in strings:
            got = translated.fullmatch(text) is not None
            astral = "u" not in flags and any(ord(c) > 0xFFFF for c in text)
            folded = "i" in flags and any(c in "ıİſK" for c in text)
            if astral or folded:
                # Without u, JavaScript matches an astral character's two halves one by
                # one; with i, it folds a few letters onto ASCII ones ("ſ" and "s" under
                # u). The translation holds answers to a subset: never more.
                assert want or not got, (source, flags, text)
            else:
                assert got == want, (source, flags, text)


def test_llguidance_holds_answers_to_the_translation(
    judged: list[tuple[str, str, list[tuple[str, bool]]]],
) -> None:
    tokenizer = llguidance.LLTokenizer(TOKENIZER.read_text())
    for source, flags, strings in judged:
        grammar = llguidance.LLMatcher.grammar_from_regex(translate(source, flags))
        assert not llguidance.LLMatcher.validate_grammar(grammar, tokenizer), source
        for text, want in strings[:60]:
            if any(ord(c) > 0xFFFF or c in "ıİſK" for c in text):
                continue
            matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
            ok = matcher.consume_tokens(tokenizer.tokenize_str(text)) and matcher.is_accepting()
            assert ok == want, (source, flags, text)


@pytest.mark.parametrize(
    ("source", "flags", "named"),
    [
        ("(?=a)b", "", "lookaround"),
        ("(?<!a)b", "", "lookaround"),
        ("\\bword", "", "word-boundary"),
        ("(a)\\1", "", "back-reference"),
        ("(?<n>a)\\k<n>", "", "back-reference"),
        ("a^b", "", "^ inside"),
        ("(a$)b", "", "$ inside"),
        ("\\p{L}", "u", "Unicode property"),
        ("[a--b]", "v", "v flag"),
        ("[]", "", "empty character class"),
    ],
)
def test_what_cannot_be_held_is_not_supported(source: str, flags: str, named: str) -> None:
    with pytest.raises(PromptAPIError) as caught:
        translate(source, flags)
    assert caught.value.name == "NotSupportedError"
    assert named in str(caught.value)


def test_flags_that_do_not_change_a_whole_answer_are_accepted() -> None:
    assert translate("ab", "gyd") == translate("ab", "") == "ab"
    assert translate("^ab$", "m") == "ab"
