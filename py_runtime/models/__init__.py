"""Model adapters: each family is one small module behind ``base.ModelAdapter``."""

from __future__ import annotations

from .base import ModelAdapter
from .echo import EchoModel


def create_model(config: dict) -> ModelAdapter:
    """The adapter the page configured; ``echo`` is the default."""
    name = config.get("model") or "echo"
    if name == "echo":
        return EchoModel()
    raise ValueError(f"Unknown model {name!r}.")
