"""The dtype table of a prepared model: quality against fp32, speed in the page, size.

``python -m py_runtime models evaluate smollm2 [--dtypes fp32 q8 q4 int8]``:

- agreement: fp32 answers PROMPTS greedily (through the engine, under CPython); each
  dtype then reads those same token sequences (teacher forcing, one forward pass
  under onnxruntime) and we count how often its top token is fp32's, and the mean
  KL divergence of its next-token distribution from fp32's;
- in headless Chromium (wasm, every core of this machine), a fresh browser per dtype:
  the load time (navigation to ``create()`` resolved, the model file served from
  localhost), prefill and decode tokens/s (``promptAPIRuntime.benchmark()``), and the
  page's peak memory (the renderer's high-water mark) over all of it;
- the page's greedy answer to the first prompt, and the file's size.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np

from ...engine.vocabulary import Dtype, Sampling, model_file
from ...hosts.cpython import local_model

PROMPTS = (
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain what a neural network is in two sentences.",
    "Give me three tips for learning a new language.",
)
MAX_ANSWER = 64
#: The page's greedy answer, streamed and cut after 60 characters (the table shows no
#: more; a model with random weights never stops on its own).
ANSWER_JS = """async (text) => {
  const session = await LanguageModel.create({samplingMode: 'most-predictable'});
  const reader = session.promptStreaming(text).getReader();
  let answer = '';
  while (answer.length < 60) {
    const { done, value } = await reader.read();
    if (done) break;
    answer += value;
  }
  reader.cancel();
  return answer;
}"""
_GREEDY = Sampling(top_k=1)


async def _greedy_answers(folder: Path) -> list[tuple[list[int], int]]:
    """(token ids of prompt + fp32's greedy answer, the prompt's length) per prompt."""
    from ...engine.messages import user_text

    model = local_model(folder, "fp32")
    await model.load(lambda _: None, lambda: False)
    assert model.backend is not None
    sequences = []
    for prompt in PROMPTS:
        ids = model.encode(model.render([user_text(prompt)], (), True))
        start = len(ids)
        cache = model.backend.new_cache()
        await model.backend.forward(cache, ids)
        for _ in range(MAX_ANSWER):
            token = await model.backend.next_token(cache, _GREEDY)
            if token in model.eos_ids:
                break
            ids = [*ids, token]
            await model.backend.forward(cache, [token])
        model.backend.release(cache)
        sequences.append((list(ids), start))
    return sequences


def _logits(path: Path, ids: list[int]) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    # The KV heads and head size from config.json: the model builder's graphs leave the
    # head size symbolic.
    config = json.loads((path.parents[1] / "config.json").read_text())
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    kv_heads = config.get("num_key_value_heads", heads)
    offered: dict[str, Any] = {
        "input_ids": np.array([ids], dtype=np.int64),
        "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        "position_ids": np.arange(len(ids), dtype=np.int64)[None, :],
    }
    feeds: dict[str, Any] = {}
    for spec in session.get_inputs():
        if spec.name.startswith("past_key_values."):
            feeds[spec.name] = np.zeros((1, kv_heads, 0, head_dim), dtype=np.float32)
        elif spec.name == "num_logits_to_keep":  # every position's logits
            feeds[spec.name] = np.array([len(ids)] if spec.shape else len(ids), dtype=np.int64)
        elif spec.name in offered:
            feeds[spec.name] = offered[spec.name]
    logits: np.ndarray = session.run(["logits"], feeds)[0][0]
    return logits


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)
    result: np.ndarray = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return result


def agreement(folder: Path, dtypes: list[Dtype]) -> dict[str, tuple[float, float]]:
    """dtype -> (top-1 agreement with fp32, mean KL(fp32 || dtype))."""
    sequences = asyncio.run(_greedy_answers(folder))
    reference = [_logits(folder / model_file("fp32"), ids)[n - 1 : -1] for ids, n in sequences]
    result = {}
    for dtype in dtypes:
        same = total = 0
        kls = []
        for (ids, n), ref in zip(sequences, reference, strict=True):
            got = _logits(folder / model_file(dtype), ids)[n - 1 : -1]
            same += int((got.argmax(-1) == ref.argmax(-1)).sum())
            total += len(ref)
            p, q = _log_softmax(ref), _log_softmax(got)
            kls.append(float((np.exp(p) * (p - q)).sum(-1).mean()))
        result[dtype] = (same / total, float(np.mean(kls)))
    return result


def page_speed(folder: Path, dtypes: list[Dtype], dist: Path) -> dict[str, dict[str, Any]]:
    """dtype -> load time, promptAPIRuntime.benchmark() numbers, the greedy answer and
    the page's peak memory, in the page."""
    import json

    from playwright.sync_api import sync_playwright

    from ..bench.pages import launch, mounts, page_path
    from ..memory import page_peak_mib
    from ..server import StaticServer

    results = {}
    with StaticServer(mounts(dist, folder)) as server, sync_playwright() as playwright:
        for dtype in dtypes:
            browser, pid = launch(playwright)
            page = browser.new_page()
            query = {"data-model": "/_model/", "data-dtype": dtype}
            try:
                with page.expect_console_message(
                    lambda m: m.text.startswith("coldstart "), timeout=600_000
                ) as message:
                    page.goto(f"{server.url}{page_path('ours-cold.html', query)}")
                    page.click("#go")
                speed = page.evaluate(
                    "() => promptAPIRuntime.benchmark({promptTokens: 128, decodeTokens: 64})"
                )
                times = json.loads(message.value.text.removeprefix("coldstart "))
                speed["loadMs"] = times["ready"]
                speed["answer"] = page.evaluate(ANSWER_JS, PROMPTS[0])
            except Exception as error:  # noqa: BLE001 - e.g. a file too large for wasm
                speed = {"failed": str(error).splitlines()[0][:120]}
            speed["peakMiB"] = page_peak_mib(pid) if pid else None
            results[dtype] = speed
            browser.close()
    return results


def evaluate(folder: Path, dtypes: list[Dtype], dist: Path) -> None:
    quality = agreement(folder, [d for d in dtypes if d != "fp32"])
    speed = page_speed(folder, dtypes, dist)
    print(
        "| dtype | file | agreement with fp32 | KL | prefill tok/s | decode tok/s "
        "| load | page peak | answer |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for dtype in dtypes:
        path = folder / model_file(dtype)
        data = path.with_name(path.name + "_data")
        size = (path.stat().st_size + (data.stat().st_size if data.exists() else 0)) / 1e6
        agree, kl = quality.get(dtype, (1.0, 0.0))
        s = speed[dtype]
        peak = f"{s['peakMiB']:,.0f} MiB" if s["peakMiB"] else "-"
        if "failed" in s:
            print(
                f"| {dtype} | {size:.0f} MB | {agree:.1%} | {kl:.3f} | - | - | - | {peak} "
                f"| failed in the page: {s['failed']} |"
            )
            continue
        print(
            f"| {dtype} | {size:.0f} MB | {agree:.1%} | {kl:.3f} | "
            f"{s['prefillTokensPerSecond']:.0f} | {s['decodeTokensPerSecond']:.1f} | "
            f"{s['loadMs'] / 1000:.1f} s | {peak} | {s['answer'][:60]!r} |"
        )
