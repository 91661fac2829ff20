"""The Pyodide host: the engine inside the page's worker (Pyodide only).

``start`` is the worker script's one entry point (web/worker/worker.mjs): it reads
the ``init`` message, chooses the model adapter the page configured (the echo
model, a causal LM whose files are fetched and whose forward passes run on
ONNX Runtime Web through web/worker/ort-backend.mjs, or a server's model over
``fetch``) and returns the protocol
endpoint. The CPython host (``cpython.py``) is its counterpart for tests and tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from ..engine.endpoint import Endpoint, Post
from ..engine.errors import PromptAPIError, error_to_wire, operation_error
from ..engine.grammar import Grammar, GrammarError
from ..engine.protocol import BootError, Config, Init
from ..engine.runtime import Runtime
from ..engine.vocabulary import (
    ADVICE_FILE,
    DTYPES,
    Dtype,
    Sampling,
    model_file,
)
from ..engine.wire import decode_request, encode
from ..models.backend import Backend
from ..models.base import ModelAdapter, ProgressCallback
from ..models.causal_lm import CausalLM
from ..models.echo import EchoModel
from ..models.server import DEFAULT_TIMEOUT, ServerModel, server_url
from .xgrammar_ebnf import to_xgrammar


def start(init_text: str, post: Post, create_backend: Any, files: Any) -> Endpoint | None:
    """The endpoint for the page's ``init`` message; ``create_backend`` is ONNX Runtime
    Web's factory, ``files`` model-cache.mjs's ``{text, cached}``. A failure is posted
    as ``boot-error`` (and None returned)."""
    try:
        init = decode_request(init_text)
        if not isinstance(init, Init):
            raise operation_error("The runtime must be started with an init message.")
        return Endpoint(Runtime(create_model(init.config, create_backend, files)), post)
    except Exception as error:
        post(encode(BootError(error_to_wire(error))))
        return None


def create_model(config: Config, create_backend: Any, files: Any) -> ModelAdapter:
    """The adapter the page configured: ``echo`` (the default), a server's model
    (``openai:`` + its base URL), or the base URL of a model folder."""
    model = config.get("model") or "echo"
    if model == "echo":
        return EchoModel()
    base_url = server_url(model)
    if base_url is not None:
        return ServerModel(
            base_url,
            FetchHttp(),
            config.get("serverModel") or None,
            config.get("serverKey") or None,
            float(config.get("serverTimeout") or DEFAULT_TIMEOUT),
            context_cap(config),
        )
    return web_model(config, create_backend, files)


def context_cap(config: Config) -> int | None:
    """The page's ``contextWindow``: a cap on the model's own window, if set."""
    return int(config["contextWindow"]) if config.get("contextWindow") else None


class FetchExchange:
    """One request through the worker's ``fetch``, cancelled with an AbortController."""

    def __init__(self, method: str, url: str, headers: dict[str, str], body: str | None) -> None:
        from js import AbortController, Object, TextDecoder
        from pyodide.ffi import to_js

        self._controller = AbortController.new()
        init = {"method": method, "headers": headers, "signal": self._controller.signal}
        if body is not None:
            init["body"] = body
        self._url = url
        self._init = to_js(init, dict_converter=Object.fromEntries)
        self._decoder = TextDecoder.new()
        self._reader: Any = None

    async def start(self) -> int:
        from js import fetch
        from pyodide.ffi import JsException

        try:
            response = await fetch(self._url, self._init)
        except JsException as error:  # a TypeError: unreachable, refused by CORS, ...
            raise ConnectionError(str(error)) from None
        self._reader = response.body.getReader()
        return int(response.status)

    async def read(self) -> str | None:
        from js import Object
        from pyodide.ffi import JsException, to_js

        try:
            chunk = await self._reader.read()
        except JsException as error:
            raise ConnectionError(str(error)) from None
        if chunk.done:
            return None
        stream = to_js({"stream": True}, dict_converter=Object.fromEntries)
        return str(self._decoder.decode(chunk.value, stream))

    def cancel(self) -> None:
        self._controller.abort()


class FetchHttp:
    def open(
        self, method: str, url: str, headers: dict[str, str], body: str | None
    ) -> FetchExchange:
        return FetchExchange(method, url, headers, body)


#: The files of a model folder besides its ONNX file (and that file's ``_data``).
FOLDER_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    ADVICE_FILE,
)


def network_failure(error: Exception) -> PromptAPIError | None:
    """A download's failure (model-cache.mjs throws a DOMException named NetworkError,
    naming the file) as the page's NetworkError; None for any other error."""
    if getattr(error, "name", None) != "NetworkError":
        return None
    return PromptAPIError("NetworkError", str(getattr(error, "message", error)))


def graph_failure(error: Exception) -> PromptAPIError | None:
    """A graph the runtime cannot load or drive (ort-session.mjs, graph-signature.mjs
    throw an Error named OperationError, naming the file, input or output) as the
    page's OperationError; None for any other error."""
    if getattr(error, "name", None) != "OperationError":
        return None
    return operation_error(str(getattr(error, "message", error)))


class WebFiles:
    """Files under the model's base URL, read by the worker through its model cache
    (``js_files``: model-cache.mjs's ``text``, ``states`` and ``revalidate``). The ONNX
    file is the configured dtype's, else the one the folder advises for ``device``, else
    q8 on wasm and fp32 on WebGPU."""

    def __init__(self, base_url: str, js_files: Any, dtype: str | None, device: str) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self._js = js_files
        self._dtype = dtype
        self._device = device

    async def read_text(self, name: str) -> str | None:
        try:
            text = await self._js.text(self.base_url + name)
        except Exception as error:
            raise network_failure(error) or error from None
        # A missing file is JS null, which Pyodide gives as ``jsnull``, not None.
        return text if isinstance(text, str) else None

    async def read_prepared(self, name: str) -> bytes | None:
        data = await self._js.prepared(self.base_url + name)
        return bytes(data.to_py()) if data is not None and hasattr(data, "to_py") else None

    async def keep_prepared(self, name: str, data: bytes) -> None:
        from pyodide.ffi import to_js

        await self._js.keepPrepared(self.base_url + name, to_js(data))

    async def dtype(self) -> str:
        """The dtype to load (the advice is read once, through the cache)."""
        if self._dtype is None:
            advised = None
            text = await self.read_text(ADVICE_FILE)
            try:
                advised = json.loads(text)["defaultDtype"][self._device] if text else None
            except (ValueError, KeyError, TypeError):
                advised = None
            fallback = "fp32" if self._device == "webgpu" else "q8"
            self._dtype = advised if advised in DTYPES else fallback
        return self._dtype

    async def _urls(self) -> Any:
        """Every file a load reads: the folder's (the advice when it is read), the
        ONNX file and its external weights."""
        from pyodide.ffi import to_js

        onnx_file = model_file(cast(Dtype, await self.dtype()))
        names = [*FOLDER_FILES, onnx_file, onnx_file + "_data"]
        return to_js([self.base_url + name for name in names])

    async def cached(self) -> bool:
        """Every file a load reads is cached (or known to be missing)."""
        states = [str(state) for state in await self._js.states(await self._urls())]
        *folder, onnx, data = states
        return "unknown" not in folder and onnx == "cached" and data != "unknown"

    async def revalidate(self) -> None:
        """Start revalidating the cached files (model-cache.mjs; never rejects)."""
        self._js.revalidate(self.base_url, await self._urls())


class WebBackend:
    """The Backend protocol over the JS OrtBackend (handles are plain integers)."""

    def __init__(self, js_backend: Any) -> None:
        self.js = js_backend

    @property
    def forwarded(self) -> int:
        return int(self.js.forwarded)

    @property
    def run_ms(self) -> float:
        return float(self.js.runMs)

    def new_cache(self) -> int:
        return int(self.js.newCache())

    async def forward(self, cache: int, ids: list[int]) -> None:
        from pyodide.ffi import to_js

        await self.js.forward(cache, to_js(ids))

    async def next_token(self, cache: int, sampling: Sampling) -> int:
        token = self.js.nextToken(
            cache, sampling.top_k, sampling.temperature, sampling.repetition_penalty
        )
        return int(await token if hasattr(token, "then") else token)

    async def speculate(
        self, cache: int, draft: list[int], sampling: Sampling
    ) -> tuple[list[int], bool]:
        from pyodide.ffi import to_js

        result = await self.js.speculate(
            cache,
            to_js(draft),
            sampling.top_k,
            sampling.temperature,
            sampling.repetition_penalty,
        )
        return [int(token) for token in result.tokens], bool(result.pending)

    async def score(
        self, cache: int, ids: list[int], also: Sequence[tuple[int, int]] = ()
    ) -> list[float]:
        from pyodide.ffi import to_js

        pairs = [value for pair in also for value in pair]
        return [float(value) for value in await self.js.score(cache, to_js(ids), to_js(pairs))]

    def use_tokenizer(self, tokenizer_json: str, stop_ids: list[int]) -> None:
        """Only the stop ids cross: the page's backend reads the same tokenizer.json
        from the model cache itself, when a grammar first needs it. Converting its text
        to JS took 0.3-2.6 s and left as much garbage as the page's peak then showed."""
        from pyodide.ffi import to_js

        self.js.useTokenizer(to_js(stop_ids))

    async def constrain(self, cache: int, grammar: Grammar | None) -> None:
        from js import Object
        from pyodide.ffi import JsException, to_js

        value = (
            None
            if grammar is None
            else to_js(to_xgrammar(grammar), dict_converter=Object.fromEntries)
        )
        try:
            await self.js.constrain(cache, value)
        except JsException as error:
            raise GrammarError(str(error)) from None

    def accept(self, cache: int, ids: list[int]) -> bool:
        from pyodide.ffi import to_js

        return bool(self.js.accept(cache, to_js(ids)))

    def forced(self, cache: int) -> str:
        return str(self.js.forced(cache))

    def cache_length(self, cache: int) -> int:
        return int(self.js.cacheLength(cache))

    def truncate(self, cache: int, length: int) -> None:
        self.js.truncate(cache, length)

    async def clone(self, cache: int) -> int:
        return int(await self.js.clone(cache))

    def release(self, cache: int) -> None:
        self.js.release(cache)

    def resources(self) -> dict[str, int]:
        held = self.js.resources()
        return {key: int(getattr(held, key)) for key in ("caches", "tensors", "matchers")}


def web_model(config: Config, create_backend: Any, js_files: Any) -> CausalLM:
    """The page's model: ``config`` holds ``model`` (a base URL), ``dtype``, ``device``
    and ``contextWindow`` (a cap); ``create_backend`` is ort-backend.mjs's factory."""
    base_url = config["model"]
    device = config.get("device") or "wasm"
    cap = context_cap(config)
    files = WebFiles(base_url, js_files, config.get("dtype"), device)

    async def make_backend(model_config: dict[str, Any], on_progress: ProgressCallback) -> Backend:
        from js import Object
        from pyodide.ffi import create_proxy, to_js

        progress = create_proxy(on_progress)
        dtype = await files.dtype()
        options = {
            "modelURL": files.base_url,
            "file": model_file(cast(Dtype, dtype)),
            "dtype": dtype,
            "device": device,
            "threads": int(config.get("threads") or 0),
            "config": model_config,  # KV shapes the graph leaves symbolic
            "onProgress": progress,
        }
        try:
            js_backend = await create_backend(to_js(options, dict_converter=Object.fromEntries))
        except Exception as error:
            raise network_failure(error) or graph_failure(error) or error from None
        finally:
            progress.destroy()
        await files.revalidate()  # in the background: a changed file is fetched next load
        return WebBackend(js_backend)

    return CausalLM(files, make_backend, cap)
