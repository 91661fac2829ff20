"""pytest-playwright settings for the browser tests: which Chromium, which flags."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # make `py_runtime` importable without installing
    sys.path.insert(0, str(REPO_ROOT))

from py_runtime.host.browser import WEBGPU_ARGS, launch_args  # noqa: E402


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Use Debian's Chromium (when installed) with our flags.

    Options given on the command line (e.g. ``--headed``) win; WebGPU is
    enabled when ``LM_WPT_DEVICE=webgpu``.
    """
    extra = WEBGPU_ARGS if os.environ.get("LM_WPT_DEVICE") == "webgpu" else None
    ours = launch_args(extra)
    merged = {**ours, **browser_type_launch_args}
    merged["args"] = [*ours["args"], *browser_type_launch_args.get("args", [])]
    return merged
