"""Response-constraint schemas: NotSupportedError for what cannot be a JSON schema."""

import pytest

from py_runtime.engine.errors import PromptAPIError
from py_runtime.engine.json_schema import check_prefix, check_response_schema


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"Rating": {"type": "number", "minimum": 0}}},
        {"type": ["string", "null"]},
        {"type": "array", "items": {"type": "integer"}},
        {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
        {"type": "object", "required": ["a"], "additionalProperties": False},
        {},
        True,
    ],
)
def test_usable_schemas_pass(schema):
    check_response_schema(schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "soup"},
        {"type": ["string", "soup"]},
        {"type": "object", "properties": {"a": {"type": "soup"}}},
        {"type": "object", "properties": []},
        {"type": "array", "items": {"type": 3}},
        {"anyOf": {"type": "string"}},
        {"anyOf": [{"type": "string"}, "x"]},
        {"required": "a"},
        "string",
        [],
    ],
)
def test_unusable_schemas_are_not_supported(schema):
    with pytest.raises(PromptAPIError) as caught:
        check_response_schema(schema)
    assert caught.value.name == "NotSupportedError"


@pytest.mark.parametrize(
    ("schema", "prefix"),
    [
        ({"type": "object"}, '{ "Rating": '),
        ({"type": "array"}, " ["),
        ({"type": ["string", "null"]}, "nu"),
        ({}, "42"),
        ({"type": "object"}, ""),
    ],
)
def test_prefix_that_can_start_the_value_passes(schema, prefix):
    check_prefix(schema, prefix)


@pytest.mark.parametrize(
    ("schema", "prefix"),
    [({"type": "object"}, "invalid"), ({"type": "number"}, '"1'), ({"type": "boolean"}, "1")],
)
def test_prefix_that_cannot_start_the_value_is_not_supported(schema, prefix):
    with pytest.raises(PromptAPIError) as caught:
        check_prefix(schema, prefix)
    assert caught.value.name == "NotSupportedError"
