"""Run every WPT-style test file in Chromium against the built shim.

Cases: each ``*.window.js`` under ``tests/wpt/`` and, when present,
under ``../shared/wpt/`` beside the repository. The environment variables
``LM_WPT_MODEL``, ``LM_WPT_DTYPE``, ``LM_WPT_DEVICE`` and ``LM_WPT_TIMEOUT``
(seconds per file) play the role of ``python -m py_runtime.wpt``'s options.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.wpt import DEFAULT_TIMEOUT_S, run_wpt_file
from py_runtime.devtools.wpt_host import DEFAULT_TESTHARNESS, WptHost

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
SHIM = DIST / "language-model.js"
WPT_DIRS = [REPO_ROOT / "tests" / "wpt", REPO_ROOT.parent / "shared" / "wpt"]

pytestmark = [
    pytest.mark.needs_files(SHIM, reason=f"{SHIM} is missing: build the shim first"),
    pytest.mark.needs_files(
        DEFAULT_TESTHARNESS, reason=f"{DEFAULT_TESTHARNESS} is missing: run `npm install`"
    ),
]


def _test_files() -> list[Path]:
    """Every ``*.window.js`` in the WPT directories that exist."""
    return [
        path
        for directory in WPT_DIRS
        if directory.is_dir()
        for path in sorted(directory.rglob("*.window.js"))
    ]


def _test_id(path: Path) -> str:
    """A short, stable id: ``tests/wpt/...`` or ``shared/wpt/...``."""
    base = REPO_ROOT if path.is_relative_to(REPO_ROOT) else REPO_ROOT.parent
    return path.relative_to(base).as_posix()


TEST_FILES = _test_files()


@pytest.fixture(scope="session")
def wpt_host() -> Iterator[WptHost]:
    """Servers for the WPT roots, shared by all cases."""
    with WptHost(
        DIST,
        model=os.environ.get("LM_WPT_MODEL") or None,
        dtype=os.environ.get("LM_WPT_DTYPE") or None,
        device=os.environ.get("LM_WPT_DEVICE") or None,
    ) as host:
        yield host


@pytest.mark.parametrize("path", TEST_FILES, ids=[_test_id(p) for p in TEST_FILES])
def test_wpt(page: Page, wpt_host: WptHost, path: Path) -> None:
    """The harness ends OK and every subtest passes."""
    timeout = float(os.environ.get("LM_WPT_TIMEOUT") or DEFAULT_TIMEOUT_S)
    result = run_wpt_file(page, wpt_host, path, timeout=timeout)
    failures = result.failures()  # non-PASS subtests and a harness status other than OK
    if failures:
        pytest.fail(f"{len(failures)} failure(s) in {path}:\n" + "\n".join(failures), pytrace=False)
    assert result.harness_status == "OK"
    assert result.subtests, f"no subtests ran in {path}"
