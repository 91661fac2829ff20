"""The CPython host: a causal LM from a model folder on disk, run by ``onnxruntime``
(for tests, tools and benchmarks; the page's counterpart is ``pyodide.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..engine.vocabulary import Dtype, model_file
from ..models.backend import Backend
from ..models.base import ProgressCallback
from ..models.causal_lm import CausalLM


class FolderFiles:
    """A model folder on disk."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    async def read_text(self, name: str) -> str | None:
        path = self.folder / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    async def cached(self) -> bool:
        """A folder on disk still counts as a download, as a page's first load does."""
        return False


def local_model(
    folder: str | Path,
    dtype: Dtype = "fp32",
    threads: int | None = None,
    context_cap: int | None = None,
) -> CausalLM:
    """A CausalLM on ``onnxruntime`` (imported only here: it is a CPython dependency)."""

    async def make_backend(config: dict[str, Any], on_progress: ProgressCallback) -> Backend:
        from .onnxruntime_backend import OnnxRuntimeBackend

        backend = OnnxRuntimeBackend(Path(folder) / model_file(dtype), threads)
        on_progress(1)
        return backend

    return CausalLM(FolderFiles(folder), make_backend, context_cap)
