"""Constrained-decoding libraries side by side: XGrammar and llguidance under CPython,
and XGrammar's web build (``@mlc-ai/web-xgrammar``) in headless Chromium.

For a tokenizer (SmolLM2's 49k vocabulary; the 0.5B-size model's 152k) and a set of
JSON schemas and regular expressions: the tokenizer's one-time preparation, each
grammar's compile time, and the per-token cost of computing the mask of allowed
tokens and advancing the matcher along a valid answer (median over the tokens of that
answer). ``--web`` runs the page (bench/pages/grammar.html; the product's Python env
suffices). The CPython libraries run in the model tools' venv, which has torch (XGrammar
needs it; installed there, never in the product's environment):

    ~/.cache/prompt-api-models/venv/bin/pip install --no-deps xgrammar==0.2.9 apache-tvm-ffi
    ~/.cache/prompt-api-models/venv/bin/pip install pydantic llguidance==1.9.1
    ~/.cache/prompt-api-models/venv/bin/python bench/grammar_libs.py TOKENIZER_JSON...
    python3 bench/grammar_libs.py --web TOKENIZER_JSON...
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

SCHEMAS: list[tuple[dict[str, Any], Any]] = [
    (
        {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
        {"location": "Paris"},
    ),
    ({"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 5}, [1, 2, 3]),
    (
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 20},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                "address": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                    },
                    "required": ["city", "zip"],
                },
            },
            "required": ["name", "age", "tags", "address"],
            "additionalProperties": False,
        },
        {
            "name": "Ada",
            "age": 36,
            "tags": ["a", "c"],
            "address": {"city": "London", "zip": "12345"},
        },
    ),
]
REGEXES = [
    (r"\d{4}-\d{2}-\d{2}", "2026-12-01"),
    (r"(red|green|blue)", "green"),
    (r"[a-z]+@[a-z]+\.(com|org)", "ada@example.org"),
]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def xgrammar_run(tokenizer_json: str) -> dict[str, Any]:
    import xgrammar as xgr  # its bitmasks are torch tensors
    from transformers import PreTrainedTokenizerFast

    started = time.perf_counter()
    info = xgr.TokenizerInfo.from_huggingface(
        PreTrainedTokenizerFast(tokenizer_file=tokenizer_json)
    )
    compiler = xgr.GrammarCompiler(info, max_threads=2)
    prepare = time.perf_counter() - started
    rows = []
    for case in cases(tokenizer_json):
        started = time.perf_counter()
        if case["kind"] == "schema":
            compiled = compiler.compile_json_schema(
                case["source"], any_whitespace=False, separators=(",", ":")
            )
        else:
            compiled = compiler.compile_regex(case["source"])
        compile_s = time.perf_counter() - started
        matcher = xgr.GrammarMatcher(compiled)
        bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
        steps, ok = [], True
        for token in case["ids"]:
            started = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            ok = matcher.accept_token(token)
            steps.append(time.perf_counter() - started)
            if not ok:
                break
        rows.append((case["kind"], compile_s * 1000, median_ms(steps), len(case["ids"]), ok))
    return {"prepare_ms": prepare * 1000, "rows": rows, "vocab": info.vocab_size}


def llguidance_run(tokenizer_json: str) -> dict[str, Any]:
    import llguidance
    import llguidance.hf
    from transformers import PreTrainedTokenizerFast

    started = time.perf_counter()
    tokenizer = llguidance.hf.from_tokenizer(PreTrainedTokenizerFast(tokenizer_file=tokenizer_json))
    prepare = time.perf_counter() - started
    rows = []
    for case in cases(tokenizer_json):
        if case["kind"] == "schema":
            grammar = llguidance.LLMatcher.grammar_from_json_schema(case["source"])
        else:
            grammar = llguidance.LLMatcher.grammar_from_regex(case["source"])
        started = time.perf_counter()
        matcher = llguidance.LLMatcher(tokenizer, grammar)
        compile_s = time.perf_counter() - started
        steps, ok = [], True
        for token in case["ids"]:
            started = time.perf_counter()
            matcher.compute_bitmask()
            ok = matcher.consume_token(token)
            steps.append(time.perf_counter() - started)
            if not ok:
                break
        rows.append((case["kind"], compile_s * 1000, median_ms(steps), len(case["ids"]), ok))
    return {"prepare_ms": prepare * 1000, "rows": rows, "vocab": tokenizer.vocab_size}


def cases(tokenizer_json: str) -> list[dict[str, Any]]:
    """Every schema and regex with a valid answer's token ids (compact JSON)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_json)

    def ids(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)

    rows = [
        {
            "kind": "schema",
            "source": json.dumps(s),
            "ids": ids(json.dumps(v, separators=(",", ":"))),
        }
        for s, v in SCHEMAS
    ]
    rows += [{"kind": "regex", "source": r, "ids": ids(text)} for r, text in REGEXES]
    return rows


def web_run(tokenizer_json: str) -> dict[str, Any]:
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from py_runtime.devtools.browser import launch_args
    from py_runtime.devtools.server import StaticServer

    root = Path(__file__).resolve().parents[1]
    spec = json.loads(Path(tokenizer_json).read_text())
    vocab = [""] * (max(spec["model"]["vocab"].values()) + 1)
    for token, index in spec["model"]["vocab"].items():
        vocab[index] = token
    for added in spec["added_tokens"]:
        vocab[added["id"]] = added["content"]
    mounts = {
        "/": root / "bench" / "pages",
        "/xgrammar/": root / "node_modules" / "@mlc-ai" / "web-xgrammar" / "lib",
    }
    with StaticServer(mounts) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        page = browser.new_page()
        page.goto(f"{server.url}/grammar.html")
        out = page.evaluate("([v, c]) => measure(v, c)", [vocab, cases(tokenizer_json)])
        browser.close()
    rows = [
        (r["kind"], r["compileMs"], r["stepMs"], r["tokens"], r["accepted"]) for r in out["rows"]
    ]
    return {"prepare_ms": out["prepareMs"], "rows": rows, "vocab": len(vocab)}


def main() -> int:
    web = "--web" in sys.argv
    runs = (
        [("web-xgrammar 0.1.27 (Chromium)", web_run)]
        if web
        else [
            ("xgrammar 0.2.9", xgrammar_run),
            ("llguidance 1.9.1", llguidance_run),
        ]
    )
    for path in (a for a in sys.argv[1:] if a != "--web"):
        for name, run in runs:
            try:
                result = run(path)
            except Exception as error:  # report and go on: this is a measurement
                print(f"{name} on {path}: failed: {type(error).__name__}: {error}")
                continue
            print(
                f"{name} on {path} (vocabulary {result['vocab']}): tokenizer preparation "
                f"{result['prepare_ms']:.0f} ms"
            )
            for kind, compile_ms, step_ms, tokens, ok in result["rows"]:
                print(
                    f"  {kind:6} compile {compile_ms:8.1f} ms   mask+advance "
                    f"{step_ms:6.3f} ms/token   ({tokens} tokens, accepted: {ok})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
