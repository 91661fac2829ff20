"""validate and canonicalize language model options, get the expected content types,
and compute language model options availability."""

from __future__ import annotations

import pytest
from builders import assistant, image, lang, system, tool, tool_options, user

from py_runtime.engine.errors import JS_EXCEPTION, PromptAPIError, error_to_wire
from py_runtime.engine.options import (
    Capabilities,
    Expected,
    LanguageModelOptions,
    compute_language_model_options_availability,
    get_expected_content_types,
    minimum_availability,
    validate_and_canonicalize_language_model_options,
)
from py_runtime.models.echo import EchoModel

validate = validate_and_canonicalize_language_model_options


def error_of(raw: dict) -> PromptAPIError:
    with pytest.raises(PromptAPIError) as caught:
        validate(raw)
    return caught.value


# -- step 1: samplingMode ----------------------------------------------------


@pytest.mark.parametrize("other", [{"topK": 3}, {"temperature": 0.5}, {"topK": 0}])
def test_sampling_mode_with_top_k_or_temperature_is_type_error(other):
    assert error_of({"samplingMode": "balanced", **other}).name == "TypeError"


@pytest.mark.parametrize("member", ["topK", "temperature"])
@pytest.mark.parametrize("wire", ["Infinity", "NaN"])
def test_sampling_mode_with_infinite_top_k_or_temperature_is_type_error(member, wire):
    """The shim sends non-finite unrestricted doubles as strings (JSON has no Infinity)."""
    assert error_of({"samplingMode": "balanced", member: wire}).name == "TypeError"


def test_sampling_mode_alone_or_top_k_with_temperature_is_valid():
    assert validate({"samplingMode": "creative"}).sampling_mode == "creative"
    options = validate({"topK": 3, "temperature": 0.5})
    assert (options.top_k, options.temperature) == (3, 0.5)


# -- steps 2 and 4: language tags ---------------------------------------------


@pytest.mark.parametrize("member", ["expectedInputs", "expectedOutputs"])
def test_invalid_language_tag_is_range_error(member):
    raw = {member: [{"type": "text", "languages": [lang("en"), lang("x!", None)]}]}
    error = error_of(raw)
    assert error.name == "RangeError"
    assert "x!" in error.message


@pytest.mark.parametrize("member", ["expected_inputs", "expected_outputs"])
def test_language_tags_are_canonicalized_and_deduplicated(member):
    languages = [lang("EN", "en"), lang("ja-jp", "ja-JP"), lang("en")]
    raw_member = {"expected_inputs": "expectedInputs", "expected_outputs": "expectedOutputs"}
    options = validate({raw_member[member]: [{"type": "text", "languages": languages}]})
    assert getattr(options, member)[0].languages == ["en", "ja-JP"]


def test_expected_without_languages_keeps_none():
    options = validate({"expectedInputs": [{"type": "text"}]})
    assert options.expected_inputs == [Expected("text", None)]


# -- step 5: tools ------------------------------------------------------------


def test_tools_without_tool_call_in_expected_outputs_is_type_error():
    assert error_of({"tools": [tool()]}).name == "TypeError"
    assert error_of({"expectedOutputs": [{"type": "text"}], "tools": [tool()]}).name == "TypeError"


def test_no_tools_need_no_tool_call_output():
    assert validate({"tools": []}).tools == []


def test_valid_tool_is_kept_with_its_parsed_schema():
    (declared,) = validate(tool_options(tool("getWeather", "Weather."))).tools
    assert declared.name == "getWeather"
    assert declared.description == "Weather."
    assert declared.input_schema == {"type": "object", "properties": {"city": {"type": "string"}}}


def test_empty_tool_name_is_type_error():
    assert error_of(tool_options(tool(name=""))).name == "TypeError"


def test_duplicate_tool_name_is_type_error():
    error = error_of(tool_options(tool("a"), tool("b"), tool("a")))
    assert error.name == "TypeError"
    assert "'a'" in error.message


def test_empty_tool_description_is_type_error():
    assert error_of(tool_options(tool(description=""))).name == "TypeError"


def schema_tool(probe: dict) -> dict:
    """A tool whose schema probe is exactly ``probe`` (the shim stops at the first failure)."""
    return {"name": "t", "description": "A tool.", "inputSchema": probe}


@pytest.mark.parametrize(
    "probe",
    [
        pytest.param({"type": "other"}, id="type-not-object"),
        pytest.param({"type": "object", "properties": "other"}, id="properties-not-object"),
        pytest.param(
            {"type": "object", "properties": "undefined", "required": "other"},
            id="required-not-array",
        ),
        pytest.param(
            {"type": "object", "properties": "object", "required": "array", "json": None},
            id="json-undefined",
        ),
    ],
)
def test_invalid_schema_is_type_error(probe):
    assert error_of(tool_options(schema_tool(probe))).name == "TypeError"


@pytest.mark.parametrize(
    "probe",
    [
        pytest.param({"type": "object", "properties": "undefined", "required": "undefined"}),
        pytest.param({"type": "object", "properties": "object", "required": "array"}),
    ],
)
def test_schema_without_properties_or_with_required_array_is_valid(probe):
    (declared,) = validate(tool_options(schema_tool({**probe, "json": '{"type":"object"}'}))).tools
    assert declared.input_schema == {"type": "object"}


@pytest.mark.parametrize(
    "probe",
    [
        pytest.param({"type": {"threw": 0}}, id="get-type"),
        pytest.param({"type": "object", "properties": {"threw": 0}}, id="get-properties"),
        pytest.param(
            {"type": "object", "properties": "object", "required": {"threw": 0}},
            id="get-required",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": "object",
                "required": "undefined",
                "json": {"threw": 0},
            },
            id="serialize",
        ),
    ],
)
def test_page_exception_in_schema_probe_propagates_as_is(probe):
    error = error_of(tool_options(schema_tool(probe)))
    assert error.name == JS_EXCEPTION
    assert error.fields == {"index": 0}
    assert error_to_wire(error) == {"name": JS_EXCEPTION, "message": "", "index": 0}


def test_first_invalid_tool_fails_the_whole_call():
    tools = [
        tool("ok1"),
        schema_tool({"type": {"threw": 0}}),  # tool 2: its getter threw first
        schema_tool({"type": {"threw": 1}}),
        tool("ok2"),
    ]
    error = error_of(tool_options(*tools))
    assert (error.name, error.fields) == (JS_EXCEPTION, {"index": 0})


def test_invalid_tool_after_valid_ones_is_type_error():
    assert error_of(tool_options(tool("a"), tool("b", description=""))).name == "TypeError"


# -- step 6: initialPrompts -----------------------------------------------------


def test_initial_prompts_are_canonicalized():
    options = validate({"initialPrompts": [system("Be brief."), user("Hi")]})
    assert [m.role for m in options.initial_prompts] == ["system", "user"]
    assert options.initial_prompts[0].text() == "Be brief."


@pytest.mark.parametrize(
    ("prompts", "name"),
    [
        pytest.param([user("a"), system("b")], "TypeError", id="system-after-user"),
        pytest.param([assistant("a", prefix=True), user("b")], "SyntaxError", id="prefix-not-last"),
        pytest.param([user([image()])], "NotSupportedError", id="image-not-expected"),
    ],
)
def test_initial_prompts_are_validated(prompts, name):
    assert error_of({"initialPrompts": prompts}).name == name


def test_initial_prompts_use_expected_inputs():
    options = validate({"expectedInputs": [{"type": "image"}], "initialPrompts": [user([image()])]})
    assert options.initial_prompts[0].content[0].type == "image"


# -- get the expected content types ---------------------------------------------


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ([], ["text"]),
        (["image"], ["image", "text"]),
        (["audio", "image", "audio"], ["audio", "image", "text"]),
        (["image", "text", "audio"], ["image", "text", "audio"]),
    ],
)
def test_expected_content_types_keep_order_dedupe_and_append_text(types, expected):
    assert get_expected_content_types([Expected(t) for t in types]) == expected


# -- compute language model options availability -----------------------------------


def availability(raw: dict, non_options: str | None = "available") -> tuple[str | None, object]:
    options = validate(raw)
    caps = EchoModel.capabilities
    return compute_language_model_options_availability(options, non_options, caps), options


def test_no_options_give_the_non_options_availability():
    assert availability({}, "downloadable")[0] == "downloadable"
    assert availability({}, None)[0] is None


@pytest.mark.parametrize("member", ["expectedInputs", "expectedOutputs"])
def test_unsupported_language_is_unavailable(member):
    assert availability({member: [{"type": "text", "languages": [lang("ja")]}]})[0] == (
        "unavailable"
    )


def test_one_unsupported_language_among_several_is_unavailable():
    raw = {"expectedInputs": [{"type": "text", "languages": [lang("en"), lang("fr")]}]}
    assert availability(raw)[0] == "unavailable"


def test_regional_tag_matches_base_language_and_is_canonicalized_to_it():
    result, options = availability(
        {"expectedInputs": [{"type": "text", "languages": [lang("en-US")]}]}
    )
    assert result == "available"
    assert options.expected_inputs[0].languages == ["en"]


@pytest.mark.parametrize("type_", ["image", "audio", "tool-response"])
def test_non_text_outputs_are_unavailable(type_):
    assert availability({"expectedOutputs": [{"type": type_}]})[0] == "unavailable"


@pytest.mark.parametrize("type_", ["text", "image", "audio", "tool-call", "tool-response"])
def test_echo_model_accepts_every_input_type(type_):
    assert availability({"expectedInputs": [{"type": type_}]})[0] == "available"


def test_tool_call_output_is_available():
    assert availability({"expectedOutputs": [{"type": "tool-call"}]})[0] == "available"


def test_availability_is_the_minimum_of_all():
    assert minimum_availability(["available", "downloading", "downloadable"]) == "downloadable"
    assert minimum_availability(["available", "unavailable", "downloadable"]) == "unavailable"
    raw = {"expectedInputs": [{"type": "text", "languages": [lang("en")]}]}
    assert availability(raw, "downloading")[0] == "downloading"


def test_type_availability_uses_the_capabilities():
    caps = Capabilities(languages=("en",), input_types=("text",), output_types=("text",))
    options = LanguageModelOptions(expected_inputs=[Expected("image")])
    assert compute_language_model_options_availability(options, "available", caps) == (
        "unavailable"
    )


def test_echo_model_is_downloadable_before_create_and_available_after(echo):
    assert echo.availability() == "downloadable"
    echo.create()
    assert echo.availability() == "available"


def test_create_of_a_downloadable_model_needs_activation(echo):
    with pytest.raises(PromptAPIError) as caught:
        echo.create(activation=False)
    assert caught.value.name == "NotAllowedError"


def test_availability_validates_the_options_first(echo):
    with pytest.raises(PromptAPIError) as caught:
        echo.availability(samplingMode="balanced", topK=3)
    assert caught.value.name == "TypeError"


def test_create_with_unavailable_options_is_not_supported(echo):
    with pytest.raises(PromptAPIError) as caught:
        echo.create(expectedInputs=[{"type": "text", "languages": [lang("ja")]}])
    assert caught.value.name == "NotSupportedError"
    assert echo.availability(expectedOutputs=[{"type": "image"}]) == "unavailable"
