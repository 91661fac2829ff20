"""The benchmark pages (``devtools/pages/``): what serves them, the browser that opens
them, and what every page reports (its peak memory and its long tasks)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..browser import launch_args
from ..memory import chromium_browsers, page_peak_mib
from ..server import StaticServer
from .report import Results, record

REPO = Path(__file__).resolve().parents[3]
DIST = REPO / "dist"
FIXTURE = REPO / "tests" / "fixtures" / "tiny-qwen2-toolcall"
TJS_DIST = REPO / "node_modules" / "@huggingface" / "transformers"
WLLAMA = REPO / "node_modules" / "@wllama" / "wllama"
PAGES = Path(__file__).resolve().parent.parent / "pages"
WORKER = REPO / "web" / "worker"


def mounts(
    dist: Path, model: Path, gguf: Path | None = None, tjs_model: Path | None = None
) -> dict[str, Path]:
    """The server's mounts: dist/ at ``/``, the pages, the model, Transformers.js and
    wllama (with the folder of ``gguf``), and ``tjs_model`` at ``/_tjs_model/``."""
    served = {
        "/": dist,
        "/_pages/": PAGES,
        "/_model/": model,
        "/_tjs/": TJS_DIST / "dist",
        "/_tjs_ort/": TJS_DIST / "node_modules" / "onnxruntime-web" / "dist",
        "/_wllama/": WLLAMA,
    }
    served |= {"/_tjs_model/": tjs_model} if tjs_model else {}
    return served | ({"/_gguf/": gguf.parent} if gguf else {})


def worker_modules_server(model: Path) -> StaticServer:
    """A server of ``bench/pages`` at ``/`` (``constrained.html``), the worker's modules
    unbundled beside dist/'s ONNX Runtime and XGrammar at ``/dist/`` (not worker.mjs:
    dist/worker.mjs is the bundle), and ``model`` at ``/model/``: for pages that drive
    ort-session.mjs or ort-backend.mjs directly."""
    served = {"/": REPO / "bench" / "pages", "/dist/": DIST, "/model/": model}
    files = {
        f"/dist/{path.name}": path for path in WORKER.glob("*.mjs") if path.name != "worker.mjs"
    }
    return StaticServer(served, files)


def page_path(name: str, query: Mapping[str, object] | None = None) -> str:
    """The URL path of a page of ``devtools/pages/``, with its parameters as a query."""
    return f"/_pages/{name}" + (f"?{urlencode(query)}" if query else "")


def launch(playwright: Any) -> tuple[Any, int | None]:
    """A fresh headless Chromium and its browser process id (for its pages' memory)."""
    before = chromium_browsers()
    browser = playwright.chromium.launch(**launch_args())
    started = chromium_browsers() - before
    return browser, started.pop() if len(started) == 1 else None


def launch_profile(playwright: Any, profile: Path) -> tuple[Any, int | None]:
    """A headless Chromium on a browser profile kept in ``profile`` (a context whose
    storage is on disk, as a user's is: an incognito context's Cache API cannot hold a
    file of hundreds of MB), and its browser process id."""
    before = chromium_browsers()
    context = playwright.chromium.launch_persistent_context(str(profile), **launch_args())
    started = chromium_browsers() - before
    return context, started.pop() if len(started) == 1 else None


def record_page(results: Results, system: str, page: Any, browser_pid: int | None) -> None:
    """A page's peak memory and its main-thread tasks over 50 ms."""
    tasks = page.evaluate("window.longTasks")
    record(
        results,
        system,
        long_tasks=len(tasks),
        longest_task_ms=max(tasks, default=0),
        peak_mib=page_peak_mib(browser_pid) if browser_pid else None,
    )
