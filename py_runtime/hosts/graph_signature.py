"""What a causal LM's ONNX graph takes and gives, read from the graph itself.

The common export signatures (docs/models.md, "Graphs the runtime drives"):

- ``input_ids`` (required) and ``logits`` out;
- ``attention_mask``, ``position_ids``: fed where the graph has them (Optimum's Gemma
  exports and onnxruntime-genai's GroupQueryAttention graphs have no ``position_ids``);
- ``num_logits_to_keep`` or ``logits_to_keep``: how many last positions get logits;
- states, each ``past…`` input with its ``present…`` output (``past_key_values.N.key``
  -> ``present.N.key``, ``past_conv.N`` -> ``present_conv.N``): a KV cache grows along
  its sequence axis (the one symbolic axis after the batch) and starts empty; a state
  with no such axis (LFM2's convolution states) is replaced whole by every pass and
  starts as zeros, so it cannot be cut back: the backend runs the kept tokens again.

Anything else is an ``OperationError`` at ``create()`` naming the input or output. The
page's backend reads graphs by the same rules (web/worker/graph-signature.mjs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.errors import operation_error

KEEP_INPUTS = ("num_logits_to_keep", "logits_to_keep")
PLAIN_INPUTS = ("input_ids", "attention_mask", "position_ids")


@dataclass(frozen=True)
class State:
    """A ``past`` input carried from one pass's ``present`` output to the next."""

    input: str
    output: str
    #: The shape of its first value (batch 1; the sequence axis, if any, of length 0).
    shape: tuple[int, ...]
    dtype: str  # "float32" or "float16"
    #: The axis a KV cache grows along; None for a state replaced whole (recurrent).
    axis: int | None


@dataclass(frozen=True)
class Signature:
    inputs: frozenset[str]  # of PLAIN_INPUTS
    keep_input: str | None
    keep_rank: int
    states: tuple[State, ...]

    @property
    def recurrent(self) -> bool:
        """Whether some state cannot be cut back (truncation replays the kept tokens)."""
        return any(state.axis is None for state in self.states)


def present_name(past: str) -> str:
    if past.startswith("past_key_values"):
        return "present" + past.removeprefix("past_key_values")
    return "present" + past.removeprefix("past")


def _state(
    name: str, shape: list[Any], kind: str, outputs: set[str], config: dict[str, Any]
) -> State:
    output = present_name(name)
    if output not in outputs:
        raise operation_error(
            f"The model's graph has the input {name!r} but no output {output!r} to carry it."
        )
    dtype = "float16" if "float16" in kind else "float32"
    symbolic = [i for i, dim in enumerate(shape) if i > 0 and not isinstance(dim, int)]
    if not symbolic:
        return State(name, output, (1, *shape[1:]), dtype, None)
    if name.startswith("past_key_values") and len(shape) == 4:
        # [batch, KV heads, past length, head dim]: a dim the graph leaves symbolic
        # (the model builder's "kv_cache_dim") comes from config.json.
        heads = int(config.get("num_attention_heads") or 0)
        kv_heads = (
            shape[1] if isinstance(shape[1], int) else config.get("num_key_value_heads", heads)
        )
        head_dim = shape[3]
        if not isinstance(head_dim, int):
            head_dim = config.get("head_dim") or int(config.get("hidden_size", 0)) // max(heads, 1)
        if kv_heads and head_dim:
            return State(name, output, (1, int(kv_heads), 0, int(head_dim)), dtype, 2)
    if len(symbolic) == 1:
        length = symbolic[0]
        return State(
            name,
            output,
            tuple(0 if i == length else (1 if i == 0 else d) for i, d in enumerate(shape)),
            dtype,
            length,
        )
    raise operation_error(
        f"The runtime cannot tell the shape of the model's state input {name!r} ({shape})."
    )


def read_signature(
    inputs: list[tuple[str, list[Any], str]], outputs: list[str], config: dict[str, Any]
) -> Signature:
    """The graph's signature from its inputs (name, shape, type) and output names."""
    names = {name for name, _, _ in inputs}
    if "input_ids" not in names:
        raise operation_error(
            "The model's graph has no 'input_ids' input: not a causal LM export the runtime drives."
        )
    if "logits" not in outputs:
        raise operation_error(
            "The model's graph has no 'logits' output: not a causal LM export the runtime drives."
        )
    keep = next(((name, len(shape)) for name, shape, _ in inputs if name in KEEP_INPUTS), None)
    states = []
    for name, shape, kind in inputs:
        if name in PLAIN_INPUTS or name in KEEP_INPUTS:
            continue
        if not name.startswith("past"):
            raise operation_error(
                f"The model's graph takes an input the runtime cannot feed: {name!r}."
            )
        states.append(_state(name, shape, kind, set(outputs), config))
    return Signature(
        frozenset(names & set(PLAIN_INPUTS)),
        keep[0] if keep else None,
        keep[1] if keep else 0,
        tuple(states),
    )
