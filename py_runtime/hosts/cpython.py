"""The CPython host: a causal LM from a model folder on disk, run by ``onnxruntime``,
or a server's model over ``urllib`` (for tests, tools and benchmarks; the page's
counterpart is ``pyodide.py``)."""

from __future__ import annotations

import asyncio
import codecs
import http.client
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..engine.vocabulary import Dtype, model_file
from ..models.backend import Backend
from ..models.base import ProgressCallback
from ..models.causal_lm import CausalLM
from ..models.server import ServerModel


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

    async def read_prepared(self, name: str) -> bytes | None:
        return None  # nothing is written into a model folder

    async def keep_prepared(self, name: str, data: bytes) -> None:
        return None


def local_model(
    folder: str | Path,
    dtype: Dtype = "fp32",
    threads: int | None = None,
    context_cap: int | None = None,
) -> CausalLM:
    """A CausalLM on ``onnxruntime`` (imported only here: it is a CPython dependency)."""

    async def make_backend(config: dict[str, Any], on_progress: ProgressCallback) -> Backend:
        from .onnxruntime_backend import OnnxRuntimeBackend

        backend = OnnxRuntimeBackend(Path(folder) / model_file(dtype), threads, config)
        on_progress(1)
        return backend

    return CausalLM(FolderFiles(folder), make_backend, context_cap)


class UrllibExchange:
    """One request through ``urllib`` in a worker thread (the server backend's Http)."""

    def __init__(self, method: str, url: str, headers: dict[str, str], body: str | None) -> None:
        data = None if body is None else body.encode()
        self._request = urllib.request.Request(url, data, headers, method=method)
        self._response: Any = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._cancelled = False

    def _open(self) -> int:
        try:
            self._response = urllib.request.urlopen(self._request, timeout=600)  # noqa: S310
        except urllib.error.HTTPError as error:  # an error status still has a body
            self._response = error
        except (urllib.error.URLError, OSError) as error:
            raise ConnectionError(str(getattr(error, "reason", error))) from None
        return int(self._response.status)

    async def start(self) -> int:
        return await asyncio.to_thread(self._open)

    def _read(self) -> str | None:
        try:
            data = self._response.read1(65536)
        except (OSError, ValueError, AttributeError, http.client.HTTPException) as error:
            if self._cancelled:
                return None
            raise ConnectionError(str(error)) from None
        if not data:
            return None
        return self._decoder.decode(data)

    async def read(self) -> str | None:
        return await asyncio.to_thread(self._read)

    def cancel(self) -> None:
        self._cancelled = True
        if self._response is not None:
            self._response.close()


class UrllibHttp:
    def open(
        self, method: str, url: str, headers: dict[str, str], body: str | None
    ) -> UrllibExchange:
        return UrllibExchange(method, url, headers, body)


def server_model(
    base_url: str,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    context_cap: int | None = None,
) -> ServerModel:
    """A model served by an OpenAI-compatible server (see ``models/server.py``)."""
    return ServerModel(base_url, UrllibHttp(), model, api_key, timeout, context_cap)
