"""Each normalizer, pre-tokenizer, decoder and model option against ``tokenizers``.

The components are built from the JSON ``tokenizers`` writes for its own objects
and compared on the shared corpus, on every code point where a character class is
involved, and on random token lists for the decoders (streamed too).
"""

from __future__ import annotations

import json
import random
import unicodedata
from typing import Any

import pytest
from test_tokenizer import FUZZ, TEXTS, assert_same, load_pair

from py_runtime.tokenizer import StreamDecoder, Tokenizer, TokenizerError
from py_runtime.tokenizer.decoders import build_decoder
from py_runtime.tokenizer.normalizers import build_normalizer
from py_runtime.tokenizer.pretokenize import build_pre_tokenizer
from py_runtime.tokenizer.serde import serde_float

tokenizers = pytest.importorskip("tokenizers")  # the references, built at collection

SAMPLES = [
    *TEXTS.values(),
    *FUZZ[:120],
    "ΑΣ ΣΑΣ İstanbul ǅ ß ﬁ Ⅻ ＡＢＣ",
    "  \u3000 x \u00a0 \u2028",
    "\x01\x0b\x1f\x7f\x8f\u200b\ufeff\ufffd\u2581 a\tb\r\n",
    "▁ ▁▁x  ▁y",
    "",
]


def state(component: Any) -> dict[str, Any]:
    """The JSON ``tokenizers`` writes for one of its components."""
    return dict(json.loads(component.__getstate__()))


def ids(components: list[Any]) -> list[str]:
    return [f"{i}-{state(c)['type']}" for i, c in enumerate(components)]


def normalizers() -> list[Any]:
    n, regex = tokenizers.normalizers, tokenizers.Regex
    return [
        n.NFC(), n.NFD(), n.NFKC(), n.NFKD(), n.Lowercase(), n.Strip(),
        n.Strip(left=False), n.Strip(right=False), n.StripAccents(), n.Nmt(),
        n.Replace("a", "XY"), n.Replace(" ", "▁"), n.Replace(regex(r"\s+"), "_"),
        n.Replace(regex(r"\p{N}"), "#"), n.Replace(regex(r"(a)"), r"\1$1"), n.Prepend("▁"),
        n.ByteLevel(), n.Sequence([n.NFD(), n.StripAccents(), n.Lowercase()]),
        n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")]), n.Sequence([]),
    ]  # fmt: skip


@pytest.mark.parametrize("reference", normalizers(), ids=ids(normalizers()))
def test_normalizer_matches_tokenizers(reference: Any) -> None:
    ours = build_normalizer(state(reference))
    assert ours is not None
    for text in SAMPLES:
        assert ours(text) == reference.normalize_str(text), (state(reference), text)


def pre_tokenizers() -> list[Any]:
    p = tokenizers.pre_tokenizers
    behaviors = ["isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous"]
    metaspaces = [
        p.Metaspace(replacement=r, prepend_scheme=s, split=split)
        for r in ["▁", "_"]
        for s in ["always", "first", "never"]
        for split in (True, False)
    ]
    first = p.Metaspace(prepend_scheme="first")
    return [
        p.Whitespace(), p.WhitespaceSplit(), p.BertPreTokenizer(), p.CharDelimiterSplit("e"),
        *[p.Punctuation(behavior) for behavior in behaviors], *metaspaces,
        p.Digits(individual_digits=True), p.Digits(individual_digits=False),
        p.Sequence([p.WhitespaceSplit(), first]), p.Sequence([p.Punctuation("removed"), first]),
        p.Sequence([first, p.Digits(True)]), p.Sequence([p.Whitespace(), p.Punctuation()]),
        p.Sequence([p.Digits(True), p.ByteLevel(add_prefix_space=False)]),
    ]  # fmt: skip


@pytest.mark.parametrize("reference", pre_tokenizers(), ids=ids(pre_tokenizers()))
def test_pre_tokenizer_matches_tokenizers(reference: Any) -> None:
    ours = build_pre_tokenizer(state(reference))
    for text in SAMPLES:
        assert ours(text) == [piece for piece, _ in reference.pre_tokenize_str(text)], (
            state(reference),
            text,
        )


@pytest.mark.parametrize(
    "spec",
    [
        {"add_prefix_space": True},
        {"add_prefix_space": True, "prepend_scheme": "first"},
        {"add_prefix_space": True, "split": False},
        {"str_rep": "▁"},
        {},
    ],
)
def test_metaspace_older_forms(spec: dict[str, Any]) -> None:
    """Files written by older versions (``add_prefix_space``, ``str_rep``)."""
    full = {"type": "Metaspace", "replacement": "▁", **spec}
    data = {"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": full}
    reference = tokenizers.Tokenizer.from_str(json.dumps(data)).pre_tokenizer
    ours = build_pre_tokenizer(full)
    for text in ["hello world", " x", "▁y  z", "a▁b"]:
        assert ours(text) == [piece for piece, _ in reference.pre_tokenize_str(text)]


@pytest.mark.parametrize("name", ["Whitespace", "WhitespaceSplit", "Punctuation", "Bert"])
def test_character_classes_match_tokenizers_on_every_character(name: str) -> None:
    """Rust regex's \\w and \\s, char::is_whitespace and tokenizers' punctuation table."""
    p = tokenizers.pre_tokenizers
    reference = {
        "Whitespace": p.Whitespace(),
        "WhitespaceSplit": p.WhitespaceSplit(),
        "Punctuation": p.Punctuation(),
        "Bert": p.BertPreTokenizer(),
    }[name]
    ours = build_pre_tokenizer(state(reference))
    code_points = [
        cp for cp in range(0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")
    ]
    contexts = ["a{c}b", "{c}{c} ", " -{c}", "中{c}1"]
    for start in range(0, len(code_points), 5000):
        text = "".join(
            contexts[i % len(contexts)].format(c=chr(cp))
            for i, cp in enumerate(code_points[start : start + 5000])
        )
        assert ours(text) == [piece for piece, _ in reference.pre_tokenize_str(text)]


DECODER_TOKENS = [
    "▁", "a", "b", "ab", "▁a", " ", "  ", "<0xC3>", "<0xA9>", "<0xE2>", "<0x82>", "<0xAC>",
    "<0x41>", "<0xFF>", "<0x+A>", "<0xe9>", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "<0x0>",
    "<0xZZ>", "</w>", "a</w>", "Ġ", "Ã©", "é", "aa", "▁▁", "x▁", "ĠĠ", "ðŁĺ",
]  # fmt: skip


def decoders() -> list[Any]:
    d, regex = tokenizers.decoders, tokenizers.Regex
    llama = [d.Replace("▁", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)]
    return [
        d.ByteLevel(), d.Sequence(llama), d.Sequence(llama[:3]), d.Fuse(), d.ByteFallback(),
        *[d.Metaspace(prepend_scheme=s, split=True) for s in ["always", "first", "never"]],
        d.Metaspace(replacement="_"), d.BPEDecoder(), d.BPEDecoder("a"),
        d.Strip(" ", 2, 2), d.Strip("a", 1, 3), d.Replace(regex("a+"), "A"),
        d.Sequence([d.Fuse(), d.Replace("ab", "X")]), d.Sequence([d.Fuse(), d.Replace("aab", "-")]),
        d.Sequence([d.Fuse(), d.Replace(regex("a+"), "A")]), d.Sequence([d.Fuse(), d.Metaspace()]),
        d.Sequence([d.Fuse(), d.Strip("a", 2, 1)]), d.Sequence([d.Fuse(), d.Strip(" ", 0, 2)]),
        d.Sequence([d.ByteFallback(), d.Metaspace()]), d.Sequence([d.Fuse(), d.ByteFallback()]),
        d.Sequence([d.Fuse(), d.BPEDecoder()]), d.Sequence([d.ByteLevel(), d.Strip(" ", 1, 1)]),
        d.Sequence([d.ByteFallback(), d.ByteLevel()]), d.Sequence([d.Fuse(), d.ByteLevel()]),
        d.Sequence([d.Metaspace(), d.Fuse(), d.Replace("▁", " ")]),
        d.Sequence([d.Sequence([d.Replace("▁", " ")]), d.Sequence([d.ByteFallback(), d.Fuse()])]),
    ]  # fmt: skip


def streamed(decoder: Any, tokens: list[str]) -> list[str]:
    stream = decoder.stream()
    return [*map(stream.feed, tokens), stream.flush()]


@pytest.mark.parametrize("reference", decoders(), ids=ids(decoders()))
def test_decoder_matches_tokenizers(reference: Any) -> None:
    """Random token lists, decoded whole and streamed: the streamed text only grows,
    and flushed after any prefix it is that prefix's decode."""
    ours = build_decoder(state(reference))
    rng = random.Random(repr(state(reference)))
    for _ in range(400):
        tokens = rng.choices(DECODER_TOKENS, k=rng.randint(0, 12))
        try:
            expected = reference.decode(tokens)
        except BaseException:  # a Rust panic (Strip past the whole token)  # noqa: BLE001
            continue
        assert ours.decode(tokens) == expected, (state(reference), tokens)
        chunks = streamed(ours, tokens)
        assert "".join(chunks) == expected
        for k in range(len(tokens)):
            assert expected.startswith("".join(chunks[:k]))
            assert "".join(streamed(ours, tokens[:k])) == ours.decode(tokens[:k])


def test_serde_float_matches_tokenizers() -> None:
    """Unigram scores as tokenizers reads them: up to one unit in the last place from
    Python's json, which would break near-ties between segmentations differently."""
    rng = random.Random(1)
    texts = [
        "0.1", "1e-5", "-0.0", "7", "-3", "123456789012345678901234.5e-3",
        "18446744073709551615.5", "18446744073709551616", "1.8446744073709551616",
        "0.000000000000000000000000000001234567890123456789", "1e-320", "2.5e-310",
        "123e300", "-9.999999999999999e-300", "-7.3094695122294135", "1E+2",
    ]  # fmt: skip
    texts += [repr(rng.uniform(-20, 0)) for _ in range(3000)]
    texts += [f"{rng.uniform(-20, 0):.25f}" for _ in range(500)]
    texts += [f"{rng.random():.30e}" for _ in range(500)]
    vocab = ",".join(f'["t{i}", {text}]' for i, text in enumerate(texts))
    model = f'{{"type": "Unigram", "unk_id": 0, "vocab": [{vocab}], "byte_fallback": false}}'
    read = json.loads(tokenizers.Tokenizer.from_str(f'{{"model": {model}}}').to_str())
    expected = [score for _, score in read["model"]["vocab"]]
    assert [serde_float(text) for text in texts] == expected
    assert sum(serde_float(t) != float(t) for t in texts) > 100  # it does matter


def bpe(vocab: list[str], merges: list[str], **options: Any) -> dict[str, Any]:
    model = {"type": "BPE", "vocab": {t: i for i, t in enumerate(vocab)}, "merges": merges}
    return {"model": model | options}


BPE_CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "unk-fused-around-bytes": (
        bpe(["a", "<unk>", "<0xC3>", "<0xA9>"], [], unk_token="<unk>", fuse_unk=True,
            byte_fallback=True),
        ["üé a", "üüa", "éü", "aü éa ü", "ü"],
    ),
    "unk-not-fused": (
        bpe(["a", "<unk>", "<0xC3>", "<0xA9>"], [], unk_token="<unk>", byte_fallback=True),
        ["üé a", "üüa", "éü", "aü éa ü"],
    ),
    "no-unk-drops": (bpe(["a", "b", "ab"], ["a b"]), ["abc", "cab", "ccc"]),
    "prefix": (
        bpe(["a", "b", "##a", "##b", "ab", "##ab", "<unk>"], ["a ##b", "##a ##b"],
            unk_token="<unk>", continuing_subword_prefix="##"),
        ["ab", "aab", "bab", "abab", "c", "acb"],
    ),
    "suffix": (
        bpe(["a", "b", "a</w>", "b</w>", "ab</w>", "<unk>"], ["a b</w>"], unk_token="<unk>",
            end_of_word_suffix="</w>"),
        ["ab", "aab", "ba", "c", "b"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BPE_CASES))
def test_bpe_options_match_tokenizers(case: str) -> None:
    spec, texts = BPE_CASES[case]
    ours, ref = load_pair(spec)
    for text in texts:
        assert_same(ours, ref, text)


def unigram(pieces: list[tuple[str, float]], **options: Any) -> dict[str, Any]:
    return {"model": {"type": "Unigram", "vocab": [list(p) for p in pieces], **options}}


UNIGRAM_CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "ties-keep-the-first-path": (
        unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("ba", -2.0),
                 ("aba", -3.0)], unk_id=0),
        ["aba", "abab", "babab", "ab", "bab", "a"],
    ),
    "unknown-runs-fused": (
        unigram([("<unk>", 0.0), ("a", -1.0), ("xy", -0.5)], unk_id=0),
        ["xxa", "axxya", "yx", "xy", "zzz", "<unk>a"],
    ),
    "byte-fallback": (
        unigram([("<unk>", 0.0), ("a", -1.0), ("<0xC3>", -5.0), ("<0xA9>", -5.0)], unk_id=0,
                byte_fallback=True),
        ["aé", "éé a", "ü", "aüé", "<0xC3>"],
    ),
    "duplicate-pieces": (
        unigram([("<unk>", 0.0), ("a", -1.0), ("ab", -3.0), ("ab", -1.5), ("b", -1.0)],
                unk_id=0),
        ["ab", "abab", "ba"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNIGRAM_CASES))
def test_unigram_options_match_tokenizers(case: str) -> None:
    spec, texts = UNIGRAM_CASES[case]
    ours, ref = load_pair(spec)
    for text in texts:
        assert_same(ours, ref, text)


def test_unigram_without_unk_id_raises_on_unknown() -> None:
    ours = Tokenizer.from_json(unigram([("a", -1.0)]))
    assert ours.encode("aa") == [0, 0]
    with pytest.raises(TokenizerError, match="no unk_id"):
        ours.encode("ab")


def test_added_token_ids_are_assigned_as_tokenizers_does() -> None:
    """The ids written in added_tokens are not used: a model token keeps its id, the
    others are numbered after the vocabulary; a normalized one decodes normalized."""
    spec = bpe(["a", "b", "▁", "<s>"], [])
    spec["normalizer"] = {"type": "Prepend", "prepend": "▁"}
    flags = dict.fromkeys(["single_word", "lstrip", "rstrip"], False)
    spec["added_tokens"] = [
        {"id": 9, "content": "<s>", **flags, "normalized": False, "special": True},
        {"id": 7, "content": "<x>", **flags, "normalized": False, "special": True},
        {"id": 1, "content": "<y>", **flags, "normalized": True, "special": True},
        {"id": 2, "content": "", **flags, "normalized": False, "special": False},
        {"id": 3, "content": "<z>", **flags, "normalized": True, "special": False},
    ]
    ours, ref = load_pair(spec)
    assert [ours.token_to_id(t) for t in ["<s>", "<x>", "<y>", "<z>"]] == [3, 4, 5, 6]
    assert [ours.token_to_id(t) for t in ["<s>", "<x>", "<y>", "<z>"]] == [
        ref.token_to_id(t) for t in ["<s>", "<x>", "<y>", "<z>"]
    ]
    assert ours.id_to_token(5) == ref.id_to_token(5) == "▁<y>"
    for text in ["<s>a<x>b<y>", "a<z>", "<y>", "b <z> <s>"]:
        assert_same(ours, ref, text)
    assert ours.decode([5, 6, 0], skip_special_tokens=True) == ref.decode(
        [5, 6, 0], skip_special_tokens=True
    )


@pytest.mark.parametrize(
    "processor",
    [
        {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                  {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
         "trim_offsets": True, "add_prefix_space": True},
        {"type": "Sequence", "processors": [{"type": "ByteLevel", "trim_offsets": False}]},
        {"type": "SomethingNew"},
    ],
)  # fmt: skip
def test_post_processor_is_ignored(processor: dict[str, Any]) -> None:
    spec = bpe(["a", "b", "ab"], ["a b"]) | {"post_processor": processor}
    ours = Tokenizer.from_json(spec)
    assert ours.encode("abab") == [2, 2]
    assert StreamDecoder(ours).feed(2) == "ab"


STRIP = {"type": "Strip", "strip_left": True, "strip_right": True}


@pytest.mark.parametrize(
    "normalizer",
    [
        None,
        STRIP,
        {"type": "Replace", "pattern": {"String": "x"}, "content": ""},
        {"type": "Nmt"},
        {"type": "StripAccents"},
        {
            "type": "Sequence",
            "normalizers": [STRIP, {"type": "Prepend", "prepend": "▁"}],
        },
    ],
)
def test_metaspace_first_prepends_only_at_the_start(normalizer: dict[str, Any] | None) -> None:
    """prepend_scheme "first": only where the input starts, so not after an added token,
    nor when the normalizer drops the first characters."""
    spec = bpe(["▁", "h", "i", "x", " "], []) | {
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"},
    }
    flags = dict.fromkeys(["single_word", "lstrip", "rstrip", "normalized"], False)
    spec["added_tokens"] = [{"id": 5, "content": "<s>", **flags, "special": True}]
    ours, ref = load_pair(spec)
    for text in ["hi", "  hi", "xhi", " hi hi", "<s> hi", "<s>hi", "  <s>hi", "\x01hi", "\u0301hi"]:
        assert_same(ours, ref, text)


def test_empty_patterns_match_tokenizers() -> None:
    """An empty Replace pattern matches between characters, but not in empty text."""
    n, d, p = tokenizers.normalizers, tokenizers.decoders, tokenizers.pre_tokenizers
    for normalizer in (n.Replace("", "X"), n.Replace(tokenizers.Regex("x*"), "-")):
        ours = build_normalizer(state(normalizer))
        assert ours is not None
        for text in ["", "a", "abc", "xax"]:
            assert ours(text) == normalizer.normalize_str(text)
    for decoder in (d.Replace("", "X"), d.Sequence([d.Fuse(), d.Replace("", "X")])):
        for tokens in [[], [""], ["abc", "d"], ["", "a"]]:
            assert build_decoder(state(decoder)).decode(tokens) == decoder.decode(tokens)
    behaviors = ["isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous"]
    for pattern in ("", tokenizers.Regex("x*"), tokenizers.Regex(r"\s*")):
        for behavior in behaviors:
            split = p.Split(pattern, behavior)
            for text in ["a b", "xax", "xx  a", ""]:
                expected = [piece for piece, _ in split.pre_tokenize_str(text)]
                assert build_pre_tokenizer(state(split))(text) == expected
    spec = {"model": {"type": "BPE", "vocab": {"X": 0, "a": 1}, "merges": []}}
    ours, ref = load_pair(spec | {"normalizer": state(n.Replace("", "X"))})
    for text in ["", "a", "aa"]:
        assert_same(ours, ref, text)
