"""The worker protocol: JSON requests in, ``progress``/``chunk``/``return``/``throw`` out,
and the page's ``settle``/``abort`` answers."""

from __future__ import annotations

import json

from builders import system, tool, tool_options, user

from py_runtime.hosts.pyodide import start
from py_runtime.models.echo import PREFIX as P
from py_runtime.models.echo import SIMPLE_TRIGGER, EchoModel


def text_of(worker, request_id: int) -> str:
    """The text a prompt streamed."""
    chunks = [r["chunk"] for r in worker.replies(request_id) if r["kind"] == "chunk"]
    return "".join(c["text"] for c in chunks if c["kind"] == "text")


def create(worker, request_id: int = 1, **options) -> int:
    worker.send(id=request_id, kind="create", options=options, activation=True)
    return worker.last(request_id)["value"]["session"]


def prompt(worker, request_id: int, session: int, input) -> None:
    worker.send(
        id=request_id, kind="prompt", session=session, input=input, constraint=None, omit=False
    )


def test_availability_is_downloadable_then_available_after_create(worker):
    worker.send(id=1, kind="availability", options={})
    assert worker.replies(1) == [{"id": 1, "kind": "return", "value": "downloadable"}]
    create(worker, 2)
    worker.send(id=3, kind="availability", options={})
    assert worker.last(3) == {"id": 3, "kind": "return", "value": "available"}


def test_create_reports_progress_0_then_1_then_returns_the_session(worker):
    worker.send(id=1, kind="create", options={}, activation=True)
    assert worker.replies(1) == [
        {"id": 1, "kind": "progress", "loaded": 0},
        {"id": 1, "kind": "progress", "loaded": 1},
        {
            "id": 1,
            "kind": "return",
            "value": {
                "session": 1,
                "contextUsage": 0,
                "contextWindow": 1000,
                "samplingMode": "balanced",
                "topK": 8,
                "temperature": 0.7,
            },
        },
    ]


def test_prompt_streams_then_returns_usage_for_the_page_to_settle(worker):
    session = create(worker)
    prompt(worker, 2, session, "hi")
    assert worker.replies(2) == [
        {"id": 2, "kind": "chunk", "chunk": {"kind": "text", "text": P + "hi"}},
        {"id": 2, "kind": "return", "value": {"contextUsage": 2 + 89, "overflowed": False}},
    ]
    worker.send(kind="settle", target=2, keep=True)
    assert len(worker.replies(2)) == 2  # nothing more after the settle
    assert worker.endpoint._controls == {}


def test_settle_keep_true_keeps_the_result(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    worker.send(kind="settle", target=2, keep=True)
    prompt(worker, 3, session, "b")
    assert text_of(worker, 3) == "b"
    assert worker.last(3)["value"]["contextUsage"] == (1 + 88) + (1 + 1)


def test_settle_keep_false_leaves_context_usage_unchanged(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    worker.send(kind="settle", target=2, keep=False)
    prompt(worker, 3, session, "b")
    assert text_of(worker, 3) == P + "b"
    assert worker.last(3)["value"]["contextUsage"] == 1 + 88


def test_abort_before_settle_discards_the_result(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    worker.send(kind="abort", target=2)
    worker.send(kind="settle", target=2, keep=True)  # too late: ignored
    assert [r["kind"] for r in worker.replies(2)] == ["chunk", "return"]
    prompt(worker, 3, session, "b")
    assert text_of(worker, 3) == P + "b"


def test_abort_before_the_request_runs_throws_abort_error(worker):
    session = create(worker)
    request = {
        "id": 2,
        "kind": "prompt",
        "session": session,
        "input": "a",
        "constraint": None,
        "omit": False,
    }
    worker.send_all(request, {"kind": "abort", "target": 2})
    assert worker.replies(2) == [
        {
            "id": 2,
            "kind": "throw",
            "error": {"name": "AbortError", "message": "The operation was aborted."},
        }
    ]
    prompt(worker, 3, session, "b")
    assert text_of(worker, 3) == P + "b"


def test_append_returns_usage_and_settles(worker):
    session = create(worker)
    worker.send(id=2, kind="append", session=session, input="abc")
    assert worker.replies(2) == [
        {"id": 2, "kind": "return", "value": {"contextUsage": 3, "overflowed": False}}
    ]
    worker.send(kind="settle", target=2, keep=True)
    prompt(worker, 3, session, "d")
    assert text_of(worker, 3) == P + "abcd"


def test_measure_returns_a_number_and_changes_nothing(worker):
    session = create(worker)
    worker.send(id=2, kind="measure", session=session, input="héllo", constraint=None, omit=False)
    assert worker.last(2) == {"id": 2, "kind": "return", "value": 6}


def test_clone_returns_a_new_session_with_the_same_usage(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    worker.send(kind="settle", target=2, keep=True)
    worker.send(id=3, kind="clone", session=session)
    value = worker.last(3)["value"]
    assert value["session"] != session
    assert value["contextUsage"] == 1 + 88


def test_tool_calls_are_chunks_of_their_own(worker):
    session = create(worker, **tool_options(tool("t", 'T. Args: {"k": 1}')))
    prompt(worker, 2, session, SIMPLE_TRIGGER + "go")
    assert [r.get("chunk") for r in worker.replies(2)] == [
        {"kind": "text", "text": P + "go"},
        {"kind": "tool-call", "callId": "call_1", "name": "t", "arguments": {"k": 1}},
        None,
    ]


def test_second_prompt_waits_for_the_first_to_settle(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    prompt(worker, 3, session, "b")
    assert worker.replies(3) == []
    worker.send(kind="settle", target=2, keep=True)
    assert text_of(worker, 3) == "b"


# -- errors -----------------------------------------------------------------------------


def thrown(worker, request_id: int) -> dict:
    reply = worker.last(request_id)
    assert reply["kind"] == "throw"
    return reply["error"]


def test_errors_come_back_as_throw_with_name_message_and_fields(worker):
    session = create(worker)
    prompt(worker, 2, session, "x" * 1001)
    error = thrown(worker, 2)
    assert (error["name"], error["requested"], error["quota"]) == ("QuotaExceededError", 1001, 1000)
    assert error["message"]


def test_validation_error_is_thrown_by_name(worker):
    session = create(worker, initialPrompts=[user("I")])
    prompt(worker, 2, session, [system("s")])
    assert thrown(worker, 2)["name"] == "TypeError"


def test_page_exception_comes_back_with_its_index(worker):
    bad = {"name": "t", "description": "T.", "inputSchema": {"type": {"threw": 0}}}
    worker.send(id=1, kind="create", options=tool_options(bad), activation=True)
    assert thrown(worker, 1) == {"name": "JSException", "message": "", "index": 0}


def test_create_without_activation_of_a_downloadable_model_is_not_allowed(worker):
    worker.send(id=1, kind="create", options={}, activation=False)
    assert [r["kind"] for r in worker.replies(1)] == ["throw"]
    assert thrown(worker, 1)["name"] == "NotAllowedError"


def test_calls_after_destroy_are_invalid_state(worker):
    session = create(worker)
    worker.send(id=2, kind="destroy", session=session)
    assert worker.last(2) == {"id": 2, "kind": "return", "value": None}
    prompt(worker, 3, session, "a")
    assert thrown(worker, 3)["name"] == "InvalidStateError"


def test_destroy_while_prompt_pending_fails_the_queued_call(worker):
    session = create(worker)
    prompt(worker, 2, session, "a")
    prompt(worker, 3, session, "b")
    worker.send(id=4, kind="destroy", session=session)
    worker.send(kind="settle", target=2, keep=True)
    assert thrown(worker, 3)["name"] == "InvalidStateError"


def test_unknown_kind_is_operation_error(worker):
    worker.send(id=1, kind="soup")
    assert thrown(worker, 1)["name"] == "OperationError"


def test_a_malformed_request_rejects_naming_the_field(worker):
    session = create(worker)
    worker.send(id=2, kind="prompt", session=session, constraint=None, omit=False)  # no input
    error = thrown(worker, 2)
    assert error == {
        "name": "OperationError",
        "message": "The runtime received a malformed message: prompt.input is missing.",
    }
    worker.send(
        id=3, kind="prompt", session=session, input=[{"role": "user"}], constraint=None, omit=False
    )
    assert "prompt.input" in thrown(worker, 3)["message"]
    assert "content is missing" in thrown(worker, 3)["message"]
    prompt(worker, 4, session, "a")  # the session still works
    assert text_of(worker, 4) == P + "a"


def test_an_engine_bug_rejects_with_operation_error_and_no_repr(worker, monkeypatch, capsys):
    session = create(worker)

    def broken(messages):
        raise KeyError("role")

    monkeypatch.setattr(worker.endpoint.runtime.model, "measure", broken)
    prompt(worker, 2, session, "a")
    error = thrown(worker, 2)
    assert error["name"] == "OperationError"
    assert "internal error (KeyError)" in error["message"]
    assert "'role'" not in error["message"]
    assert "KeyError: 'role'" in capsys.readouterr().err  # the traceback went to the console
    monkeypatch.undo()
    prompt(worker, 3, session, "a")
    assert text_of(worker, 3) == P + "a"


def test_prompt_with_a_lone_surrogate_is_echoed(worker):
    session = create(worker)
    prompt(worker, 2, session, "a\ud800b")
    assert worker.replies(2)[-1]["kind"] == "return"


def test_control_messages_for_unknown_targets_are_ignored(worker):
    worker.send(kind="settle", target=42, keep=True)
    worker.send(kind="abort", target=42)
    assert worker.posted == []


def test_start_builds_an_endpoint_over_the_configured_model():
    posted = []
    started = start(
        json.dumps({"kind": "init", "config": {"model": "echo"}}), posted.append, None, None
    )
    assert isinstance(started.runtime.model, EchoModel)
    started = start(json.dumps({"kind": "init", "config": {}}), posted.append, None, None)
    assert isinstance(started.runtime.model, EchoModel)
    assert posted == []


def test_a_failed_start_posts_a_boot_error():
    posted = []
    assert (
        start(json.dumps({"kind": "init", "config": {"dtype": "q9"}}), posted.append, None, None)
        is None
    )
    (reply,) = map(json.loads, posted)
    assert reply["kind"] == "boot-error"
    assert reply["error"]["name"] == "OperationError"
    assert "config.dtype" in reply["error"]["message"]
