"""ONNX Runtime Web's JSPI glue as dist/ships it: its external-data reader made to write
each chunk it reads from a Blob straight into wasm memory.

onnxruntime-web 1.30's JSPI glue (``ort-wasm-simd-threaded.jspi.mjs``, function ``Za``)
reads a weight's byte range from a Blob in chunks of 1 MiB into a JS buffer of the whole
weight's size (kept for the next weight, grown to the largest), then copies that buffer
into the weight's place in wasm memory. So while a session is created, the page holds
the largest weight twice for a while: a 640 MiB JS buffer for Gemma 3 270M's embedding
(docs/performance.md). Where the weight goes to wasm memory (the CPU, location
0), the glue edited here copies each chunk to its place there as it arrives; a weight
bound for a GPU buffer (location 1) is still gathered first, as ONNX Runtime uploads it
in one call. Everything else in the file is ONNX Runtime's own.
"""

from __future__ import annotations

from pathlib import Path

#: The glue file edited, in dist/ort/.
FILE = "ort-wasm-simd-threaded.jspi.mjs"

#: (ONNX Runtime's text, ours), each found exactly once. In ``Za(name, offset, length,
#: destination, location)``: ``c`` is the length, ``h`` the destination in wasm memory,
#: ``e`` the location, ``v`` what each chunk is ``set`` into at its offset and whose
#: ``subarray(0, c)`` is then copied to ``h``; ``(t(), z)`` is wasm memory's byte view,
#: refreshed after it grows.
EDITS = (
    (
        "let v;if(f.A)v=new Uint8Array(c);",
        "let v;if(0===e)v={set:(s,o)=>{(t(),z).set(s,(h>>>0)+o)},subarray:()=>null};"
        "else if(f.A)v=new Uint8Array(c);",
    ),
    # The chunks are in place already where the reader above wrote them.
    ("case 0:(t(),z).set(q,h>>>0);break;", "case 0:q&&(t(),z).set(q,h>>>0);break;"),
)


def edited(text: str) -> str:
    """``text`` (ONNX Runtime's glue) with :data:`EDITS` made; a build of another
    onnxruntime-web whose glue differs is refused, not shipped half-edited."""
    for theirs, ours in EDITS:
        if text.count(theirs) != 1:
            raise SystemExit(
                f"build: {FILE} is not the glue build/ort_glue.py edits (found {theirs!r}"
                f" {text.count(theirs)} times): check its external-data reader again"
            )
        text = text.replace(theirs, ours)
    return text


def edit(folder: Path) -> None:
    """Edit ``folder``'s copy of the glue in place."""
    path = folder / FILE
    path.write_text(edited(path.read_text(encoding="utf-8")), encoding="utf-8")
