"""What a receive returns: the :class:`~sqsqueue.Message` view of a record,
with only the system and message attributes asked for (``docs/aws-behaviour.md``
§2.1). Runs once per message received, so it builds its dicts directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from sqsqueue._message import (
    R_BODY,
    R_COUNT,
    R_EXTRA,
    R_FIRST,
    R_ID,
    R_SENDER,
    R_SKEY,
    SEQ_BITS,
    X_ATTRS,
    X_ATTRS_MD5,
    Message,
    StoredAttribute,
    _Record,
    dedup_id_of,
    dlq_source_arn_of,
    first_receive_of,
    group_id_of,
    key_time,
    md5_of_attributes,
    receive_base_of,
    receive_count_of,
    sequence_number_of,
    to_value,
    trace_header_of,
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
    extra = rec[R_EXTRA]
    stored = None if extra is None else extra[X_ATTRS]
    if stored and message_attribute_names:
        chosen = filter_attributes(stored, message_attribute_names)
        if chosen:
            user = {a[0]: to_value(a) for a in chosen}
            user_md5 = (
                extra[X_ATTRS_MD5] if len(chosen) == len(stored) else md5_of_attributes(chosen)
            )
            return new_message((rec[R_ID], handle, rec[R_BODY], system, user, user_md5))
    return new_message((rec[R_ID], handle, rec[R_BODY], system, {}, None))


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
            new_message((rec[R_ID], handle, rec[R_BODY], {}, {}, None))
            if rec[R_EXTRA] is None or not message_attribute_names
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
        if rec[R_EXTRA] is not None:
            out.append(message_view(rec, handle, attribute_names, message_attribute_names))
            continue
        # Written again in aws/_wire.received_views, as JSON: two hot paths held
        # equal by tests/aws/test_wire_fast.py.
        ms = (rec[R_SKEY] >> SEQ_BITS) // 1000  # key_time, inlined
        if ms != sent_ms:
            sent_ms = ms
            sent_text = str(ms)
        ms = rec[R_FIRST] // 1000
        if ms != first_ms:
            first_ms = ms
            first_text = str(ms)
        count = rec[R_COUNT]  # no extra fields: no receive base
        system = {
            "SenderId": rec[R_SENDER],
            "SentTimestamp": sent_text,
            "ApproximateReceiveCount": _COUNTS[count] if count < _COUNTED else str(count),
            "ApproximateFirstReceiveTimestamp": first_text,
        }
        out.append(new_message((rec[R_ID], handle, rec[R_BODY], system, {}, None)))
    return out


def system_attributes(rec: _Record, names: Sequence[str]) -> dict[str, str]:
    sequence_number = sequence_number_of(rec)
    dedup_id = dedup_id_of(rec)
    group_id = group_id_of(rec)
    trace_header = trace_header_of(rec)
    dlq_source_arn = dlq_source_arn_of(rec)
    if "All" in names:
        # The common case, built in one go (this runs once per message received).
        out = {
            "SenderId": rec[R_SENDER],
            "SentTimestamp": str(key_time(rec[R_SKEY]) // 1000),
            "ApproximateReceiveCount": str(receive_base_of(rec) + receive_count_of(rec)),
            "ApproximateFirstReceiveTimestamp": str(first_receive_of(rec) // 1000),
        }
        if sequence_number is not None:
            out["SequenceNumber"] = str(sequence_number)
        if dedup_id is not None:
            out["MessageDeduplicationId"] = dedup_id
        if group_id is not None:
            out["MessageGroupId"] = group_id
        if trace_header is not None:
            out["AWSTraceHeader"] = trace_header
        if dlq_source_arn is not None:
            out["DeadLetterQueueSourceArn"] = dlq_source_arn
        return out
    out = {}

    def want(name: str) -> bool:
        return name in names

    if want("SenderId"):
        out["SenderId"] = rec[R_SENDER]
    if want("SentTimestamp"):
        out["SentTimestamp"] = str(key_time(rec[R_SKEY]) // 1000)
    if want("ApproximateReceiveCount"):
        out["ApproximateReceiveCount"] = str(receive_base_of(rec) + receive_count_of(rec))
    if want("ApproximateFirstReceiveTimestamp"):
        out["ApproximateFirstReceiveTimestamp"] = str(first_receive_of(rec) // 1000)
    if sequence_number is not None and want("SequenceNumber"):
        out["SequenceNumber"] = str(sequence_number)
    if dedup_id is not None and want("MessageDeduplicationId"):
        out["MessageDeduplicationId"] = dedup_id
    if group_id is not None and want("MessageGroupId"):
        out["MessageGroupId"] = group_id
    if trace_header is not None and want("AWSTraceHeader"):
        out["AWSTraceHeader"] = trace_header
    if dlq_source_arn is not None and want("DeadLetterQueueSourceArn"):
        out["DeadLetterQueueSourceArn"] = dlq_source_arn
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
