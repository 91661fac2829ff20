"""Model caching in the page (web/worker/model-cache.mjs): the first create() downloads
with progress over the bytes; every later load reads the Cache API with no request for
the model's files, and availability() says "available" (no user activation needed); a
cut or changed file is fetched again; promptAPIRuntime.cache lists and clears."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Worker

from py_runtime.devtools.server import StaticServer

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
ANSWER = "Hello! How can I help you today?"

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js", reason="dist/ is missing: run `python3 build/build.py`"
)


def page_html(revalidation: str = "daily") -> bytes:
    return (
        '<!doctype html><meta charset=utf-8><script src="/_lm/language-model.js" '
        f'data-model="/model/" data-dtype="q4" data-cache-revalidation="{revalidation}">'
        "</script><button id=go>go</button>"
    ).encode()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of the fixture, which a test may change."""
    folder = tmp_path / "model"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("model_*f16*", "model_int8*"))
    return folder


@pytest.fixture
def site(model: Path) -> Iterator[StaticServer]:
    files = {"/daily.html": page_html(), "/always.html": page_html("always")}
    with StaticServer({"/_lm/": DIST, "/model/": model}, files) as server:
        yield server


def model_requests(server: StaticServer) -> list[tuple[str, str]]:
    return [(method, path) for method, path in server.requests if path.startswith("/model/")]


LOAD = """async () => {
  const before = await LanguageModel.availability();
  const progress = [];
  const session = await LanguageModel.create({
    samplingMode: 'most-predictable',
    monitor: (m) => m.addEventListener('downloadprogress', (e) => progress.push(e.loaded)),
  });
  return {before, progress, answer: await session.prompt('Hello!'),
          after: await LanguageModel.availability()};
}"""


def test_a_warm_load_makes_no_request_and_needs_no_activation(page: Page, site: StaticServer):
    page.goto(f"{site.url}/daily.html")
    page.click("#go")  # the first create() downloads: it needs activation
    cold = page.evaluate(LOAD)
    assert cold["before"] == "downloadable"
    assert cold["answer"] == ANSWER
    assert cold["after"] == "available"
    assert cold["progress"][0] == 0 and cold["progress"][-1] == 1
    assert cold["progress"] == sorted(cold["progress"]), "progress only grows"
    assert len(cold["progress"]) > 2, "progress follows the bytes"
    downloaded = model_requests(site)
    assert ("GET", "/model/onnx/model_q4.onnx") in downloaded
    # The cache is written in the background: wait until the model file is in it.
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('.onnx'))"
    )
    site.requests.clear()
    page.reload()
    # No click: a cached model is "available", so create() needs no activation.
    warm = page.evaluate(LOAD)
    assert warm["before"] == "available"
    assert warm["answer"] == ANSWER
    time.sleep(0.5)  # a background revalidation would show by now
    assert model_requests(site) == [], "a warm load sends no request for the model's files"


def test_external_data_streams_into_the_cache_and_loads_from_it(
    page: Page, site: StaticServer, model: Path
):
    """Weights in model.onnx_data go from the download straight into the cache, and ONNX
    Runtime reads them from a Blob of the cached copy (JSPI): the same answer, cold and
    warm, and no request once cached."""
    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    site.add_file("/external.html", page_html().replace(b'data-dtype="q4"', b'data-dtype="fp32"'))
    page.goto(f"{site.url}/external.html")
    page.click("#go")
    cold = page.evaluate(LOAD)
    assert cold["answer"] == ANSWER
    assert cold["progress"][-1] == 1 and cold["progress"] == sorted(cold["progress"])
    assert ("GET", "/model/onnx/model.onnx_data") in model_requests(site)
    cached = page.evaluate("async () => (await promptAPIRuntime.cache.list()).map((f) => f.url)")
    assert any(url.endswith("/model/onnx/model.onnx_data") for url in cached), cached
    site.requests.clear()
    page.reload()
    warm = page.evaluate(LOAD)
    assert warm["before"] == "available" and warm["answer"] == ANSWER
    time.sleep(0.5)
    assert model_requests(site) == []


def test_external_data_loads_while_the_worker_collects_garbage(
    page: Page, site: StaticServer, model: Path
):
    """ONNX Runtime reads each weight's range of the cached Blob from a stream that only
    its suspended wasm stack holds: a garbage collection in the middle of a read must
    not leave create() waiting forever (Chromium collects such a stream unless the
    runtime holds it). The worker is made to collect every 5 ms through a warm load."""
    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    site.add_file("/external.html", page_html().replace(b'data-dtype="q4"', b'data-dtype="fp32"'))
    page.goto(f"{site.url}/external.html")
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('_data'))"
    )
    collecting: list[str] = []

    def collect(worker: Worker) -> None:
        if worker.url.endswith("/worker.mjs"):  # not ONNX Runtime's own threads
            collecting.append(worker.evaluate("setInterval(gc, 5) && 'on'"))

    page.on("worker", collect)
    page.reload()
    warm = page.evaluate(f"""() => Promise.race([({LOAD})(), new Promise((_, reject) =>
      setTimeout(() => reject(new Error('create() still waiting after 60 s')), 60_000))])""")
    assert collecting == ["on"]
    assert warm["before"] == "available" and warm["answer"] == ANSWER


def packed_model(model: Path) -> Path:
    """``model`` with fp32's weights as external data on a GGUF's grids (as SmolLM2's
    are), and that data packed for transfer. Returns the data file."""
    from py_runtime.devtools.models import packed
    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    packed.move_to_grid(model / "onnx" / "model.onnx")
    counts = packed.pack(model / "onnx" / "model.onnx")
    assert counts["q4_1"] > 20 and counts["q8_0"] == 1, counts
    return model / "onnx" / "model.onnx_data"


DIGEST = """async (name) => {
  const cache = await caches.open('prompt-api-runtime-models');
  const hit = await cache.match(new URL(name, location.href).href);
  const digest = await crypto.subtle.digest('SHA-256', await hit.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}"""


@pytest.mark.parametrize("jspi", ["auto", "off"])
def test_packed_external_data_is_unpacked_into_the_cache_byte_for_byte(
    page: Page, site: StaticServer, model: Path, jspi: str
):
    """Where the server has ``model.onnx_data.packed``, the page downloads it instead
    of the data file and unpacks it, as it arrives, into the cache as the data file:
    the same bytes (so the same session and answers), a fraction of the download."""
    import hashlib

    data = packed_model(model)
    html = page_html().replace(b'data-dtype="q4"', f'data-dtype="fp32" data-jspi="{jspi}"'.encode())
    site.add_file("/packed.html", html)
    page.goto(f"{site.url}/packed.html")
    page.click("#go")
    cold = page.evaluate(LOAD)
    assert cold["answer"]  # the weights moved to the grid: the fixture's answer may change
    assert cold["progress"][-1] == 1 and cold["progress"] == sorted(cold["progress"])
    requests = model_requests(site)
    assert ("GET", "/model/onnx/model.onnx_data.packed") in requests
    assert ("GET", "/model/onnx/model.onnx_data") not in requests
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('_data'))"
    )
    expected = hashlib.sha256(data.read_bytes()).hexdigest()
    assert page.evaluate(DIGEST, "/model/onnx/model.onnx_data") == expected
    site.requests.clear()
    page.reload()
    warm = page.evaluate(LOAD)
    assert warm["before"] == "available" and warm["answer"] == cold["answer"]
    time.sleep(0.5)
    assert model_requests(site) == []


def test_a_cut_cached_file_is_fetched_again(page: Page, site: StaticServer):
    page.goto(f"{site.url}/daily.html")
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('.onnx'))"
    )
    # Cut the cached model file short, keeping the size recorded with it.
    page.evaluate(
        """async () => {
          const cache = await caches.open('prompt-api-runtime-models');
          const url = new URL('/model/onnx/model_q4.onnx', location.href).href;
          const hit = await cache.match(url);
          const bytes = new Uint8Array(await hit.arrayBuffer());
          await cache.put(url, new Response(bytes.slice(0, 1000), {headers: hit.headers}));
        }"""
    )
    site.requests.clear()
    page.reload()
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    assert model_requests(site) == [("GET", "/model/onnx/model_q4.onnx")]


def test_a_changed_file_is_fetched_again(page: Page, site: StaticServer, model: Path):
    page.goto(f"{site.url}/always.html")
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('.onnx'))"
    )
    config = model / "config.json"
    config.write_text(config.read_text() + "\n")  # a new version: its ETag changes
    page.reload()
    assert page.evaluate(LOAD)["answer"] == ANSWER  # from the cache; revalidated after
    page.wait_for_function(
        """async () => !(await promptAPIRuntime.cache.list())
             .some((f) => f.url.endsWith('/model/config.json'))"""
    )
    site.requests.clear()
    page.reload()
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    gets = [path for method, path in model_requests(site) if method == "GET"]
    assert gets == ["/model/config.json"], "only the changed file is downloaded again"


def test_the_page_lists_and_clears_its_cache(page: Page, site: StaticServer):
    page.goto(f"{site.url}/daily.html")
    assert page.evaluate("promptAPIRuntime.cache.list()") == []
    page.click("#go")
    page.evaluate(LOAD)
    page.wait_for_function(
        "async () => (await promptAPIRuntime.cache.list()).some((f) => f.url.endsWith('.onnx'))"
    )
    listed = {
        e["url"].removeprefix(site.url): e["bytes"]
        for e in page.evaluate("promptAPIRuntime.cache.list()")
    }
    model_file = FIXTURE / "onnx" / "model_q4.onnx"
    assert listed["/model/onnx/model_q4.onnx"] == model_file.stat().st_size
    assert listed["/model/tokenizer.json"] == (FIXTURE / "tokenizer.json").stat().st_size
    page.evaluate("promptAPIRuntime.cache.clear()")
    assert page.evaluate("promptAPIRuntime.cache.list()") == []
    page.reload()
    assert page.evaluate("LanguageModel.availability()") == "downloadable"


@pytest.mark.parametrize(("advice", "expected"), [(None, "model_quantized"), ("q4", "model_q4")])
def test_without_a_dtype_the_folders_advice_chooses_the_file(
    page: Page, site: StaticServer, model: Path, advice: str | None, expected: str
):
    """`prompt_api.json` (written by `models prepare` from the dtype table) names the
    dtype to load when the page names none; without it, q8 on wasm."""
    if advice:
        (model / "prompt_api.json").write_text(json.dumps({"defaultDtype": {"wasm": advice}}))
    site.add_file(
        "/plain.html",
        b'<!doctype html><script src="/_lm/language-model.js" data-model="/model/"></script>'
        b"<button id=go>go</button>",
    )
    page.goto(f"{site.url}/plain.html")
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    onnx = [path for method, path in model_requests(site) if path.endswith(".onnx")]
    assert onnx == [f"/model/onnx/{expected}.onnx"]


# In the worker from its start: the length of every Uint8Array it allocates.
RECORD_ALLOCATIONS = """(() => {
  const Native = Uint8Array;
  self.allocated = [];
  self.Uint8Array = new Proxy(Native, {
    construct(target, args, newTarget) {
      if (typeof args[0] === 'number') self.allocated.push(args[0]);
      return Reflect.construct(target, args, newTarget === self.Uint8Array ? target : newTarget);
    },
  });
  return 'on';
})()"""


def test_weights_go_into_wasm_memory_without_a_js_copy_of_each(
    page: Page, site: StaticServer, model: Path
):
    """ONNX Runtime's JSPI glue gathered each weight it read from the Blob in a JS
    buffer of the weight's size before copying it into wasm memory, so the page held the
    largest weight twice while a session was created (640 MiB for Gemma 3 270M's
    embedding). The glue dist/ ships (build/ort_glue.py) puts each chunk in its place as
    it arrives: no buffer of a weight's size is allocated, and the answer is the same."""
    import onnx

    from py_runtime.devtools.models.convert_smollm2 import external_data

    external_data(model)
    graph = onnx.load(str(model / "onnx" / "model.onnx"), load_external_data=False).graph
    lengths = {
        int(entry.value)
        for weight in graph.initializer
        for entry in weight.external_data
        if entry.key == "length" and int(entry.value) >= 2**16
    }
    workers: list[Worker] = []

    def record(worker: Worker) -> None:
        if worker.url.endswith("/worker.mjs"):  # not ONNX Runtime's own threads
            assert worker.evaluate(RECORD_ALLOCATIONS) == "on"
            workers.append(worker)

    page.on("worker", record)
    site.add_file("/external.html", page_html().replace(b'data-dtype="q4"', b'data-dtype="fp32"'))
    page.goto(f"{site.url}/external.html")
    page.click("#go")
    assert page.evaluate(LOAD)["answer"] == ANSWER
    (worker,) = workers
    allocated = set(worker.evaluate("self.allocated"))
    assert max(lengths) >= 2**20, lengths
    assert not lengths & allocated, sorted(lengths & allocated)
