"""pytest-playwright settings for the browser tests: which Chromium, which flags; and
the ``needs_files`` marker: what a module needs built or installed to run at all."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # make `py_runtime` importable without installing
    sys.path.insert(0, str(REPO_ROOT))

from py_runtime.devtools.browser import WEBGPU_ARGS, launch_args  # noqa: E402


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


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``needs_files`` marker."""
    config.addinivalue_line(
        "markers",
        "needs_files(*paths, reason): skip the tests without these files; fail them if CI is set",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``needs_files`` whose files are missing (dist/, node_modules/) is
    skipped, or fails where ``CI`` is set: there a missing build is a broken pipeline,
    not a test to leave out."""
    for mark in item.iter_markers("needs_files"):
        if not all(Path(path).is_file() for path in mark.args):
            reason = mark.kwargs["reason"]
            if os.environ.get("CI"):
                pytest.fail(f"{reason} (CI is set: missing files fail)", pytrace=False)
            pytest.skip(reason)
