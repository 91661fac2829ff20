"""The server backend against a real engine: llama.cpp's server serving SmolLM2.

``python -m py_runtime engine prepare`` (setup) builds the engine and SmolLM2's F16
GGUF; each module starts it on a free port. The page runs the real-model WPT files
with ``data-model="openai:URL"``; the engine's faults are real (its process
stopped, killed, or given a key the client lacks), seen through the CPython host.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from py_runtime.devtools import engine
from py_runtime.devtools.server import StaticServer
from py_runtime.devtools.wpt import run_wpt_file
from py_runtime.devtools.wpt_host import WptHost
from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.messages import user_text
from py_runtime.engine.runtime import Runtime
from py_runtime.hosts.cpython import server_model
from py_runtime.models.chat_completions import to_openai_messages

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
WPT_DIR = REPO_ROOT / "tests" / "wpt-models" / "ai" / "language-model"
GREEDY = {"samplingMode": "most-predictable"}

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js",
    engine.binary(),
    engine.gguf(),
    reason="dist/ or the server engine is missing: run `bash scripts/setup.sh`",
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The module's engine: its base URL and its log."""
    log = tmp_path_factory.mktemp("engine") / "llama-server.log"
    with engine.serve(log_file=log) as url:
        yield url, log


@pytest.fixture
def server(served: tuple[str, Path]) -> str:
    return served[0]


@pytest.mark.parametrize(
    "name",
    ["smollm2.tentative.https.window.js", "smollm2-response-constraint.tentative.https.window.js"],
)
def test_real_model_wpt_file_passes_over_the_server(page: Page, server: str, name: str) -> None:
    with WptHost(DIST, model=f"openai:{server}", timeout_multiplier=5) as host:
        result = run_wpt_file(page, host, WPT_DIR / name, timeout=600)
    assert result.harness_status == "OK", result.harness_message
    assert result.subtests and not result.failures(), result.failures()


def test_availability_follows_the_server(page: Page, server: str) -> None:
    """Available while the engine serves the model; unavailable for another name or
    a server that does not answer (then create() is the page's NotSupportedError)."""
    closed = f"http://127.0.0.1:{engine.free_port()}/v1"
    cases = {
        "/served.html": (server, "", "available"),
        "/other.html": (server, "data-server-model=no-such-model", "unavailable"),
        "/closed.html": (closed, "", "unavailable"),
    }
    files = {
        name: (
            '<!doctype html><meta charset=utf-8><script src="/_lm/language-model.js" '
            f'data-model="openai:{url}" {extra}></script>'
        ).encode()
        for name, (url, extra, _) in cases.items()
    }
    with StaticServer({"/_lm/": DIST}, files) as site:
        for name, (_, _, expected) in cases.items():
            page.goto(site.url + name)
            assert page.evaluate("LanguageModel.availability()") == expected, name
            if expected == "unavailable":
                error = page.evaluate(
                    "LanguageModel.create().then(() => null,"
                    " (e) => [e instanceof DOMException, e.name])"
                )
                assert error == [True, "NotSupportedError"], name


# -- faults, through the CPython host ---------------------------------------------


class Loop:
    """An event loop of its own thread (Playwright's sync API holds this thread's)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


class Client:
    """A Runtime over the server model, its calls run to the end one by one."""

    def __init__(self, url: str, **options: Any) -> None:
        self.runner = Loop()
        self.runtime = Runtime(server_model(url, **options))

    def create(self) -> int:
        info = self.runtime.create(GREEDY, True, lambda loaded: None, lambda: False)  # type: ignore[arg-type]
        return int(self.runner.run(info)["session"])

    def prompt(
        self,
        session: int,
        text: str,
        on_chunk: Callable[[Any], None] = lambda chunk: None,
        stop: Callable[[], bool] = lambda: False,
    ) -> tuple[str, dict[str, Any]]:
        """prompt() kept: the answer's text and what it settled with."""
        chunks: list[Any] = []
        settled: dict[str, Any] = {}

        def chunk(value: Any) -> None:
            chunks.append(value)
            on_chunk(value)

        async def settle(value: Any) -> bool:
            settled.update(value)
            return True

        self.runner.run(self.runtime.prompt(session, text, None, False, chunk, settle, stop))
        return "".join(c["text"] for c in chunks if c["kind"] == "text"), settled

    def answer(self, session: int, text: str) -> str:
        return self.prompt(session, text)[0]

    def error(self, session: int, text: str, **options: Any) -> PromptAPIError:
        with pytest.raises(PromptAPIError) as caught:
            self.prompt(session, text, **options)
        return caught.value

    def usage(self, session: int) -> int:
        return self.runtime.session(session).context_usage


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """An engine for one test, whose process the test may stop or kill."""
    port = engine.free_port()
    command = engine.command(port, threads=1, api_key="secret")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    engine.wait_ready(url, process)
    yield url + "/v1", process
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
        process.wait()


def test_a_silent_server_is_a_network_error_and_the_session_goes_on(
    own_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, process = own_server
    client = Client(url, api_key="secret", timeout=2)
    session = client.create()
    assert "Paris" in client.answer(session, "What is the capital of France?")
    usage = client.usage(session)
    os.kill(process.pid, signal.SIGSTOP)
    started = time.monotonic()
    error = client.error(session, "And of Italy?")
    assert error.name == "NetworkError" and "sent nothing for 2 s" in error.message
    assert time.monotonic() - started < 10
    assert client.usage(session) == usage, "the failed call left no trace"
    os.kill(process.pid, signal.SIGCONT)
    assert "Rome" in client.answer(session, "What is the capital of Italy?")


def test_a_server_that_stops_mid_answer_is_a_network_error(
    own_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, process = own_server
    client = Client(url, api_key="secret", timeout=5)
    session = client.create()
    client.answer(session, "Hello!")
    usage = client.usage(session)
    chunks: list[Any] = []

    def on_chunk(chunk: Any) -> None:
        chunks.append(chunk)
        if len(chunks) == 3:
            process.kill()  # the engine dies with the answer half sent

    error = client.error(session, "Write a long story about a dragon.", on_chunk=on_chunk)
    assert error.name == "NetworkError", error
    assert len(chunks) >= 3 and client.usage(session) == usage
    error = client.error(session, "Hello again!")
    assert error.name == "NetworkError" and "could not be reached" in error.message


def test_an_error_status_is_an_operation_error_with_the_servers_message(
    own_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, _ = own_server
    client = Client(url, api_key="secret")
    session = client.create()
    usage = client.usage(session)
    client.runtime.model.client.api_key = "revoked"  # type: ignore[attr-defined]
    error = client.error(session, "Hello!")
    assert error.name == "OperationError" and "401" in error.message, error
    assert client.usage(session) == usage
    client.runtime.model.client.api_key = "secret"  # type: ignore[attr-defined]
    assert client.answer(session, "What is the capital of France?")
    without_key = Client(url)
    assert without_key.runner.run(without_key.runtime.availability({})) == "unavailable"  # type: ignore[arg-type]


def test_usage_is_the_engines_own_token_count(server: str) -> None:
    """contextUsage is the engine's tokenizer over its rendered prompt (llama.cpp's
    /apply-template and /tokenize): a conversation counts what the engine reports as
    the prompt of an answer to it."""
    client = Client(server)
    session = client.create()
    assert client.runtime.model.counter == "llama.cpp"  # type: ignore[attr-defined]
    client.answer(session, "Name a color of the sky.")
    context = [*client.runtime.session(session).context(), user_text("And of grass?")]
    counted = client.runner.run(client.runtime.model.measure_context(context, ()))
    body = {"messages": to_openai_messages(context), "max_tokens": 1}
    assert counted == post(server + "/chat/completions", body)["usage"]["prompt_tokens"]


def post(url: str, body: Any) -> Any:
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request) as response:  # noqa: S310
        return json.load(response)


def test_the_cli_answers_over_the_server(server: str) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "py_runtime",
            "prompt",
            "--model",
            f"openai:{server}",
            "--sampling-mode",
            "most-predictable",
            "--json",
            "What is the capital of France?",
        ],  # fmt: skip
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    answer = json.loads(completed.stdout)
    assert "Paris" in answer["text"] and answer["contextWindow"] == engine.CONTEXT


def get(url: str) -> Any:
    with urllib.request.urlopen(url) as response:  # noqa: S310
        return json.load(response)


def test_an_abort_stops_the_engines_generation(served: tuple[str, Path]) -> None:
    """The aborted request is closed, and the engine cancels its task: its slot holds
    the prompt and a few tokens, not the 512 asked for."""
    server, log = served
    client = Client(server)
    session = client.create()
    chunks: list[Any] = []
    error = client.error(
        session, "Write a long story about a dragon.", on_chunk=chunks.append,
        stop=lambda: len(chunks) >= 3,
    )  # fmt: skip
    assert error.name == "AbortError" and client.usage(session) == 0
    root = server.removesuffix("/v1")
    deadline = time.monotonic() + 30
    while any(slot["is_processing"] for slot in get(root + "/slots")):
        assert time.monotonic() < deadline, "the engine still generates"
        time.sleep(0.05)
    text = log.read_text()
    assert "cancel task" in text, "the engine saw the request cancelled"
    held = re.findall(r"stop processing: n_tokens = (\d+)", text)
    assert held and int(held[-1]) < 150, f"the slot held {held[-1:]} tokens, not the 512 asked"


def test_eviction_and_overflow_are_the_runtimes_as_for_local_models(server: str) -> None:
    """With the window capped (data-context-window), the oldest turns are evicted and
    the prompt reports the overflow; usage stays within the window."""
    client = Client(server, context_cap=120)
    session = client.create()
    assert client.runtime.session(session).context_window == 120
    overflowed = []
    for question in ["Name a fruit.", "Name a color.", "Name an animal.", "Name a city."]:
        _, settled = client.prompt(session, question)
        overflowed.append(settled["overflowed"])
        assert settled["contextUsage"] <= 120
    assert any(overflowed), overflowed
    context = client.runtime.session(session).context()
    assert context[0].text() != "Name a fruit.", "the first turn was evicted"


def test_the_engine_runs_gemma3_on_its_baseline_cpu_backend(tmp_path: Path) -> None:
    """The engine is built for any x86-64 CPU: with only its baseline CPU backend (no
    AVX) beside it, it loads Gemma 3 270M's GGUF and answers; with all of them, it picks
    one the CPU runs."""
    import shutil

    assert len(engine.cpu_backends()) > 1
    baseline = tmp_path / "bin"
    shutil.copytree(engine.binary().parent, baseline, symlinks=True)
    for lib in baseline.glob("libggml-cpu-*.so"):
        if lib.name != engine.BASELINE_BACKEND:
            lib.unlink()
    gguf = engine.gemma_gguf()
    for folder in (baseline, engine.binary().parent):
        port = engine.free_port()
        log = tmp_path / f"{folder.name}.log"
        with log.open("w") as output:
            line = [str(folder / "llama-server"), "-m", str(gguf), "--port", str(port)]
            line += ["--host", "127.0.0.1", "-c", "512", "-t", "1"]
            line += ["-lv", "4"]  # the log names the CPU backend loaded
            process = subprocess.Popen(line, stdout=output, stderr=subprocess.STDOUT)
            try:
                engine.wait_ready(f"http://127.0.0.1:{port}", process)
                body = {"prompt": "The capital of France is", "n_predict": 8, "temperature": 0}
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/completion", json.dumps(body).encode()
                )
                with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
                    assert json.load(response)["content"].strip()
            finally:
                process.terminate()
                process.wait(10)
        loaded = re.findall(r"loaded CPU backend from .*libggml-cpu-(\w+)\.so", log.read_text())
        assert loaded and (folder != baseline or set(loaded) == {"x64"}), log.read_text()[-2000:]
