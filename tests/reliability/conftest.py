"""The reliability suite: fuzzing the engine (CPython) and the shim (Chromium), and the
security checks. Sizes come from the environment, small by default so CI stays fast
(see ``fuzz_support.py``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
for path in (REPO_ROOT, HERE):  # `py_runtime` without installing; the helpers beside us
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from py_runtime.devtools.browser import WEBGPU_ARGS, launch_args  # noqa: E402


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Debian's Chromium (when installed) with our flags, as tests/browser uses."""
    extra = WEBGPU_ARGS if os.environ.get("LM_WPT_DEVICE") == "webgpu" else None
    ours = launch_args(extra)
    merged = {**ours, **browser_type_launch_args}
    merged["args"] = [*ours["args"], *browser_type_launch_args.get("args", [])]
    return merged
