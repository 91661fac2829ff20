"""The echo model, through the Runtime: what it echoes, how usage counts, the window,
and its tool-call triggers (see ../shared/facts/chromium-behaviour.md)."""

from __future__ import annotations

import pytest
from builders import (
    any_value,
    assistant,
    audio,
    image,
    result_item,
    system,
    text,
    tool,
    tool_call,
    tool_error,
    tool_options,
    tool_success,
    user,
)

from py_runtime.engine.errors import PromptAPIError, error_to_wire
from py_runtime.engine.options import ToolDeclaration
from py_runtime.models.echo import (
    MULTIPLE_TRIGGER,
    PREFIX,
    SIMPLE_TRIGGER,
    argument_hint,
    tool_call_batches,
)

P = PREFIX
ALL_INPUTS = [{"type": t} for t in ("image", "audio", "tool-call", "tool-response")]


def test_prefix_is_chromiums_text():
    assert P == (
        "On-device model is not available in Chromium, this API is just echoing back the input:\n"
    )
    assert len(P.encode()) == 87


# -- response text ----------------------------------------------------------------


def test_first_response_is_prefix_then_initial_prompts_then_input(echo):
    session = echo.create(initialPrompts=[system("Be nice. "), user("I said ")])
    assert echo.prompt(session, "hello").text == P + "Be nice. I said hello"


def test_later_responses_echo_only_the_new_input(echo):
    session = echo.create(initialPrompts=[user("I")])
    echo.prompt(session, "a")
    assert echo.prompt(session, "b").text == "b"
    assert echo.prompt(session, "c").text == "c"


def test_appended_input_accumulates_into_the_next_prompt(echo):
    session = echo.create()
    echo.append(session, "a")
    echo.append(session, [user("b")])
    assert echo.prompt(session, "c").text == P + "abc"
    echo.append(session, "d")
    assert echo.prompt(session, "e").text == "de"


def test_roles_are_ignored_and_parts_joined_without_separator(echo):
    session = echo.create()
    prompt = [system("s"), user([text("u1"), text("u2")]), assistant("pre", prefix=True)]
    assert echo.prompt(session, prompt).text == P + "su1u2pre"


def test_every_session_starts_with_the_prefix(echo):
    first, second = echo.create(), echo.create()
    echo.prompt(first, "a")
    assert echo.prompt(second, "b").text == P + "b"


def test_response_text_is_one_chunk(echo):
    session = echo.create()
    assert echo.prompt(session, "hi").chunks == [{"kind": "text", "text": P + "hi"}]


def test_non_text_input_echoes_as_placeholders(echo):
    session = echo.create(expectedInputs=ALL_INPUTS)
    prompt = [
        user([text("look:"), image(), audio()]),
        assistant([tool_call(call_id="c1", name="f")]),
        user([tool_success(call_id="c1", name="f"), tool_error(call_id="c2", name="g")]),
    ]
    assert echo.prompt(session, prompt).text == (
        P + "look:<image><audio>"
        '<tool-call>{"callId":"c1","name":"f","arguments":{"city":"Paris"}}</tool-call>'
        '<tool-response>{"callId":"c1","name":"f","result":["sunny"]}</tool-response>'
        '<tool-response>{"callId":"c2","name":"g","errorMessage":"boom"}</tool-response>'
    )


def test_tool_response_json_holds_result_values_only(echo):
    session = echo.create(expectedInputs=ALL_INPUTS)
    result = [result_item("text", any_value("t")), result_item("object", any_value({"a": [1]}))]
    reply = echo.prompt(session, [user([tool_success(call_id="x", name="n", result=result)])])
    assert reply.text == (
        P + '<tool-response>{"callId":"x","name":"n","result":["t",{"a":[1]}]}</tool-response>'
    )


def test_tool_call_without_arguments_echoes_an_empty_object(echo):
    """Chromium's WPT: omitted, undefined and {} arguments all echo as {}."""
    session = echo.create(expectedInputs=ALL_INPUTS)
    reply = echo.prompt(session, [assistant([tool_call(call_id="c", name="f", arguments=None)])])
    assert reply.text == P + '<tool-call>{"callId":"c","name":"f","arguments":{}}</tool-call>'


# -- usage --------------------------------------------------------------------------


def test_usage_is_utf8_bytes_plus_100_per_non_text_part(echo):
    session = echo.create(expectedInputs=ALL_INPUTS)
    assert echo.measure(session, "héllo") == 6
    assert echo.measure(session, [user([text("ab"), image(), audio(), tool_success()])]) == 302
    assert echo.measure(session, [assistant([tool_call()])]) == 100


def test_placeholders_in_the_response_count_as_text(echo):
    session = echo.create(expectedInputs=[{"type": "image"}])
    echo.prompt(session, [user([image()])])
    assert echo.usage(session) == 100 + len((P + "<image>").encode())


def test_lone_surrogate_counts_as_a_replacement_character(echo):
    session = echo.create()
    assert echo.measure(session, "a\ud800b") == 1 + 3 + 1


def test_initial_prompts_set_the_initial_usage(echo):
    session = echo.create(initialPrompts=[system("sys"), user("€")])
    assert echo.usage(session) == 3 + 3


def test_usage_grows_by_input_plus_whole_response(echo):
    session = echo.create(initialPrompts=[user("I")])
    reply = echo.prompt(session, "hé")
    assert reply.settled["contextUsage"] == echo.usage(session) == 1 + 3 + (87 + 1 + 3)
    echo.prompt(session, "yo")
    assert echo.usage(session) == 95 + 2 + 2


def test_append_grows_usage_by_its_input_only(echo):
    session = echo.create()
    echo.append(session, "abc")
    assert echo.usage(session) == 3


def test_context_window_is_1000(echo):
    session = echo.create()
    assert echo.session(session).context_window == 1000
    assert echo.session(session).describe(0)["contextWindow"] == 1000


# -- the window --------------------------------------------------------------------


def quota_error(call) -> PromptAPIError:
    with pytest.raises(PromptAPIError) as caught:
        call()
    assert caught.value.name == "QuotaExceededError"
    return caught.value


def test_input_larger_than_the_window_is_quota_exceeded(echo):
    session = echo.create()
    error = quota_error(lambda: echo.prompt(session, "a" * 1001))
    assert error.fields == {"requested": 1001, "quota": 1000}
    assert error_to_wire(error)["requested"] == 1001
    assert echo.usage(session) == 0


def test_non_text_parts_count_towards_the_quota(echo):
    session = echo.create(expectedInputs=[{"type": "image"}])
    echo.append(session, [user([image()] * 10)])  # exactly 1000 fits
    error = quota_error(lambda: echo.append(session, [user([image()] * 11)]))
    assert error.fields == {"requested": 1100, "quota": 1000}


def test_quota_requested_is_the_input_alone_after_history(echo):
    session = echo.create()
    echo.prompt(session, "hi")
    error = quota_error(lambda: echo.append(session, "a" * 1001))
    assert error.fields == {"requested": 1001, "quota": 1000}


def test_create_with_initial_prompts_larger_than_the_window_is_quota_exceeded(echo):
    error = quota_error(lambda: echo.create(initialPrompts=[system("a" * 600), user("b" * 401)]))
    assert error.fields == {"requested": 1001, "quota": 1000}


def test_overflow_evicts_the_oldest_history_and_reports_it(echo):
    session = echo.create()
    first = echo.prompt(session, "a" * 400)  # 400 + 487
    assert first.settled == {"contextUsage": 887, "overflowed": False}
    second = echo.prompt(session, "b" * 100)  # 987, then 1087: the first input goes
    assert second.settled == {"contextUsage": 687, "overflowed": True}
    assert [
        echo.run(echo.runtime.model.measure(entry.messages))
        for entry in echo.session(session).history
    ] == [487, 100, 100]


def test_overflow_never_evicts_initial_prompts(echo):
    session = echo.create(initialPrompts=[user("i" * 200)])
    reply = echo.prompt(session, "a" * 300)  # 200 + 300 + 587 = 1087
    assert reply.settled == {"contextUsage": 200 + 587, "overflowed": True}
    assert [
        echo.run(echo.runtime.model.measure(entry.messages))
        for entry in echo.session(session).history
    ] == [587]


# -- tool-call triggers ----------------------------------------------------------------

WEATHER = tool("weather", 'Weather. Args: {"city": "Paris"}')
CLOCK = tool("clock", "The time.")


def test_trigger_without_tools_is_plain_text(echo):
    session = echo.create()
    reply = echo.prompt(session, SIMPLE_TRIGGER + "go")
    assert (reply.text, reply.tool_calls) == (P + SIMPLE_TRIGGER + "go", [])


def test_simple_trigger_calls_each_tool_in_order_after_the_text(echo):
    session = echo.create(**tool_options(WEATHER, CLOCK))
    reply = echo.prompt(session, SIMPLE_TRIGGER + "go")
    assert reply.chunks == [
        {"kind": "text", "text": P + "go"},
        {
            "kind": "tool-call",
            "callId": "call_1",
            "name": "weather",
            "arguments": {"city": "Paris"},
        },
        {"kind": "tool-call", "callId": "call_2", "name": "clock", "arguments": {}},
    ]


def test_multiple_trigger_calls_every_tool_across_two_batches(echo):
    tools = [tool(f"t{i}", f"Tool {i}.") for i in range(3)]
    session = echo.create(**tool_options(*tools))
    reply = echo.prompt(session, MULTIPLE_TRIGGER + "go")
    assert reply.text == P + "go"
    assert [(c["callId"], c["name"]) for c in reply.tool_calls] == [
        ("call_1", "t0"),
        ("call_2", "t1"),
        ("call_3", "t2"),
    ]


def test_trigger_must_start_the_current_input(echo):
    session = echo.create(**tool_options(WEATHER))
    reply = echo.prompt(session, "go " + SIMPLE_TRIGGER)
    assert (reply.text, reply.tool_calls) == (P + "go " + SIMPLE_TRIGGER, [])


def test_trigger_after_leading_tool_responses_fires(echo):
    """Ours, not Chromium's: a closed loop's post-hook context can ask for more calls."""
    session = echo.create(**tool_options(WEATHER), expectedInputs=ALL_INPUTS)
    response = tool_success(call_id="call_1", name="weather")
    reply = echo.prompt(session, [user([response]), user(SIMPLE_TRIGGER + "more")])
    assert reply.text == (
        P + '<tool-response>{"callId":"call_1","name":"weather","result":["sunny"]}'
        "</tool-response>more"
    )
    assert [c["name"] for c in reply.tool_calls] == ["weather"]


def test_trigger_after_other_non_text_parts_does_not_fire(echo):
    session = echo.create(**tool_options(WEATHER), expectedInputs=ALL_INPUTS)
    reply = echo.prompt(session, [user([image(), text(SIMPLE_TRIGGER + "x")])])
    assert (reply.text, reply.tool_calls) == (P + "<image>" + SIMPLE_TRIGGER + "x", [])


def test_a_rolled_back_prompt_restores_the_trigger_position(echo):
    session = echo.create(**tool_options(WEATHER), expectedInputs=ALL_INPUTS)
    response = tool_success(call_id="call_1", name="weather")
    echo.prompt(session, [user([response]), user(SIMPLE_TRIGGER)], keep=False)
    reply = echo.prompt(session, SIMPLE_TRIGGER + "go")
    assert (reply.text, [c["name"] for c in reply.tool_calls]) == (P + "go", ["weather"])


def test_trigger_in_initial_prompts_does_not_fire(echo):
    session = echo.create(**tool_options(WEATHER), initialPrompts=[user(SIMPLE_TRIGGER)])
    reply = echo.prompt(session, "go")
    assert (reply.text, reply.tool_calls) == (P + SIMPLE_TRIGGER + "go", [])


def test_trigger_works_in_a_later_prompt(echo):
    session = echo.create(**tool_options(WEATHER))
    echo.prompt(session, "first")
    reply = echo.prompt(session, SIMPLE_TRIGGER + "again")
    assert reply.text == "again"
    assert [c["name"] for c in reply.tool_calls] == ["weather"]


def test_trigger_is_counted_in_usage_and_tool_calls_add_nothing(echo):
    session = echo.create(**tool_options(WEATHER, CLOCK))
    echo.prompt(session, SIMPLE_TRIGGER + "go")
    assert echo.usage(session) == len(SIMPLE_TRIGGER) + 2 + (87 + 2)
    (user_entry, response_entry) = echo.session(session).history
    assert user_entry.messages[0].text() == SIMPLE_TRIGGER + "go"
    assert response_entry.messages[0].text() == P + "go"


def declared(n: int) -> list[ToolDeclaration]:
    return [ToolDeclaration(f"t{i}", "d", {}) for i in range(n)]


@pytest.mark.parametrize(
    ("n", "batches"),
    [(1, [[0]]), (2, [[0], [1]]), (3, [[0], [1, 2]]), (4, [[0, 1], [2, 3]])],
)
def test_multiple_trigger_batches_are_first_half_then_second_half(n, batches):
    assert tool_call_batches(declared(n), MULTIPLE_TRIGGER) == batches


def test_simple_trigger_is_one_batch_of_all_tools():
    assert tool_call_batches(declared(3), SIMPLE_TRIGGER) == [[0, 1, 2]]


@pytest.mark.parametrize(
    ("description", "arguments"),
    [
        ('Weather. Args: {"city": "Paris"}', {"city": "Paris"}),
        ('Args: {"q": "x"} then more text', {"q": "x"}),
        ("Args: {}", {}),
        ("No hint here.", {}),
        ('Args: {"a": {"b": 1}}', {}),  # up to the first "}" is not valid JSON
        ("Args: [1, 2]", {}),
        ("Args: {not json}", {}),
        ("Args: {unclosed", {}),
        ('Args:{"a": 1}', {}),
    ],
)
def test_argument_hint_is_the_json_object_after_args(description, arguments):
    assert argument_hint(description) == arguments
