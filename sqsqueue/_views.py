"""What a receive returns: the :class:`~sqsqueue.Message` view of a record,
with only the system and message attributes asked for (``docs/aws-behaviour.md``
§2.1). Runs once per message received, so it builds its dicts directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from sqsqueue._message import (
    SEQ_BITS,
    Message,
    StoredAttribute,
    _Record,
    key_time,
    md5_of_attributes,
    to_value,
)

#: ``Message(...)`` without the named tuple's Python-level ``__new__``: half
#: the cost. The tuple must list every field, in order.
new_message: Callable[[tuple[Any, ...]], Message] = partial(tuple.__new__, Message)


def message_view(
    rec: _Record,
    handle: str,
    attribute_names: Sequence[str],
    message_attribute_names: Sequence[str],
) -> Message:
    """The Message a receive returns: only the attributes asked for."""
    system = system_attributes(rec, attribute_names) if attribute_names else {}
    stored = rec.attributes
    if stored and message_attribute_names:
        chosen = filter_attributes(stored, message_attribute_names)
        if chosen:
            user = {a[0]: to_value(a) for a in chosen}
            user_md5 = (
                rec.attributes_md5 if len(chosen) == len(stored) else md5_of_attributes(chosen)
            )
            return new_message((rec.message_id, handle, rec.body, system, user, user_md5))
    return new_message((rec.message_id, handle, rec.body, system, {}, None))


#: The receive counts' texts, formatted once (most messages are received a few times).
_COUNTED = 64
_COUNTS = tuple(str(n) for n in range(_COUNTED))


def message_views(
    recs: list[_Record],
    handles: list[str],
    attribute_names: Sequence[str],
    message_attribute_names: Sequence[str],
) -> list[Message]:
    """:func:`message_view` of each record with its handle, in one pass: a
    receive's messages. The common case (every system attribute, a message
    without user attributes or FIFO fields) is built inline, and the time
    strings, shared by messages sent or first received in the same
    millisecond, are formatted once."""
    if not attribute_names:
        # No system attribute asked for (a ReceiveMessage naming none): a
        # message whose user attributes are not asked for, or that has none,
        # is its id, handle and body (message_view's answer, inline).
        return [
            new_message((rec.message_id, handle, rec.body, {}, {}, None))
            if rec.attributes is None or not message_attribute_names
            else message_view(rec, handle, attribute_names, message_attribute_names)
            for rec, handle in zip(recs, handles, strict=True)
        ]
    if "All" not in attribute_names:
        return [
            message_view(rec, handle, attribute_names, message_attribute_names)
            for rec, handle in zip(recs, handles, strict=True)
        ]
    out = []
    sent_ms = first_ms = -1
    sent_text = first_text = ""
    for rec, handle in zip(recs, handles, strict=True):
        if (
            rec.attributes is not None
            or rec.group_id is not None
            or rec.trace_header is not None
            or rec.dlq_source_arn is not None
            or rec.sequence_number is not None
            or rec.dedup_id is not None
        ):
            out.append(message_view(rec, handle, attribute_names, message_attribute_names))
            continue
        # Written again in aws/_wire.received_views, as JSON: two hot paths held
        # equal by tests/aws/test_wire_fast.py.
        ms = (rec.skey >> SEQ_BITS) // 1000  # key_time, inlined
        if ms != sent_ms:
            sent_ms = ms
            sent_text = str(ms)
        ms = rec.first_receive // 1000
        if ms != first_ms:
            first_ms = ms
            first_text = str(ms)
        count = rec.receive_base + rec.receive_count
        system = {
            "SenderId": rec.sender_id,
            "SentTimestamp": sent_text,
            "ApproximateReceiveCount": _COUNTS[count] if count < _COUNTED else str(count),
            "ApproximateFirstReceiveTimestamp": first_text,
        }
        out.append(new_message((rec.message_id, handle, rec.body, system, {}, None)))
    return out


def system_attributes(rec: _Record, names: Sequence[str]) -> dict[str, str]:
    if "All" in names:
        # The common case, built in one go (this runs once per message received).
        out = {
            "SenderId": rec.sender_id,
            "SentTimestamp": str(key_time(rec.skey) // 1000),
            "ApproximateReceiveCount": str(rec.receive_base + rec.receive_count),
            "ApproximateFirstReceiveTimestamp": str(rec.first_receive // 1000),
        }
        if rec.sequence_number is not None:
            out["SequenceNumber"] = str(rec.sequence_number)
        if rec.dedup_id is not None:
            out["MessageDeduplicationId"] = rec.dedup_id
        if rec.group_id is not None:
            out["MessageGroupId"] = rec.group_id
        if rec.trace_header is not None:
            out["AWSTraceHeader"] = rec.trace_header
        if rec.dlq_source_arn is not None:
            out["DeadLetterQueueSourceArn"] = rec.dlq_source_arn
        return out
    out = {}

    def want(name: str) -> bool:
        return name in names

    if want("SenderId"):
        out["SenderId"] = rec.sender_id
    if want("SentTimestamp"):
        out["SentTimestamp"] = str(key_time(rec.skey) // 1000)
    if want("ApproximateReceiveCount"):
        out["ApproximateReceiveCount"] = str(rec.receive_base + rec.receive_count)
    if want("ApproximateFirstReceiveTimestamp"):
        out["ApproximateFirstReceiveTimestamp"] = str(rec.first_receive // 1000)
    if rec.sequence_number is not None and want("SequenceNumber"):
        out["SequenceNumber"] = str(rec.sequence_number)
    if rec.dedup_id is not None and want("MessageDeduplicationId"):
        out["MessageDeduplicationId"] = rec.dedup_id
    if rec.group_id is not None and want("MessageGroupId"):
        out["MessageGroupId"] = rec.group_id
    if rec.trace_header is not None and want("AWSTraceHeader"):
        out["AWSTraceHeader"] = rec.trace_header
    if rec.dlq_source_arn is not None and want("DeadLetterQueueSourceArn"):
        out["DeadLetterQueueSourceArn"] = rec.dlq_source_arn
    return out


def filter_attributes(
    stored: tuple[StoredAttribute, ...], names: Sequence[str]
) -> tuple[StoredAttribute, ...]:
    """The attributes a MessageAttributeNames list selects (section 2.1):
    names, ``All``, ``.*``, ``*`` or a prefix ``X.*``; others are ignored.

    ``X.*`` selects every name that starts with ``X`` (the ``.*`` is a
    wildcard, not part of the prefix): on AWS, ``Hel.*`` returned both
    ``Hello`` and ``Help.Me`` (``docs/aws-behaviour.md`` §2.1, ReceiveMessage).
    """
    if "All" in names or ".*" in names or "*" in names:
        return stored
    exact = set()
    prefixes = []
    for n in names:
        if n.endswith(".*"):
            prefixes.append(n[:-2])
        else:
            exact.add(n)
    return tuple(a for a in stored if a[0] in exact or any(a[0].startswith(p) for p in prefixes))
