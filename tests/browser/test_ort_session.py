"""ort-session.mjs's session options in the page: the fixture model loaded at several
dtypes through ``loadSession``, with what it hands ONNX Runtime Web's
``InferenceSession.create`` recorded on the way (the real sessions are created)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.bench.pages import DIST, FIXTURE, worker_modules_server

pytestmark = pytest.mark.needs_files(
    DIST / "ort" / "ort.wasm.min.mjs", reason="dist/ is missing: run `python3 build/build.py`"
)

SCRIPT = """async (loads) => {
  const { loadSession, startOrt } = await import('/dist/ort-session.mjs');
  const ort = await startOrt({ device: 'wasm', threads: 1 });
  const create = ort.InferenceSession.create;
  const seen = [];
  ort.InferenceSession.create = (model, options) => {
    seen.push(options.extra.session);
    return create.call(ort.InferenceSession, model, options);
  };
  for (const [file, dtype] of loads) {
    const { session } = await loadSession({
      modelURL: new URL('/model/', location.href).href, file, dtype, device: 'wasm', threads: 1,
    });
    await session.release();
  }
  return seen;
}"""


def test_float_dtypes_load_without_prepacking_and_quantized_ones_with_it(page: Page) -> None:
    """The decision is the dtype's, not the file's name: fp32 and fp16 weights are used
    as they are (docs/performance.md, the lookup from blocks); the quantized kernels
    get their prepacked weights, the fixture being far under the size cap."""
    loads = [
        ["onnx/model.onnx", "fp32"],
        ["onnx/model_quantized.onnx", "q8"],
        ["onnx/model_q4.onnx", "q4"],
        ["onnx/model_fp16.onnx", "fp16"],
    ]
    with worker_modules_server(FIXTURE) as server:
        page.goto(f"{server.url}/constrained.html")
        seen = page.evaluate(SCRIPT, loads)
    prepacking = [options.get("disable_prepacking") != "1" for options in seen]
    assert prepacking == [False, True, True, False]
    # Every dtype keeps the constant-folded dequantization at load.
    assert all(options["disable_quant_qdq"] == "1" for options in seen)
