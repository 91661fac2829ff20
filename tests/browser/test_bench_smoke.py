"""CI-sized runs of the benchmarks: they run end to end and print their tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from py_runtime.devtools import engine, models

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
TJS = REPO_ROOT / "node_modules" / "@huggingface" / "transformers" / "dist" / "transformers.min.js"

pytestmark = pytest.mark.needs_files(
    REPO_ROOT / "dist" / "language-model.js",
    TJS,
    reason="needs dist/ and npm's @huggingface/transformers",
)


def bench(tmp_path: Path, *args: str, timeout: int = 300) -> tuple[list[list[str]], dict]:
    """Run ``python -m py_runtime.bench ARGS --json``: the printed tables' system
    columns (one list per table) and the JSON report."""
    report = tmp_path / "bench.json"
    completed = subprocess.run(
        [sys.executable, "-m", "py_runtime.bench", *args, "--json", str(report)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    tables: list[list[str]] = []
    for line in completed.stdout.splitlines():
        if line.startswith("system "):
            tables.append([])
        elif tables and line.strip() and not line.startswith("medians"):
            tables[-1].append(line.split("  ")[0])
    return tables, json.loads(report.read_text())


def test_compare_runs_and_prints_its_tables(tmp_path: Path) -> None:
    tables, report = bench(
        tmp_path,
        "compare",
        *("--model", str(FIXTURE), "--dtype", "q4", "--threads", "1", "--runs", "1"),
        *("--prompt-tokens", "16", "--decode-tokens", "4"),
    )
    ours, tjs = "ours (page, wasm), 1 thread(s)", "Transformers.js (page, wasm), 1 thread(s)"
    assert tables == [[ours, tjs, "onnxruntime (CPython), 1 thread(s)"], [ours, tjs], [ours, tjs]]
    results = report["results"]
    assert results[ours]["decode"][0] > 0 and results[tjs]["decode"][0] > 0
    assert results[ours]["history"][0] > 900  # the second turn's chat is ~1,000 tokens
    assert results[ours]["peak_mib"][0] > 0 and results[tjs]["peak_mib"][0] > 0


@pytest.mark.needs_files(
    models.folder("smollm2") / "onnx" / "model.onnx",
    engine.binary(),
    reason="needs SmolLM2 and llama.cpp's server: run `bash scripts/setup.sh`",
)
def test_compare_puts_wllama_and_native_llama_cpp_beside_smollm2(tmp_path: Path) -> None:
    """For SmolLM2 the anchors run too: wllama in the page and native llama-server, on
    the same weights as a Q8_0 GGUF (made on demand)."""
    tables, report = bench(
        tmp_path,
        "compare",
        *("--model", "smollm2", "--dtype", "fp32", "--threads", "1", "--runs", "1"),
        *("--prompt-tokens", "16", "--decode-tokens", "4"),
        timeout=900,
    )
    wllama = "wllama Q8_0 (page, wasm), 1 thread(s)"
    native = "llama.cpp Q8_0 (native llama-server), 1 thread(s)"
    assert wllama in tables[0] and native in tables[0] and wllama in tables[1]
    results = report["results"]
    for system in (wllama, native):
        assert results[system]["prefill"][0] > 0 and results[system]["decode"][0] > 0
    assert results[wllama]["peak_mib"][0] > 0


def test_startup_runs_and_prints_its_table(tmp_path: Path) -> None:
    tables, report = bench(tmp_path, "startup", "--runs", "1")
    assert tables == [
        [
            "echo, ours (boot at load)",
            "echo, ours (boot at first call)",
            "tiny-qwen2-toolcall q8, ours",
            "tiny-qwen2-toolcall q8, Transformers.js",
            "tiny-qwen2-toolcall q8, ours, warm cache (2nd load)",
        ]
    ]
    for variant in report["results"].values():
        assert 0 < variant["ready_ms"][0] <= variant["first_token_ms"][0]
        assert variant["peak_mib"][0] > 0
