"""``bench startup``: cold start in a fresh browser each run (a fresh profile on disk,
as a user's is: an incognito context's Cache API cannot hold a model of hundreds of
MB), and the second load of a real model from a warm model cache (same profile)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..server import StaticServer
from .pages import launch_profile, mounts, page_path, record_page
from .report import Results, record


def startup(runs: int, dist: Path, model: Path, dtype: str, gguf: Path | None = None) -> Results:
    """Per variant: navigation to ready (create() resolved / model loaded) and to the
    first token (ms), the page's peak memory and its long tasks; a fresh browser each run.
    With ``gguf`` (the same weights), wllama loading it too."""
    from playwright.sync_api import sync_playwright

    threads = os.cpu_count() or 1
    folder = {"data-model": "/_model/", "data-dtype": dtype, "data-threads": threads}
    paths = {
        "echo, ours (boot at load)": page_path("ours-cold.html"),
        "echo, ours (boot at first call)": page_path("ours-cold.html", {"data-boot": "lazy"}),
        f"{model.name} {dtype}, ours": page_path("ours-cold.html", folder),
        f"{model.name} {dtype}, Transformers.js": page_path(
            "tjs-cold.html", {"dtype": dtype, "threads": threads}
        ),
    }
    if gguf is not None:
        quant = gguf.stem.rsplit("-", 1)[-1]
        paths[f"{model.name} {quant}, wllama"] = page_path(
            "wllama-cold.html", {"threads": threads, "gguf": gguf.name}
        )
    results: Results = {}
    with StaticServer(mounts(dist, model, gguf)) as server, sync_playwright() as playwright:
        for _ in range(runs):  # alternate the variants within each round
            for name, path in paths.items():
                profile = tempfile.TemporaryDirectory()
                context, pid = launch_profile(playwright, Path(profile.name))
                page = context.new_page()
                with page.expect_console_message(
                    lambda m: m.text.startswith("coldstart "), timeout=300_000
                ) as message:
                    page.goto(server.url + path)
                    page.click("#go")
                times = json.loads(message.value.text.removeprefix("coldstart "))
                record(results, name, ready_ms=times["ready"], first_token_ms=times["first"])
                record_page(results, name, page, pid)
                context.close()
                profile.cleanup()
            warm = f"{model.name} {dtype}, ours, warm cache (2nd load)"
            profile = tempfile.TemporaryDirectory()
            context, pid = launch_profile(playwright, Path(profile.name))
            for load in ("cold", "warm"):
                page = context.new_page()
                with page.expect_console_message(
                    lambda m: m.text.startswith("coldstart "), timeout=300_000
                ) as message:
                    page.goto(server.url + paths[f"{model.name} {dtype}, ours"])
                    page.click("#go")
                if load == "cold":  # the cache is written in the background
                    page.wait_for_function(CACHED_JS, timeout=300_000)
                    page.close()
                    continue
                times = json.loads(message.value.text.removeprefix("coldstart "))
                record(results, warm, ready_ms=times["ready"], first_token_ms=times["first"])
                record_page(results, warm, page, pid)
            context.close()
            profile.cleanup()
    return results


#: True once the model's ONNX file is in the page's model cache.
CACHED_JS = "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('.onnx'))"
