"""How faithful a dtype's file is to float32, under native onnxruntime: fp32's greedy
continuation of varied chat prompts is fed, token by token after the prompt (as
generation runs), to each file; per position, whether its top token is fp32's, and the
KL divergence of its next-token distribution from fp32's. Also the file's size, its
session creation and a decode step.

    python3 bench/dtype_agreement.py [--model smollm2|DIR] [--tokens 64] FILE... [--threads 2]

FILE: a path, or a dtype (fp32, q8, q4, int8) of the model's folder. Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.engine.vocabulary import model_file  # noqa: E402
from py_runtime.hosts.onnxruntime_backend import OnnxRuntimeBackend  # noqa: E402

PROMPTS = [
    "What is the capital of France?",
    "Write a short poem about the sea.",
    "Explain how a bicycle works.",
    "Give me three tips for learning to cook.",
    "What is 17 times 23?",
    "Translate 'good morning' into Spanish and German.",
    "Summarize the plot of Romeo and Juliet in two sentences.",
    "List the planets of the solar system.",
    "Write an e-mail asking my landlord to fix the heating.",
    "Why is the sky blue?",
    "Describe your ideal weekend.",
    "How do I make a cup of tea?",
    "Tell me a story about a dragon who is afraid of the dark.",
    "What are the pros and cons of working from home?",
    "Write a haiku about autumn.",
    "How does a computer store numbers?",
]
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chat(tokenizer: object, question: str) -> list[int]:
    """SmolLM2's chat template (ChatML with its default system turn), encoded."""
    text = (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    return list(tokenizer.encode(text).ids)  # type: ignore[attr-defined]


def log_softmax(row: np.ndarray) -> np.ndarray:
    shifted = row.astype(np.float64) - row.max()
    return shifted - np.log(np.exp(shifted).sum())


def rows(
    backend: OnnxRuntimeBackend, prompt: list[int], continuation: list[int]
) -> list[np.ndarray]:
    """The logits after the prompt and after each token of the continuation but the last."""
    cache = backend.new_cache()
    state = backend._caches[cache]
    out = [backend._run(state, prompt, 1)[-1]]
    for token in continuation[:-1]:
        out.append(backend._run(state, [token], 1)[-1])
    backend.release(cache)
    return out


def main() -> int:
    from tokenizers import Tokenizer

    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    folder = Path(models.resolve(args.model) or args.model)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    stop = tokenizer.token_to_id("<|im_end|>")

    def path(name: str) -> Path:
        return Path(name) if "/" in name or name.endswith(".onnx") else folder / model_file(name)  # type: ignore[arg-type]

    # A graph that leaves its KV shape symbolic (onnxruntime-genai's) reads it from here.
    config = json.loads((folder / "config.json").read_text())
    reference = OnnxRuntimeBackend(folder / model_file("fp32"), threads=args.threads, config=config)
    prompts = [chat(tokenizer, q) for q in PROMPTS]
    continuations: list[list[int]] = []
    reference_rows: list[list[np.ndarray]] = []
    for prompt in prompts:
        cache = reference.new_cache()
        state = reference._caches[cache]
        logits = [reference._run(state, prompt, 1)[-1]]
        tokens: list[int] = []
        while len(tokens) < args.tokens:
            token = int(logits[-1].argmax())
            tokens.append(token)
            if token == stop:
                break
            logits.append(reference._run(state, [token], 1)[-1])
        reference.release(cache)
        continuations.append(tokens)
        reference_rows.append(logits[: len(tokens)])
    positions = sum(len(c) for c in continuations)
    print(f"{len(PROMPTS)} prompts, {positions} positions of fp32's greedy continuations\n")
    print("| file | MB | top-1 agreement | mean KL | create s | decode step ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in args.files:
        file = path(name)
        size = file.stat().st_size + sum(
            p.stat().st_size
            for p in [file.with_name(file.name + "_data"), file.with_name(file.name + ".data")]
            if p.is_file()
        )
        started = time.perf_counter()
        backend = OnnxRuntimeBackend(file, threads=args.threads, config=config)
        create = time.perf_counter() - started
        agree, kls, steps = 0, [], []
        for prompt, tokens, expected in zip(prompts, continuations, reference_rows, strict=True):
            before = backend.run_ms
            got = rows(backend, prompt, tokens)
            steps.append((backend.run_ms - before) / len(got))
            for mine, theirs in zip(got, expected, strict=True):
                agree += int(mine.argmax() == theirs.argmax())
                p, q = log_softmax(theirs), log_softmax(mine)
                kls.append(float((np.exp(p) * (p - q)).sum()))
        print(
            f"| {name} | {size / 1e6:.1f} | {100 * agree / positions:.1f} % | "
            f"{statistics.fmean(kls):.4f} | {create:.2f} | {statistics.median(steps):.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
