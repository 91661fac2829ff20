"""Where a decode step's time goes: natively, per operator, and in ORT Web vs native
onnxruntime for the kernels that dominate it.

    python bench/kernels.py --model DIR --dtype q8 [--threads 1 2] [--rows 1] [--json FILE]

1. onnxruntime's own profiler over decode steps of the model (after a 512-token
   prefill): milliseconds per step for each operator type.
2. The dominant kernels alone, at the model's shapes, in one headless Chromium (ORT
   Web, wasm, the runtime's dist/ORT files) and in CPython (onnxruntime), side by side:
   milliseconds per call and the ratio. ``--rows 128`` times them on 128 positions at
   once (a prefill chunk, as ort-backend.mjs runs a long input) instead of one.
3. A layer's attention with its q/k/v product, after 128 cached positions, as
   onnxruntime-genai's ``GroupQueryAttention`` and as SmolLM2's preparation makes it
   plain (``convert_smollm2.plain_attention``), the same way side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from py_runtime.devtools.browser import launch_args  # noqa: E402
from py_runtime.devtools.models.convert_smollm2 import plain_attention  # noqa: E402
from py_runtime.devtools.server import StaticServer  # noqa: E402
from py_runtime.engine.vocabulary import model_file  # noqa: E402
from py_runtime.hosts.cpython import local_model  # noqa: E402


def profile_decode(model: Path, dtype: str, threads: int, prompt: int, steps: int) -> dict:
    """Milliseconds per decode step by operator type, from onnxruntime's profiler."""
    lm = local_model(model, dtype, threads=threads)
    asyncio.run(lm.load(lambda _: None, lambda: False))
    backend = lm.backend
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp()) / "decode")
    backend.session = ort.InferenceSession(
        str(model / model_file(dtype)), options, providers=["CPUExecutionProvider"]
    )
    cache = backend.new_cache()
    asyncio.run(backend.forward(cache, [42] * prompt))
    for _ in range(steps):
        asyncio.run(backend.forward(cache, [42]))
    events = json.loads(Path(backend.session.end_profiling()).read_text())
    runs = [e for e in events if e.get("name") == "model_run"][-steps:]
    per_op: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        if any(r["ts"] <= event["ts"] <= r["ts"] + r["dur"] for r in runs):
            per_op[event["args"]["op_name"]] += event["dur"] / 1000 / steps
    step_ms = statistics.median(r["dur"] / 1000 for r in runs)
    return {"step_ms": step_ms, "per_op_ms": dict(sorted(per_op.items(), key=lambda kv: -kv[1]))}


def kernel_models(config: dict, dtype: str, into: Path, rows: int = 1) -> dict[str, Path]:
    """One-operator models at the model's shapes, on ``rows`` positions: the linear
    layers (hidden -> intermediate, as q8's DynamicQuantizeLinear + MatMulInteger, q4's
    MatMulNBits or fp32's MatMul) and the tied LM head (hidden -> vocab, float32 MatMul)."""
    hidden, inner, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, hidden])
    models: dict[str, Path] = {}

    def save(name: str, nodes: list, inits: list, width: int, opset: list) -> None:
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, rows, width])
        graph = helper.make_graph(nodes, name, [x], [y], inits)
        path = into / f"{name}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=opset, ir_version=8), path)
        models[name] = path

    opset = [helper.make_opsetid("", 17)]
    if dtype == "q8":
        weight = numpy_helper.from_array(rng.integers(0, 255, (hidden, inner), np.uint8), "w")
        nodes = [
            helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
            helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
            helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["xs", "ws"], ["s"]),
            helper.make_node("Mul", ["accf", "s"], ["y"]),
        ]
        inits = [
            weight,
            numpy_helper.from_array(np.array(128, np.uint8), "wz"),
            numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
        ]
        save("int8 linear (DynamicQuantizeLinear + MatMulInteger)", nodes, inits, inner, opset)
    elif dtype == "fp32":
        weight = rng.standard_normal((hidden, inner), np.float32) / 30
        save(
            "float32 linear (MatMul)",
            [helper.make_node("MatMul", ["x", "w"], ["y"])],
            [numpy_helper.from_array(weight, "w")],
            inner,
            opset,
        )
    else:
        blocks = hidden // 32
        packed = rng.integers(0, 255, (inner, blocks, 16), np.uint8)
        scales = rng.random(inner * blocks, np.float32) / 100
        node = helper.make_node(
            "MatMulNBits",
            ["x", "w", "ws"],
            ["y"],
            domain="com.microsoft",
            K=hidden,
            N=inner,
            bits=4,
            block_size=32,
        )
        inits = [numpy_helper.from_array(packed, "w"), numpy_helper.from_array(scales, "ws")]
        save(
            "4-bit linear (MatMulNBits)",
            [node],
            inits,
            inner,
            [*opset, helper.make_opsetid("com.microsoft", 1)],
        )
    head = rng.standard_normal((hidden, vocab), np.float32) / 30
    save(
        "float32 LM head (MatMul)",
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        [numpy_helper.from_array(head, "w")],
        vocab,
        opset,
    )
    return models


def attention_models(config: dict, into: Path, rows: int, past: int = 128) -> dict[str, Path]:
    """A layer's q/k/v product and attention (rotary inside) on ``rows`` positions after
    ``past`` cached ones (random, fixed), as ``GroupQueryAttention`` and made plain."""
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    kv_heads, dim = config["num_key_value_heads"], hidden // heads
    rng = np.random.default_rng(0)
    total = past + rows
    positions = np.arange(4096, dtype=np.float32)[:, None]
    angles = positions / config.get("rope_theta", 10000.0) ** (np.arange(0, dim, 2) / dim)
    inits = [
        numpy_helper.from_array(
            rng.standard_normal((hidden, (heads + 2 * kv_heads) * dim), np.float32) / 30, "w"
        ),
        *(
            numpy_helper.from_array(rng.standard_normal((1, kv_heads, past, dim), np.float32), n)
            for n in ("past_k", "past_v")
        ),
        numpy_helper.from_array(np.array([total - 1], np.int32), "seqlens_k"),
        numpy_helper.from_array(np.array(total, np.int32), "total"),
        numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"),
        numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin"),
        # What the plain attention reads for its positions: only the shapes count.
        numpy_helper.from_array(np.zeros((1, rows), np.int64), "input_ids"),
        numpy_helper.from_array(np.ones((1, total), np.int64), "attention_mask"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["qkv"]),
        helper.make_node(
            "GroupQueryAttention",
            ["qkv", "", "", "past_k", "past_v", "seqlens_k", "total", "cos", "sin"],
            ["y", "present_k", "present_v"],
            name="layer/GroupQueryAttention",
            domain="com.microsoft",
            num_heads=heads,
            kv_num_heads=kv_heads,
            scale=dim**-0.5,
            do_rotary=1,
            rotary_interleaved=0,
            local_window_size=-1,
        ),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, hidden])
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, rows, hidden]),
        *(
            helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ("present_k", "present_v")
        ),
    ]
    graph = helper.make_graph(nodes, "attention", [x], outputs, inits)
    opset = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    gqa = into / "attention-gqa.onnx"
    onnx.save(helper.make_model(graph, opset_imports=opset, ir_version=8), gqa)
    plain = into / "attention-plain.onnx"
    plain.write_bytes(gqa.read_bytes())
    plain_attention(plain)
    label = f"q/k/v + attention, {past} cached"
    return {f"{label}, GroupQueryAttention": gqa, f"{label}, plain": plain}


KERNEL_PAGE = b"""<!doctype html><meta charset=utf-8><script type=module>
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  window.timeKernel = async (url, threads, hidden, runs, rows) => {
    ort.env.wasm.numThreads = threads;
    const session = await ort.InferenceSession.create(url, { graphOptimizationLevel: 'all' });
    const x = new ort.Tensor('float32', Float32Array.from({ length: rows * hidden }, Math.random),
                             [1, rows, hidden]);
    const times = [];
    for (let i = 0; i < runs + 5; i++) {
      const started = performance.now();
      await session.run({ x });
      if (i >= 5) times.push(performance.now() - started);
    }
    await session.release();
    return times;
  };
  window.ready = true;
</script>"""


def time_native(path: Path, threads: int, hidden: int, runs: int, rows: int) -> list[float]:
    import time

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).random((1, rows, hidden), np.float32)
    times = []
    for i in range(runs + 5):
        started = time.perf_counter()
        session.run(None, {"x": x})
        if i >= 5:
            times.append((time.perf_counter() - started) * 1000)
    return times


def time_kernels(
    models: dict[str, Path], threads: list[int], hidden: int, runs: int, rows: int
) -> dict:
    """Milliseconds per call of each kernel model, page (ORT Web) and native."""
    from playwright.sync_api import sync_playwright

    folder = next(iter(models.values())).parent
    results: dict[str, dict[str, float]] = {}
    with (
        StaticServer(
            {"/": REPO / "dist", "/_kernels/": folder}, {"/k.html": KERNEL_PAGE}
        ) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(**launch_args())
        for count in threads:
            # A fresh page per thread count: ORT Web fixes its thread count at start.
            page = browser.new_page()
            page.goto(f"{server.url}/k.html")
            page.wait_for_function("window.ready === true")
            for name, path in models.items():
                web = page.evaluate(
                    "([u, t, h, r, n]) => timeKernel(u, t, h, r, n)",
                    [f"/_kernels/{path.name}", count, hidden, runs, rows],
                )
                native = time_native(path, count, hidden, runs, rows)
                results[f"{name}, {count} thread(s)"] = {
                    "ort_web_ms": statistics.median(web),
                    "native_ms": statistics.median(native),
                }
            page.close()
        browser.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--dtype", default="q8", choices=["q8", "q4", "fp32"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1, help="positions per call (1: decode)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = args.model.resolve()
    config = json.loads((model / "config.json").read_text())
    report: dict = {"profile": {}, "kernels": {}}
    for count in args.threads if args.rows == 1 else []:
        profile = profile_decode(model, args.dtype, count, 512, 16)
        report["profile"][count] = profile
        print(f"native decode step, {count} thread(s): {profile['step_ms']:.1f} ms")
        for op, ms in list(profile["per_op_ms"].items())[:6]:
            print(f"  {op:<28}{ms:8.1f} ms  {ms / profile['step_ms'] * 100:5.1f} %")
    with tempfile.TemporaryDirectory() as folder:
        models = kernel_models(config, args.dtype, Path(folder), args.rows)
        models |= attention_models(config, Path(folder), args.rows)
        report["kernels"] = time_kernels(
            models, args.threads, config["hidden_size"], args.runs, args.rows
        )
    title = f"kernel at the model shapes, {args.rows} row(s)"
    print(f"\n{title:<66}{'ORT Web ms':>12}{'native ms':>12}{'ratio':>8}")
    for name, row in report["kernels"].items():
        ratio = row["native_ms"] / row["ort_web_ms"]
        print(f"{name:<66}{row['ort_web_ms']:12.2f}{row['native_ms']:12.2f}{ratio:7.2f}x")
    print(f"medians of {args.runs} calls; ratio = native time / ORT Web time (1.0 = as fast)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
