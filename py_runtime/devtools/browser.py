"""Chromium launch settings shared by the WPT runner and pytest-playwright."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM_EXECUTABLE = Path("/usr/bin/chromium")

CHROMIUM_ARGS: list[str] = [
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--no-sandbox",
    "--js-flags=--expose-gc",  # WPT's garbage-collection tests call gc()
]

WEBGPU_ARGS: list[str] = ["--enable-unsafe-webgpu"]


def launch_args(extra: list[str] | None = None) -> dict[str, Any]:
    """Return Playwright `launch()` kwargs; system Chromium when installed."""
    args = list(CHROMIUM_ARGS)
    for arg in extra or []:
        if arg not in args:
            args.append(arg)
    kwargs: dict[str, Any] = {"args": args, "headless": True}
    if CHROMIUM_EXECUTABLE.is_file():
        kwargs["executable_path"] = str(CHROMIUM_EXECUTABLE)
    return kwargs
