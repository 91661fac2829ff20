"""What the command line is given, read and checked before the browser starts: the
model (``echo``, a named model, a folder or a URL) as the script tag's attributes,
and ``prompt``'s request (its text, the schema, RegExp and tool files). Each bad
argument, file or folder is a :class:`UsageError` naming what to fix.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, cast

from ..engine.vocabulary import ADVICE_FILE, DTYPES, Dtype, model_file
from . import models

#: What a model folder must hold (besides ``onnx/model{suffix}.onnx`` for the dtype).
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")
FOLDER_HINT = "a model folder holds config.json, tokenizer.json and onnx/model*.onnx"
#: ``/source/flags``: a RegExp literal as ``--regex`` also takes it.
REGEX_LITERAL = re.compile(r"/(?P<source>.+)/(?P<flags>[dgimsuvy]*)", re.DOTALL)
TOOL_INPUTS = [{"type": "tool-call"}, {"type": "tool-response"}]
TOOL_OUTPUTS = [{"type": "text"}, {"type": "tool-call"}]


class UsageError(Exception):
    """A bad argument, file or folder: one line, exit status 2."""


def effective_dtype(args: argparse.Namespace, folder: Path | None = None) -> Dtype:
    """The dtype the runtime will load: ``--dtype``, the named model's, the one the
    model ``folder``'s advice names for the device (``prompt_api.json``, as the page
    reads it), else the runtime's default."""
    device = args.device or "wasm"
    dtype = args.dtype or models.default_dtype(args.model)
    if dtype is None and folder is not None and (folder / ADVICE_FILE).is_file():
        try:
            advised = json.loads((folder / ADVICE_FILE).read_text())["defaultDtype"][device]
        except (ValueError, KeyError, TypeError, OSError):
            advised = None
        dtype = advised if advised in DTYPES else None
    return cast(Dtype, dtype or ("fp32" if device == "webgpu" else "q8"))


def is_url(model: str) -> bool:
    return model.startswith(("http://", "https://"))


def check_model_folder(option: str, folder: Path, dtype: Dtype) -> None:
    """Raise a :class:`UsageError` naming what the model folder lacks."""
    if not folder.exists():
        raise UsageError(f"--model {option}: no such folder ({FOLDER_HINT})")
    if not folder.is_dir():
        raise UsageError(f"--model {option}: not a folder ({FOLDER_HINT})")
    for name in MODEL_FILES:
        if not (folder / name).is_file():
            raise UsageError(f"--model {option}: {folder / name} is missing ({FOLDER_HINT})")
    weights = model_file(dtype)
    if not (folder / weights).is_file():
        present = [d for d in DTYPES if (folder / model_file(d)).is_file()]
        has = f"it has --dtype {', '.join(present)}" if present else FOLDER_HINT
        raise UsageError(
            f"--model {option}: {folder / weights} is missing for dtype {dtype} ({has})"
        )


def model_attributes(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, Path]]:
    """The runtime script tag's data- attributes, and a mount for a local model folder.

    A model that is neither ``echo``, a named model nor an http(s) URL is a folder, and
    is checked here (a :class:`UsageError` names what is missing)."""
    mounts: dict[str, Path] = {}
    dtype = args.dtype or models.default_dtype(args.model)
    model = models.resolve(args.model) or "echo"
    if model != "echo" and not is_url(model) and not model.startswith("openai:"):
        check_model_folder(args.model, Path(model), effective_dtype(args, Path(model)))
        folder = Path(model).resolve()
        mounts[f"/_models/{folder.name}/"] = folder
        model = f"/_models/{folder.name}/"
    values = {"model": model, "dtype": dtype, "device": args.device}
    return {f"data-{key}": value for key, value in values.items() if value}, mounts


def read_json(option: str, path: Path) -> Any:
    """A JSON file's value; a :class:`UsageError` naming the file if it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{option} {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{option} {path}: is a folder, not a JSON file") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise UsageError(f"{option} {path}: cannot be read ({reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{option} {path}: not JSON ({error})") from None


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")


def read_schema(path: Path) -> dict[str, Any]:
    schema = read_json("--schema", path)
    if not isinstance(schema, dict):
        raise UsageError(
            f"--schema {path}: a JSON Schema must be a JSON object, not {json_type(schema)}"
        )
    return schema


def read_tools(path: Path) -> list[dict[str, Any]]:
    """The declarations in ``path``: a list of objects, each with a string ``name``."""
    tools = read_json("--tools", path)
    if not isinstance(tools, list) or not tools:
        what = "an empty list" if tools == [] else json_type(tools)
        raise UsageError(
            f"--tools {path}: must hold a list of tool declarations "
            f"({{name, description, inputSchema}}), not {what}"
        )
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise UsageError(
                f"--tools {path}: item {index} is not a tool declaration "
                "(an object with a string name, a description and an inputSchema)"
            )
    return tools


def parse_regex(pattern: str) -> dict[str, str]:
    """``--regex``: a RegExp's source, or ``/source/flags``."""
    literal = REGEX_LITERAL.fullmatch(pattern)
    if literal:
        return {"source": literal["source"], "flags": literal["flags"]}
    return {"source": pattern, "flags": ""}


def prompt_text(text: str) -> str:
    """TEXT, or stdin's text (without its trailing newlines) when TEXT is ``-``."""
    if text != "-":
        return text
    try:
        read = sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("the prompt on stdin (TEXT is -) is not UTF-8 text") from None
    read = read.rstrip("\r\n")
    if not read:
        raise UsageError("the prompt on stdin (TEXT is -) is empty")
    return read


def build_request(args: argparse.Namespace) -> dict[str, Any]:
    """What pages/prompt.html is given: the text, create() and prompt() options, regex."""
    if args.schema is not None and args.regex is not None:
        raise UsageError("--schema and --regex cannot be used together: choose one constraint")
    create: dict[str, Any] = {}
    if args.sampling_mode:
        create["samplingMode"] = args.sampling_mode
    if args.system is not None:
        create["initialPrompts"] = [{"role": "system", "content": args.system}]
    if args.tools is not None:
        create["tools"] = read_tools(args.tools)
        create["expectedInputs"] = TOOL_INPUTS
        create["expectedOutputs"] = TOOL_OUTPUTS
    options: dict[str, Any] = {}
    if args.schema is not None:
        options["responseConstraint"] = read_schema(args.schema)
    regex = parse_regex(args.regex) if args.regex is not None else None
    return {"text": prompt_text(args.text), "create": create, "prompt": options, "regex": regex}
