"""External data packed for transfer (py_runtime/devtools/models/packed.py): whatever
the weights, unpacking gives back the data file byte for byte, in Python and in the
page's own unpacker (web/worker/packed-data.mjs, run by Node); weights on a GGUF's grids
are packed (about a fifth of their size), others are kept as they are."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py_runtime.devtools.models import packed

onnx = pytest.importorskip("onnx")

UNPACKER = Path(__file__).resolve().parents[2] / "web" / "worker" / "packed-data.mjs"
#: Node: argv[1] the unpacker's URL, argv[2] a packed file; prints the unpacked SHA-256.
NODE_UNPACK = """
const { unpack } = await import(process.argv[1]);
const { readFile } = await import('node:fs/promises');
const { createHash } = await import('node:crypto');
const bytes = new Uint8Array(await readFile(process.argv[2]));
let at = 0;
const next = async () => {  // in uneven chunks, as a download arrives
  if (at >= bytes.length) return null;
  const chunk = bytes.subarray(at, at + 1 + (at % 7919));
  at += chunk.length;
  return chunk;
};
const { chunks } = await unpack(next);
const hash = createHash('sha256');
for await (const chunk of chunks) hash.update(chunk);
console.log(hash.digest('hex'));
"""


def node_unpacked_digest(path: Path) -> str:
    if shutil.which("node") is None:
        pytest.skip("needs Node")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_UNPACK, UNPACKER.as_uri(), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def write_model(
    folder: Path,
    matmul: np.ndarray,
    embedding: np.ndarray,
    head: np.ndarray,
    blocks: tuple[np.ndarray, np.ndarray],
) -> Path:
    """A graph that gathers from ``embedding``, multiplies by ``matmul`` and by a tied
    head's part (``head``'s rows, stored transposed for ``MatMul``), and gathers int8
    values and float16 scales (``blocks``), its weights as external data, as the
    conversion writes them."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["embedding", "ids"], ["hidden"]),
            helper.make_node("MatMul", ["hidden", "weight"], ["out"]),
            helper.make_node("MatMul", ["hidden", "head"], ["logits"]),
            helper.make_node("Gather", ["values", "ids"], ["q"]),
            helper.make_node("Gather", ["scales", "ids"], ["d"]),
        ],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [
            helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n", matmul.shape[1]]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", head.shape[0]]),
            helper.make_tensor_value_info("q", TensorProto.INT8, None),
            helper.make_tensor_value_info("d", TensorProto.FLOAT16, None),
        ],
        [
            numpy_helper.from_array(embedding, "embedding"),
            numpy_helper.from_array(np.ascontiguousarray(head.T), "head"),
            numpy_helper.from_array(blocks[0], "values"),
            numpy_helper.from_array(blocks[1], "scales"),
            numpy_helper.from_array(matmul, "weight"),
            numpy_helper.from_array(np.arange(5, dtype=np.float32), "odd"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = folder / "model.onnx"
    onnx.save(
        model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx_data",
        size_threshold=0,
    )
    return path


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    bands=st.integers(1, 3),
    cols=st.sampled_from([2, 6, 64]),
    vocab=st.integers(1, 9),
    blocks=st.integers(1, 3),
    grid=st.booleans(),
    scale=st.sampled_from([1e-3, 1.0, 50.0]),
)
def test_unpacking_gives_back_every_byte(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    bands: int,
    cols: int,
    vocab: int,
    blocks: int,
    grid: bool,
    scale: float,
) -> None:
    rng = np.random.default_rng(seed)
    matmul = (rng.standard_normal((32 * bands, cols)) * scale).astype(np.float32)
    embedding = (rng.standard_normal((vocab, 32 * blocks)) * scale).astype(np.float32)
    head = (rng.standard_normal((vocab + 1, 32 * blocks)) * scale).astype(np.float32)
    if grid:
        matmul = packed.on_grid(matmul, "q4_1")
        embedding = packed.on_grid(embedding, "q8_0")
        head = packed.on_grid(head, "q8_0")
    # The q8_0 weights' values and scales, as a lookup kept as blocks holds them; off
    # the grid, int8 and float16 tensors of the same size that hold other bytes.
    grids = [packed.q8_0_grid(weight) for weight in (embedding, head)]
    values = np.concatenate([q for q, _, _ in grids])
    scales = np.concatenate([d for _, d, _ in grids])
    if not grid:
        values, scales = values[::-1].copy(), (scales[::-1] + np.float16(1)).astype(np.float16)
    path = write_model(tmp_path_factory.mktemp("m"), matmul, embedding, head, (values, scales))
    counts = packed.pack(path)
    data = path.with_name("model.onnx_data")
    out = data.with_name(data.name + packed.SUFFIX)
    assert packed.unpack(out) == data.read_bytes()
    assert node_unpacked_digest(out) == hashlib.sha256(data.read_bytes()).hexdigest()
    if grid:
        assert counts == {
            "q4_1": 1,
            "q8_0": 1,
            "q8_0_t": 1,
            "q8_0_values": 1,
            "q8_0_scales": 1,
            "raw": 1,
        }
        assert out.stat().st_size < data.stat().st_size
    else:  # random floats are on no grid
        assert counts == {
            "q4_1": 0,
            "q8_0": 0,
            "q8_0_t": 0,
            "q8_0_values": 0,
            "q8_0_scales": 0,
            "raw": 6,
        }


def test_a_file_that_is_not_packed_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx_data.packed"
    path.write_bytes(b"not a packed file")
    with pytest.raises(ValueError, match="not a packed file"):
        packed.unpack(path)
