"""Tokenizer families of popular small instruct models, against ``tokenizers``.

Each is built here with ``tokenizers``' own models and trainers on the package's
sources and a multilingual corpus, saved to JSON, and read back by our
``Tokenizer.from_json``: ids, decodes (with and without special tokens), random id
sequences and the streaming decoder on every prefix must be the same.

- llama2: BPE with byte_fallback, normalizer Prepend("▁") + Replace(" ", "▁"), the
  Replace/ByteFallback/Fuse/Strip decoder (Llama 2, Mistral v0.1, Phi-3, TinyLlama);
- mistral: the same with a Metaspace pre-tokenizer (prepend_scheme first, no split);
- gemma: BPE with byte_fallback, spaces replaced by "▁", no prefix;
- unigram / unigram-bytes: SentencePiece-style Unigram with Metaspace (and byte
  fallback with the Llama decoder);
- words-suffix / words-prefix: Whitespace/Punctuation pre-tokenized BPE with an
  end-of-word suffix (BPEDecoder) or a continuing-subword prefix (no decoder).

The byte-level BPE with Digits (SmolLM2) is in ``test_tokenizer_digits``.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from test_tokenizer import CORPUS, FUZZ, HERE, TEXTS, assert_same, hf
from test_tokenizer_digits import smollm2_style

from py_runtime.tokenizer import StreamDecoder, Tokenizer

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
EXTRA_TEXTS = [
    "<s>Hello", "Hello<s>", " <s> hi", "<s>", "</s></s>", "<s> <unk>", "<unk>",
    "▁x ▁ y▁▁z", "▁", " ▁", "<0x41> <0xZZ>", "ꙮ 𓀀 ☃ ⛄ 𝄞", "ꙮꙮ𓀀 x𓀀",
    "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "[CLS] [UNK] ##ing ##", "a</w> b</w>", " leading", "  two", "trailing ", "\n", "\t\t",
    "Ünïcödé ÀÉÎÕÜ ǅǈ ﬁﬂ ẞß İı ΣΑΣ", "x=1;y=2\nprint(x+y) # 3",
]  # fmt: skip
ALL_TEXTS = [*TEXTS.values(), *FUZZ, *EXTRA_TEXTS]
STREAM_TEXTS = [*list(TEXTS.values())[:30], *EXTRA_TEXTS]


@functools.cache
def training() -> list[str]:
    sources = sorted((HERE.parents[1] / "py_runtime").rglob("*.py"))
    return [p.read_text(encoding="utf-8") for p in sources] + list(CORPUS.values()) * 3


def byte_fallback_spec(tok: Any, specials: list[str]) -> dict[str, Any]:
    """A trained BPE laid out as Llama's: the special tokens, the 256 byte tokens,
    then the rest; the special tokens also as (unnormalized) added tokens."""
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    rest = [t for t, _ in sorted(vocab.items(), key=lambda item: item[1])]
    order = specials + BYTE_TOKENS + [t for t in rest if t not in specials + BYTE_TOKENS]
    spec["model"]["vocab"] = {t: i for i, t in enumerate(order)}
    flags = dict.fromkeys(["single_word", "lstrip", "rstrip", "normalized"], False)
    spec["added_tokens"] = [
        {"id": i, "content": t, **flags, "special": True} for i, t in enumerate(specials)
    ]
    return spec


def decoder_spec(*decoders: Any) -> dict[str, Any]:
    return dict(json.loads(hf().decoders.Sequence(list(decoders)).__getstate__()))


def trained_bpe(specials: list[str]) -> dict[str, Any]:
    """BPE with byte fallback and "▁" words; a small alphabet, so that bytes are used."""
    tk = hf()
    tok = tk.Tokenizer(tk.models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = tk.pre_tokenizers.Metaspace(prepend_scheme="first", split=True)
    trainer = tk.trainers.BpeTrainer(vocab_size=800, limit_alphabet=120, show_progress=False)
    tok.train_from_iterator(training(), trainer)
    return byte_fallback_spec(tok, specials)


def llama2_style() -> dict[str, Any]:
    tk = hf()
    spec = trained_bpe(["<unk>", "<s>", "</s>"])
    spec["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    }
    spec["pre_tokenizer"] = None
    d = tk.decoders
    spec["decoder"] = decoder_spec(
        d.Replace("▁", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)
    )
    return spec


def mistral_style() -> dict[str, Any]:
    spec = llama2_style()
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {
        "type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False,
    }  # fmt: skip
    return spec


def gemma_style() -> dict[str, Any]:
    d = hf().decoders
    spec = trained_bpe(["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"])
    spec["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
    spec["pre_tokenizer"] = None
    spec["decoder"] = decoder_spec(d.Replace("▁", " "), d.ByteFallback(), d.Fuse())
    return spec


@functools.cache
def trained_unigram() -> str:
    tk = hf()
    tok = tk.Tokenizer(tk.models.Unigram())
    tok.normalizer = tk.normalizers.NFKC()
    tok.pre_tokenizer = tk.pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    tok.decoder = tk.decoders.Metaspace(prepend_scheme="always", split=True)
    trainer = tk.trainers.UnigramTrainer(
        vocab_size=900,
        special_tokens=["<pad>", "</s>", "<unk>"],
        unk_token="<unk>",
        show_progress=False,
    )
    tok.train_from_iterator(training(), trainer)
    return str(tok.to_str())


def unigram_style() -> dict[str, Any]:
    spec = json.loads(trained_unigram())
    for token in spec["added_tokens"]:
        token["normalized"] = False
    return dict(spec)


def unigram_bytes_style() -> dict[str, Any]:
    d = hf().decoders
    spec = unigram_style()
    model = spec["model"]
    lowest = min(score for _, score in model["vocab"])
    model["vocab"] += [[token, lowest - 1.0] for token in BYTE_TOKENS]
    model["byte_fallback"] = True
    spec["decoder"] = decoder_spec(
        d.Replace("▁", " "), d.ByteFallback(), d.Fuse(), d.Strip(" ", 1, 0)
    )
    return spec


def words_style(suffix: bool) -> dict[str, Any]:
    tk = hf()
    n, p = tk.normalizers, tk.pre_tokenizers
    options: dict[str, Any] = {"show_progress": False, "vocab_size": 900, "limit_alphabet": 150}
    if suffix:
        tok = tk.Tokenizer(tk.models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
        tok.normalizer = n.Sequence([n.NFC(), n.Lowercase()])
        tok.pre_tokenizer = p.Sequence([p.Whitespace(), p.Digits(individual_digits=False)])
        tok.decoder = tk.decoders.BPEDecoder(suffix="</w>")
        trainer = tk.trainers.BpeTrainer(
            end_of_word_suffix="</w>", special_tokens=["<unk>"], **options
        )
    else:
        tok = tk.Tokenizer(tk.models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
        tok.normalizer = n.Sequence([n.NFD(), n.StripAccents(), n.Lowercase(), n.Strip()])
        tok.pre_tokenizer = p.Sequence([p.WhitespaceSplit(), p.Punctuation()])
        trainer = tk.trainers.BpeTrainer(
            continuing_subword_prefix="##", special_tokens=["[UNK]", "[CLS]"], **options
        )
    tok.train_from_iterator(training(), trainer)
    return dict(json.loads(tok.to_str()))


FAMILIES: dict[str, Callable[[], dict[str, Any]]] = {
    "smollm2": lambda: dict(json.loads(smollm2_style())),
    "llama2": llama2_style,
    "mistral": mistral_style,
    "gemma": gemma_style,
    "unigram": unigram_style,
    "unigram-bytes": unigram_bytes_style,
    "words-suffix": functools.partial(words_style, True),
    "words-prefix": functools.partial(words_style, False),
}


@functools.cache
def family_json(name: str) -> str:
    return json.dumps(FAMILIES[name](), ensure_ascii=False)


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request: pytest.FixtureRequest) -> tuple[str, Tokenizer, Any]:
    text = family_json(request.param)
    return request.param, Tokenizer.from_json(text), hf().Tokenizer.from_str(text)


def test_family_specs_use_the_components() -> None:
    """The families are what they claim (the JSON as tokenizers saved it)."""
    specs = {name: json.loads(family_json(name)) for name in FAMILIES}
    assert specs["llama2"]["model"]["byte_fallback"] is True
    assert [s["type"] for s in specs["llama2"]["normalizer"]["normalizers"]] == [
        "Prepend",
        "Replace",
    ]
    assert [d["type"] for d in specs["llama2"]["decoder"]["decoders"]] == [
        "Replace", "ByteFallback", "Fuse", "Strip",
    ]  # fmt: skip
    assert specs["mistral"]["pre_tokenizer"]["prepend_scheme"] == "first"
    assert specs["gemma"]["normalizer"]["type"] == "Replace"
    assert specs["unigram"]["model"]["type"] == "Unigram"
    assert specs["unigram"]["decoder"]["type"] == "Metaspace"
    assert specs["unigram-bytes"]["model"]["byte_fallback"] is True
    assert specs["words-suffix"]["decoder"]["type"] == "BPEDecoder"
    assert specs["words-prefix"]["model"]["continuing_subword_prefix"] == "##"
    assert specs["words-prefix"]["decoder"] is None


def test_family_matches_tokenizers(family: tuple[str, Tokenizer, Any]) -> None:
    _, ours, ref = family
    for text in ALL_TEXTS:
        assert_same(ours, ref, text)


def test_family_uses_fallbacks(family: tuple[str, Tokenizer, Any]) -> None:
    """The corpus reaches the byte tokens or the unknown token where there are some."""
    name, ours, _ = family
    ids = [i for text in ALL_TEXTS for i in ours.encode(text)]
    tokens = {ours.id_to_token(i) for i in ids}
    if "bytes" in name or name in ("llama2", "mistral", "gemma"):
        assert "<0xF0>" in tokens  # the first byte of an emoji
    if name in ("unigram", "words-suffix", "words-prefix"):
        assert tokens & {"<unk>", "[UNK]"}


def random_ids(tokenizer: Tokenizer, count: int, seed: int) -> list[list[int]]:
    """Random id sequences, half of them rich in byte tokens."""
    rng = random.Random(seed)
    size = tokenizer.vocab_size
    byte_ids = [i for i in map(tokenizer.token_to_id, BYTE_TOKENS) if i is not None]
    out = []
    for _ in range(count):
        ids = [rng.randrange(size + 2) for _ in range(rng.randint(1, 16))]
        if byte_ids and rng.random() < 0.5:
            ids = [rng.choice(byte_ids) if rng.random() < 0.6 else i for i in ids]
        out.append(ids)
    return out


def test_family_random_ids_decode_like_tokenizers(family: tuple[str, Tokenizer, Any]) -> None:
    _, ours, ref = family
    for ids in random_ids(ours, 400, seed=5):
        for skip in (False, True):
            expected = ref.decode(ids, skip_special_tokens=skip)
            assert ours.decode(ids, skip_special_tokens=skip) == expected, (ids, skip)


def streamed(tokenizer: Tokenizer, ids: list[int], skip: bool) -> list[str]:
    stream = StreamDecoder(tokenizer, skip_special_tokens=skip)
    return [*map(stream.feed, ids), stream.flush()]


@pytest.mark.parametrize("skip", [False, True])
def test_family_stream_decoder_on_every_prefix(
    family: tuple[str, Tokenizer, Any], skip: bool
) -> None:
    """Streamed then flushed, every prefix decodes as decode; the chunks only grow the
    final text (nothing streamed is taken back)."""
    _, ours, _ = family
    sequences = [ours.encode(text) for text in STREAM_TEXTS] + random_ids(ours, 40, seed=9)
    for ids in sequences:
        full = ours.decode(ids, skip_special_tokens=skip)
        chunks = streamed(ours, ids, skip)
        assert "".join(chunks) == full
        for k in range(len(ids)):
            assert "".join(streamed(ours, ids[:k], skip)) == ours.decode(ids[:k], skip)
            assert full.startswith("".join(chunks[:k]))


def test_stream_holds_byte_fallback_characters() -> None:
    """A character written as <0xNN> tokens comes out whole, once its run ends."""
    ours = Tokenizer.from_json(family_json("llama2"))
    ids = ours.encode("a 😀 b")
    tokens = [ours.id_to_token(i) for i in ids]
    first = tokens.index("<0xF0>")
    assert tokens[first : first + 4] == ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
    chunks = streamed(ours, ids, skip=False)
    assert "".join(chunks) == "a 😀 b" == ours.decode(ids)
    assert not any("\ufffd" in chunk for chunk in chunks)
    assert chunks[first : first + 4] == ["", "", "", ""]  # held until the run ends
    assert chunks[first + 4] == "😀 b"  # with the next token


def test_stream_strips_the_first_space() -> None:
    """Metaspace families: the leading "▁" of the first token is not streamed."""
    for name in ("llama2", "mistral", "unigram"):
        ours = Tokenizer.from_json(family_json(name))
        chunks = streamed(ours, ours.encode("Hello world"), skip=False)
        assert "".join(chunks) == "Hello world", name
        assert next(chunk for chunk in chunks if chunk).startswith("H"), name


FLAGS: dict[str, dict[str, Any]] = {
    "plain": {},
    "lstrip": {"lstrip": True},
    "rstrip": {"rstrip": True},  # Phi-3's special tokens
    "both-strips": {"lstrip": True, "rstrip": True},
    "single-word": {"single_word": True},
    "normalized": {"normalized": True},
    "normalized-special": {"normalized": True, "special": True, "rstrip": True},
}
FLAG_TEXTS = [
    "a <mask> b", "a  <mask>  b\n", "<mask><mask> <mask>", "x<mask>y", "x <mask>y <mask>",
    "   <mask>", "<mask>\t\t", "<mask>", "<mask> hi", " <mask>", "▁<mask>", "日本<mask>語",
    "<mask> a</s>  <mask>  <s>b", "<MASK> <mask", "<s><mask>", "<s> <mask> </s>",
]  # fmt: skip


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("name", ["llama2", "mistral", "gemma", "unigram", "words-prefix"])
def test_family_added_token_flags(name: str, flags: str) -> None:
    spec = json.loads(family_json(name))
    next_id = max([t["id"] + 1 for t in spec["added_tokens"]] + [len(spec["model"]["vocab"])])
    token = dict.fromkeys(["single_word", "lstrip", "rstrip", "normalized", "special"], False)
    token |= {"id": next_id, "content": "<mask>", **FLAGS[flags]}
    spec["added_tokens"].append(token)
    for extra in ("<s>", "</s>"):  # for the families without them
        if all(t["content"] != extra for t in spec["added_tokens"]):
            next_id += 1
            special = {"special": True, "normalized": False, "lstrip": False, "rstrip": False}
            spec["added_tokens"].append({**token, **special, "id": next_id, "content": extra})
    text = json.dumps(spec)
    ours, ref = Tokenizer.from_json(text), hf().Tokenizer.from_str(text)
    for sample in [*FLAG_TEXTS, *CORPUS.values()]:
        assert_same(ours, ref, sample)


def test_family_vocabulary(family: tuple[str, Tokenizer, Any]) -> None:
    _, ours, ref = family
    assert ours.vocab_size == ref.get_vocab_size(with_added_tokens=True)
    for token_id in range(-1, ours.vocab_size + 2):
        token = ref.id_to_token(token_id) if token_id >= 0 else None
        assert ours.id_to_token(token_id) == token
        if token is not None:
            assert ours.token_to_id(token) == ref.token_to_id(token)
