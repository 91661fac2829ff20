"""Session behaviour: response constraints, measureContextUsage, clone, rollback,
destroy and call order."""

from __future__ import annotations

import asyncio

import pytest
from builders import assistant, json_schema, regexp, system, tool, tool_options, user

from py_runtime.engine.constraints import CONSTRAINT_INTRO
from py_runtime.engine.errors import PromptAPIError
from py_runtime.models.echo import PREFIX as P
from py_runtime.models.echo import SIMPLE_TRIGGER

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}
SCHEMA_TEXT = CONSTRAINT_INTRO + '{"type":"object","properties":{"a":{"type":"string"}}}'


def error_name(call) -> str:
    with pytest.raises(PromptAPIError) as caught:
        call()
    return caught.value.name


# -- response constraints -------------------------------------------------------------


def test_json_schema_constraint_is_appended_to_the_input_and_echoed(echo):
    session = echo.create()
    reply = echo.prompt(session, "hi", constraint=json_schema(SCHEMA))
    assert CONSTRAINT_INTRO.startswith("\n\nRemember to respond in JSON")
    assert reply.text == P + "hi" + SCHEMA_TEXT


def test_json_schema_constraint_is_counted(echo):
    session = echo.create()
    assert echo.measure(session, "hi", json_schema(SCHEMA)) == 2 + len(SCHEMA_TEXT)
    reply = echo.prompt(session, "hi", constraint=json_schema(SCHEMA))
    assert reply.settled["contextUsage"] == 2 * (2 + len(SCHEMA_TEXT)) + 87


def test_omitted_constraint_input_is_neither_echoed_nor_counted(echo):
    session = echo.create()
    assert echo.measure(session, "hi", json_schema(SCHEMA), omit=True) == 2
    assert echo.prompt(session, "hi", constraint=json_schema(SCHEMA), omit=True).text == P + "hi"


def test_constraint_goes_to_the_last_user_message(echo):
    session = echo.create()
    prompt = [user("u1"), user("u2"), assistant('{ "a": ', prefix=True)]
    assert echo.prompt(session, prompt, constraint=json_schema(SCHEMA)).text == (
        P + "u1u2" + SCHEMA_TEXT + '{ "a": '
    )


def test_regexp_constraint_adds_no_input(echo):
    session = echo.create()
    assert echo.prompt(session, "hi", constraint=regexp("^h.*")).text == P + "hi"


@pytest.mark.parametrize("source", ["^foo", "^ba"])
def test_anchored_regexp_that_cannot_start_with_the_prefix_is_not_supported(echo, source):
    session = echo.create()
    prompt = [user("u"), assistant("bar", prefix=True)]
    assert error_name(lambda: echo.prompt(session, prompt, constraint=regexp(source))) == (
        "NotSupportedError"
    )
    assert error_name(lambda: echo.measure(session, prompt, regexp(source))) == "NotSupportedError"
    assert echo.usage(session) == 0


@pytest.mark.parametrize("source", ["^bar\\d+", "^bar", "foo"])
def test_regexp_admitting_the_prefix_or_unanchored_is_accepted(echo, source):
    session = echo.create()
    prompt = [user("u"), assistant("bar", prefix=True)]
    assert echo.prompt(session, prompt, constraint=regexp(source)).text == P + "ubar"


# -- measureContextUsage --------------------------------------------------------------


def test_measure_with_omit_and_no_constraint_is_type_error(echo):
    session = echo.create()
    assert error_name(lambda: echo.measure(session, "hi", None, omit=True)) == "TypeError"


def test_measure_changes_nothing(echo):
    session = echo.create()
    assert echo.measure(session, "hello") == 5
    assert echo.usage(session) == 0
    assert echo.prompt(session, "x").text == P + "x"


def test_measure_validates_as_if_nothing_was_appended(echo):
    session = echo.create(initialPrompts=[user("I")])
    assert echo.measure(session, [system("s")]) == 1


# -- system after initial prompts or history ---------------------------------------------


def test_system_message_after_initial_prompts_is_type_error(echo):
    session = echo.create(initialPrompts=[user("I")])
    assert error_name(lambda: echo.prompt(session, [system("s")])) == "TypeError"


def test_system_message_after_earlier_input_is_type_error(echo):
    session = echo.create()
    echo.append(session, "a")
    assert error_name(lambda: echo.prompt(session, [system("s")])) == "TypeError"


def test_system_message_first_in_a_fresh_session_is_accepted(echo):
    session = echo.create()
    assert echo.prompt(session, [system("s"), user("u")]).text == P + "su"


# -- failures leave the session as it was ------------------------------------------------


def test_failed_prompt_leaves_usage_history_and_echo_state_unchanged(echo):
    session = echo.create()
    echo.append(session, "a")
    with pytest.raises(PromptAPIError):
        echo.prompt(session, [user("b"), system("c")])
    with pytest.raises(PromptAPIError):
        echo.prompt(session, "x" * 1001)
    assert echo.usage(session) == 1
    assert len(echo.session(session).history) == 1
    assert echo.prompt(session, "d").text == P + "ad"


def test_discarded_prompt_is_rolled_back(echo):
    session = echo.create()
    reply = echo.prompt(session, "a", keep=False)
    assert reply.settled["contextUsage"] == 1 + 88  # what it would have been
    assert echo.usage(session) == 0
    assert echo.session(session).history == ()
    assert echo.prompt(session, "b").text == P + "b"


# -- rollback --------------------------------------------------------------------------


def snapshot(session):
    return session.context_usage, session.history, session.state.checkpoint()


def test_rollback_restores_usage_history_and_echo_state_exactly(echo):
    session_id = echo.create(initialPrompts=[user("I")])
    echo.prompt(session_id, "a")
    echo.append(session_id, "b")
    session = echo.session(session_id)
    before, checkpoint = snapshot(session), session.checkpoint()
    echo.prompt(session_id, "c")
    session.rollback(checkpoint)
    assert snapshot(session) == before
    assert echo.prompt(session_id, "d").text == "bd"


def test_rollback_before_the_first_response_brings_the_prefix_back(echo):
    session_id = echo.create()
    session = echo.session(session_id)
    checkpoint = session.checkpoint()
    echo.prompt(session_id, "a")
    session.rollback(checkpoint)
    assert echo.prompt(session_id, "b").text == P + "b"


def test_rollback_restores_evicted_history(echo):
    session_id = echo.create()
    echo.prompt(session_id, "a" * 400)
    session = echo.session(session_id)
    before, checkpoint = snapshot(session), session.checkpoint()
    assert echo.prompt(session_id, "b" * 100).settled["overflowed"]
    session.rollback(checkpoint)
    assert snapshot(session) == before


# -- clone -------------------------------------------------------------------------------


def test_clone_copies_usage_and_history(echo):
    source = echo.create(initialPrompts=[user("I")])
    echo.prompt(source, "a")
    clone = echo.clone(source)
    assert clone != source
    assert echo.usage(clone) == echo.usage(source) == 1 + 1 + (87 + 2)
    assert echo.session(clone).history == echo.session(source).history


def test_clone_first_reply_echoes_prefix_and_all_history(echo):
    source = echo.create(initialPrompts=[user("I")])
    first = echo.prompt(source, "a").text
    echo.append(source, "b")
    clone = echo.clone(source)
    assert echo.prompt(clone, "c").text == P + "I" + "a" + first + "b" + "c"


def test_clone_is_independent_of_its_source(echo):
    source = echo.create()
    echo.prompt(source, "a")
    clone = echo.clone(source)
    assert echo.prompt(source, "b").text == "b"
    usage = echo.usage(source)
    echo.prompt(clone, "c")
    assert echo.usage(source) == usage
    assert echo.usage(clone) == (1 + 88) + 1 + len((P + "a" + P + "a" + "c").encode())


def test_clone_keeps_the_tools(echo):
    source = echo.create(**tool_options(tool("t", "T.")))
    clone = echo.clone(source)
    assert [c["name"] for c in echo.prompt(clone, SIMPLE_TRIGGER).tool_calls] == ["t"]


# -- destroy -----------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["prompt", "append", "measure", "clone"])
def test_calls_on_a_destroyed_session_are_invalid_state(echo, call):
    session = echo.create()
    echo.runtime.destroy(session)
    args = {"prompt": ("x",), "append": ("x",), "measure": ("x",), "clone": ()}[call]
    assert error_name(lambda: getattr(echo, call)(session, *args)) == "InvalidStateError"


def test_queued_call_on_a_session_destroyed_meanwhile_is_invalid_state(echo):
    session = echo.create()

    async def destroy_then_keep(value):
        await asyncio.sleep(0)  # let the second call queue on the session
        echo.runtime.destroy(session)
        return True

    async def both():
        first = echo.runtime.prompt(
            session, "a", None, False, lambda c: None, destroy_then_keep, lambda: False
        )
        second = echo.prompt_async(session, "b")
        return await asyncio.gather(first, second, return_exceptions=True)

    first, second = echo.run(both())
    assert first is None
    assert isinstance(second, PromptAPIError) and second.name == "InvalidStateError"


# -- call order ---------------------------------------------------------------------------


def test_concurrent_prompts_run_in_call_order(echo):
    session = echo.create()

    async def both():
        return await asyncio.gather(
            echo.prompt_async(session, "a"), echo.prompt_async(session, "b")
        )

    first, second = echo.run(both())
    assert (first.text, second.text) == (P + "a", "b")
    assert second.settled["contextUsage"] == (1 + 88) + (1 + 1)


def test_a_failing_call_does_not_block_the_queue(echo):
    session = echo.create()

    async def three():
        return await asyncio.gather(
            echo.prompt_async(session, "x" * 1001),
            echo.prompt_async(session, "a"),
            echo.prompt_async(session, "b"),
            return_exceptions=True,
        )

    failed, first, second = echo.run(three())
    assert isinstance(failed, PromptAPIError) and failed.name == "QuotaExceededError"
    assert (first.text, second.text) == (P + "a", "b")


# -- attributes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "mode"),
    [({}, "balanced"), ({"samplingMode": "creative"}, "creative"), ({"topK": 3}, None)],
)
def test_sampling_mode_attribute(echo, options, mode):
    assert echo.session(echo.create(**options)).describe(0)["samplingMode"] == mode


def test_sampling_mode_is_null_when_top_k_is_infinite(echo):
    assert echo.session(echo.create(topK="Infinity")).describe(0)["samplingMode"] is None


def test_create_reports_progress_0_then_1(echo):
    echo.create()
    assert echo.progress == [0, 1]
