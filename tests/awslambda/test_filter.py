"""Lambda's event filtering: each matcher on the body as JSON, on a plain body,
and on attributes and message attributes; a message no filter matches is
deleted without an invocation (docs/lambda.md, "Filtering")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsqueue import Queue
from sqsqueue.awslambda import EventSourceMapping
from sqsqueue.awslambda._filter import compile_pattern, matches_any


def record(body: str, **extra: Any) -> dict[str, Any]:
    return {"body": body, "attributes": {"ApproximateReceiveCount": "1"}, **extra}


def matches(pattern: object, rec: dict[str, Any]) -> bool:
    compiled = compile_pattern(json.dumps(pattern))
    assert compiled is not None, pattern
    return matches_any((compiled,), rec)


BODY = json.dumps({"kind": "Order", "n": 7, "tags": ["a", "b"], "note": None, "s": "ab*c"})


@pytest.mark.parametrize(
    ("leaf", "expected"),
    [
        ({"kind": ["Order"]}, True),
        ({"kind": ["order"]}, False),
        ({"kind": [{"equals-ignore-case": "order"}]}, True),
        ({"kind": [{"prefix": "Ord"}]}, True),
        ({"kind": [{"prefix": {"equals-ignore-case": "ord"}}]}, True),
        ({"kind": [{"suffix": "der"}]}, True),
        ({"kind": [{"suffix": "Or"}]}, False),
        ({"kind": [{"anything-but": "Order"}]}, False),
        ({"kind": [{"anything-but": ["Refund", "Void"]}]}, True),
        ({"kind": [{"anything-but": {"prefix": "Or"}}]}, False),
        ({"kind": [{"anything-but": {"equals-ignore-case": ["ORDER"]}}]}, False),
        ({"kind": [{"wildcard": "O*r"}]}, True),
        ({"kind": [{"wildcard": "O*x"}]}, False),
        ({"s": [{"wildcard": "ab\\*c"}]}, True),
        ({"n": [7]}, True),
        ({"n": [7.0]}, True),
        ({"n": ["7"]}, False),
        ({"n": [{"numeric": [">", 5]}]}, True),
        ({"n": [{"numeric": [">", 0, "<=", 7]}]}, True),
        ({"n": [{"numeric": [">", 0, "<", 7]}]}, False),
        ({"n": [{"numeric": ["=", 7]}]}, True),
        ({"tags": ["b"]}, True),
        ({"tags": ["c"]}, False),
        ({"note": [None]}, True),
        ({"missing": [{"exists": False}]}, True),
        ({"kind": [{"exists": False}]}, False),
        ({"kind": [{"exists": True}]}, True),
        ({"missing": [{"exists": True}]}, False),
        ({"kind": ["Refund", "Order"]}, True),
        ({"kind": ["Order"], "n": [8]}, False),
        ({"$or": [{"kind": ["Refund"]}, {"n": [7]}]}, True),
        ({"$or": [{"kind": ["Refund"]}, {"n": [8]}]}, False),
    ],
)
def test_body_as_json(leaf: dict[str, Any], expected: bool) -> None:
    assert matches({"body": leaf}, record(BODY)) is expected


def test_a_plain_body() -> None:
    assert matches({"body": ["hello"]}, record("hello"))
    assert matches({"body": [{"prefix": "hel"}]}, record("hello"))
    # A pattern that looks inside the body matches no body that is not JSON.
    assert not matches({"body": {"kind": [{"exists": False}]}}, record("hello"))
    assert not matches({"body": {"kind": ["Order"]}}, record("[1, 2]"))


def test_attributes_and_message_attributes() -> None:
    rec = record(
        "x",
        messageAttributes={"type": {"stringValue": "order", "dataType": "String"}},
    )
    assert matches({"attributes": {"ApproximateReceiveCount": ["1"]}}, rec)
    assert not matches({"attributes": {"ApproximateReceiveCount": ["2"]}}, rec)
    assert matches({"messageAttributes": {"type": {"stringValue": ["order"]}}}, rec)
    assert not matches({"messageAttributes": {"type": {"stringValue": ["refund"]}}}, rec)


def test_filters_are_ored() -> None:
    a = compile_pattern('{"body": {"kind": ["A"]}}')
    b = compile_pattern('{"body": {"kind": ["B"]}}')
    assert a is not None and b is not None
    assert matches_any((a, b), record('{"kind": "B"}'))
    assert not matches_any((a, b), record('{"kind": "C"}'))
    assert matches_any((), record("anything"))


def test_unmatched_messages_are_deleted_without_an_invocation(queue: Queue) -> None:
    for kind in ["A", "B", "A", "C"]:
        queue.send(json.dumps({"kind": kind}))
    queue.send("not json")
    seen: list[str] = []
    m = EventSourceMapping(
        queue,
        lambda event, context: seen.extend(r["body"] for r in event["Records"]),
        filter_criteria={"Filters": [{"Pattern": '{"body": {"kind": ["A"]}}'}]},
    )
    [inv] = m.run_until_idle()
    assert [json.loads(b)["kind"] for b in seen] == ["A", "A"]
    assert len(m.filtered) == 3 and set(m.filtered).isdisjoint(inv.message_ids)
    assert len(queue) == 0  # the filtered ones are deleted too


# -- every operator against absent paths, objects, arrays, nulls and numbers ------------
#
# What AWS does, recorded with EventBridge's TestEventPattern (Lambda documents
# its filters as EventBridge's syntax; LocalStack's AWS-validated
# tests/aws/services/events/event_pattern_templates/, named per row) and with
# AWS Lambda itself on a DynamoDB mapping (same filter engine: LocalStack's
# test_lambda_integration_dynamodbstreams.snapshot.json, ``presentKey``).
# Rows marked UNCONFIRMED are sqsqueue's choice where nothing was recorded.

NESTED = json.dumps(
    {
        "obj": {"S": "presentValue"},
        "items": [{"k": "v1"}, {"id": "x-1"}, {"k": "v2"}],
        "none": None,
        "num": 12,
        "text": "post-init",
        "empty": "",
        "list": [],
    }
)


@pytest.mark.parametrize(
    ("leaf", "expected", "source"),
    [
        # exists
        ({"obj": [{"exists": False}]}, True, "Lambda DynamoDB mapping, presentKey"),
        ({"obj": [{"exists": True}]}, False, "exists_dynamodb_NEG"),
        ({"obj": {"S": [{"exists": True}]}}, True, "exists_dynamodb"),
        ({"gone": {"deeper": {"leaf": [{"exists": False}]}}}, True, "content_exists_false"),
        ({"gone": {"deeper": {"leaf": [{"exists": True}]}}}, False, "content_exists_NEG"),
        ({"items": {"id": [{"exists": True}]}}, True, "list_within_dict"),
        ({"items": {"id": ["x-1"]}}, True, "list_within_dict"),
        ({"items": {"nope": [{"exists": False}]}}, True, "list_within_dict (absent)"),
        ({"list": [{"exists": True}]}, False, "exists_list_empty_NEG"),
        ({"text": [{"exists": False}]}, False, "content_exists_false_NEG"),
        ({"none": [{"exists": True}]}, True, "UNCONFIRMED: null is a leaf value"),
        # null and empty
        ({"none": [None]}, True, "null_value"),
        ({"gone": [None]}, False, "UNCONFIRMED: null is not absence"),
        ({"list": [None]}, False, "arrays_empty_null_NEG"),
        ({"empty": [""]}, True, "string_empty"),
        ({"text": [""]}, False, "string_empty"),
        # equals, equals-ignore-case against other types
        ({"num": ["12"]}, False, "numeric-int-float (a number is not its string)"),
        ({"num": [{"equals-ignore-case": "12"}]}, False, "content_ignorecase (strings only)"),
        ({"none": [{"equals-ignore-case": "x"}]}, False, "content_ignorecase (strings only)"),
        ({"obj": ["presentValue"]}, False, "an object is not a leaf value"),
        # prefix and suffix against other types
        ({"num": [{"prefix": "1"}]}, False, "content_prefix (strings only)"),
        ({"none": [{"suffix": ""}]}, False, "content_suffix_empty (strings only)"),
        ({"gone": [{"prefix": ""}]}, False, "content_prefix_empty (absent)"),
        # anything-but
        ({"none": [{"anything-but": "x"}]}, True, "content_anything_but_string_null"),
        ({"gone": [{"anything-but": "x"}]}, False, "content_anything_but_string_missing_NEG"),
        ({"num": [{"anything-but": "x"}]}, True, "content_anything_but_string (a number)"),
        (
            {"num": [{"anything-but": {"prefix": "init"}}]},
            True,
            "content_anything_prefix_int_value",
        ),
        ({"none": [{"anything-but": {"prefix": "init"}}]}, True, "content_anything_prefix_null"),
        (
            {"gone": [{"anything-but": {"prefix": "init"}}]},
            False,
            "content_anything_prefix_missing_NEG",
        ),
        (
            {"none": [{"anything-but": {"equals-ignore-case": "x"}}]},
            True,
            "content_anything_but_ignorecase_null",
        ),
        (
            {"text": [{"anything-but": {"prefix": ["init", "post"]}}]},
            False,
            "content_anything_prefix_list_NEG",
        ),
        (
            {"text": [{"anything-but": {"suffix": ["x", "y"]}}]},
            True,
            "content_anything_suffix_list",
        ),
        # numeric against other types
        ({"text": [{"numeric": [">", 0]}]}, False, "content_numeric (numbers only)"),
        ({"none": [{"numeric": [">", 0]}]}, False, "content_numeric (numbers only)"),
        ({"gone": [{"numeric": [">", 0]}]}, False, "content_numeric (absent)"),
        # and, or
        ({"num": [12], "gone": [{"exists": False}]}, True, "complex_many_rules (and)"),
        ({"num": [12], "obj": [{"exists": True}]}, False, "complex_many_rules (and)"),
        (
            {"$or": [{"gone": {"x": ["roses"]}}, {"gone": {"x": [{"exists": False}]}}]},
            True,
            "or-exists-parent",
        ),
        (
            {"gone": {"S": [{"anything-but": ["roses"]}, {"exists": False}]}},
            True,
            "or-exists-parent",
        ),
    ],
)
def test_absent_objects_arrays_nulls_numbers(
    leaf: dict[str, Any], expected: bool, source: str
) -> None:
    """AWS's answer for each row, recorded where ``source`` says."""
    assert matches({"body": leaf}, record(NESTED)) is expected, source


def test_exists_false_on_a_missing_parent_delivers_the_message(queue: Queue) -> None:
    """AWS invokes the function for a message whose path's parent is missing
    (content_exists_false) or holds an object (the DynamoDB mapping's
    presentKey): sqsqueue used to filter such a message out, which deletes it."""
    queue.send(json.dumps({"presentKey": {"S": "presentValue"}}))
    queue.send(json.dumps({"other": 1}))
    queue.send(json.dumps({"presentKey": "a string"}))
    pattern = {"body": {"presentKey": [{"exists": False}]}}
    m = EventSourceMapping(
        queue,
        lambda event, context: None,
        filter_criteria={"Filters": [{"Pattern": json.dumps(pattern)}]},
    )
    [inv] = m.run_until_idle()
    assert [json.loads(b) for b in inv.bodies] == [
        {"presentKey": {"S": "presentValue"}},
        {"other": 1},
    ]
    assert len(m.filtered) == 1


def test_message_attributes_missing_parent() -> None:
    """A message without attributes matches ``exists: false`` under
    messageAttributes (its parent is absent), and nothing else there."""
    rec = record("x", messageAttributes={})
    assert matches({"messageAttributes": {"kind": {"stringValue": [{"exists": False}]}}}, rec)
    assert not matches({"messageAttributes": {"kind": {"stringValue": ["order"]}}}, rec)


@pytest.mark.parametrize(
    ("pattern", "valid"),
    [
        ({"anything-but": {"prefix": ["a", "b"]}}, True),  # content_anything_prefix_list
        ({"anything-but": {"suffix": ["a"]}}, True),  # content_anything_suffix_list
        ({"anything-but": {"prefix": ""}}, False),  # content_anything_prefix_empty_EXC
        ({"anything-but": {"suffix": ""}}, False),  # content_anything_suffix_empty_EXC
        ({"anything-but": {"prefix": {"equals-ignore-case": "a"}}}, False),  # ..._ignorecase_EXC
        ({"anything-but": {"prefix": []}}, False),
    ],
)
def test_anything_but_string_operators_validation(pattern: dict[str, Any], valid: bool) -> None:
    """Which anything-but forms AWS accepts (EventBridge's TestEventPattern:
    the positive templates match, the _EXC ones are refused)."""
    assert (compile_pattern(json.dumps({"body": {"k": [pattern]}})) is not None) is valid
