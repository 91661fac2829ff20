"""Peak resident memory of the pages a Chromium runs, read from Linux's /proc.

A page and its dedicated workers live in one renderer process, so that process's
high-water mark (``VmHWM``) is the page's peak memory as the OS sees it: JS heaps,
wasm memories, ONNX Runtime's buffers and Chromium's own renderer baseline.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(text.split(" ", 1)[0])] = int(text[text.rindex(")") + 2 :].split()[1])
    return parents


def _descendants(root: int, parents: dict[int, int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _cmdline(pid: int) -> str:
    """The command line, as one string: Chromium rewrites its children's into one."""
    try:
        return (
            (PROC / str(pid) / "cmdline").read_bytes().decode(errors="replace").replace("\0", " ")
        )
    except OSError:
        return ""


def chromium_browsers() -> set[int]:
    """Pids of the Chromium browser processes this process started (through Playwright):
    Chromium processes without ``--type=`` whose parent is not Chromium."""
    parents = _parents()

    def is_chromium(pid: int) -> bool:
        return "chromium" in _cmdline(pid).split(" ", 1)[0]

    return {
        pid
        for pid in _descendants(os.getpid(), parents)
        if is_chromium(pid) and " --type=" not in _cmdline(pid) and not is_chromium(parents[pid])
    }


def page_peak_mib(browser_pid: int) -> float | None:
    """The largest renderer high-water mark under a browser process, in MiB.

    Chromium's own UI renderer (``--top-chrome-webui``) is left out; with one page
    open per browser, the largest remaining renderer is that page's. ``None`` where
    /proc cannot say (not Linux).
    """
    return _largest_renderer(browser_pid, "VmHWM:")


def page_rss_mib(browser_pid: int) -> float | None:
    """As ``page_peak_mib``, the page's resident memory now (``VmRSS``)."""
    return _largest_renderer(browser_pid, "VmRSS:")


def _largest_renderer(browser_pid: int, field: str) -> float | None:
    values = []
    for pid in _descendants(browser_pid, _parents()):
        command = _cmdline(pid)
        if " --type=renderer" not in command or "--top-chrome-webui" in command:
            continue
        try:
            status = (PROC / str(pid) / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(field):
                values.append(int(line.split()[1]) / 1024)
    return max(values, default=None)
