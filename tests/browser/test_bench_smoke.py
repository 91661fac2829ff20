"""A CI-sized run of the side-by-side benchmark: it runs and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
TJS = REPO_ROOT / "node_modules" / "@huggingface" / "transformers" / "dist" / "transformers.min.js"

if not (REPO_ROOT / "dist" / "language-model.js").is_file() or not TJS.is_file():
    pytest.skip("needs dist/ and npm's @huggingface/transformers", allow_module_level=True)


def test_compare_benchmark_runs_and_prints_its_table() -> None:
    command = [
        sys.executable,
        "-m",
        "py_runtime.bench",
        "compare",
        "--model",
        str(FIXTURE),
        "--dtype",
        "q4",
        "--threads",
        "1",
        "--runs",
        "1",
        "--prompt-tokens",
        "16",
        "--decode-tokens",
        "4",
    ]
    completed = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    rows = [line for line in completed.stdout.splitlines() if "thread(s)" in line]
    assert [row.split(",")[0] for row in rows] == [
        "ours (page",
        "Transformers.js (page",
        "onnxruntime (CPython)",
        "ours",
        "Transformers.js",
    ], completed.stdout
    assert all(row.split(",")[1].startswith(" 2nd turn") for row in rows[3:]), completed.stdout
