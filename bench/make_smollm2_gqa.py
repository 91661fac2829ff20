"""SmolLM2 as onnxruntime-genai's model builder makes it (``GroupQueryAttention``,
``SkipSimplifiedLayerNormalization``, one q/k/v product per layer: 342 nodes against the
shipped Optimum export's 3,161), from the same GGUF weights, with the runtime's two
preparation steps: the embedding stored once (the builder keeps the LM head's transpose
and transposes it back for the lookup) and read by the head as ``Gemm``, and logits for
the last positions only. docs/performance.md compares it with the shipped graph.

Runs in the model tools' venv (``python -m py_runtime models prepare smollm2`` makes it;
it holds torch, transformers and onnxruntime-genai):

    ~/.cache/prompt-api-models/venv/bin/python bench/make_smollm2_gqa.py OUT_DIR

OUT_DIR is then a model folder (``onnx/model.onnx`` + ``model.onnx_data``, SmolLM2's
tokenizer and configuration): ``python3 bench/dtype_agreement.py fp32
OUT_DIR/onnx/model.onnx``, ``python3 bench/ort_session_page.py --model OUT_DIR``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py_runtime" / "devtools" / "models"))
import convert_smollm2  # noqa: E402

from py_runtime.devtools import models  # noqa: E402
from py_runtime.hosts.pyodide import FOLDER_FILES  # noqa: E402


def build(hf: Path, work: Path) -> Path:
    """The builder's float32 CPU graph of the model saved in ``hf``."""
    out = work / "genai"
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf)]
    subprocess.run(
        [*command, "-o", str(out), "-p", "fp32", "-e", "cpu", "-c", str(work / "c")], check=True
    )
    return out / "model.onnx"


def embedding_once(source: Path, target: Path) -> None:
    """The LM head's [hidden, vocab] weight stored as the [vocab, hidden] embedding the
    lookup reads, and the head as ``MatMul(Transpose(embedding))``, the form
    ``tied_head_as_gemm`` turns into ``Gemm``."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    (head,) = [node for node in graph.node if "logits" in node.output]
    weight = next(t for t in graph.initializer if t.name == head.input[1])
    (back,) = [n for n in graph.node if n.op_type == "Transpose" and n.input[0] == weight.name]
    embedding = numpy_helper.from_array(
        np.ascontiguousarray(numpy_helper.to_array(weight).T), "model.embed_tokens.weight"
    )
    graph.initializer.remove(weight)
    graph.initializer.append(embedding)
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name == back.output[0]:
                node.input[index] = embedding.name
    graph.node.remove(back)
    transpose = helper.make_node(
        "Transpose", [embedding.name], ["lm_head/transposed"], name="lm_head/Transpose"
    )
    head.input[1] = "lm_head/transposed"
    graph.node.insert(list(graph.node).index(head), transpose)
    onnx.save(model, str(target))


def main() -> int:
    import onnx

    out = Path(sys.argv[1])
    prepared = Path(models.resolve("smollm2") or "")
    shutil.rmtree(out, ignore_errors=True)
    (out / "onnx").mkdir(parents=True)
    for name in FOLDER_FILES:
        if (prepared / name).is_file():
            shutil.copy(prepared / name, out / name)
    # The builder's contrib ops (SimplifiedLayerNormalization, ...) are onnxruntime's,
    # which onnx's checker does not know.
    onnx.checker.check_model = lambda *args, **kwargs: None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        gguf = convert_smollm2.fetch_gguf(work)
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, torch_dtype="float32"
        )
        model.save_pretrained(work / "hf")
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(prepared / name, work / "hf" / name)
        path = out / "onnx" / "model.onnx"
        embedding_once(build(work / "hf", work), path)
    convert_smollm2.logits_to_keep(path)
    convert_smollm2.tied_head_as_gemm(path)
    convert_smollm2.external_data(out)
    print(f"{out}: {len(onnx.load(str(path), load_external_data=False).graph.node)} nodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
