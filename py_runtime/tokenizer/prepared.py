"""A BPE tokenizer's prepared form: what is slow to rebuild from ``tokenizer.json``,
kept as a blob the page stores in its model cache beside the model.

Reading Gemma 3's tokenizer.json (33 MB, 262,144 tokens, 514,906 merges) means parsing
the JSON and building the merge table: seconds in Pyodide, on every load. The prepared
form holds the parsed file without its vocabulary and merges (JSON), the vocabulary as a
JSON list in id order, and the merge table as two int64 arrays; with the digest of the
``tokenizer.json`` text it was made from, so a changed file is never read through a stale
form.

Layout: ``MAGIC``, the source's BLAKE2b digest (32 bytes), then four length-prefixed
(uint64, little-endian) parts: the rest of the spec (JSON), the vocabulary (JSON list),
the merge keys, sorted, and their values (int64 arrays).
"""

from __future__ import annotations

import hashlib
import json
import struct
from array import array
from bisect import bisect_left
from typing import Any

MAGIC = b"PAPITOK1"


class SortedMerges:
    """A merge table as sorted keys beside their values, looked up by bisection: read
    straight from the prepared form's arrays (a dict of Gemma's 514,906 merges took
    0.5 s to build in Pyodide)."""

    __slots__ = ("_keys", "_values")

    def __init__(self, keys: array[int], values: array[int]) -> None:
        self._keys, self._values = keys, values

    def get(self, key: int) -> int | None:
        index = bisect_left(self._keys, key)
        if index < len(self._keys) and self._keys[index] == key:
            return self._values[index]
        return None


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=32).digest()


def dump(source: str, spec: dict[str, Any], merges: dict[int, int]) -> bytes:
    """The prepared form of a BPE tokenizer: ``spec`` is its parsed tokenizer.json,
    ``merges`` the BPE's merge table."""
    model = spec["model"]
    vocab: dict[str, int] = model["vocab"]
    tokens = [""] * len(vocab)
    for token, index in vocab.items():
        tokens[index] = token
    rest = {**spec, "model": {k: v for k, v in model.items() if k not in ("vocab", "merges")}}
    ordered = sorted(merges.items())
    keys, values = array("q", (k for k, _ in ordered)), array("q", (v for _, v in ordered))
    parts = [
        json.dumps(rest, ensure_ascii=False).encode(),
        json.dumps(tokens, ensure_ascii=False).encode(),
        keys.tobytes(),
        values.tobytes(),
    ]
    out = [MAGIC, digest(source)]
    for part in parts:
        out += [struct.pack("<Q", len(part)), part]
    return b"".join(out)


def load(source: str, blob: bytes) -> tuple[dict[str, Any], SortedMerges] | None:
    """The spec (vocabulary included, merges left out) and the merge table, or None when
    ``blob`` is not the prepared form of ``source``."""
    if blob[: len(MAGIC)] != MAGIC or blob[len(MAGIC) : len(MAGIC) + 32] != digest(source):
        return None
    try:
        view, offset, parts = memoryview(blob), len(MAGIC) + 32, []
        for _ in range(4):
            (size,) = struct.unpack_from("<Q", view, offset)
            parts.append(view[offset + 8 : offset + 8 + size])
            offset += 8 + size
        spec = json.loads(bytes(parts[0]))
        tokens = json.loads(bytes(parts[1]))
        spec["model"]["vocab"] = dict(zip(tokens, range(len(tokens)), strict=True))
        keys, values = array("q"), array("q")
        keys.frombytes(parts[2])
        values.frombytes(parts[3])
        if len(keys) != len(values):
            return None
        return spec, SortedMerges(keys, values)
    except (ValueError, KeyError, TypeError, struct.error):  # a damaged blob: made again
        return None


def contiguous(spec: dict[str, Any]) -> bool:
    """Whether a tokenizer.json can have a prepared form: a BPE whose ids are 0..n-1."""
    model = spec.get("model") or {}
    vocab = model.get("vocab")
    return (
        (model.get("type") or "BPE") == "BPE"
        and isinstance(vocab, dict)
        and sorted(vocab.values()) == list(range(len(vocab)))
    )
