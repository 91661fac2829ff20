"""SmolLM2's fp32 file with its MatMul weights stored as their Q4_1 blocks (``q`` as
uint4 or uint8, ``d`` and ``m`` float16) and the LM head's parts as the lookup's Q8_0
blocks, each turned back into float32 by ONNX Runtime's constant folding at session
creation (``Cast``, ``Mul``, ``Add``, ``Reshape``; ``Slice`` and ``Transpose`` for the
head): a file a fifth of the size, whether its session comes as cheaply. Under native
onnxruntime, each variant in a process of its own: the external data's size, session
creation (prepacking off, as the page loads float models), the process's peak resident
memory, and whether the logits and KV caches of a 24-token prompt and a step after it
are the shipped file's bit for bit.

    python3 bench/fold_at_load.py [--model smollm2|DIR] [--threads 2]

Prints markdown.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from py_runtime.devtools import models  # noqa: E402
from py_runtime.devtools.models import packed  # noqa: E402


def blocks_folded(source: Path, target: Path, values: str) -> None:
    """``source``'s fp32 model (a folder) written to ``target`` with its q4_1-grid
    MatMul weights and its head's parts as blocks that constant folding expands."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source / "onnx" / "model.onnx"))
    graph = model.graph
    readers = packed._readers(model)
    nodes = []

    def constant(value: list[int], name: str) -> str:
        graph.initializer.append(numpy_helper.from_array(np.array(value, np.int64), name))
        return name

    for init in list(graph.initializer):
        if readers.get(init.name) != {"MatMul"} or init.data_type != TensorProto.FLOAT:
            continue
        if init.name.startswith("tied_head/part") or len(init.dims) != 2:
            continue
        weight = numpy_helper.to_array(init)
        q, d16, m16, back = packed._grid_q4_1(weight)
        if not np.array_equal(back.view(np.uint32), weight.view(np.uint32)):
            continue
        name = init.name
        graph.initializer.remove(init)
        if values == "uint4":
            flat = q.ravel()
            raw = (flat[0::2] | (flat[1::2] << 4)).tobytes()
            q_tensor = helper.make_tensor(f"{name}/q", TensorProto.UINT4, q.shape, raw, raw=True)
        else:
            q_tensor = numpy_helper.from_array(q, f"{name}/q")
        graph.initializer.extend(
            [
                q_tensor,
                numpy_helper.from_array(d16[:, None, :], f"{name}/d"),
                numpy_helper.from_array(m16[:, None, :], f"{name}/m"),
            ]
        )
        shape = constant(list(weight.shape), f"{name}/shape")
        nodes += [
            helper.make_node("Cast", [f"{name}/q"], [f"{name}/qf"], to=TensorProto.FLOAT),
            helper.make_node("Cast", [f"{name}/d"], [f"{name}/df"], to=TensorProto.FLOAT),
            helper.make_node("Cast", [f"{name}/m"], [f"{name}/mf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{name}/qf", f"{name}/df"], [f"{name}/qd"]),
            helper.make_node("Add", [f"{name}/qd", f"{name}/mf"], [f"{name}/w"]),
            helper.make_node("Reshape", [f"{name}/w", shape], [name]),
        ]
    parts = sorted(
        (t for t in graph.initializer if t.name.startswith("tied_head/part")),
        key=lambda t: int(t.name.removeprefix("tied_head/part")),
    )
    vocab, width = next(t.dims for t in graph.initializer if t.name == "lookup/values")
    axis = constant([0], "fold/axis")
    split = constant([0, width // packed.BLOCK, packed.BLOCK], "fold/blocks")
    rows = constant([0, width], "fold/rows")
    start = 0
    for part in parts:
        name, count = part.name, part.dims[1]
        graph.initializer.remove(part)
        begin, end = constant([start], f"{name}/begin"), constant([start + count], f"{name}/end")
        nodes += [
            helper.make_node("Slice", ["lookup/values", begin, end, axis], [f"{name}/q"]),
            helper.make_node("Slice", ["lookup/scales", begin, end, axis], [f"{name}/d"]),
            helper.make_node("Cast", [f"{name}/q"], [f"{name}/qf"], to=TensorProto.FLOAT),
            helper.make_node("Cast", [f"{name}/d"], [f"{name}/df"], to=TensorProto.FLOAT),
            helper.make_node("Reshape", [f"{name}/qf", split], [f"{name}/qb"]),
            helper.make_node("Mul", [f"{name}/qb", f"{name}/df"], [f"{name}/e"]),
            helper.make_node("Reshape", [f"{name}/e", rows], [f"{name}/er"]),
            helper.make_node("Transpose", [f"{name}/er"], [name], perm=[1, 0]),
        ]
        start += count
    assert start == vocab
    for index, node in enumerate(nodes):
        graph.node.insert(index, node)
    (target / "onnx").mkdir(parents=True)
    for file in ("config.json",):
        (target / file).write_bytes((source / file).read_bytes())
    onnx.save(
        model,
        str(target / "onnx" / "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx_data",
        size_threshold=1024,
    )


def measure(path: Path, out: Path, threads: int) -> None:
    """In this process: create the session, run a prompt and a step, save the outputs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.disable_prepacking", "1")
    started = time.perf_counter()
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    created = time.perf_counter() - started
    names = [i.name for i in session.get_inputs()]
    past = {n: np.zeros((1, 3, 0, 64), np.float32) for n in names if "past" in n}
    outputs = []
    for ids in (list(range(100, 124)), [7]):
        total = len(ids) + next(iter(past.values())).shape[2]
        feeds = {
            "input_ids": np.array([ids], np.int64),
            "attention_mask": np.ones((1, total), np.int64),
            "num_logits_to_keep": np.array(1, np.int64),
            "position_ids": np.arange(total - len(ids), total)[None],
        }
        result = dict(
            zip(
                [o.name for o in session.get_outputs()],
                session.run(None, {n: v for n, v in {**feeds, **past}.items() if n in names}),
                strict=True,
            )
        )
        outputs.append(result["logits"])
        past = {n: result[n.replace("past_key_values", "present")] for n in past}
    np.save(out, np.concatenate([x.ravel() for x in [*outputs, *past.values()]]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{created:.2f} {peak:.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure, args.threads)
        return 0
    source = Path(models.resolve(args.model) or args.model)
    print("| SmolLM2 fp32, native | external data | session creation | peak RSS | outputs |")
    print("| --- | ---: | ---: | ---: | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        variants = {"as shipped (float32)": source}
        for values in ("uint8", "uint4"):
            blocks_folded(source, work / values, values)
            variants[f"Q4_1 blocks ({values}) folded at load"] = work / values
        shipped = None
        for label, folder in variants.items():
            model, out = folder / "onnx" / "model.onnx", work / f"{len(label)}.npy"
            command = [sys.executable, __file__, "--threads", str(args.threads)]
            line = subprocess.run(
                [*command, "--measure", str(model), str(out)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            created, peak = float(line[0]), float(line[1])
            result = np.load(out).view(np.uint32)
            if shipped is None:
                shipped, same = result, "(the reference)"
            else:
                same = "the same bit for bit" if np.array_equal(result, shipped) else "DIFFER"
            size = (folder / "onnx" / "model.onnx_data").stat().st_size / 1e6
            print(f"| {label} | {size:.0f} MB | {created:.2f} s | {peak:,.0f} MiB | {same} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
