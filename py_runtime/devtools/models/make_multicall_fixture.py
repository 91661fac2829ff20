"""Make ``tests/fixtures/tiny-qwen2-multicall``: a tiny Qwen2 that memorised a few
dialogues whose answers hold two or three tool calls (Hermes format, as Qwen2.5's
template renders them), a follow-up after tool results, and two plain answers.

Runs in the model tools' venv (torch CPU, transformers 4.57.6, optimum 2.1.0 +
optimum-onnx 0.1.0, accelerate, onnx, onnxruntime)::

    ~/.cache/prompt-api-models/venv/bin/python \\
        py_runtime/devtools/models/make_multicall_fixture.py OUT_DIR

- Architecture and tokenizer: those of ``tests/fixtures/tiny-qwen2-toolcall`` (its
  config.json shape; its tokenizer.json, tokenizer_config.json with the chat
  template, special_tokens_map.json copied as they are).
- Training: random init (seed 0); every sequence is the whole dialogue rendered by
  the bundled template (``apply_chat_template(..., tools=...)``), loss on the
  assistant turns only (their text and ``<|im_end|>``); full-batch AdamW until every
  assistant token is top-1 with a margin over the runner-up logit above ``MARGIN``.
- Export: Optimum ``text-generation-with-past`` to ``onnx/model.onnx`` (fp32, opset
  18, one file: the tied embedding is stored once), then a greedy check of every
  dialogue under onnxruntime.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEED = 0
LEARNING_RATE = 3e-3
MARGIN = 4.0
MAX_STEPS = 2000
SOURCE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "tiny-qwen2-toolcall"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
CURRENCIES = ["EUR", "USD", "CHF", "JPY", "GBP"]


def tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A tool as the runtime hands it to the template (``tool_declarations_to_hf``)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }


GET_TIME = tool(
    "get_time",
    "Get the current local time in a time zone",
    {"timezone": {"type": "string", "description": "IANA time zone name"}},
)
GET_WEATHER = tool(
    "get_weather",
    "Get the current weather for a location",
    {"location": {"type": "string", "description": "City name"}},
)
CONVERT_CURRENCY = tool(
    "convert_currency",
    "Convert an amount of money from one currency to another",
    {
        "amount": {"type": "number"},
        "from": {"type": "string", "enum": CURRENCIES},
        "to": {"type": "string", "enum": CURRENCIES},
    },
)
SEARCH = tool("search", "Search the web", {"query": {"type": "string"}})
ALL_TOOLS = [GET_TIME, GET_WEATHER, CONVERT_CURRENCY, SEARCH]


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message holding these calls, as ``messages_to_hf`` makes it."""
    tool_calls = [
        {"type": "function", "function": {"name": name, "arguments": arguments}, "id": f"call_{i}"}
        for i, (name, arguments) in enumerate(pairs, 1)
    ]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_result(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "content": content, "tool_call_id": call_id, "name": name}


#: (tools, messages); each assistant message is a training target (the first
#: dialogue's first answer is the two-call answer to its question).
DIALOGUES: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = [
    (
        [GET_TIME, GET_WEATHER],
        [
            user("What time is it in Tokyo, and how is the weather in Zürich?"),
            calls(
                ("get_time", {"timezone": "Asia/Tokyo"}), ("get_weather", {"location": "Zürich"})
            ),
            tool_result("call_1", "get_time", "21:04"),
            tool_result(
                "call_2",
                "get_weather",
                json.dumps({"temperature": 7, "condition": "cloudy"}, ensure_ascii=False),
            ),
            answer("It is 21:04 in Tokyo. In Zürich it is cloudy and 7 degrees."),
        ],
    ),
    (
        [GET_WEATHER, CONVERT_CURRENCY],
        [
            user("Convert 250 euros to Swiss francs and tell me the weather in Genève."),
            calls(
                ("convert_currency", {"amount": 250, "from": "EUR", "to": "CHF"}),
                ("get_weather", {"location": "Genève"}),
            ),
        ],
    ),
    (
        [GET_TIME, SEARCH],
        [
            user("Search for the Moomins and tell me the time in Helsinki."),
            calls(("search", {"query": "Moomins"}), ("get_time", {"timezone": "Europe/Helsinki"})),
        ],
    ),
    (
        [GET_WEATHER],
        [
            user("How is the weather in São Paulo and in Kraków?"),
            calls(
                ("get_weather", {"location": "São Paulo"}), ("get_weather", {"location": "Kraków"})
            ),
        ],
    ),
    (
        [GET_TIME, CONVERT_CURRENCY, SEARCH],
        [
            user(
                "How much is 99.5 dollars in yen, what time is it in New York, "
                "and what is the news about Reykjavík?"
            ),
            calls(
                ("convert_currency", {"amount": 99.5, "from": "USD", "to": "JPY"}),
                ("get_time", {"timezone": "America/New_York"}),
                ("search", {"query": "news Reykjavík"}),
            ),
        ],
    ),
    (
        ALL_TOOLS,
        [
            user("What time is it in London, and what is the weather in Oslo and in Malmö?"),
            calls(
                ("get_time", {"timezone": "Europe/London"}),
                ("get_weather", {"location": "Oslo"}),
                ("get_weather", {"location": "Malmö"}),
            ),
        ],
    ),
    ([GET_TIME, GET_WEATHER], [user("Hello!"), answer("Hello! How can I help you today?")]),
    (
        ALL_TOOLS,
        [user("Thank you, that is all."), answer("You are welcome. Have a nice day!")],
    ),
]


def log(message: str) -> None:
    print(f"[multicall] {message}", flush=True)


def training_examples(tokenizer: Any) -> list[tuple[list[int], list[bool]]]:
    """Per dialogue: its token ids (the template's rendering of all of it) and which
    positions are assistant tokens (targets). The prompt before each assistant turn
    must tokenize to a prefix of the whole, as the runtime tokenizes prompts."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    examples = []
    for tools, messages in DIALOGUES:
        text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        target = [False] * len(ids)
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            prompt = tokenizer.apply_chat_template(
                messages[:i], tools=tools, tokenize=False, add_generation_prompt=True
            )
            prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            assert ids[: len(prompt_ids)] == prompt_ids, f"prompt is not a prefix: {prompt!r}"
            stop = ids.index(end, len(prompt_ids))  # the turn's <|im_end|>, included
            for position in range(len(prompt_ids), stop + 1):
                target[position] = True
        examples.append((ids, target))
    return examples


def train(out: Path, tokenizer: Any) -> Any:
    import torch
    from transformers import AutoConfig, Qwen2ForCausalLM

    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # the same sums on any machine, and fast on a busy one
    torch.use_deterministic_algorithms(True)
    config = AutoConfig.from_pretrained(str(SOURCE))
    model = Qwen2ForCausalLM(config)
    log(f"{sum(p.numel() for p in model.parameters()):,} parameters")

    examples = training_examples(tokenizer)
    width = max(len(ids) for ids, _ in examples)
    pad = config.pad_token_id
    input_ids = torch.full((len(examples), width), pad, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    for row, (ids, target) in enumerate(examples):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        attention[row, : len(ids)] = 1
        for position in range(1, len(ids)):  # position predicts ids[position] from before it
            if target[position]:
                labels[row, position - 1] = ids[position]
    mask = labels != -100
    log(
        f"{len(examples)} sequences, {sum(map(len, (e[0] for e in examples)))} tokens, "
        f"{int(mask.sum())} targets, longest {width}"
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    started = time.perf_counter()
    model.train()
    for step in range(1, MAX_STEPS + 1):
        hidden = model.model(input_ids=input_ids, attention_mask=attention).last_hidden_state
        chosen = model.lm_head(hidden[mask])  # logits at the target positions only
        wanted = labels[mask]
        loss = torch.nn.functional.cross_entropy(chosen, wanted)
        with torch.no_grad():
            target_logit = chosen.gather(1, wanted[:, None])[:, 0]
            others = chosen.clone()
            others.scatter_(1, wanted[:, None], float("-inf"))
            margin = target_logit - others.max(dim=1).values
            accuracy = float((margin > 0).float().mean())
            least = float(margin.min())
        if step % 10 == 0 or least > MARGIN:
            log(
                f"step {step}: loss {loss.item():.4f}, accuracy {accuracy:.4f}, "
                f"least margin {least:.2f} ({time.perf_counter() - started:.0f} s)"
            )
        if least > MARGIN:
            break
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    else:
        raise SystemExit(f"no margin above {MARGIN} after {MAX_STEPS} steps")
    log(
        f"trained in {step} steps, {time.perf_counter() - started:.0f} s; least margin "
        f"{least:.2f}, median {float(margin.median()):.2f}"
    )
    model.eval()
    return model


def export(model: Any, work: Path, out: Path) -> None:
    from optimum.exporters.onnx import main_export

    hf = work / "hf"
    model.save_pretrained(hf)
    for name in TOKENIZER_FILES:
        shutil.copy(out / name, hf / name)
    exported = work / "onnx-export"
    main_export(str(hf), output=str(exported), task="text-generation-with-past", opset=18)
    (out / "onnx").mkdir(exist_ok=True)
    assert not (exported / "model.onnx_data").exists(), "expected one file at this size"
    shutil.copy(exported / "model.onnx", out / "onnx" / "model.onnx")
    for name in ("config.json", "generation_config.json"):
        shutil.copy(hf / name, out / name)
    generation = json.loads((out / "generation_config.json").read_text())
    generation["eos_token_id"] = [4093, 4091]  # <|im_end|>, <|endoftext|> as in the sibling
    generation.pop("_from_model_config", None)
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")


def check_onnx(out: Path, tokenizer: Any) -> None:
    """Greedy decoding of every assistant turn under onnxruntime (with the KV cache)
    gives the memorised text."""
    import numpy as np
    import onnxruntime

    session = onnxruntime.InferenceSession(str(out / "onnx" / "model.onnx"))
    config = json.loads((out / "config.json").read_text())
    layers, heads = config["num_hidden_layers"], config["num_key_value_heads"]
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    for tools, messages in DIALOGUES:
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            prompt = tokenizer.apply_chat_template(
                messages[:i], tools=tools, tokenize=False, add_generation_prompt=True
            )
            whole = tokenizer.apply_chat_template(messages[: i + 1], tools=tools, tokenize=False)
            expected = whole[len(prompt) :].split("<|im_end|>")[0]
            ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            past = {
                f"past_key_values.{layer}.{kind}": np.zeros((1, heads, 0, head_dim), np.float32)
                for layer in range(layers)
                for kind in ("key", "value")
            }
            new, total, produced = ids, 0, []
            for _ in range(200):
                total += len(new)
                feeds = {
                    "input_ids": np.array([new], np.int64),
                    "attention_mask": np.ones((1, total), np.int64),
                    "position_ids": np.arange(total - len(new), total, dtype=np.int64)[None],
                    **past,
                }
                outputs = session.run(None, feeds)
                token = int(outputs[0][0, -1].argmax())
                past = {
                    name.replace("present", "past_key_values"): value
                    for name, value in zip(
                        (o.name for o in session.get_outputs()[1:]), outputs[1:], strict=True
                    )
                }
                if token == end:
                    break
                produced.append(token)
                new = [token]
            got = tokenizer.decode(produced)
            assert got == expected, f"onnxruntime answered {got!r}, not {expected!r}"
            log(f"onnxruntime: {got!r}")


def main() -> int:
    from transformers import AutoTokenizer

    out = Path(sys.argv[1])
    started = time.perf_counter()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        shutil.copy(SOURCE / name, partial / name)
    tokenizer = AutoTokenizer.from_pretrained(str(partial))
    model = train(partial, tokenizer)
    with tempfile.TemporaryDirectory() as tmp:
        export(model, Path(tmp), partial)
    check_onnx(partial, tokenizer)
    if out.exists():
        keep = out / "README.md"  # written by hand, kept across rebuilds
        if keep.exists():
            shutil.copy(keep, partial / "README.md")
        shutil.rmtree(out)
    partial.rename(out)
    size = (out / "onnx" / "model.onnx").stat().st_size
    log(f"made {out} in {time.perf_counter() - started:.0f} s (onnx/model.onnx {size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
