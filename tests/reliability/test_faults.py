"""Faults, injected for real: the runtime's worker stops (closed from inside, as a crash
or a fatal ONNX Runtime error ends it), the model server answers 500, drops the
connection mid-download or stalls, and a model file is corrupt. Each gives a clear
error of the page's realm, never a hang, and the next call works again."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.server import StaticServer

HERE = Path(__file__).resolve().parent
DIST = HERE.parents[1] / "dist"
FIXTURE = HERE.parents[1] / "tests" / "fixtures" / "tiny-qwen2-toolcall"
ANSWER = "Hello! How can I help you today?"
ONNX = "/model/onnx/model_q4.onnx"

pytestmark = pytest.mark.skipif(
    not (DIST / "language-model.js").is_file(), reason="dist/ is missing: build it first"
)


def page_html(model: str, extra: str = "") -> bytes:
    return (
        '<!doctype html><meta charset=utf-8><script src="/_lm/language-model.js" '
        f'data-model="{model}" data-dtype="q4" {extra}></script><button id=go>go</button>'
    ).encode()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of the fixture (q4 only), which a test may corrupt."""
    folder = tmp_path / "model"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("model_*f16*", "model_int8*"))
    return folder


@pytest.fixture
def site(model: Path) -> Iterator[StaticServer]:
    files = {
        "/echo.html": page_html("echo"),
        "/model.html": page_html("/model/", 'data-download-timeout="2"'),
    }
    with StaticServer({"/_lm/": DIST, "/model/": model}, files) as server:
        yield server


#: create() + prompt(), settled: {answer} or {name, message, realm} (the error's
#: realm: whether it is an instance of this page's DOMException).
CREATE_AND_PROMPT = """async () => {
  try {
    const session = await LanguageModel.create({samplingMode: 'most-predictable'});
    window.session = session;
    return {answer: await session.prompt('Hello!')};
  } catch (error) {
    return {name: error.name, message: error.message, realm: error instanceof DOMException};
  }
}"""

START_CREATE = """() => {
  window.pending = LanguageModel.create({samplingMode: 'most-predictable'}).then(
    () => ({created: true}),
    (error) => ({name: error.name, message: error.message, realm: error instanceof DOMException}));
}"""


def open_page(page: Page, site: StaticServer, name: str) -> None:
    page.goto(f"{site.url}/{name}")
    page.click("#go")  # the first create() of a downloadable model needs activation


def runtime_worker(page: Page) -> Any:
    page.wait_for_function("() => true")
    for _ in range(100):
        workers = [w for w in page.workers if w.url.endswith("/worker.mjs")]
        if workers:
            return workers[0]
        page.wait_for_timeout(50)
    raise AssertionError("no runtime worker")


def stop_worker(page: Page) -> None:
    """Close the runtime worker from inside: it ends as a crash would, without telling
    the page (the page learns it from the Web Lock the worker held)."""
    worker = runtime_worker(page)
    try:
        worker.evaluate("() => { self.close(); }")
    except Exception:  # noqa: BLE001 - the worker may be gone before Playwright's answer
        pass


def test_a_stopped_worker_rejects_its_calls_and_the_next_call_starts_a_fresh_one(
    page: Page, site: StaticServer
) -> None:
    open_page(page, site, "echo.html")
    assert page.evaluate(CREATE_AND_PROMPT)["answer"]
    first = runtime_worker(page)
    stop_worker(page)
    page.wait_for_function("() => true")
    # The old session lived in that worker: its calls reject, they do not hang.
    lost = page.evaluate(
        """() => window.session.prompt('again').then(() => null,
             (e) => ({name: e.name, message: e.message, realm: e instanceof DOMException}))"""
    )
    assert lost == {
        "name": "OperationError",
        "message": lost["message"],
        "realm": True,
    }, lost
    assert "worker stopped" in lost["message"] or "lost" in lost["message"]
    # The next create() boots a fresh worker and answers.
    again = page.evaluate(CREATE_AND_PROMPT)
    assert "answer" in again, again
    assert runtime_worker(page) is not first


def test_a_worker_that_stops_during_a_call_rejects_it_with_an_operation_error(
    page: Page, site: StaticServer
) -> None:
    site.faults[ONNX] = "stall"  # create() waits on the download
    open_page(page, site, "model.html")
    page.evaluate(START_CREATE)
    page.wait_for_timeout(500)
    stop_worker(page)
    result = page.evaluate("window.pending")
    assert result["name"] == "OperationError" and result["realm"], result
    assert "worker stopped" in result["message"]
    del site.faults[ONNX]
    assert page.evaluate(CREATE_AND_PROMPT) == {"answer": ANSWER}


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("500", "HTTP 500"),
        ("drop", "cut after"),
        ("stall", "sent nothing for 2 s"),
    ],
)
def test_a_failing_model_server_gives_a_network_error_and_a_retry_works(
    page: Page, site: StaticServer, fault: str, says: str
) -> None:
    site.faults[ONNX] = fault
    open_page(page, site, "model.html")
    failed = page.evaluate(CREATE_AND_PROMPT)
    assert failed["name"] == "NetworkError" and failed["realm"], failed
    assert says in failed["message"] and "model_q4.onnx" in failed["message"], failed
    assert page.evaluate("LanguageModel.availability()") == "downloadable"
    del site.faults[ONNX]
    assert page.evaluate(CREATE_AND_PROMPT) == {"answer": ANSWER}


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("500", "HTTP 500"),
        ("drop", "cut after"),
        ("stall", "sent nothing for 2 s"),
    ],
)
def test_a_failing_external_data_download_gives_a_network_error_and_a_retry_works(
    page: Page, site: StaticServer, model: Path, fault: str, says: str
) -> None:
    """Weights in model.onnx_data are streamed into the model cache as they arrive
    (JSPI, web/worker/model-cache.mjs modelBlob): the same faults, the same errors,
    nothing half-stored."""
    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    data = "/model/onnx/model.onnx_data"
    site.faults[data] = fault
    site.add_file(
        "/external.html",
        page_html("/model/", 'data-download-timeout="2"').replace(
            b'data-dtype="q4"', b'data-dtype="fp32"'
        ),
    )
    open_page(page, site, "external.html")
    failed = page.evaluate(CREATE_AND_PROMPT)
    assert failed["name"] == "NetworkError" and failed["realm"], failed
    assert says in failed["message"] and "model.onnx_data" in failed["message"], failed
    cached = page.evaluate("async () => (await promptAPIRuntime.cache.list()).map((f) => f.url)")
    assert not any(url.endswith("_data") for url in cached), cached
    del site.faults[data]
    assert page.evaluate(CREATE_AND_PROMPT) == {"answer": ANSWER}


@pytest.mark.parametrize(("fault", "says"), [("drop", "cut after"), ("stall", "sent nothing")])
def test_a_failing_packed_download_gives_a_network_error_and_a_retry_works(
    page: Page, site: StaticServer, model: Path, fault: str, says: str
) -> None:
    """The packed form of the weights (model.onnx_data.packed), unpacked as it arrives
    into the model cache: a cut or stalled download is a NetworkError naming it, and
    nothing half-unpacked is kept."""
    from py_runtime.devtools.models import packed
    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    packed.move_to_grid(model / "onnx" / "model.onnx")
    packed.pack(model / "onnx" / "model.onnx")
    source = "/model/onnx/model.onnx_data.packed"
    site.faults[source] = fault
    site.add_file(
        "/packed.html",
        page_html("/model/", 'data-download-timeout="2"').replace(
            b'data-dtype="q4"', b'data-dtype="fp32"'
        ),
    )
    open_page(page, site, "packed.html")
    failed = page.evaluate(CREATE_AND_PROMPT)
    assert failed["name"] == "NetworkError" and failed["realm"], failed
    assert says in failed["message"] and "model.onnx_data.packed" in failed["message"], failed
    cached = page.evaluate("async () => (await promptAPIRuntime.cache.list()).map((f) => f.url)")
    assert not any(url.endswith("_data") for url in cached), cached
    del site.faults[source]
    assert "answer" in page.evaluate(CREATE_AND_PROMPT)


def test_a_stalled_tokenizer_download_fails_too(page: Page, site: StaticServer) -> None:
    site.faults["/model/tokenizer.json"] = "stall"
    open_page(page, site, "model.html")
    failed = page.evaluate(CREATE_AND_PROMPT)
    assert failed["name"] == "NetworkError", failed
    assert "tokenizer.json" in failed["message"], failed
    del site.faults["/model/tokenizer.json"]
    assert page.evaluate(CREATE_AND_PROMPT) == {"answer": ANSWER}


@pytest.mark.parametrize(
    ("file", "says"),
    [("onnx/model_q4.onnx", "model_q4.onnx"), ("tokenizer.json", "tokenizer.json")],
)
def test_a_corrupt_model_file_gives_an_error_naming_it(
    page: Page, site: StaticServer, model: Path, file: str, says: str
) -> None:
    path = model / file
    original = path.read_bytes()
    path.write_bytes(original[: len(original) // 3] + b"\x00garbage" * 64)
    open_page(page, site, "model.html")
    failed = page.evaluate(CREATE_AND_PROMPT)
    assert failed["name"] == "OperationError" and failed["realm"], failed
    assert says in failed["message"], failed
    # Repaired on the server (the cache holds a copy of what was served: clear it).
    path.write_bytes(original)
    page.evaluate("promptAPIRuntime.cache.clear()")
    assert page.evaluate(CREATE_AND_PROMPT) == {"answer": ANSWER}
