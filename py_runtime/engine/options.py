"""Language model options: "validate and canonicalize language model options",
"get the expected content types" and "compute language model options availability".

Input is the plain data the shim produced by WebIDL conversion. Where the spec
performs an ECMAScript operation on a page object (``? Get(schema, "type")``,
``? serialize a JavaScript value to a JSON string``), the shim performed it in
spec order and recorded the outcome as a *probe*; the steps here decide on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from .errors import PromptAPIError, js_exception, type_error
from .messages import Message
from .prompt import validate_and_canonicalize_prompt
from .protocol import (
    CoreOptionsWire,
    CreateOptionsWire,
    ExpectedWire,
    SchemaProbe,
    ToolDeclarationWire,
)
from .vocabulary import AVAILABILITIES, Availability
from .wire import malformed, page_json


@dataclass(frozen=True)
class ToolDeclaration:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class Expected:
    type: str
    #: The shim's ``LanguageTag``s, then canonical tags once validated.
    languages: list[Any] | None = None


@dataclass
class LanguageModelOptions:
    """Canonicalized ``LanguageModelCreateOptions`` (the core ones plus initialPrompts)."""

    top_k: float | None = None
    temperature: float | None = None
    sampling_mode: str | None = None
    expected_inputs: list[Expected] | None = None
    expected_outputs: list[Expected] | None = None
    tools: list[ToolDeclaration] = field(default_factory=list)
    initial_prompts: list[Message] = field(default_factory=list)


#: ``wireDouble``'s strings: the values JSON has no number for.
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _double(value: float | str | None) -> float | None:
    """An ``unrestricted double``: the shim sends Infinity and NaN as strings."""
    if not isinstance(value, str):
        return value
    if value not in _NON_FINITE:
        raise malformed(f"{value!r} is not a number")
    return _NON_FINITE[value]


def _expected_list(raw: list[ExpectedWire] | None) -> list[Expected] | None:
    if raw is None:
        return None
    return [Expected(e["type"], e.get("languages")) for e in raw]


def validate_and_canonicalize_language_tags(expected: Expected) -> None:
    """Languages arrive as ``{"tag", "canonical"}``; ``canonical`` is ``None``
    when ``Intl.getCanonicalLocales`` rejected the tag."""
    tags: list[str] = []
    for entry in expected.languages or []:
        canonical = entry["canonical"]
        if canonical is None:
            raise PromptAPIError("RangeError", f"Invalid language tag: {entry['tag']!r}")
        if canonical not in tags:
            tags.append(canonical)
    expected.languages = tags


def _validate_tool(tool: ToolDeclarationWire, tool_names: set[str]) -> ToolDeclaration:
    """Step 5.3 for one tool; the schema probe stops where the shim's did."""
    name, description, probe = tool["name"], tool["description"], tool["inputSchema"]
    if name == "":
        raise type_error("A tool's name must not be empty.")
    if name in tool_names:
        raise type_error(f"Duplicate tool name {name!r}.")
    tool_names.add(name)
    if description == "":
        raise type_error(f"The description of tool {name!r} must not be empty.")
    for step, ok in (
        ("type", lambda v: v == "object"),
        ("properties", lambda v: v in ("undefined", "object")),
        ("required", lambda v: v in ("undefined", "array")),
    ):
        outcome = _probed(probe, step)
        if isinstance(outcome, dict) and "threw" in outcome:
            raise js_exception(outcome["threw"])
        if not ok(outcome):
            raise type_error(f"The inputSchema of tool {name!r} has an invalid {step!r}.")
    serialized = _probed(probe, "json")
    if isinstance(serialized, dict):
        raise js_exception(serialized["threw"])
    if serialized is None:
        raise type_error(f"The inputSchema of tool {name!r} cannot be serialized to JSON.")
    return ToolDeclaration(name, description, page_json(serialized, f"The inputSchema of {name!r}"))


def _probed(probe: SchemaProbe, step: str) -> Any:
    """A probe's step; the shim records every step until one fails."""
    if step not in probe:
        raise malformed(f"the inputSchema probe has no {step!r} after its earlier steps passed")
    return cast(Mapping[str, Any], probe)[step]


def validate_and_canonicalize_language_model_options(
    raw: CoreOptionsWire | CreateOptionsWire,
) -> LanguageModelOptions:
    """The spec algorithm of that name, plus the initialPrompts step of create()."""
    options = LanguageModelOptions(
        top_k=_double(raw.get("topK")),
        temperature=_double(raw.get("temperature")),
        sampling_mode=raw.get("samplingMode"),
        expected_inputs=_expected_list(raw.get("expectedInputs")),
        expected_outputs=_expected_list(raw.get("expectedOutputs")),
    )
    # Step 1.
    if options.sampling_mode is not None and (
        options.top_k is not None or options.temperature is not None
    ):
        raise type_error("samplingMode cannot be combined with topK or temperature.")
    # Steps 2-4.
    for expected in options.expected_inputs or []:
        if expected.languages is not None:
            validate_and_canonicalize_language_tags(expected)
    has_tool_call_in_expected_outputs = False
    for expected in options.expected_outputs or []:
        if expected.type == "tool-call":
            has_tool_call_in_expected_outputs = True
        if expected.languages is not None:
            validate_and_canonicalize_language_tags(expected)
    # Step 5: all or nothing; the first invalid tool fails the whole call.
    raw_tools = raw.get("tools") or []
    if raw_tools:
        if not has_tool_call_in_expected_outputs:
            raise type_error('Tools need expectedOutputs to include {type: "tool-call"}.')
        tool_names: set[str] = set()
        options.tools = [_validate_tool(tool, tool_names) for tool in raw_tools]
    # Step 6.
    initial_prompts = cast("CreateOptionsWire", raw).get("initialPrompts") or []
    if initial_prompts:
        expected_types = get_expected_content_types(options.expected_inputs or [])
        options.initial_prompts = validate_and_canonicalize_prompt(
            initial_prompts, expected_types, False
        )
    return options


def get_expected_content_types(expected_contents: list[Expected]) -> list[str]:
    """The spec algorithm of that name: the types, deduplicated, with "text" last."""
    expected_types: list[str] = []
    for expected in expected_contents:
        if expected.type not in expected_types:
            expected_types.append(expected.type)
    if "text" not in expected_types:
        expected_types.append("text")
    return expected_types


def minimum_availability(availabilities: list[Availability]) -> Availability:
    return min(availabilities, key=AVAILABILITIES.index)


@dataclass(frozen=True)
class Capabilities:
    """What a model supports, for "compute language model options availability"."""

    languages: tuple[str, ...] = ("en",)
    input_types: tuple[str, ...] = ("text", "tool-call", "tool-response")
    output_types: tuple[str, ...] = ("text", "tool-call")

    def best_fit(self, tag: str) -> str | None:
        """Match a canonical tag by its base language (``en-US`` -> ``en``)."""
        base = tag.split("-")[0]
        return next((lang for lang in self.languages if lang.split("-")[0] == base), None)


def compute_language_model_options_availability(
    options: LanguageModelOptions, non_options: Availability | None, caps: Capabilities
) -> Availability | None:
    """Steps 2-9; language tags are updated to their best-fit matches in place."""
    if non_options is None:
        return None
    availabilities: list[Availability] = [non_options]
    for expecteds, supported in (
        (options.expected_inputs, caps.input_types),
        (options.expected_outputs, caps.output_types),
    ):
        for expected in expecteds or []:
            if expected.languages is not None:
                matches = [caps.best_fit(tag) for tag in expected.languages]
                if all(matches):
                    expected.languages = [m for m in matches if m]
                    availabilities.append("available")
                else:
                    availabilities.append("unavailable")
            availabilities.append("available" if expected.type in supported else "unavailable")
    return minimum_availability(availabilities)
