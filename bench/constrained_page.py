"""Constrained decoding in headless Chromium: the product's OrtBackend (ONNX Runtime
Web, wasm, 2 threads) with XGrammar's web build, in a module worker, per model:

1. Compile time per grammar (``backend.constrain()``; ``compileMs`` deltas): the first
   use (XGrammar's start and the vocabulary's preparation) apart, then each grammar
   cold and again from the compiled-grammar cache.
2. Greedy decoding under a grammar: per token, the mask (``maskMs`` delta of
   ``nextToken``: bitmask, applying it, advancing the matcher) against the forward
   (``runMs`` delta) and the whole step; an unconstrained decode is the baseline.
3. Jump-forward: on a schema with long keys and enums, ``forced()`` at each step: how
   many steps had forced text, its length, and how many sampled tokens lay inside it
   (steps jump-forward could skip; the forced text is not re-tokenized here).

    python3 bench/constrained_page.py [--model smollm2|random|both] [--runs N]
        [--steps 40] [--threads 2] [--verbose]

Needs dist/ (python3 build/build.py) and the models in ~/.cache. Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools.bench.pages import worker_modules_server  # noqa: E402
from py_runtime.devtools.browser import launch_args  # noqa: E402
from py_runtime.engine.constraints import response_grammar  # noqa: E402
from py_runtime.engine.grammar import Grammar  # noqa: E402
from py_runtime.hosts.xgrammar_ebnf import ebnf, to_xgrammar  # noqa: E402
from py_runtime.tool_calls.grammar import tool_call_grammar  # noqa: E402

MODELS: dict[str, dict[str, Any]] = {
    "smollm2": {
        "label": "SmolLM2-135M-Instruct (fp32)",
        "dir": Path.home() / ".cache/prompt-api-models/smollm2",
        "file": "onnx/model.onnx",
        "dtype": "fp32",
    },
    "random": {
        "label": "0.5B-size random weights (q8)",
        "dir": Path.home() / ".cache/prompt-api-bench/qwen2.5-0.5b-random",
        "file": "onnx/model_quantized.onnx",
        "dtype": "q8",
    },
}

SYSTEM = "Answer briefly, in the format asked."
USER = (
    "List ten large cities in Europe with their countries as a JSON array of strings, "
    "then look up the weather in Paris with the get_weather tool."
)

TOOL_BEGIN = '<tool_call>\n{"name": "get_weather", "arguments": '
#: The grammars as the page's backend takes them (py_runtime/hosts/xgrammar_ebnf.py).
TOOL_CALLS = to_xgrammar(
    tool_call_grammar(
        "hermes",
        {
            "get_weather": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            }
        },
    )
    or Grammar("regex", "")
)


def schema(value: dict[str, Any]) -> dict[str, Any]:
    return to_xgrammar(response_grammar({"kind": "json-schema", "json": json.dumps(value)}))


def regex(source: str) -> dict[str, Any]:
    return {"kind": "ebnf", "source": ebnf(source)}


FLAT = schema(
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 30},
            "country": {"type": "string", "maxLength": 30},
            "population": {"type": "integer", "minimum": 0},
        },
        "required": ["city", "country", "population"],
        "additionalProperties": False,
    }
)
NESTED = schema(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "tags": {
                "type": "array",
                "items": {"enum": ["travel", "food", "work", "family"]},
                "maxItems": 4,
            },
            "address": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 30},
                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                    "kind": {"enum": ["home", "office"]},
                },
                "required": ["city", "zip", "kind"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "age", "tags", "address"],
        "additionalProperties": False,
    }
)
FLAT_UNBOUNDED = schema(
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"type": "string"},
            "population": {"type": "integer"},
        },
        "required": ["city", "country", "population"],
        "additionalProperties": False,
    }
)
ENUM_ARRAY = schema(
    {"type": "array", "items": {"type": "integer", "enum": [1, 2, 3, 5, 8, 13]}, "maxItems": 8}
)
STRINGS = schema(
    {"type": "array", "items": {"type": "string", "maxLength": 30}, "minItems": 8, "maxItems": 12}
)
LONG_KEYS = schema(
    {
        "type": "object",
        "properties": {
            "customer_full_legal_name_text": {"type": "string", "maxLength": 20},
            "preferred_contact_method_choice": {
                "enum": ["electronic_mail_message", "telephone_voice_call"]
            },
            "account_creation_calendar_year": {"type": "integer", "minimum": 1900, "maximum": 2100},
            "subscription_service_tier_level": {
                "enum": ["platinum_premium_unlimited", "basic_starter_limited"]
            },
        },
        "required": [
            "customer_full_legal_name_text",
            "preferred_contact_method_choice",
            "account_creation_calendar_year",
            "subscription_service_tier_level",
        ],
        "additionalProperties": False,
    }
)

GRAMMARS: list[tuple[str, dict[str, Any]]] = [
    ("schema: flat object", FLAT),
    ("schema: flat object, no bounds", FLAT_UNBOUNDED),
    ("schema: nested, arrays, enums", NESTED),
    ("schema: integer array, enum items", ENUM_ARRAY),
    ("regex: date", regex("[0-9]{4}-[0-9]{2}-[0-9]{2}")),
    ("regex: email", regex(r"[a-z0-9._]{1,20}@[a-z0-9]{1,20}\.(com|org|net)")),
    ("regex: alternation", regex("(yes|no|maybe|it depends)")),
    ("tool-calls", TOOL_CALLS),
    ("schema: string array (decode)", STRINGS),
    ("schema: long keys (jump-forward)", LONG_KEYS),
]
TRIVIAL = [regex("(a|b)"), regex("(c|d)")]


class Tokenizer:
    """The `tokenizers` library for plain text; the added tokens by tokenizer.json's
    ids (the library renumbers ones outside the model's vocabulary)."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer as HFTokenizer

        self.spec = json.loads(path.read_text())
        self.library = HFTokenizer.from_file(str(path))
        self.added = {t["content"]: t["id"] for t in self.spec["added_tokens"]}
        self.by_id = {i: t for t, i in self.spec["model"]["vocab"].items()}
        self.by_id.update({i: t for t, i in self.added.items()})
        self.split = re.compile("(" + "|".join(map(re.escape, self.added)) + ")")

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for part in self.split.split(text):
            if part in self.added:
                ids.append(self.added[part])
            elif part:
                ids += self.library.encode(part, add_special_tokens=False).ids
        return ids

    def piece(self, token: int) -> str:
        """One token's text (byte-level pieces decoded; partial UTF-8 as U+FFFD)."""
        token_text = self.by_id.get(token, "")
        if token_text in self.added:
            return token_text
        return self.library.decoder.decode([token_text]) if self.library.decoder else token_text

    def decode(self, ids: list[int]) -> str:
        return "".join(self.piece(t) for t in ids)


def job_for(model: dict[str, Any], steps: int, threads: int) -> tuple[dict[str, Any], Tokenizer]:
    folder: Path = model["dir"]
    config = json.loads((folder / "config.json").read_text())
    heads = int(config["num_attention_heads"])
    eos = json.loads((folder / "generation_config.json").read_text())["eos_token_id"]
    tokenizer = Tokenizer(folder / "tokenizer.json")
    prompt = (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{USER}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    grammars = dict(GRAMMARS)
    return {
        "file": model["file"],
        "dtype": model["dtype"],
        "threads": threads,
        "kvHeads": int(config.get("num_key_value_heads", heads)),
        "headDim": int(config.get("head_dim") or config["hidden_size"] // heads),
        "tokenizerJSON": (folder / "tokenizer.json").read_text(),
        "stopIds": eos if isinstance(eos, list) else [eos],
        "promptIds": tokenizer.encode(prompt),
        "trivial": TRIVIAL,
        "grammars": [{"name": n, "grammar": g} for n, g in GRAMMARS],
        "steps": steps,
        "decode": [
            {"name": "string array", "grammar": STRINGS, "prefix": []},
            {
                "name": "nested object",
                "grammar": grammars["schema: nested, arrays, enums"],
                "prefix": [],
            },
            {"name": "tool-calls (free text)", "grammar": TOOL_CALLS, "prefix": []},
            {
                "name": "tool-calls (in the tag)",
                "grammar": TOOL_CALLS,
                "prefix": tokenizer.encode(TOOL_BEGIN),
            },
        ],
        "jump": {"name": "long keys", "grammar": LONG_KEYS, "steps": 200},
    }, tokenizer


def run_page(model: dict[str, Any], job: dict[str, Any], verbose: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with worker_modules_server(model["dir"]) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        try:
            page = browser.new_page()
            if verbose:
                page.on("console", lambda m: print(f"  [page] {m.text}", file=sys.stderr))
            page.goto(f"{server.url}/constrained.html")
            return page.evaluate("(job) => measure(job)", job)
        finally:
            browser.close()


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p90(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def report(name: str, result: dict[str, Any], job: dict[str, Any], tokenizer: Tokenizer) -> None:
    label = MODELS[name]["label"]
    print(
        f"\n### {label}: load {result['loadMs'] / 1000:.1f} s, prefill of "
        f"{len(job['promptIds'])} tokens {result['prefillMs']:.0f} ms, cross-origin "
        f"isolated: {result['crossOriginIsolated']}\n"
    )
    first, trivial = result["firstUse"], result["trivial"]
    print(
        f"First constrain() (XGrammar start + vocabulary preparation + a trivial regex): "
        f"{first['wallMs']:.0f} ms (compileMs {first['compileMs']:.0f}); a second trivial "
        f"regex: {trivial['wallMs']:.1f} ms.\n"
    )
    print("| grammar | compile, cold (ms) | compileMs delta | again, cached (ms) |")
    print("|---|---:|---:|---:|")
    for row in result["compile"]:
        cold, cached = row["cold"], row["cached"]
        print(
            f"| {row['name']} | {cold['wallMs']:.1f} | {cold['compileMs']:.1f} | "
            f"{cached['wallMs']:.2f} |"
        )
    base = next(r for r in result["decode"] if r["name"] == "unconstrained")
    base_step = median(base["stepMs"])
    print(
        "\n| decode (greedy) | tokens | end | mask ms/token median | p90 | max | "
        "forward ms median | step ms median | p90 | mask % of step | mask % of "
        "unconstrained step | mask, sum / sum of steps |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in result["decode"]:
        mask = row["maskMs"] if row["name"] != "unconstrained" else row["nextMs"]
        step = median(row["stepMs"])
        print(
            f"| {row['name']}{' (argmax ms)' if row['name'] == 'unconstrained' else ''} | "
            f"{len(row['ids'])} | {row['end']} | {median(mask):.2f} | {p90(mask):.2f} | "
            f"{max(mask, default=float('nan')):.2f} | {median(row['runMs']):.1f} | "
            f"{step:.1f} | {p90(row['stepMs']):.1f} | {100 * median(mask) / step:.1f} % | "
            f"{100 * median(mask) / base_step:.1f} % | "
            f"{100 * sum(mask) / sum(row['stepMs']):.1f} % |"
        )
    print()
    for row in result["decode"]:
        print(f"- {row['name']}: {tokenizer.decode(row['ids'])!r}")
    jump = result["jump"]
    forced = jump["forced"]
    nonempty = [i for i, text in enumerate(forced) if text]
    runs = [i for i in nonempty if i == 0 or not forced[i - 1]]
    inside = sum(
        1
        for i, token in enumerate(jump["ids"])
        if forced[i] and forced[i].startswith(tokenizer.piece(token))
    )
    text = tokenizer.decode(jump["ids"])
    print(
        f"\nJump-forward on {jump['name']} ({len(jump['ids'])} tokens sampled, "
        f"{len(text)} characters, end: {jump['end']}):\n"
    )
    print(
        "| steps | with forced text | forced chars, summed over steps | forced spans | "
        "chars at span starts | sampled tokens inside forced text | forced() ms median | "
        "max |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {len(forced)} | {len(nonempty)} | {sum(len(t) for t in forced)} | {len(runs)} | "
        f"{sum(len(forced[i]) for i in runs)} | {inside} | {median(jump['forcedMs']):.3f} | "
        f"{max(jump['forcedMs'], default=float('nan')):.3f} |"
    )
    print(f"\n- output: {text!r}")
    print(f"- forced at span starts: {[forced[i] for i in runs]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["smollm2", "random", "both"], default="both")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not (ROOT / "dist" / "xgrammar" / "xgrammar.js").is_file():
        print("dist/ is missing: run python3 build/build.py first.", file=sys.stderr)
        return 1
    names = list(MODELS) if args.model == "both" else [args.model]
    for run in range(1, args.runs + 1):
        print(f"\n## Run {run} of {args.runs} (wasm, {args.threads} threads)")
        for name in names:
            job, tokenizer = job_for(MODELS[name], args.steps, args.threads)
            started = time.perf_counter()
            result = run_page(MODELS[name], job, args.verbose)
            report(name, result, job, tokenizer)
            print(f"\n({time.perf_counter() - started:.0f} s for this model)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
