"""Where constrained answers come from: the engine under CPython (onnxruntime +
llguidance) and the built product in headless Chromium (ONNX Runtime Web, XGrammar)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.constraint_runs import (
    GREEDY,
    SAMPLED_MODE,
    Answer,
    Costs,
    Job,
    Progress,
    Run,
    line,
    page_cut_at,
    validate,
)

ROOT = Path(__file__).resolve().parents[1]

# -- CPython ---------------------------------------------------------------------------


class LoadedRuntime:
    """A Runtime over a CausalLM on onnxruntime + llguidance, loaded once; each ``ask``
    a fresh session and one prompt (the benches' CPython host)."""

    def __init__(self, folder: Path, dtype: str, threads: int, cap: int | None) -> None:
        from py_runtime.engine.runtime import Runtime
        from py_runtime.hosts.cpython import local_model

        self.loop = asyncio.new_event_loop()
        started = time.perf_counter()
        self.model = local_model(folder, dtype, threads=threads)  # type: ignore[arg-type]
        self.runtime = Runtime(self.model)
        self.loop.run_until_complete(self.model.load(lambda _: None, lambda: False))
        self.load_seconds = time.perf_counter() - started
        if cap is not None:
            self.model.max_response_tokens = cap

    def ask(self, options: Any, text: str, constraint: Any = None) -> list[dict[str, Any]]:
        """The chunks one prompt streamed (as they cross the wire), in a fresh session
        made with ``options``; a failure raises."""
        chunks: list[dict[str, Any]] = []

        async def settle(_: Any) -> bool:
            return True

        async def ask() -> None:
            info = await self.runtime.create(options, True, lambda _: None, lambda: False)
            try:
                await self.runtime.prompt(
                    info["session"], text, constraint, False, chunks.append, settle, lambda: False
                )
            finally:
                self.runtime.destroy(info["session"])

        self.loop.run_until_complete(ask())
        return chunks


class CPythonHost(LoadedRuntime):
    """The loaded runtime with the backend's calls counted (as ``bench/constrained.py``
    does)."""

    def __init__(self, folder: Path, dtype: str, threads: int, cap: int | None) -> None:
        super().__init__(folder, dtype, threads, cap)
        self.costs = Costs()
        self.tokens: int | None = None  # answer tokens run since the grammar was set
        self._instrument()

    def _instrument(self) -> None:
        backend = self.model.backend
        assert backend is not None
        constrain, forward, next_token = backend.constrain, backend.forward, backend.next_token
        held: set[int] = set()

        async def timed_constrain(cache: int, grammar: Any) -> None:
            if grammar is None:
                held.discard(cache)
                await constrain(cache, None)
                return
            started = time.perf_counter()
            await constrain(cache, grammar)
            self.costs.compile_ms.append((time.perf_counter() - started) * 1000)
            held.add(cache)
            self.tokens = 0

        async def counted_forward(cache: int, ids: list[int]) -> None:
            before = backend.run_ms
            await forward(cache, ids)
            if cache in held:
                assert self.tokens is not None
                self.tokens += len(ids)
                if len(ids) == 1:
                    self.costs.steps += 1
                    self.costs.step_ms += backend.run_ms - before

        async def counted_next_token(cache: int, sampling: Any) -> int:
            before = backend.mask_ms
            token = int(await next_token(cache, sampling))
            if cache in held:
                self.costs.masked_steps += 1
                self.costs.mask_ms += backend.mask_ms - before
            return token

        backend.constrain = timed_constrain  # type: ignore[method-assign]
        backend.forward = counted_forward  # type: ignore[method-assign]
        backend.next_token = counted_next_token  # type: ignore[method-assign]

    def answer(self, job: Job, sampling_mode: str | None) -> Answer:
        from py_runtime.engine.errors import PromptAPIError

        options: dict[str, Any] = {}
        if job.mode == GREEDY:
            options = {"samplingMode": "most-predictable"}
        elif sampling_mode:
            options = {"samplingMode": sampling_mode}
        chunks: list[dict[str, Any]] = []
        self.tokens = None
        started = time.perf_counter()
        error = ""
        try:
            chunks = self.ask(options, job.constraint.prompt, job.constraint.wire())
        except PromptAPIError as failure:
            error = str(failure)
            error = error if error.startswith(failure.name) else f"{failure.name}: {error}"
        except Exception as failure:  # a crash is a result here: count it, go on
            error = f"{type(failure).__name__}: {failure}"
        seconds = time.perf_counter() - started
        text = "".join(c["text"] for c in chunks if c["kind"] == "text")
        tokens = self.tokens or 0
        cut = not error and tokens >= self.model.max_response_tokens
        c = job.constraint
        return Answer(c.name, c.kind, job.mode, text, seconds, error, tokens, cut)


def run_cpython(
    folder: Path,
    jobs: list[Job],
    dtype: str = "fp32",
    threads: int = 2,
    sampling_mode: str = SAMPLED_MODE,
    cap: int | None = None,
    progress: Progress | None = None,
) -> Run:
    host = CPythonHost(folder, dtype, threads, cap)
    started = time.perf_counter()
    answers = []
    for job in jobs:
        answer = host.answer(job, sampling_mode)
        answers.append(answer)
        if progress:
            progress(line(job, answer))
    run = Run(
        "cpython (onnxruntime + llguidance)",
        f"{folder.name} ({dtype}, {threads} threads)",
        host.model.max_response_tokens,
        sampling_mode,
        answers,
        time.perf_counter() - started,
        host.load_seconds,
        host.costs,
    )
    validate(run)
    return run


# -- the page --------------------------------------------------------------------------

PAGE = """<!doctype html><meta charset=utf-8>
<script src="/_lm/language-model.js" data-model="/model/" data-dtype="{dtype}"></script>
<button id=go>go</button>"""

#: One constraint's answers, each in a fresh session.
PAGE_ANSWERS = """async (jobs) => {
  const out = [];
  for (const job of jobs) {
    const started = performance.now();
    let session = null;
    try {
      session = await LanguageModel.create(job.options);
      const constraint = job.regexp ? new RegExp(job.regexp.source, job.regexp.flags)
                                    : job.schema;
      const text = await session.prompt(job.prompt, {responseConstraint: constraint});
      out.push({text, error: '', ms: performance.now() - started});
    } catch (e) {
      out.push({text: '', error: `${e.name}: ${e.message}`, ms: performance.now() - started});
    } finally {
      session?.destroy();
    }
  }
  return out;
}"""


@dataclass
class PageHost:
    """The product in a Playwright page, serving ``dist/`` and the model folder."""

    page: Any
    folder: Path
    dtype: str
    cap: int | None = None

    def __post_init__(self) -> None:
        from py_runtime.devtools.server import StaticServer
        from py_runtime.tokenizer.tokenizer import Tokenizer

        config = json.loads((self.folder / "generation_config.json").read_text())
        files: dict[str, Path | bytes] = {"/run.html": PAGE.format(dtype=self.dtype).encode()}
        if self.cap is not None:
            config["max_new_tokens"] = self.cap
            files["/model/generation_config.json"] = json.dumps(config).encode()
        self.model_cap = int(config.get("max_new_tokens") or 512)
        self.tokenizer = Tokenizer.from_json((self.folder / "tokenizer.json").read_text())
        mounts = {"/_lm/": ROOT / "dist", "/model/": self.folder}
        self.server = StaticServer(mounts, files).start()
        started = time.perf_counter()
        self.page.goto(f"{self.server.url}/run.html")
        self.page.click("#go")  # user activation: the model is downloadable until created
        self.page.evaluate(
            "async () => (await LanguageModel.create()).destroy()"
        )  # loads the model
        self.load_seconds = time.perf_counter() - started

    def close(self) -> None:
        self.server.stop()

    def answers(self, jobs: list[Job], sampling_mode: str | None) -> list[Answer]:
        payload = []
        for job in jobs:
            options: dict[str, Any] = {}
            if job.mode == GREEDY:
                options = {"samplingMode": "most-predictable"}
            elif sampling_mode:
                options = {"samplingMode": sampling_mode}
            payload.append({"prompt": job.constraint.prompt, "options": options})
            payload[-1].update(job.constraint.page())
        results = self.page.evaluate(PAGE_ANSWERS, payload)
        out = []
        for job, result in zip(jobs, results, strict=True):
            text, error = result["text"], result["error"]
            tokens = len(self.tokenizer.encode(text)) if text else 0
            cut = not error and tokens >= page_cut_at(self.model_cap)
            c = job.constraint
            out.append(
                Answer(c.name, c.kind, job.mode, text, result["ms"] / 1000, error, tokens, cut)
            )
        return out


def groups(jobs: list[Job]) -> Iterator[list[Job]]:
    """Consecutive jobs of one constraint: one page.evaluate() each."""
    batch: list[Job] = []
    for job in jobs:
        if batch and job.constraint is not batch[0].constraint:
            yield batch
            batch = []
        batch.append(job)
    if batch:
        yield batch


def run_page(
    page: Any,
    folder: Path,
    jobs: list[Job],
    dtype: str = "fp32",
    sampling_mode: str = SAMPLED_MODE,
    cap: int | None = None,
    progress: Progress | None = None,
) -> Run:
    host = PageHost(page, folder, dtype, cap)
    try:
        started = time.perf_counter()
        answers: list[Answer] = []
        for batch in groups(jobs):
            for job, answer in zip(batch, host.answers(batch, sampling_mode), strict=True):
                answers.append(answer)
                if progress:
                    progress(line(job, answer))
        seconds = time.perf_counter() - started
    finally:
        host.close()
    run = Run(
        "page (Chromium, ONNX Runtime Web wasm + XGrammar)",
        f"{folder.name} ({dtype})",
        host.model_cap,
        sampling_mode,
        answers,
        seconds,
        host.load_seconds,
        None,
        tokens_exact=False,
    )
    validate(run)
    return run


def run_page_headless(folder: Path, jobs: list[Job], **kwargs: Any) -> Run:
    """``run_page`` in a headless Chromium of its own, launched as the project's browser
    helpers launch it."""
    from playwright.sync_api import sync_playwright

    from py_runtime.devtools.browser import launch_args

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        try:
            return run_page(browser.new_page(), folder, jobs, **kwargs)
        finally:
            browser.close()
