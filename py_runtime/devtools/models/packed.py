"""A model's external data packed for transfer: ``model.onnx_data.packed`` beside
``model.onnx_data``, holding the same bytes in about a fifth of the size. The page
downloads the packed file and unpacks it, as it arrives, into the model cache as
``model.onnx_data`` (``web/worker/packed-data.mjs``), byte for byte: the session, its
answers, speed and memory are float32's; only the download shrinks.

Each weight is stored in the block format that holds it exactly, else as it is:

- ``q4_1``: a MatMul weight ``[K, N]`` (float32, row-major) whose blocks of 32 rows in
  a column are ``w = q * d + m`` for ``q`` in 0..15 and float16 ``d``, ``m`` (llama.cpp's
  Q4_1 grid, which the weights of a Q4_1 GGUF, as SmolLM2's package holds, are on);
- ``q8_0``: an embedding ``[V, H]`` whose blocks of 32 along a row are ``w = q * d``,
  ``q`` int8, ``d`` float16 (Q8_0);
- ``q8_0_t``: a MatMul weight ``[K, N]`` off the q4_1 grid whose transpose ``[N, K]``
  is on the q8_0 grid (rows of a tied LM head, ``convert_smollm2.py``), stored as that
  transpose;
- ``q8_0_values`` / ``q8_0_scales``: an int8 / float16 tensor that holds exactly the
  ``q`` / ``d`` of every q8_0 and q8_0_t segment before it, in order (an embedding's
  lookup kept as its blocks, ``convert_smollm2.py``): no bytes of its own;
- ``raw``: anything else, bytes as they are.

"Exactly" is checked: a weight is packed only where float32 arithmetic (``q * d``, then
``+ m``, each rounded to float32, as the page computes it) gives back every bit.

Layout: ``MAGIC``; a little-endian uint32 header length; the header (JSON: ``size``,
the unpacked size, and ``segments``, in file order: ``{"kind": "raw", "length": L}`` or
``{"kind": "q4_1" | "q8_0" | "q8_0_t", "rows": R, "cols": C}`` or ``{"kind":
"q8_0_values" | "q8_0_scales"}``); then each segment's bytes. A q4_1
segment is R/32 bands, each: ``d`` and ``m`` as float16 [C], then the 32 rows' values,
two a byte along the row (even column in the low nibble). A q8_0 segment is R rows, each:
``d`` as float16 [C/32], then C int8; a q8_0_t segment is the same, of the ``[R, C]``
transpose of a ``[C, R]`` weight.

    python -m py_runtime.devtools.models.packed MODEL.onnx   # writes MODEL.onnx_data.packed
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import numpy as np

MAGIC = b"PAPIPK01"
BLOCK = 32
SUFFIX = ".packed"


def _grid_q4_1(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A [K, N] weight on the q4_1 grid: (q uint8 [K/32, 32, N], d16, m16 [K/32, N],
    the weight those give back, as the page computes it)."""
    k, n = weight.shape
    bands = weight.reshape(k // BLOCK, BLOCK, n)
    m16 = bands.min(axis=1).astype(np.float16)
    m = m16.astype(np.float32)
    d16 = ((bands.max(axis=1) - m) / 15).astype(np.float16)
    d = d16.astype(np.float32)
    q = np.rint((bands - m[:, None, :]) / np.where(d == 0, 1, d)[:, None, :])
    q = np.clip(np.nan_to_num(q), 0, 15).astype(np.uint8)
    back = (q.astype(np.float32) * d[:, None, :]).astype(np.float32) + m[:, None, :]
    return q, d16, m16, back.reshape(k, n)


def q8_0_grid(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A [V, H] weight on the q8_0 grid: (q int8 [V, H], d16 [V, H/32], the weight back)."""
    v, h = weight.shape
    blocks = weight.reshape(v, h // BLOCK, BLOCK)
    d16 = (np.abs(blocks).max(axis=2) / 127).astype(np.float16)
    d = d16.astype(np.float32)
    q = np.rint(blocks / np.where(d == 0, 1, d)[:, :, None])
    q = np.clip(np.nan_to_num(q), -127, 127).astype(np.int8)
    back = (q.astype(np.float32) * d[:, :, None]).astype(np.float32)
    return q.reshape(v, h), d16, back.reshape(v, h)


def on_grid(weight: np.ndarray, kind: str) -> np.ndarray:
    """The nearest weight ``kind`` (q4_1 or q8_0) holds exactly: makes test models whose
    weights are on a GGUF's grids."""
    return _grid_q4_1(weight)[3] if kind == "q4_1" else q8_0_grid(weight)[2]


def _readers(model: object) -> dict[str, set[str]]:
    """Each tensor name -> the op types that read it."""
    readers: dict[str, set[str]] = {}
    for node in model.graph.node:  # type: ignore[attr-defined]
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    return readers


def move_to_grid(model_path: Path) -> None:
    """Move the MatMul weights and the embedding in ``model_path``'s external data onto
    the q4_1 and q8_0 grids, in place: a test model whose weights are on a GGUF's grids,
    as SmolLM2's are."""
    import onnx
    from onnx.external_data_helper import ExternalDataInfo, uses_external_data

    model = onnx.load(str(model_path), load_external_data=False)
    weights = np.memmap(model_path.with_name(model_path.name + "_data"), np.uint8, "r+")
    readers = _readers(model)
    for init in model.graph.initializer:
        ops = readers.get(init.name, set())
        if uses_external_data(init) and len(init.dims) == 2 and ops & {"MatMul", "Gather"}:
            info = ExternalDataInfo(init)
            view = weights[info.offset : info.offset + info.length].view(np.float32)
            kind = "q4_1" if ops == {"MatMul"} else "q8_0"
            view[:] = on_grid(view.reshape(tuple(init.dims)), kind).ravel()
    weights.flush()


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def q4_1(weight: np.ndarray) -> bytes | None:
    """The q4_1 segment of a [K, N] float32 weight, or None where it is not exact."""
    k, n = weight.shape
    if k % BLOCK or n % 2:
        return None
    q, d16, m16, back = _grid_q4_1(weight)
    if not _same(back, weight):
        return None
    nibbles = q[:, :, 0::2] | (q[:, :, 1::2] << 4)  # [bands, 32, n/2]
    out = bytearray()
    for band in range(k // BLOCK):
        out += d16[band].tobytes() + m16[band].tobytes() + nibbles[band].tobytes()
    return bytes(out)


def q8_0(weight: np.ndarray) -> bytes | None:
    """The q8_0 segment of a [V, H] float32 embedding, or None where it is not exact."""
    v, h = weight.shape
    if h % BLOCK:
        return None
    q, d16, back = q8_0_grid(weight)
    if not _same(back, weight):
        return None
    rows = np.concatenate([d16.view(np.uint8), q.view(np.uint8)], axis=1)
    return rows.tobytes()


def pack(model_path: Path) -> dict[str, int]:
    """Write ``<model>_data.packed`` for ``model_path``'s external data; returns how many
    weights went into each kind."""
    import onnx
    from onnx.external_data_helper import ExternalDataInfo, uses_external_data

    model = onnx.load(str(model_path), load_external_data=False)
    data_path = model_path.with_name(model_path.name + "_data")
    data = np.memmap(data_path, dtype=np.uint8, mode="r")
    readers = _readers(model)
    tensors = []
    for init in model.graph.initializer:
        if uses_external_data(init):
            info = ExternalDataInfo(init)
            tensors.append((info.offset, info.length, init))
    segments: list[dict[str, object]] = []
    payload: list[bytes] = []
    counts = dict.fromkeys(("q4_1", "q8_0", "q8_0_t", "q8_0_values", "q8_0_scales", "raw"), 0)
    blocks: dict[str, list[bytes]] = {"q8_0_values": [], "q8_0_scales": []}
    at = 0

    def raw(end: int) -> None:
        nonlocal at
        if end > at:
            segments.append({"kind": "raw", "length": end - at})
            payload.append(data[at:end].tobytes())
            at = end

    for offset, length, init in sorted(tensors, key=lambda t: t[0]):
        raw(offset)
        shape = tuple(init.dims)
        ops = readers.get(init.name, set())
        packed = None
        kind = "raw"
        if init.data_type == onnx.TensorProto.FLOAT and len(shape) == 2:
            weight = np.frombuffer(data[offset : offset + length], np.float32).reshape(shape)
            if ops == {"MatMul"}:
                packed, kind = q4_1(weight), "q4_1"
                if packed is None:
                    weight = np.ascontiguousarray(weight.T)
                    packed, kind, shape = q8_0(weight), "q8_0_t", shape[::-1]
            elif "Gather" in ops:
                packed, kind = q8_0(weight), "q8_0"
            if packed is not None and kind != "q4_1":
                # The segment's rows (d16, then q) are the lookup's scales and values.
                rows = np.frombuffer(packed, np.uint8).reshape(shape[0], -1)
                scale_bytes = 2 * (shape[1] // BLOCK)
                blocks["q8_0_scales"].append(rows[:, :scale_bytes].tobytes())
                blocks["q8_0_values"].append(rows[:, scale_bytes:].tobytes())
        twin = {onnx.TensorProto.INT8: "q8_0_values", onnx.TensorProto.FLOAT16: "q8_0_scales"}
        kind = twin.get(init.data_type, kind)
        if (
            kind in blocks
            and blocks[kind]
            and data[offset : offset + length].tobytes() == b"".join(blocks[kind])
        ):
            segments.append({"kind": kind})
            counts[kind] += 1
            at = offset + length
            continue
        if packed is None:
            counts["raw"] += 1
            raw(offset + length)
            continue
        segments.append({"kind": kind, "rows": shape[0], "cols": shape[1]})
        payload.append(packed)
        counts[kind] += 1
        at = offset + length
    raw(len(data))
    header = json.dumps({"size": len(data), "segments": segments}).encode()
    out = data_path.with_name(data_path.name + SUFFIX)
    with out.open("wb") as file:
        file.write(MAGIC + struct.pack("<I", len(header)) + header)
        for part in payload:
            file.write(part)
    return counts


def unpack(path: Path) -> bytes:
    """The unpacked bytes of a packed file (the page's unpacking, in numpy: for tests)."""
    blob = path.read_bytes()
    if blob[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{path}: not a packed file")
    (length,) = struct.unpack_from("<I", blob, len(MAGIC))
    at = len(MAGIC) + 4
    header = json.loads(blob[at : at + length])
    at += length
    out = bytearray()
    kept: dict[str, bytearray] = {"q8_0_values": bytearray(), "q8_0_scales": bytearray()}
    for segment in header["segments"]:
        if segment["kind"] == "raw":
            out += blob[at : at + segment["length"]]
            at += segment["length"]
            continue
        if segment["kind"] in kept:
            out += kept[segment["kind"]]
            continue
        rows, cols = segment["rows"], segment["cols"]
        if segment["kind"] == "q4_1":
            for _ in range(rows // BLOCK):
                d = np.frombuffer(blob, np.float16, cols, at).astype(np.float32)
                m = np.frombuffer(blob, np.float16, cols, at + 2 * cols).astype(np.float32)
                at += 4 * cols
                nib = np.frombuffer(blob, np.uint8, BLOCK * cols // 2, at).reshape(BLOCK, -1)
                at += BLOCK * cols // 2
                q = np.empty((BLOCK, cols), np.float32)
                q[:, 0::2], q[:, 1::2] = nib & 15, nib >> 4
                out += ((q * d).astype(np.float32) + m).astype(np.float32).tobytes()
        else:
            weight = np.empty((rows, cols), np.float32)
            for row in range(rows):
                kept["q8_0_scales"] += blob[at : at + 2 * (cols // BLOCK)]
                d = np.frombuffer(blob, np.float16, cols // BLOCK, at).astype(np.float32)
                at += 2 * (cols // BLOCK)
                kept["q8_0_values"] += blob[at : at + cols]
                q = np.frombuffer(blob, np.int8, cols, at).astype(np.float32)
                at += cols
                weight[row] = (q.reshape(-1, BLOCK) * d[:, None]).ravel()
            out += (weight.T if segment["kind"] == "q8_0_t" else weight).tobytes()
    if len(out) != header["size"]:
        raise ValueError(f"{path}: unpacked {len(out)} bytes, the header says {header['size']}")
    return bytes(out)


if __name__ == "__main__":
    print(pack(Path(sys.argv[1])))
