"""Lambda's event filtering (FilterCriteria) on an SQS record.

A filter ``Pattern`` is a JSON object whose keys name fields of the record
and whose leaves are arrays of matchers; a record matches when every key of
the pattern matches (a leaf matches when any of its matchers does), and a
mapping with several filters invokes for a record matching any of them. The
matchers are Lambda's (the EventBridge syntax Lambda documents): equals (a
string, number, ``true``/``false`` or ``null``), ``prefix``, ``suffix``,
``equals-ignore-case``, ``wildcard``, ``anything-but`` (a value, a list, or a
``prefix``/``suffix``/``equals-ignore-case``/``wildcard``), ``numeric`` (one
comparison or a range), ``exists``, and ``$or`` between sub-patterns.

``body``: when the pattern's ``body`` is an object, the message body is
parsed as JSON and matched field by field; a body that is not a JSON object
matches no such pattern. When the pattern's ``body`` is a list of matchers
it is matched against the body as a string. ``attributes`` and
``messageAttributes`` are matched as the record shows them
(``{"messageAttributes": {"kind": {"stringValue": ["order"]}}}``).

Paths are followed as EventBridge follows them (``# -- matching`` below):
``exists: false`` matches a missing field, a missing parent and an object.
A record that no filter matches is deleted by the poller without an
invocation, as Lambda does. Matching costs O(size of the pattern) plus one
JSON parse of the body per record when a pattern looks inside it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["Pattern", "compile_pattern", "matches_any"]

_NUMERIC_OPS = {"=", "<", "<=", ">", ">="}
_STRING_OPS = ("prefix", "suffix", "equals-ignore-case", "wildcard")


@attrs.frozen
class Pattern:
    """One compiled filter: its text and the parsed JSON object."""

    text: str
    tree: Mapping[str, Any] = attrs.field(repr=False)


def compile_pattern(text: object) -> Pattern | None:
    """The compiled pattern, or None if ``text`` is not a valid filter pattern."""
    if not isinstance(text, str) or not text:
        return None
    try:
        tree = json.loads(text)
    except ValueError:
        return None
    if not _valid_object(tree):
        return None
    return Pattern(text, tree)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _valid_object(node: object) -> bool:
    if not isinstance(node, dict) or not node:
        return False
    for key, value in node.items():
        if key == "$or":
            if not isinstance(value, list) or len(value) < 2:
                return False
            if not all(_valid_object(sub) for sub in value):
                return False
        elif isinstance(value, dict):
            if not _valid_object(value):
                return False
        elif isinstance(value, list):
            if not value or not all(_valid_matcher(m) for m in value):
                return False
        else:
            return False
    return True


def _valid_string_op(op: str, arg: object) -> bool:
    if op in ("prefix", "suffix") and isinstance(arg, dict):
        return list(arg) == ["equals-ignore-case"] and isinstance(arg["equals-ignore-case"], str)
    return isinstance(arg, str)


def _valid_matcher(m: object) -> bool:
    if m is None or isinstance(m, (str, bool)) or _number(m):
        return True
    if not isinstance(m, dict) or len(m) != 1:
        return False
    [(op, arg)] = m.items()
    if op in _STRING_OPS:
        return _valid_string_op(op, arg)
    if op == "exists":
        return isinstance(arg, bool)
    if op == "numeric":
        return _valid_numeric(arg)
    if op == "anything-but":
        if isinstance(arg, dict):
            if len(arg) != 1:
                return False
            [(inner, inner_arg)] = arg.items()
            if inner not in _STRING_OPS:
                return False
            # A string or a non-empty list of strings; inside anything-but a
            # prefix or suffix may not be empty nor fold case (recorded:
            # EventBridge's TestEventPattern, content_anything_prefix_list,
            # ..._prefix_empty_EXC, ..._prefix_ignorecase_EXC, and the suffix ones).
            options = inner_arg if isinstance(inner_arg, list) else [inner_arg]
            if not options or not all(isinstance(a, str) for a in options):
                return False
            return inner not in ("prefix", "suffix") or all(options)
        if isinstance(arg, list):
            return bool(arg) and all(isinstance(a, str) or _number(a) for a in arg)
        return isinstance(arg, str) or _number(arg)
    return False


def _valid_numeric(arg: object) -> bool:
    if not isinstance(arg, list) or len(arg) not in (2, 4):
        return False
    ops = arg[0::2]
    if not all(isinstance(op, str) and op in _NUMERIC_OPS for op in ops):
        return False
    if not all(_number(n) for n in arg[1::2]):
        return False
    if len(arg) == 4:
        # A range: a lower bound, then an upper bound.
        return ops[0] in (">", ">=") and ops[1] in ("<", "<=") and arg[1] <= arg[3]
    return True


# -- matching ----------------------------------------------------------------------
#
# A pattern is matched against a *set of values* at each path, as EventBridge
# flattens an event (Lambda documents its filters as EventBridge's syntax):
# following a key into an array goes into each of its elements, so an array
# of objects is matched element by element (``{"a": {"id": [...]}}`` against
# ``"a": [{"x": 1}, {"id": 2}]``), and an array of values offers each value.
# At a leaf, the values are the scalars found there (strings, numbers,
# booleans, null); an object is not a leaf value. A path with no leaf value
# (missing, a missing parent, an object, an empty array) is "absent": only
# ``{"exists": false}`` matches it. Recorded from AWS: EventBridge's
# TestEventPattern (LocalStack's AWS-validated event_pattern_templates:
# content_exists_false.json5, a missing parent; list_within_dict.json5, an
# array of objects; or-exists-parent.json5) and AWS Lambda on a DynamoDB
# mapping, the same filter engine (``{"presentKey": [{"exists": false}]}``
# invoked the function for ``"presentKey": {"S": "presentValue"}``).

#: The body of a record whose body is not a JSON object: a pattern that looks
#: inside the body matches none (Lambda drops such a message; docs/lambda.md).
_NOT_JSON = object()


def matches_any(patterns: tuple[Pattern, ...], record: Mapping[str, Any]) -> bool:
    """True when ``record`` matches one of ``patterns`` (or there are none)."""
    if not patterns:
        return True
    body: object = None
    parsed = False
    for pattern in patterns:
        tree = pattern.tree
        view: Mapping[str, Any] = record if type(record) is dict else dict(record)
        if isinstance(tree.get("body"), dict) or _or_looks_in_body(tree):
            if not parsed:
                body, parsed = _parse(record.get("body")), True
            view = {**record, "body": body}
        if _match_object(tree, [view]):
            return True
    return False


def _or_looks_in_body(tree: Mapping[str, Any]) -> bool:
    return any(isinstance(sub.get("body"), dict) for sub in tree.get("$or", ()))


def _parse(body: object) -> object:
    """The body as a JSON object, or ``_NOT_JSON``."""
    if not isinstance(body, str):
        return _NOT_JSON
    try:
        value = json.loads(body)
    except ValueError:
        return _NOT_JSON
    return value if isinstance(value, dict) else _NOT_JSON


def _flatten(items: list[Any], out: list[Any]) -> None:
    for item in items:
        if type(item) is list:
            _flatten(item, out)
        else:
            out.append(item)


def _match_object(pattern: Mapping[str, Any], values: list[Any]) -> bool:
    """Whether the objects among ``values`` match ``pattern``. Cost: linear in
    the pattern and in the values it reaches (records and JSON are dicts)."""
    for key, sub in pattern.items():
        if key == "$or":
            for alt in sub:
                if _match_object(alt, values):
                    break
            else:
                return False
            continue
        # The values at ``key`` of every object among ``values``, arrays flattened.
        children: list[Any] = []
        for value in values:
            if type(value) is dict and key in value:
                child = value[key]
                if child is _NOT_JSON:
                    return False
                if type(child) is list:
                    _flatten(child, children)
                else:
                    children.append(child)
        if type(sub) is dict:
            if not _match_object(sub, children):
                return False
        elif not _match_leaf(sub, children):
            return False
    return True


def _match_leaf(matchers: list[Any], values: list[Any]) -> bool:
    leaves = [v for v in values if type(v) is not dict]
    if not leaves:  # absent: missing, a missing parent, an object, an empty array
        return any(type(m) is dict and m.get("exists") is False for m in matchers)
    for m in matchers:
        for v in leaves:
            if _match_one(m, v):
                return True
    return False


def _match_one(m: object, v: object) -> bool:
    if type(m) is not dict:
        return _equals(m, v)
    for op, arg in m.items():  # exactly one (validated)
        if op == "exists":
            return bool(arg)  # a leaf value is there
        if op == "numeric":
            return _number(v) and _in_range(arg, v)  # type: ignore[arg-type]
        if op == "anything-but":
            return _anything_but(arg, v)
        return _string_op(op, arg, v)
    return False


def _equals(m: object, v: object) -> bool:
    if m is None or isinstance(m, bool):
        return v is m
    if _number(m):
        return _number(v) and float(v) == float(m)  # type: ignore[arg-type]
    return isinstance(v, str) and v == m


def _string_op(op: str, arg: Any, v: object) -> bool:
    if not isinstance(v, str):
        return False
    if op == "equals-ignore-case":
        return bool(v.casefold() == arg.casefold())
    if op == "wildcard":
        return _wildcard(arg).fullmatch(v) is not None
    fold = isinstance(arg, dict)
    text: str = arg["equals-ignore-case"] if fold else arg
    subject = v.casefold() if fold else v
    needle = text.casefold() if fold else text
    return subject.startswith(needle) if op == "prefix" else subject.endswith(needle)


def _wildcard(text: str) -> re.Pattern[str]:
    # "*" matches any run of characters; "\*" is a literal star.
    parts = re.split(r"(?<!\\)\*", text)
    return re.compile(".*".join(re.escape(p.replace("\\*", "*")) for p in parts), re.DOTALL)


def _anything_but(arg: Any, v: object) -> bool:
    if isinstance(arg, dict):
        [(inner, inner_arg)] = arg.items()
        if not isinstance(v, str):
            # A string matcher cannot match a number, a boolean or null, so
            # "anything but" it does (recorded: EventBridge's TestEventPattern,
            # content_anything_prefix_int_value, content_anything_but_ignorecase_null,
            # content_anything_{prefix,suffix,wildcard}_null).
            return True
        options = inner_arg if isinstance(inner_arg, list) else [inner_arg]
        if inner == "equals-ignore-case":
            return all(v.casefold() != o.casefold() for o in options)
        return not any(_string_op(inner, o, v) for o in options)
    options = arg if isinstance(arg, list) else [arg]
    return not any(_equals(o, v) for o in options)


def _in_range(arg: list[Any], v: float) -> bool:
    for op, bound in zip(arg[0::2], arg[1::2], strict=True):
        ok = {
            "=": v == bound,
            "<": v < bound,
            "<=": v <= bound,
            ">": v > bound,
            ">=": v >= bound,
        }[op]
        if not ok:
            return False
    return True
