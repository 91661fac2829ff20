"""SmolLM2's packaged Q4_1 GGUF, re-encoded as F16 for llama-server, or as Q8_0 for
wllama in the bench (run in the model tools' venv, which has ``gguf``):
``python smollm2_gguf.py OUT.gguf [q8_0]``.

Every tensor is dequantized and written as F16 (1-D norms stay F32), with the same
metadata; the values are those the ONNX export holds (``convert_smollm2.py``). Q8_0
writes the matrices as llama.cpp's ``llama-quantize`` does (blocks of 32, a scale each).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import dequantize, quantize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from convert_smollm2 import fetch_gguf  # noqa: E402

#: general.file_type of each encoding.
FILE_TYPES = {"f16": 1, "q8_0": 7}


def reencode(source: Path, out: Path, encoding: str = "f16") -> None:
    reader = GGUFReader(str(source))
    architecture = reader.fields["general.architecture"].contents()
    writer = GGUFWriter(str(out), architecture)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        if key == "general.file_type":
            writer.add_uint32(key, FILE_TYPES[encoding])
        elif field.types[0] == GGUFValueType.ARRAY:
            writer.add_array(key, field.contents())
        else:
            writer.add_key_value(key, field.contents(), field.types[0])
    for tensor in reader.tensors:
        shape = [int(n) for n in reversed(tensor.shape)]
        values = dequantize(tensor.data, tensor.tensor_type).reshape(shape)
        keep = tensor.tensor_type == GGMLQuantizationType.F32 and values.ndim == 1
        if encoding == "q8_0" and values.ndim == 2 and values.shape[-1] % 32 == 0:
            q8 = GGMLQuantizationType.Q8_0
            blocks = quantize(values.astype(np.float32), q8)
            writer.add_tensor(tensor.name, blocks, raw_shape=blocks.shape, raw_dtype=q8)
        else:
            writer.add_tensor(tensor.name, values.astype(np.float32 if keep else np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> int:
    out = Path(sys.argv[1])
    encoding = sys.argv[2] if len(sys.argv) > 2 else "f16"
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with tempfile.TemporaryDirectory() as tmp:
        reencode(fetch_gguf(Path(tmp)), partial, encoding)
    partial.rename(out)
    print(f"[engine] wrote {out} ({out.stat().st_size / 1e6:.0f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
