"""The pure-Python tokenizer against the ``tokenizers`` library.

Ids and decoded text must be identical: on the tiny Qwen2-style fixture, on a
Llama-3-style tokenizer trained here with ``tokenizers`` itself, and on variants
(GPT-2 ByteLevel regex, merges as strings, added-token flags, Split behaviours).
Without ``tokenizers`` the comparison tests are skipped; the rest still run.
"""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from py_runtime.tokenizer import (
    StreamDecoder,
    Tokenizer,
    TokenizerError,
    compile_regex,
    translate_regex,
)

HERE = Path(__file__).resolve().parent
FIXTURE_NAME = "tiny-qwen2-toolcall"
FIXTURE_DIRS = (
    HERE.parent / "fixtures" / FIXTURE_NAME,
    HERE.parents[2] / "shared" / "fixtures" / FIXTURE_NAME,
)
FIXTURE_JSON = next(
    (d / "tokenizer.json" for d in FIXTURE_DIRS if (d / "tokenizer.json").is_file()), None
)
needs_fixture = pytest.mark.skipif(FIXTURE_JSON is None, reason="fixture tokenizer missing")

LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

PYTHON_SNIPPET = '''\
def fibonacci(n: int) -> list[int]:
    """Return the first n Fibonacci numbers."""
    a, b = 0, 1
    out = []
    for _ in range(n):
        out.append(a)
        a, b = b, a + b  # tuple swap
    return out


if __name__ == "__main__":
    print(fibonacci(10))  \t
'''
JS_SNIPPET = """\
const greet = async (name = "world") => {
  if (!name) throw new TypeError(`bad name: ${name}`);
  return { message: 'Hello, ' + name + '!', at: Date.now() };
};\r
export default greet;
"""

CORPUS: dict[str, str] = {
    "empty": "",
    "space": " ",
    "ascii": "Hello world! The quick brown fox jumps over the lazy dog.",
    "accents": "Café naïve résumé Ångström Zürich São Paulo façade Ærøskøbing",
    "nfd-input": "Cafe\u0301 nai\u0308ve A\u030angstro\u0308m",
    "cjk": "中文文本，日本語のテキストです。한국어 텍스트입니다。",
    "emoji": "I ❤️ 🍕 and 👍🏽! 🇫🇷🇯🇵",
    "emoji-zwj": "family 👨\u200d👩\u200d👧\u200d👦 flag 🏳️\u200d🌈 tech 🧑🏿\u200d💻",
    "numbers": "In 2024, 1234567890123 and 3.14159 and 1,000,000 and 0x1F600 and -42",
    "unicode-digits": "٣٤٥ ١٢٣ ۱۲۳ १२३ １２３ x² ½ Ⅻ 〇",
    "whitespace": "a  b   c    d\t\te\n\nf\r\ng \r\n\r\n h   \n   i\u00a0j\u3000k",
    "trailing-spaces": "line with trailing spaces   \nnext\t \nend   ",
    "leading-spaces": "   leading and\n\n\n   indented",
    "only-newlines": "\n\n\r\n\n",
    "python": PYTHON_SNIPPET,
    "javascript": JS_SNIPPET,
    "contractions": "it's we'll THEY'RE I'M you'Ve she'd don't 'S 'll 'RE 'D 'm's 'tis",
    "odd-apostrophes": "'ſ 'ſt x'ﬆ 'K ’s ‘re'",
    "special-tokens": "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "tool-call": '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>',
    "special-adjacent": "<|im_end|><|im_start|><tool_call></tool_call><|endoftext|>",
    "special-partial": "<|im_start <tool_call <|im_end|x </tool_call>> <<|im_end|>>",
    "special-in-words": "foo<|im_end|>bar baz<tool_call>qux </tool_call> end",
    "controls": "a\x1cb\x1d c\x00d\x7f e\u200bf\u2028g\u2029h\u0085i",
    "mixed": "Résumé of 张伟 (b. 1990): built 3 apps 🚀, wrote 'it's fine'\t\r\n  x=1;",
    "long-word": "Pneumonoultramicroscopicsilicovolcanoconiosis " * 3,
    "long-digits": "9" * 40 + " " + "1234567" * 7,
    "long-spaces": " " * 33 + "x" + "\t" * 9 + "\n" * 5,
    "scripts": "Ελληνικά Русский עברית العربية हिन्दी ไทย ქართული Ꭰꮳ",
    "symbols": "∑∫√∞ ≠ ≤ ≥ → ← © ® ™ € £ ¥ § ¶ • … —",
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name"}},
            "required": ["location"],
        },
    },
}
TOOLS_INTRO = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
)


def render_chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The fixture's chat template (Qwen2.5's), by hand, with the generation prompt."""
    out = []
    first_system = messages[0]["role"] == "system"
    if tools:
        out.append("<|im_start|>system\n")
        out.append(messages[0]["content"] if first_system else "You are a helpful assistant.")
        out.append(TOOLS_INTRO)
        out.extend("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
        out.append(TOOLS_OUTRO)
    elif first_system:
        out.append("<|im_start|>system\n" + messages[0]["content"] + "<|im_end|>\n")
    else:
        out.append("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    for i, message in enumerate(messages):
        role = message["role"]
        plain = role == "user" or (role == "system" and i > 0)
        if plain or (role == "assistant" and not message.get("tool_calls")):
            out.append(f"<|im_start|>{role}\n{message['content']}<|im_end|>\n")
        elif role == "assistant":
            out.append("<|im_start|>assistant")
            if message.get("content"):
                out.append("\n" + message["content"])
            for call in message["tool_calls"]:
                arguments = json.dumps(call["arguments"], ensure_ascii=False)
                out.append(
                    f'\n<tool_call>\n{{"name": "{call["name"]}", "arguments": {arguments}}}'
                    "\n</tool_call>"
                )
            out.append("<|im_end|>\n")
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + message["content"] + "\n</tool_response>")
            if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
    out.append("<|im_start|>assistant\n")
    return "".join(out)


WEATHER_Q = {"role": "user", "content": "What is the weather like in Paris today?"}
WEATHER_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"name": "get_weather", "arguments": {"location": "Paris"}}],
}
WEATHER_RESULT = {"role": "tool", "content": '{"temperature": 18, "condition": "sunny"}'}
CHATS: dict[str, str] = {
    "chat-weather": render_chat([WEATHER_Q], [WEATHER_TOOL]),
    "chat-weather-result": render_chat([WEATHER_Q, WEATHER_CALL, WEATHER_RESULT], [WEATHER_TOOL]),
    "chat-hello": render_chat([{"role": "user", "content": "Hello!"}], None),
    "chat-hello-tools": render_chat([{"role": "user", "content": "Hello!"}], [WEATHER_TOOL]),
    "chat-capital": render_chat(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        None,
    ),
    "chat-answers": render_chat([WEATHER_Q], [WEATHER_TOOL])
    + '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'
    + "<|im_end|>\nIt is sunny and 18 degrees in Paris.<|im_end|>\n"
    + "Hello! How can I help you today?<|im_end|>The capital of France is Paris.<|im_end|>",
}
TEXTS = {**CORPUS, **CHATS}


def fuzz_texts(count: int, seed: int) -> list[str]:
    """Random mixes of the corpus's characters and fragments, reproducible."""
    rng = random.Random(seed)
    pieces = [*"".join(TEXTS.values()), " ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "<|im_end|>"]
    pieces += ["<tool_call>", "</tool_call>", "<|im_start|>", "123456", "\u00a0", "\x1c"]
    return ["".join(rng.choices(pieces, k=rng.randint(1, 60))) for _ in range(count)]


FUZZ = fuzz_texts(300, seed=1234)


# --- Reference tokenizers ----------------------------------------------------------


def hf() -> Any:
    return pytest.importorskip("tokenizers")


def load_pair(spec: dict[str, Any] | str) -> tuple[Tokenizer, Any]:
    """Ours and the library's, from the same tokenizer.json content."""
    text = spec if isinstance(spec, str) else json.dumps(spec)
    return Tokenizer.from_json(text), hf().Tokenizer.from_str(text)


@pytest.fixture(scope="module")
def fixture_text() -> str:
    if FIXTURE_JSON is None:
        pytest.skip("fixture tokenizer missing")
    return FIXTURE_JSON.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def qwen(fixture_text: str) -> Tokenizer:
    return Tokenizer.from_json(fixture_text)


@pytest.fixture(scope="module")
def qwen_ref(fixture_text: str) -> Any:
    return hf().Tokenizer.from_str(fixture_text)


IGNORE_MERGES_WORDS = ["Ġinternationalization", "Ġtokenizer", "Ġweather", "ĠParis"]


def train_llama3_style(ignore_merges: bool = True) -> str:
    """A tiny byte-level BPE trained by ``tokenizers`` with Llama 3's regex; a few
    whole words are put in the vocabulary without merges (what ignore_merges uses)."""
    tk = hf()
    model = tk.models.BPE(ignore_merges=ignore_merges)
    tok = tk.Tokenizer(model)
    tok.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [
            tk.pre_tokenizers.Split(tk.Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
            tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=700,
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    sources = sorted((HERE.parents[1] / "py_runtime").rglob("*.py"))
    training = [p.read_text(encoding="utf-8") for p in sources] + list(CORPUS.values()) * 3
    tok.train_from_iterator(training, trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for word in IGNORE_MERGES_WORDS:
        vocab.setdefault(word, len(vocab))
    tok = tk.Tokenizer.from_str(json.dumps(spec))
    added = tk.AddedToken
    tok.add_special_tokens(
        [
            added(t, special=True, normalized=False)
            for t in ["<|begin_of_text|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>"]
        ]
    )
    tok.add_tokens(
        [added(t, special=False, normalized=False) for t in ["<tool_call>", "</tool_call>"]]
    )
    return tok.to_str()


@pytest.fixture(scope="module")
def llama_json() -> str:
    return train_llama3_style()


@pytest.fixture(scope="module")
def llama_pair(llama_json: str) -> tuple[Tokenizer, Any]:
    return load_pair(llama_json)


def assert_same(ours: Tokenizer, ref: Any, text: str) -> list[int]:
    """Same ids, and same decoded text with and without special tokens."""
    ids = ours.encode(text)
    assert ids == ref.encode(text, add_special_tokens=False).ids, repr(text)
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(
            ids, skip_special_tokens=skip
        ), (repr(text), skip)
    return ids


# --- Parity: the fixture (Qwen2 style) ---------------------------------------------


@needs_fixture
@pytest.mark.parametrize("name", list(TEXTS))
def test_fixture_matches_tokenizers(qwen: Tokenizer, qwen_ref: Any, name: str) -> None:
    assert_same(qwen, qwen_ref, TEXTS[name])


@needs_fixture
def test_fixture_fuzz_matches_tokenizers(qwen: Tokenizer, qwen_ref: Any) -> None:
    for text in FUZZ:
        assert_same(qwen, qwen_ref, text)


PINNED = {  # ids from tokenizers 0.23.3, so these run without it
    "Hello world! It's 12345 apples.": [
        3330, 335, 317, 269, 1287, 0, 1647, 910, 220, 16, 17, 18, 19, 20, 1591, 274, 82, 13,
    ],
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n": [
        4092, 1920, 198, 3330, 335, 0, 4093, 198, 4092, 1952, 607, 925, 198,
    ],
    '<tool_call>\n{"name": "get_weather"}\n</tool_call>': [
        4094, 198, 90, 1, 373, 1657, 332, 397, 982, 68, 2380, 1, 2464, 4095,
    ],
    "café 😀": [716, 69, 127, 102, 220, 172, 253, 246, 222],
}  # fmt: skip


@needs_fixture
@pytest.mark.parametrize("text", list(PINNED))
def test_fixture_pinned_ids(qwen: Tokenizer, text: str) -> None:
    assert qwen.encode(text) == PINNED[text]
    assert qwen.decode(PINNED[text]) == text


@needs_fixture
def test_fixture_chat_prompt_uses_special_ids(qwen: Tokenizer) -> None:
    ids = qwen.encode(CHATS["chat-weather-result"])
    assert ids[0] == 4092 and ids.count(4092) == 5  # system, user, assistant, tool, prompt
    assert qwen.decode(ids[ids.index(4092, 1) :]).startswith("<|im_start|>user\nWhat is")
    assert {4093, 4094, 4095} <= set(ids)
    assert "<tool_call>" in qwen.decode(ids, skip_special_tokens=True)
    assert "<|im_start|>" not in qwen.decode(ids, skip_special_tokens=True)


@needs_fixture
def test_fixture_vocabulary_matches_tokenizers(qwen: Tokenizer, qwen_ref: Any) -> None:
    assert qwen.vocab_size == qwen_ref.get_vocab_size(with_added_tokens=True) == 4096
    for token_id in range(-1, qwen.vocab_size + 3):
        token = qwen_ref.id_to_token(token_id) if token_id >= 0 else None
        assert qwen.id_to_token(token_id) == token
        if token is not None:
            assert qwen.token_to_id(token) == qwen_ref.token_to_id(token) == token_id
    assert qwen.token_to_id("no such token") is None
    assert qwen.special_ids() == {4091, 4092, 4093}


def byte_token_ids(tokenizer: Tokenizer) -> dict[int, int]:
    """The id of the one-byte token of each byte (GPT-2's byte-to-character map)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    chars = {b: chr(b) for b in printable} | {b: chr(256 + i) for i, b in enumerate(others)}
    ids = {b: tokenizer.token_to_id(char) for b, char in chars.items()}
    return {b: i for b, i in ids.items() if i is not None}


def random_byte_ids(tokenizer: Tokenizer, count: int, seed: int) -> list[list[int]]:
    """Sequences of one-byte tokens, mostly non-ASCII: truncated and invalid UTF-8."""
    by_byte = byte_token_ids(tokenizer)
    assert len(by_byte) == 256
    pool = [by_byte[b] for b in [*range(0x80, 0x100), 0x41, 0x20, 0x0A]]
    rng = random.Random(seed)
    return [rng.choices(pool, k=rng.randint(1, 12)) for _ in range(count)]


@needs_fixture
def test_fixture_random_bytes_decode_like_tokenizers(qwen: Tokenizer, qwen_ref: Any) -> None:
    """Invalid UTF-8 is replaced exactly as Rust's from_utf8_lossy does."""
    for ids in random_byte_ids(qwen, 500, seed=7):
        assert qwen.decode(ids) == qwen_ref.decode(ids, skip_special_tokens=False)


# --- Parity: a Llama-3-style tokenizer trained by tokenizers -------------------------


@pytest.mark.parametrize("name", list(TEXTS))
def test_llama3_style_matches_tokenizers(llama_pair: tuple[Tokenizer, Any], name: str) -> None:
    assert_same(*llama_pair, TEXTS[name])


def test_llama3_style_fuzz_matches_tokenizers(llama_pair: tuple[Tokenizer, Any]) -> None:
    for text in FUZZ:
        assert_same(*llama_pair, text)


def test_llama3_style_ignore_merges(llama_json: str, llama_pair: tuple[Tokenizer, Any]) -> None:
    """A whole pre-token in the vocabulary is one token, though merges would split it."""
    ours, _ = llama_pair
    spec = json.loads(llama_json)
    assert spec["model"]["ignore_merges"] is True
    text = " internationalization tokenizer weather Paris"
    ids = assert_same(*llama_pair, text)
    assert ids == [ours.token_to_id(w) for w in IGNORE_MERGES_WORDS]
    spec["model"]["ignore_merges"] = False
    merged, merged_ref = load_pair(spec)
    assert len(assert_same(merged, merged_ref, text)) > len(ids)


def test_llama3_style_vocabulary(llama_pair: tuple[Tokenizer, Any]) -> None:
    ours, ref = llama_pair
    assert ours.vocab_size == ref.get_vocab_size(with_added_tokens=True)
    assert ours.special_ids() == {
        ref.token_to_id(t)
        for t in ["<|begin_of_text|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>"]
    }


# --- Parity: variants of the pipeline ------------------------------------------------


def _variant(llama_json: str, **changes: Any) -> dict[str, Any]:
    spec = json.loads(llama_json)
    for key, value in changes.items():
        spec[key] = value
    return spec


def byte_level(add_prefix_space: bool, use_regex: bool) -> dict[str, Any]:
    return {
        "type": "ByteLevel",
        "add_prefix_space": add_prefix_space,
        "use_regex": use_regex,
        "trim_offsets": False,
    }


def split(pattern: dict[str, str], behavior: str = "Isolated", invert: bool = False) -> dict:
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


def sequence(*pre_tokenizers: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": list(pre_tokenizers)}


VARIANTS: dict[str, dict[str, Any]] = {
    "gpt2-bytelevel": {"pre_tokenizer": byte_level(False, True)},
    "gpt2-bytelevel-prefix": {"pre_tokenizer": byte_level(True, True)},
    "qwen2-nfc": {
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}]},
        "pre_tokenizer": sequence(split({"Regex": QWEN2_REGEX}), byte_level(False, False)),
    },
    "nfkc-prefix-per-split": {
        "normalizer": {"type": "NFKC"},
        "pre_tokenizer": sequence(split({"Regex": LLAMA3_REGEX}), byte_level(True, False)),
    },
    "no-pre-tokenizer": {"pre_tokenizer": None},
}
for _behavior in ["Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]:
    for _invert in (False, True):
        VARIANTS[f"split-{_behavior}-{_invert}"] = {
            "pre_tokenizer": sequence(
                split({"String": " "}, _behavior, _invert),
                split({"Regex": r"\p{N}+|\s+"}, _behavior, _invert),
                byte_level(False, False),
            )
        }


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_variants_match_tokenizers(llama_json: str, variant: str) -> None:
    ours, ref = load_pair(_variant(llama_json, **VARIANTS[variant]))
    for text in [*TEXTS.values(), *FUZZ[:60]]:
        assert_same(ours, ref, text)


def test_merges_as_strings_match_pairs(llama_json: str) -> None:
    spec = json.loads(llama_json)
    assert isinstance(spec["model"]["merges"][0], list)
    pairs = Tokenizer.from_json(spec)
    spec["model"]["merges"] = [" ".join(pair) for pair in spec["model"]["merges"]]
    strings, ref = load_pair(spec)
    for text in TEXTS.values():
        assert strings.encode(text) == pairs.encode(text)
        assert_same(strings, ref, text)


ADDED_FLAGS: dict[str, dict[str, Any]] = {
    "lstrip": {"lstrip": True},
    "rstrip": {"rstrip": True},
    "both-strips": {"lstrip": True, "rstrip": True},
    "single-word": {"single_word": True},
    "normalized": {"normalized": True},
    "normalized-special": {"normalized": True, "special": True, "lstrip": True},
}
FLAG_TEXTS = [
    "a <mask> b",
    "a  <mask>  b\n",
    "<mask><mask> <mask>",
    "x<mask>y",
    "x <mask>y <mask>",
    "   <mask>",
    "<mask>\t\t",
    "日本<mask>語 ①<mask>",
    "ｍａｓｋ <ｍａｓｋ> <mask>",
    "<mask> a<|im_end|>  <mask>  <|im_start|>b",
    "<MASK> <mask",
]


@pytest.mark.parametrize("flags", list(ADDED_FLAGS))
def test_added_token_flags_match_tokenizers(llama_json: str, flags: str) -> None:
    spec = json.loads(llama_json)
    spec["normalizer"] = {"type": "NFKC"}
    next_id = max(t["id"] for t in spec["added_tokens"]) + 1
    token = dict.fromkeys(["single_word", "lstrip", "rstrip", "normalized", "special"], False)
    token |= {"id": next_id, "content": "<mask>"}
    token.update(ADDED_FLAGS[flags])
    spec["added_tokens"].append(token)
    ours, ref = load_pair(spec)
    for text in [*FLAG_TEXTS, *CORPUS.values()]:
        assert_same(ours, ref, text)


# --- The pre-tokenizer regex, character by character -------------------------------


@pytest.mark.parametrize("pattern", [QWEN2_REGEX, LLAMA3_REGEX], ids=["qwen2", "llama3"])
def test_regex_matches_oniguruma_on_every_character(pattern: str) -> None:
    """Every code point this Python's Unicode assigns, in several contexts."""
    tk = hf()
    ref = tk.pre_tokenizers.Split(tk.Regex(pattern), behavior="isolated")
    regex = compile_regex(pattern)
    code_points = [
        cp
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co") or cp % 4096 == 0xE000
    ]
    contexts = ["'{c}", "{c}{c}a", "1{c}2 ", "\n{c}\t", " {c}'s"]
    for start in range(0, len(code_points), 4000):
        text = "".join(
            contexts[i % len(contexts)].format(c=chr(cp))
            for i, cp in enumerate(code_points[start : start + 4000])
        )
        expected = [piece for piece, _ in ref.pre_tokenize_str(text)]
        assert [m.group() for m in regex.finditer(text)] == expected


def test_regex_translation_details() -> None:
    assert compile_regex(r"\s+").findall("a\x1c\x1d b\u3000\u2028c") == [" ", "\u3000\u2028"]
    assert compile_regex(r"\S+").findall("a\x1c b") == ["a\x1c", "b"]
    assert compile_regex(r"(?i:'s|'t)").findall("'S 'ſ 'T 'k") == ["'S", "'ſ", "'T"]
    assert compile_regex(r"\p{L}+").findall("abc1 déf ½ 中文 ǅx") == ["abc", "déf", "中文", "ǅx"]
    assert compile_regex(r"\p{N}+").findall("a12 ½ Ⅻ ٣ x²") == ["12", "½", "Ⅻ", "٣", "²"]
    assert compile_regex(r"[^\s\p{L}\p{N}]+").findall("a, b! 1?") == [",", "!", "?"]
    assert compile_regex(r"[\P{L}]+").findall("ab12 c") == ["12 "]
    assert compile_regex(r"\p{^N}+|\PN").findall("ab1") == ["ab"]
    assert compile_regex(r"\p{Lu}\p{Ll}+").findall("Hello World x") == ["Hello", "World"]
    assert compile_regex(r"\x{41}[\x{42}-]").findall("AB A- AC") == ["AB", "A-"]
    for unsupported in (r"\w+", r"\bx", r"[[:alpha:]]", r"[a-z&&[^x]]", r"\p{Han}"):
        with pytest.raises(ValueError):
            translate_regex(unsupported)


# --- Streaming ---------------------------------------------------------------------


STREAM_TEXTS = [
    TEXTS["emoji-zwj"],
    TEXTS["cjk"],
    TEXTS["mixed"],
    TEXTS["chat-weather-result"],
    "é€😀中" * 5 + "\U0010fffd\U0001f9d1\u200d\U0001f4bb",
]


@needs_fixture
@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("index", range(len(STREAM_TEXTS)))
def test_stream_decoder_joins_to_decode(qwen: Tokenizer, index: int, skip: bool) -> None:
    ids = qwen.encode(STREAM_TEXTS[index])
    full = qwen.decode(ids, skip_special_tokens=skip)
    stream = StreamDecoder(qwen, skip_special_tokens=skip)
    chunks = [stream.feed(token_id) for token_id in ids]
    chunks.append(stream.flush())
    assert "".join(chunks) == full
    if "\ufffd" not in full:
        assert not any("\ufffd" in chunk for chunk in chunks)


@needs_fixture
def test_stream_decoder_holds_back_split_characters(qwen: Tokenizer) -> None:
    ids = qwen.encode("😀")
    assert len(ids) > 1  # the tiny vocabulary splits the emoji into byte tokens
    stream = StreamDecoder(qwen)
    chunks = [stream.feed(token_id) for token_id in ids]
    assert chunks[:-1] == [""] * (len(ids) - 1) and chunks[-1] == "😀"
    assert stream.flush() == ""


@needs_fixture
def test_stream_decoder_invalid_bytes_like_decode(qwen: Tokenizer) -> None:
    """Random byte tokens (truncated and invalid sequences): the same replacements."""
    for ids in random_byte_ids(qwen, 1000, seed=11):
        stream = StreamDecoder(qwen)
        text = "".join(stream.feed(i) for i in ids) + stream.flush()
        assert text == qwen.decode(ids)


@needs_fixture
def test_stream_decoder_flush_replaces_incomplete(qwen: Tokenizer) -> None:
    ids = qwen.encode("a😀")[:-1]
    stream = StreamDecoder(qwen)
    assert "".join(stream.feed(i) for i in ids) == "a"
    assert stream.flush() == "\ufffd" == qwen.decode(ids)[1:]
    assert stream.feed(qwen.token_to_id("<|im_end|>") or 0) == "<|im_end|>"


# --- Other behaviour ----------------------------------------------------------------


@needs_fixture
def test_from_json_accepts_text_bytes_and_dict(fixture_text: str, qwen: Tokenizer) -> None:
    text = TEXTS["mixed"]
    for data in (fixture_text, fixture_text.encode(), json.loads(fixture_text)):
        assert Tokenizer.from_json(data).encode(text) == qwen.encode(text)


@needs_fixture
def test_lone_surrogates_encode_as_replacement(qwen: Tokenizer) -> None:
    assert qwen.encode("a\ud800b\udfff") == qwen.encode("a\ufffdb\ufffd")


@needs_fixture
def test_unknown_ids_are_skipped(qwen: Tokenizer) -> None:
    assert qwen.decode([39, 10**6, -5, 72]) == "Hi"
    stream = StreamDecoder(qwen)
    assert [stream.feed(i) for i in (39, 10**6, 72)] == ["H", "", "i"]


UNSUPPORTED = [
    ("normalizer", {"type": "Precompiled", "precompiled_charsmap": ""}, "normalizer: Precompiled"),
    ("normalizer", {"type": "BertNormalizer"}, "normalizer: BertNormalizer"),
    ("pre_tokenizer", {"type": "UnicodeScripts"}, "pre_tokenizer: UnicodeScripts"),
    ("pre_tokenizer", split({"String": " "}, "Sideways"), "Split behavior: Sideways"),
    ("decoder", {"type": "WordPiece", "prefix": "##"}, "decoder: WordPiece"),
    ("decoder", {"type": "CTC"}, "decoder: CTC"),
    ("model", {"type": "WordPiece", "vocab": {}}, "model: WordPiece"),
    ("model", {"type": "BPE", "vocab": {}, "merges": [], "dropout": 0.1}, "BPE option: dropout"),
    ("model", {"type": "Unigram", "vocab": []}, "empty vocabulary"),
    ("model", {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 3}, "unk_id 3"),
]


@pytest.mark.parametrize(("key", "value", "message"), UNSUPPORTED)
def test_unsupported_parts_are_rejected(key: str, value: dict[str, Any], message: str) -> None:
    """A TokenizerError (a ValueError) naming the part and the component, no KeyError."""
    base = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}
    Tokenizer.from_json(base)
    with pytest.raises(TokenizerError, match=rf"\({key}\): .*{message}"):
        Tokenizer.from_json({**base, key: value})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", r"\(top level\): a JSON object is expected, not list"),
        ({}, r"\(top level\): missing key 'model'"),
        ({"model": {"type": "BPE"}}, r"\(model\): missing key 'vocab'"),
        ({"model": "BPE"}, r"\(model\): 'str' object has no attribute 'get'"),
        ({"model": {"vocab": {"a": 0}, "merges": ["a b"]}}, "merge token not in the vocabulary"),
        ({"model": {"vocab": {"a": 0}, "merges": [["a"]]}}, "not a pair of tokens"),
        ({"model": {"vocab": {"a": 0}}, "added_tokens": [{"id": 5}]}, r"\(added_tokens\)"),
        ({"model": {"vocab": {}}, "normalizer": {"type": "Sequence"}}, r"\(normalizer\)"),
        ({"model": {"vocab": {}}, "pre_tokenizer": {"pattern": {}}}, r"\(pre_tokenizer\)"),
        (
            {"model": {"vocab": {}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}}},
            r"\(pre_tokenizer\): bad regex",
        ),
        ({"model": {"vocab": {}}, "decoder": ["ByteLevel"]}, r"\(decoder\)"),
    ],
)
def test_malformed_tokenizer_json_raises_tokenizer_error(spec: Any, message: str) -> None:
    with pytest.raises(TokenizerError, match=message) as caught:
        Tokenizer.from_json(spec)
    assert isinstance(caught.value, ValueError)
