"""The tool-use evaluation's cases are consistent, and its scoring scores (no model)."""

from __future__ import annotations

from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")

from bench.tool_use_cases import SCHEMAS, SETS, TOOLS, TUNING, Request  # noqa: E402
from bench.tool_use_eval import interleaved, score  # noqa: E402

ALL = [request for requests in SETS.values() for request in requests]


def test_at_least_six_tools_each_declared_as_a_page_declares_it() -> None:
    assert len(TOOLS) >= 6
    assert len(SCHEMAS) == len(TOOLS)
    for tool in TOOLS:
        assert set(tool) == {"name", "description", "inputSchema"}
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])


def test_the_schemas_vary() -> None:
    kinds: set[str] = set()

    def walk(schema: dict[str, Any]) -> None:
        for field in schema["properties"].values():
            kinds.add("enum" if "enum" in field else field["type"])
            if field["type"] == "object":
                walk(field)

    for schema in SCHEMAS.values():
        walk(schema)
        if set(schema["required"]) != set(schema["properties"]):
            kinds.add("optional")
    assert {"string", "enum", "number", "integer", "object", "optional"} <= kinds


@pytest.mark.parametrize("name", list(SETS))
def test_each_set_is_sixty_or_more_half_needing_a_call(name: str) -> None:
    requests = SETS[name]
    assert len(requests) >= 60
    needing = sum(request.tool is not None for request in requests)
    assert abs(needing / len(requests) - 0.5) <= 0.1
    assert len({request.text for request in requests}) == len(requests)


def test_the_sets_share_no_request() -> None:
    texts = [{" ".join(r.text.casefold().split()) for r in requests} for requests in SETS.values()]
    assert sum(map(len, texts)) == len(set().union(*texts))


@pytest.mark.parametrize("request_", ALL, ids=lambda r: r.text[:40])
def test_every_expected_call_is_valid_for_its_tool(request_: Request) -> None:
    if request_.tool is None:
        assert not request_.arguments
        return
    assert request_.tool in SCHEMAS
    schema = SCHEMAS[request_.tool]
    jsonschema.validate(request_.arguments, schema)
    for name, value in request_.arguments.items():
        assert name in schema["properties"]
        if isinstance(value, dict):
            assert set(value) <= set(schema["properties"][name]["properties"])


def test_a_limited_run_is_half_and_half_and_spans_the_tools() -> None:
    first = interleaved(TUNING)[:16]
    assert sum(request.tool is not None for request in first) == 8
    assert len({request.tool for request in first if request.tool}) == 8
    assert sorted(interleaved(TUNING), key=TUNING.index) == TUNING


FLIGHT = Request(
    "two adults and a child from Madrid to London on 12 August 2026",
    "search_flights",
    {
        "origin": "Madrid",
        "destination": "London",
        "date": "2026-08-12",
        "passengers": {"adults": 2, "children": 1},
    },
)
RIGHT = {
    "origin": " madrid",
    "destination": "LONDON ",
    "date": "2026-08-12",
    "passengers": {"adults": 2.0, "children": 1},
    "cabin": "economy",  # not stated: not checked
}


def test_a_right_call_scores_right() -> None:
    verdict = score(FLIGHT, [{"name": "search_flights", "arguments": RIGHT}])
    assert verdict.called and verdict.right_tool and verdict.correct
    assert verdict.wrong == []


def test_a_wrong_or_missing_argument_is_named() -> None:
    arguments = {**RIGHT, "destination": "Londres", "passengers": {"adults": 2}}
    verdict = score(FLIGHT, [{"name": "search_flights", "arguments": arguments}])
    assert verdict.called and verdict.right_tool and not verdict.correct
    assert verdict.wrong == ["destination", "passengers.children"]
    typed = {**RIGHT, "passengers": {"adults": "2", "children": True}}
    verdict = score(FLIGHT, [{"name": "search_flights", "arguments": typed}])
    assert verdict.wrong == ["passengers.adults", "passengers.children"]


def test_an_enum_is_compared_exactly() -> None:
    lights = Request("lights off in the kitchen", "set_lights", {"room": "kitchen", "power": "off"})
    call = {"name": "set_lights", "arguments": {"room": "Kitchen", "power": "off"}}
    assert score(lights, [call]).wrong == ["room"]


def test_the_wrong_tool_or_no_call_is_wrong() -> None:
    verdict = score(FLIGHT, [{"name": "get_weather", "arguments": {"city": "London"}}])
    assert verdict.called and not verdict.right_tool and not verdict.correct
    verdict = score(FLIGHT, [])
    assert not verdict.called and not verdict.right_tool and not verdict.correct


def test_a_call_where_none_is_needed_is_wrong() -> None:
    chat = Request("I love rainy weather")
    assert score(chat, []).correct
    verdict = score(chat, [{"name": "get_weather", "arguments": {"city": "Oslo"}}])
    assert verdict.called and not verdict.correct
