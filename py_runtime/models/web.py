"""Running a causal LM in the page: model files fetched, ONNX Runtime Web through
the worker's JS backend (web/worker/ort-backend.mjs). Pyodide only."""

from __future__ import annotations

from typing import Any

from ..backends.base import Backend, Sampling, model_file
from .base import ProgressCallback
from .causal_lm import CausalLM

#: dtypes whose KV cache is float16 in Transformers.js / Optimum exports.
HALF_KV_DTYPES = frozenset({"fp16", "q4f16"})


class WebFiles:
    """Files under the model's base URL, fetched by the worker."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"

    async def read_text(self, name: str) -> str | None:
        from js import fetch  # type: ignore[import-not-found]

        response = await fetch(self.base_url + name)
        return await response.text() if response.ok else None


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
        from pyodide.ffi import to_js  # type: ignore[import-not-found]

        await self.js.forward(cache, to_js(ids))

    async def next_token(self, cache: int, sampling: Sampling) -> int:
        return int(self.js.nextToken(cache, sampling.top_k, sampling.temperature))

    def cache_length(self, cache: int) -> int:
        return int(self.js.cacheLength(cache))

    def truncate(self, cache: int, length: int) -> None:
        self.js.truncate(cache, length)

    async def clone(self, cache: int) -> int:
        return int(await self.js.clone(cache))

    def release(self, cache: int) -> None:
        self.js.release(cache)


def web_model(config: dict[str, Any], create_backend: Any) -> CausalLM:
    """The page's model: ``config`` holds ``model`` (a base URL), ``dtype``, ``device``
    and ``contextWindow`` (a cap); ``create_backend`` is ort-backend.mjs's factory."""
    base_url = config["model"]
    dtype = config.get("dtype") or ("fp32" if config.get("device") == "webgpu" else "q8")
    device = config.get("device") or "wasm"
    cap = int(config["contextWindow"]) if config.get("contextWindow") else None

    async def make_backend(model_config: dict[str, Any], on_progress: ProgressCallback) -> Backend:
        from js import Object  # type: ignore[import-not-found]
        from pyodide.ffi import create_proxy, to_js  # type: ignore[import-not-found]

        heads = int(model_config["num_attention_heads"])
        head_dim = int(model_config.get("head_dim") or model_config["hidden_size"] // heads)
        progress = create_proxy(on_progress)
        options = {
            "modelURL": WebFiles(base_url).base_url,
            "file": model_file(dtype),
            "device": device,
            "threads": int(config.get("threads") or 0),
            "kvHeads": int(model_config.get("num_key_value_heads", heads)),
            "headDim": head_dim,
            "kvType": "float16" if dtype in HALF_KV_DTYPES else "float32",
            "onProgress": progress,
        }
        try:
            js_backend = await create_backend(to_js(options, dict_converter=Object.fromEntries))
        finally:
            progress.destroy()
        return WebBackend(js_backend)

    return CausalLM(WebFiles(base_url), make_backend, cap)
