"""The ``Digits`` pre-tokenizer against ``tokenizers``, and a SmolLM2-style tokenizer.

SmolLM2's pre-tokenizer is ``Sequence([Digits(individual_digits=True),
ByteLevel(add_prefix_space=False, use_regex=True)])`` with a ByteLevel decoder.
"Digit" is Rust's ``char::is_numeric``: the general categories Nd, Nl and No.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from test_tokenizer import CORPUS, FUZZ, HERE, TEXTS, assert_same, hf, load_pair

from py_runtime.tokenizer import StreamDecoder, Tokenizer
from py_runtime.tokenizer.pretokenize import build_pre_tokenizer

DIGIT_TEXTS = [
    "٣٤٥ ١٢٣ ۱۲۳ १२३ １２３ x² ½ Ⅻ 〇 一二三 ⅷ ① ⑴ 𝟘𝟙 ៣ 𐄇",
    "2024-05-09 12:34:56.789 +01:00 v1.2.3 0x1F 1e-9 3½",
    "abc123def4567 8 9 0",
]


def smollm2_style(individual: bool = True) -> str:
    """A byte-level BPE with SmolLM2's pre-tokenizer, trained by ``tokenizers``."""
    tk = hf()
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [
            tk.pre_tokenizers.Digits(individual_digits=individual),
            tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        show_progress=False,
    )
    sources = sorted((HERE.parents[1] / "py_runtime").rglob("*.py"))
    training = [p.read_text(encoding="utf-8") for p in sources] + list(CORPUS.values()) * 3
    tok.train_from_iterator(training + DIGIT_TEXTS * 3, trainer)
    return str(tok.to_str())


@pytest.fixture(scope="module", params=[True, False], ids=["individual", "runs"])
def smollm2_pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, Any]:
    return load_pair(smollm2_style(request.param))


def test_smollm2_style_spec_shape() -> None:
    spec = json.loads(smollm2_style())
    steps = spec["pre_tokenizer"]["pretokenizers"]
    assert steps[0] == {"type": "Digits", "individual_digits": True}
    assert steps[1]["type"] == "ByteLevel" and steps[1]["use_regex"] is True


def test_smollm2_style_matches_tokenizers(smollm2_pair: tuple[Tokenizer, Any]) -> None:
    for text in [*TEXTS.values(), *DIGIT_TEXTS, *FUZZ]:
        assert_same(*smollm2_pair, text)


def test_smollm2_style_digits_are_single_tokens() -> None:
    ours = Tokenizer.from_json(smollm2_style())
    ids = ours.encode("12345")
    assert [ours.decode([i]) for i in ids] == list("12345")


def test_smollm2_style_stream_decoder(smollm2_pair: tuple[Tokenizer, Any]) -> None:
    ours, _ = smollm2_pair
    for text in [*DIGIT_TEXTS, TEXTS["emoji-zwj"], TEXTS["chat-hello"]]:
        ids = ours.encode(text)
        stream = StreamDecoder(ours)
        assert "".join(stream.feed(i) for i in ids) + stream.flush() == ours.decode(ids)


@pytest.mark.parametrize("individual", [True, False])
def test_digits_matches_tokenizers_on_every_character(individual: bool) -> None:
    """Every code point this Python's Unicode assigns, alone, doubled and in context."""
    ref = hf().pre_tokenizers.Digits(individual_digits=individual)
    step = build_pre_tokenizer({"type": "Digits", "individual_digits": individual})
    code_points = [
        cp for cp in range(0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")
    ]
    contexts = ["a{c}", "{c}{c}1", "{c} ", "中{c}"]
    for start in range(0, len(code_points), 5000):
        text = "".join(
            contexts[i % len(contexts)].format(c=chr(cp))
            for i, cp in enumerate(code_points[start : start + 5000])
        )
        assert step(text) == [piece for piece, _ in ref.pre_tokenize_str(text)]


def test_digits_examples() -> None:
    single = build_pre_tokenizer({"type": "Digits", "individual_digits": True})
    runs = build_pre_tokenizer({"type": "Digits"})  # individual_digits: false
    assert single("x٣٤²Ⅻ一12 3") == ["x", "٣", "٤", "²", "Ⅻ", "一", "1", "2", " ", "3"]
    assert runs("x٣٤²Ⅻ一12 3") == ["x", "٣٤²Ⅻ", "一", "12", " ", "3"]
    assert single("") == [] and runs("no digits") == ["no digits"]
