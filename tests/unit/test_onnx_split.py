"""The page's split of a one-file graph (web/worker/onnx-split.mjs, run by Node): a
small graph whose initializers are external data at their own offsets in the original
file, which onnxruntime loads and runs to the same logits, bit for bit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

SPLIT = Path(__file__).resolve().parents[2] / "web" / "worker" / "onnx-split.mjs"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-qwen2-toolcall" / "onnx"
NODE_SPLIT = """
const { readFile, writeFile } = await import('node:fs/promises');
const { splitWeights } = await import(process.argv[1]);
const blob = new Blob([await readFile(process.argv[2])]);
await writeFile(process.argv[3], await splitWeights(blob, 'model.onnx'));
"""


@pytest.mark.parametrize("name", ["model.onnx", "model_q4.onnx", "model_fp16.onnx"])
def test_split_graph_reads_its_weights_from_the_file_itself(tmp_path: Path, name: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    if shutil.which("node") is None:
        pytest.skip("node is missing")
    shutil.copy(FIXTURE / name, tmp_path / "model.onnx")  # the location the split names
    split = tmp_path / "graph.onnx"
    command = ["node", "--input-type=module", "-e", NODE_SPLIT, SPLIT.as_uri()]
    subprocess.run([*command, str(tmp_path / "model.onnx"), str(split)], check=True)
    assert split.stat().st_size < (tmp_path / "model.onnx").stat().st_size / 10
    whole = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    parted = ort.InferenceSession(str(split), providers=["CPUExecutionProvider"])
    feeds = {}
    for spec in whole.get_inputs():
        if spec.name.startswith("past_key_values."):
            dtype = np.float16 if "float16" in spec.type else np.float32
            feeds[spec.name] = np.zeros((1, spec.shape[1], 0, spec.shape[3]), dtype=dtype)
        elif spec.name == "position_ids":
            feeds[spec.name] = np.arange(5, dtype=np.int64)[None]
        else:
            feeds[spec.name] = np.array(
                [[1, 20, 300, 4000, 5]] if spec.name == "input_ids" else [[1] * 5], dtype=np.int64
            )
    expected, got = whole.run(["logits"], feeds)[0], parted.run(["logits"], feeds)[0]
    assert np.array_equal(expected, got)
