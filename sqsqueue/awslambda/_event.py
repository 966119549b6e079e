"""The SQS event Lambda hands a function: ``{"Records": [...]}``, AWS's shape exactly.

One record per message, its keys in the order AWS's documented examples
show them::

    {"messageId", "receiptHandle", "body",
     "attributes": {ApproximateReceiveCount, SentTimestamp, [SequenceNumber,
                    MessageGroupId,] SenderId, [MessageDeduplicationId,]
                    ApproximateFirstReceiveTimestamp[, AWSTraceHeader]
                    [, DeadLetterQueueSourceArn]},
     "messageAttributes": {name: {"stringValue" | "binaryValue" (base64),
                                  "stringListValues": [], "binaryListValues": [],
                                  "dataType"}},
     ["md5OfMessageAttributes",] "md5OfBody",
     "eventSource": "aws:sqs", "eventSourceARN", "awsRegion"}

``md5OfMessageAttributes`` is SQS's attribute digest, the one the queue
computed (``docs/aws-behaviour.md`` §7.2), not a new one. A message without
attributes: recorded from AWS Lambda (LocalStack's AWS-validated snapshots
``test_lambda_integration_sqs.snapshot.json``, 2024-10 to 2025-11), every
record of a mapping whose ``MaximumBatchingWindowInSeconds`` was 1 or 10
carries ``"md5OfMessageAttributes": null`` between ``messageAttributes`` and
``md5OfBody`` (29 snapshots), and every record of a mapping with a window of
0 leaves the key out (6 snapshots); sqsqueue does the same (``md5_null``).
That the window is what decides is UNCONFIRMED: in those recordings the
window goes with which test ran, and no recording separates the two.

The places of ``AWSTraceHeader`` and ``DeadLetterQueueSourceArn`` among the
attributes are UNCONFIRMED: AWS's examples do not show them together; a
dict's order does not change what a handler reads.

Records are built from an in-process :class:`~sqsqueue.Message` or from a
boto3 ``ReceiveMessage`` message dict, with the same result.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from sqsqueue._message import Message, md5_of_body

__all__ = ["EVENT_PAYLOAD_MAX", "event_size", "from_boto", "from_message", "group_of", "size_of"]

#: Lambda's limit on a synchronous invocation's payload, which caps an SQS
#: batch: "6 MB" (6,291,456 bytes).
EVENT_PAYLOAD_MAX = 6 * 1024 * 1024

#: The order of the system attributes in a record.
ATTRIBUTE_ORDER = (
    "ApproximateReceiveCount",
    "SentTimestamp",
    "SequenceNumber",
    "MessageGroupId",
    "SenderId",
    "MessageDeduplicationId",
    "ApproximateFirstReceiveTimestamp",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
)

Record = dict[str, Any]


def _attributes(system: Mapping[str, str]) -> dict[str, str]:
    out = {name: system[name] for name in ATTRIBUTE_ORDER if name in system}
    for name, value in system.items():  # anything SQS adds later, after the known ones
        out.setdefault(name, value)
    return out


def _lambda_attribute(data_type: str, value: str | bytes) -> dict[str, Any]:
    out: dict[str, Any]
    if isinstance(value, bytes):
        out = {"binaryValue": base64.b64encode(value).decode("ascii")}
    else:
        out = {"stringValue": value}
    out["stringListValues"] = []
    out["binaryListValues"] = []
    out["dataType"] = data_type
    return out


def _record(
    message_id: str,
    handle: str,
    body: str,
    system: Mapping[str, str],
    user: dict[str, dict[str, Any]],
    user_md5: str | None,
    body_md5: str,
    arn: str,
    region: str,
    md5_null: bool,
) -> Record:
    record: Record = {
        "messageId": message_id,
        "receiptHandle": handle,
        "body": body,
        "attributes": _attributes(system),
        "messageAttributes": user,
    }
    if user:
        record["md5OfMessageAttributes"] = user_md5
    elif md5_null:
        record["md5OfMessageAttributes"] = None
    record["md5OfBody"] = body_md5
    record["eventSource"] = "aws:sqs"
    record["eventSourceARN"] = arn
    record["awsRegion"] = region
    return record


def from_message(m: Message, arn: str, region: str, md5_null: bool = False) -> Record:
    """The record of a message received in process (all attributes asked for);
    ``md5_null``: a message without attributes gets ``md5OfMessageAttributes:
    null`` (a mapping with a batching window, above)."""
    user = {
        name: _lambda_attribute(v.data_type, v.value) for name, v in m.message_attributes.items()
    }
    return _record(
        m.message_id,
        m.receipt_handle,
        m.body,
        m.attributes,
        user,
        m.md5_of_message_attributes,
        m.md5_of_body,
        arn,
        region,
        md5_null,
    )


def from_boto(m: Mapping[str, Any], arn: str, region: str, md5_null: bool = False) -> Record:
    """The record of a message from boto3's ``receive_message`` (``md5_null``
    as for :func:`from_message`)."""
    user = {}
    for name, v in (m.get("MessageAttributes") or {}).items():
        value = v["BinaryValue"] if "BinaryValue" in v else v.get("StringValue", "")
        user[name] = _lambda_attribute(v["DataType"], value)
    body = m.get("Body", "")
    return _record(
        m["MessageId"],
        m["ReceiptHandle"],
        body,
        m.get("Attributes") or {},
        user,
        m.get("MD5OfMessageAttributes"),
        m.get("MD5OfBody") or md5_of_body(body),
        arn,
        region,
        md5_null,
    )


def group_of(record: Record) -> str | None:
    """The record's MessageGroupId (FIFO queues), or None."""
    group: str | None = record["attributes"].get("MessageGroupId")
    return group


def size_of(record: Record) -> int:
    """The bytes ``record`` adds to an event's JSON payload."""
    return len(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def event_size(sizes: list[int]) -> int:
    """The payload of ``{"Records":[...]}`` holding records of ``sizes``."""
    return len('{"Records":[]}') + sum(sizes) + max(0, len(sizes) - 1)
