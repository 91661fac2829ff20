"""Model adapters: each family is one small module behind ``base.ModelAdapter``."""

from __future__ import annotations

from typing import Any

from .base import ModelAdapter
from .echo import EchoModel


def create_model(config: dict[str, Any], create_backend: Any = None) -> ModelAdapter:
    """The adapter the page configured: ``echo`` (the default), or the base URL of
    a model folder run by ONNX Runtime Web through ``create_backend``."""
    name = config.get("model") or "echo"
    if name == "echo":
        return EchoModel()
    if create_backend is None:
        raise ValueError(f"No backend to run {name!r} with.")
    from .web import web_model

    return web_model(config, create_backend)
