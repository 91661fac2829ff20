"""What the page and the engine both name, defined once.

The enumerations of the IDL that the engine reads, the sampling of each
``samplingMode`` and the limits ``LanguageModel.params()`` reports, the model
dtypes and devices. web/src/protocol.js is generated from this module and
``protocol.py``, so the shim and the engine cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

Availability = Literal["unavailable", "downloadable", "downloading", "available"]
Role = Literal["system", "user", "assistant"]
MessageType = Literal["text", "image", "audio", "tool-call", "tool-response"]
SamplingModeName = Literal[
    "most-predictable",
    "predictable",
    "slightly-predictable",
    "balanced",
    "slightly-creative",
    "creative",
    "most-creative",
]
#: Model precisions, as the suffixes of Transformers.js / Optimum exports name them.
Dtype = Literal["fp32", "fp16", "q8", "int8", "uint8", "q4", "q4f16", "bnb4"]
Device = Literal["wasm", "webgpu"]
ToolCallResults = Literal["when-called", "always-array"]

AVAILABILITIES: tuple[Availability, ...] = get_args(Availability)
ROLES: tuple[Role, ...] = get_args(Role)
MESSAGE_TYPES: tuple[MessageType, ...] = get_args(MessageType)
SAMPLING_MODE_NAMES: tuple[SamplingModeName, ...] = get_args(SamplingModeName)
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
DEVICES: tuple[Device, ...] = get_args(Device)
TOOL_CALL_RESULTS: tuple[ToolCallResults, ...] = get_args(ToolCallResults)


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen; ``top_k`` 1 (or temperature 0) is greedy.
    ``repetition_penalty`` (the model's generation_config.json) divides the positive
    logits, and multiplies the negative ones, of every token already in the context."""

    top_k: int = 1
    temperature: float = 1.0
    repetition_penalty: float = 1.0

    @property
    def greedy(self) -> bool:
        return self.top_k <= 1 or self.temperature <= 0


#: (top-k, temperature) per samplingMode; "most-predictable" is greedy.
SAMPLING_MODES: dict[SamplingModeName, Sampling] = {
    "most-predictable": Sampling(top_k=1),
    "predictable": Sampling(top_k=3, temperature=0.3),
    "slightly-predictable": Sampling(top_k=5, temperature=0.5),
    "balanced": Sampling(top_k=8, temperature=0.7),
    "slightly-creative": Sampling(top_k=16, temperature=0.9),
    "creative": Sampling(top_k=32, temperature=1.1),
    "most-creative": Sampling(top_k=64, temperature=1.3),
}
DEFAULT_SAMPLING_MODE: SamplingModeName = "balanced"
MAX_TOP_K = 128
MAX_TEMPERATURE = 2.0
#: A deprecated ``temperature`` below this is 0 (greedy).
MIN_TEMPERATURE = 1e-3

#: ``LanguageModel.params()`` (extension contexts): the defaults are balanced's.
PARAMS: dict[str, float] = {
    "defaultTopK": SAMPLING_MODES[DEFAULT_SAMPLING_MODE].top_k,
    "maxTopK": MAX_TOP_K,
    "defaultTemperature": SAMPLING_MODES[DEFAULT_SAMPLING_MODE].temperature,
    "maxTemperature": MAX_TEMPERATURE,
}


SamplingModes = Mapping[SamplingModeName, Sampling]


def sampling_for(
    mode: str | None,
    top_k: float | None,
    temperature: float | None,
    modes: SamplingModes = SAMPLING_MODES,
) -> Sampling:
    """A session's sampling: its mode's (in ``modes``, a model's calibration of them), or
    its deprecated topK/temperature (each missing one from the default mode), clamped to
    ``PARAMS``' maxima."""
    if mode is not None:
        return modes[cast(SamplingModeName, mode)]
    base = modes[DEFAULT_SAMPLING_MODE]
    k = int(_clamp(top_k, 1, MAX_TOP_K, base.top_k))
    t = _clamp(temperature, 0.0, MAX_TEMPERATURE, base.temperature)
    # Dividing logits by a tiny temperature overflows them (NaN probabilities): that
    # close to 0, sampling is greedy anyway.
    return Sampling(top_k=k, temperature=0.0 if t < MIN_TEMPERATURE else t)


def calibrated_modes(advice: Any) -> SamplingModes:
    """The sampling modes a model folder's advice calibrates (``samplingModes``: a mode
    name to ``{"topK", "temperature"}``), the others as ``SAMPLING_MODES``; ValueError
    naming what is wrong."""
    if advice is None:
        return SAMPLING_MODES
    if not isinstance(advice, dict):
        raise ValueError("samplingModes is not an object")
    modes = dict(SAMPLING_MODES)
    for name, value in advice.items():
        if name not in SAMPLING_MODES or not isinstance(value, dict):
            raise ValueError(f"samplingModes.{name} is not a sampling mode's settings")
        k, t = value.get("topK"), value.get("temperature")
        if not (isinstance(k, int) and 1 <= k <= MAX_TOP_K):
            raise ValueError(f"samplingModes.{name}.topK is not an integer in 1..{MAX_TOP_K}")
        if not (isinstance(t, int | float) and 0 <= t <= MAX_TEMPERATURE):
            raise ValueError(
                f"samplingModes.{name}.temperature is not a number in 0..{MAX_TEMPERATURE}"
            )
        modes[cast(SamplingModeName, name)] = Sampling(top_k=k, temperature=float(t))
    return modes


def _clamp(value: float | None, low: float, high: float, default: float) -> float:
    """An ``unrestricted double`` option within [low, high]; missing or NaN: ``default``
    (so -Infinity is ``low``, Infinity ``high``)."""
    if value is None or math.isnan(value):
        return default
    return max(low, min(value, high))


#: A model folder's advice (``python -m py_runtime models prepare`` writes it): the dtype
#: to load on each device when the page names none, and the sampling modes' calibration.
ADVICE_FILE = "prompt_api.json"

#: Model file suffix per dtype: ``onnx/model{suffix}.onnx``.
DTYPE_SUFFIXES: dict[Dtype, str] = {
    "fp32": "",
    "fp16": "_fp16",
    "q8": "_quantized",
    "int8": "_int8",
    "uint8": "_uint8",
    "q4": "_q4",
    "q4f16": "_q4f16",
    "bnb4": "_bnb4",
}


def model_file(dtype: Dtype) -> str:
    """``onnx/model{suffix}.onnx`` for a dtype."""
    if dtype not in DTYPE_SUFFIXES:
        raise ValueError(f"Unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}.")
    return f"onnx/model{DTYPE_SUFFIXES[dtype]}.onnx"
