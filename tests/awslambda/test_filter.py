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
