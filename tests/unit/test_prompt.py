"""validate and canonicalize a prompt, rule by rule."""

from __future__ import annotations

import pytest
from builders import (
    PLATFORM,
    UNSERIALISABLE_OBJECT,
    any_value,
    args_probe,
    assistant,
    audio,
    image,
    part,
    result_item,
    string,
    system,
    text,
    tool_call,
    tool_call_value,
    tool_error,
    tool_success,
    tool_success_value,
    user,
)

from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.messages import Content, Media, Message, ToolCall, ToolResponse
from py_runtime.engine.prompt import validate_and_canonicalize_prompt

ALL_TYPES = ["text", "image", "audio", "tool-call", "tool-response"]


def canonical(prompt, expected_types=None, has_appended_input=False) -> list[Message]:
    return validate_and_canonicalize_prompt(prompt, expected_types or ALL_TYPES, has_appended_input)


def error_name(prompt, expected_types=None, has_appended_input=False) -> str:
    with pytest.raises(PromptAPIError) as caught:
        canonical(prompt, expected_types, has_appended_input)
    return caught.value.name


# -- shorthands ----------------------------------------------------------------


def test_string_is_one_user_text_message():
    assert canonical("hi") == [Message("user", (Content("text", "hi"),))]


def test_empty_list_is_one_empty_user_text_message():
    assert canonical([]) == [Message("user", (Content("text", ""),))]


def test_string_content_is_one_text_part():
    assert canonical([assistant("ok")]) == [Message("assistant", (Content("text", "ok"),))]


def test_empty_content_list_is_one_empty_text_part():
    assert canonical([user([])]) == [Message("user", (Content("text", ""),))]


def test_messages_keep_their_order_and_roles():
    messages = canonical([system("s"), user("u"), assistant("a", prefix=True)])
    assert [(m.role, m.text(), m.prefix) for m in messages] == [
        ("system", "s", False),
        ("user", "u", False),
        ("assistant", "a", True),
    ]


# -- prefix and system ---------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "system"])
def test_prefix_on_a_non_assistant_message_is_syntax_error(role):
    assert error_name([{"role": role, "content": "x", "prefix": True}]) == "SyntaxError"


def test_prefix_on_an_assistant_message_that_is_not_last_is_syntax_error():
    assert error_name([assistant("a", prefix=True), user("u")]) == "SyntaxError"


def test_prefix_is_checked_before_the_system_rule():
    prompt = [user("u"), {"role": "system", "content": "s", "prefix": True}]
    assert error_name(prompt) == "SyntaxError"


def test_system_after_appended_input_is_type_error():
    assert error_name([system("s")], has_appended_input=True) == "TypeError"


def test_system_after_another_message_in_the_same_prompt_is_type_error():
    assert error_name([user("u"), system("s")]) == "TypeError"
    assert error_name([system("a"), system("b")]) == "TypeError"


def test_system_first_without_appended_input_is_valid():
    assert canonical([system("s"), user("u")])[0].role == "system"


# -- roles of content types -------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "system"])
def test_tool_call_outside_an_assistant_message_is_type_error(role):
    assert error_name([{"role": role, "content": [tool_call()], "prefix": False}]) == "TypeError"


@pytest.mark.parametrize("role", ["assistant", "system"])
def test_tool_response_outside_a_user_message_is_type_error(role):
    prompt = [{"role": role, "content": [tool_success()], "prefix": False}]
    assert error_name(prompt) == "TypeError"


@pytest.mark.parametrize("content", [image(), audio()], ids=["image", "audio"])
def test_image_or_audio_in_an_assistant_message_is_not_supported(content):
    assert error_name([assistant([content])]) == "NotSupportedError"


def test_role_rule_comes_before_the_expected_types_rule():
    assert error_name([user([tool_call()])], expected_types=["text"]) == "TypeError"


# -- value kinds -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [{"kind": "blob"}, {"kind": "image-source"}, tool_call_value(), tool_success_value()],
    ids=["blob", "image-source", "tool-call", "tool-success"],
)
def test_non_string_text_is_syntax_error_as_in_chromium(value):
    """The spec says TypeError; Chromium and its WPT say SyntaxError."""
    assert error_name([user([part("text", value)])]) == "SyntaxError"


@pytest.mark.parametrize(
    ("type_", "kind", "name"),
    [
        ("image", "blob", "InvalidStateError"),
        ("image", "buffer-source", "InvalidStateError"),
        ("audio", "blob", "DataError"),
        ("audio", "buffer-source", "DataError"),
    ],
)
def test_media_that_does_not_decode_is_rejected(type_, kind, name):
    content = [part(type_, {"kind": kind, "decoded": False})]
    assert error_name([user(content)], [type_, "text"]) == name


def test_media_that_decodes_is_accepted():
    content = [part("image", {"kind": "blob", "decoded": True})]
    assert canonical([user(content)], ["image", "text"])[0].content[0].type == "image"


@pytest.mark.parametrize(
    ("content", "type_"),
    [
        (image(), "image"),
        (audio(), "audio"),
        (tool_call(), "tool-call"),
        (tool_success(), "tool-response"),
    ],
)
def test_non_text_type_not_in_expected_types_is_not_supported(content, type_):
    role = "assistant" if type_ == "tool-call" else "user"
    others = [t for t in ALL_TYPES if t != type_]
    prompt = [{"role": role, "content": [content], "prefix": False}]
    assert error_name(prompt, expected_types=others) == "NotSupportedError"


@pytest.mark.parametrize("kind", ["image-source", "blob", "buffer-source"])
def test_image_accepts_image_sources_blobs_and_buffers(kind):
    assert canonical([user([image(kind)])])[0].content == (Content("image", Media(kind)),)


@pytest.mark.parametrize("kind", ["audio-buffer", "blob", "buffer-source"])
def test_audio_accepts_audio_buffers_blobs_and_buffers(kind):
    assert canonical([user([audio(kind)])])[0].content == (Content("audio", Media(kind)),)


@pytest.mark.parametrize(
    ("type_", "value"),
    [
        ("image", string("not an image")),
        ("image", {"kind": "audio-buffer"}),
        ("audio", string("not audio")),
        ("audio", {"kind": "image-source"}),
    ],
)
def test_wrong_media_value_is_type_error(type_, value):
    assert error_name([user([part(type_, value)])]) == "TypeError"


def test_tool_call_value_that_is_not_a_tool_call_is_type_error():
    assert error_name([assistant([part("tool-call", string("x"))])]) == "TypeError"
    assert error_name([assistant([part("tool-call", tool_success_value())])]) == "TypeError"


def test_tool_response_value_that_is_not_a_tool_response_is_type_error():
    assert error_name([user([part("tool-response", string("x"))])]) == "TypeError"
    assert error_name([user([part("tool-response", tool_call_value())])]) == "TypeError"


# -- tool calls ----------------------------------------------------------------------


def test_tool_call_is_kept_with_its_arguments():
    (message,) = canonical([assistant([tool_call(call_id="c1", name="f")])])
    assert message.content == (Content("tool-call", ToolCall("c1", "f", {"city": "Paris"})),)


def test_tool_call_without_arguments_has_none():
    (message,) = canonical([assistant([tool_call(arguments=None)])])
    assert message.content[0].value.arguments is None


@pytest.mark.parametrize(
    "probe",
    [
        args_probe([1, 2], is_array=True),
        args_probe(platform=True, json_text="{}"),
        args_probe(json_text=None),
    ],
    ids=["array", "platform", "unserialisable"],
)
def test_tool_call_arguments_that_are_not_a_json_object_are_data_error(probe):
    assert error_name([assistant([tool_call(arguments=probe)])]) == "DataError"


@pytest.mark.parametrize("json_text", ['"2026-01-01T00:00:00.000Z"', "5"], ids=["date", "number"])
def test_tool_call_arguments_serialising_to_a_non_object_are_data_error(json_text):
    probe = args_probe(json_text=json_text)
    assert error_name([assistant([tool_call(arguments=probe)])]) == "DataError"


# -- tool responses -----------------------------------------------------------------------


def result_of(*items) -> tuple:
    (message,) = canonical([user([tool_success(result=list(items))])])
    return message.content[0].value.result


def result_error(*items) -> str:
    return error_name([user([tool_success(result=list(items))])])


def test_tool_success_keeps_result_values_only():
    values = result_of(
        result_item("text", string("sunny")), result_item("object", any_value({"t": 20}))
    )
    assert values == ("sunny", {"t": 20})


def test_tool_error_keeps_its_message():
    (message,) = canonical([user([tool_error(call_id="c1", name="f", error_message="no")])])
    assert message.content[0].value == ToolResponse("c1", "f", error_message="no")


@pytest.mark.parametrize("type_", ["image", "audio"])
@pytest.mark.parametrize("value", [{"kind": "platform", "json": None}, string("x")])
def test_image_or_audio_tool_result_is_not_supported(type_, value):
    assert result_error(result_item(type_, value)) == "NotSupportedError"


@pytest.mark.parametrize("value", [string("x"), any_value(3), any_value(None)])
def test_object_result_that_is_not_an_object_is_type_error(value):
    assert result_error(result_item("object", value)) == "TypeError"


def test_object_result_may_be_an_array():
    assert result_of(result_item("object", any_value([1, 2]))) == ([1, 2],)


@pytest.mark.parametrize("type_", ["object", "text"])
@pytest.mark.parametrize("value", [PLATFORM, UNSERIALISABLE_OBJECT], ids=["platform", "circular"])
def test_platform_or_unserialisable_result_is_data_error(type_, value):
    assert result_error(result_item(type_, value)) == "DataError"


def test_unserialisable_primitive_text_result_is_data_error():
    bigint = {"kind": "primitive", "json": None}
    assert result_error(result_item("text", bigint)) == "DataError"


@pytest.mark.parametrize(
    "value", [42, True, None, {"a": 1}, [1, "b"]], ids=["number", "bool", "null", "obj", "arr"]
)
def test_serialisable_non_string_text_result_is_accepted_as_chromium_does(value):
    """Unlike the spec's TypeError, Chromium (and WPT) accept any serialisable value."""
    assert result_of(result_item("text", any_value(value))) == (value,)


# -- collapsing contiguous text ---------------------------------------------------------


def test_contiguous_text_collapses_with_no_separator():
    (message,) = canonical([user([text("foo"), text("bar"), text("")])])
    assert message.content == (Content("text", "foobar"),)


def test_non_text_breaks_text_runs():
    (message,) = canonical([user([text("a"), text("b"), image(), text("c"), text("d")])])
    assert message.content == (
        Content("text", "ab"),
        Content("image", Media("image-source")),
        Content("text", "cd"),
    )


def test_text_is_not_collapsed_across_messages():
    messages = canonical([user("a"), user([text("b"), text("c")])])
    assert [m.content for m in messages] == [(Content("text", "a"),), (Content("text", "bc"),)]
