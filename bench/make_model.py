"""Make the benchmark model: random weights with Qwen2.5-0.5B-Instruct's exact shape.

hidden 896, 24 layers, 14 heads, 2 KV heads, intermediate 4864, vocab 151,936,
tied embeddings, rope_theta 1e6, exported like the fixture (Optimum,
text-generation-with-past) and quantized to q8 (dynamic uint8) and q4
(MatMulNBits, block 32, symmetric). The tokenizer is the fixture's byte-level BPE,
its vocabulary padded to 151,936 with byte-level tokens that merges never form, so
it encodes any text and decodes every id.

Bench-only (torch, transformers < 4.58, optimum, onnxruntime's quantizers): run it
in its own environment, never in CI:

    bash bench/make_model.sh ~/.cache/prompt-api-bench/qwen2.5-0.5b-random
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tiny-qwen2-toolcall"
VOCAB = 151_936
CONFIG = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": VOCAB,
    "tie_word_embeddings": True,
    "rope_theta": 1_000_000.0,
    "max_position_embeddings": 32768,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 24,
    "attention_dropout": 0.0,
    "bos_token_id": 4091,
    "eos_token_id": 4093,
    "pad_token_id": 4091,
    "torch_dtype": "float32",
}


def padded_tokenizer(out: Path) -> None:
    """The fixture's tokenizer with unreachable byte-level tokens up to VOCAB ids."""
    spec = json.loads((FIXTURE / "tokenizer.json").read_text())
    vocab: dict[str, int] = spec["model"]["vocab"]
    taken = set(vocab.values()) | {t["id"] for t in spec["added_tokens"]}
    alphabet = "ĠĊ" + "".join(chr(c) for c in range(0x100, 0x17F) if c not in (0x120, 0x10A))
    serial = 0
    for token_id in range(VOCAB):
        if token_id in taken:
            continue
        # Two fixed marker characters then a base-N serial: no merge produces these.
        digits, n = "", serial
        while True:
            digits = alphabet[n % len(alphabet)] + digits
            n //= len(alphabet)
            if not n:
                break
        vocab["ĠĠĠ§" + digits] = token_id
        serial += 1
    (out / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False))
    for name in ("tokenizer_config.json", "special_tokens_map.json", "generation_config.json"):
        shutil.copy2(FIXTURE / name, out / name)


def main(out: Path) -> None:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    onnx_dir = out / "onnx"
    if not (onnx_dir / "model.onnx").exists():  # the export is the slow part: done once
        hf = out / "hf"
        hf.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        model = Qwen2ForCausalLM(Qwen2Config(**CONFIG))
        model.save_pretrained(hf, safe_serialization=True)
        padded_tokenizer(hf)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "optimum.exporters.onnx",
                "--model",
                str(hf),
                "--task",
                "text-generation-with-past",
                str(out),
            ],
            check=True,
        )
        onnx_dir.mkdir(exist_ok=True)
        for produced in out.glob("model.onnx*"):
            produced.rename(onnx_dir / produced.name)
        shutil.rmtree(hf)
    padded_tokenizer(out)
    (out / "config.json").write_text(json.dumps(CONFIG, indent=2))
    quantize(onnx_dir)


def quantize(onnx_dir: Path) -> None:
    """q8 (model_quantized.onnx) and q4 (model_q4.onnx), as the fixture's were made."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    source = onnx_dir / "model.onnx"
    if not (onnx_dir / "model_quantized.onnx").exists():
        quantize_dynamic(
            source,
            onnx_dir / "model_quantized.onnx",
            weight_type=QuantType.QUInt8,
            use_external_data_format=False,
        )
    if not (onnx_dir / "model_q4.onnx").exists():
        quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), block_size=32, is_symmetric=True)
        quantizer.process()
        # Under 2 GB (the tied output layer stays fp32, 544 MB): one file, like the fixture.
        onnx.save_model(quantizer.model.model, str(onnx_dir / "model_q4.onnx"))


if __name__ == "__main__":
    main(Path(sys.argv[1]).expanduser())
