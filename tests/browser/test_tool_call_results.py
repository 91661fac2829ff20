"""The ``always-array`` rule for prompt()'s result, switched on from the command line.

``python -m py_runtime.wpt --tool-call-results always-array`` puts
``data-tool-call-results="always-array"`` on the shim's script tag; the file checks
the rule (the default rule's file is in tests/wpt/, run by test_wpt.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FILE = (
    REPO_ROOT
    / "tests"
    / "wpt-always-array"
    / "ai"
    / "language-model"
    / "tool-call-results-always-array.tentative.https.window.js"
)

pytestmark = pytest.mark.needs_files(
    REPO_ROOT / "dist" / "language-model.js",
    reason="dist/ is missing: run `python3 build/build.py`",
)


def run(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "py_runtime.wpt", *options, str(FILE)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_always_array_file_passes_with_the_switch() -> None:
    done = run("--tool-call-results", "always-array")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 0 failed" in done.stdout + done.stderr


def test_the_same_file_fails_under_the_default_rule() -> None:
    done = run()
    assert done.returncode != 0
    assert "1 passed, 2 failed" in done.stdout + done.stderr
