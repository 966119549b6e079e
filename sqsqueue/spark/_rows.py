"""What a row means, on both sides of the Spark adapter: the DataFrame columns
(:data:`SINK_COLUMNS` written, :data:`SOURCE_SCHEMA` read), the check that a
DataFrame can be written, the message a written row becomes
(:class:`SinkRows`, which also gives a FIFO row without a
``message_deduplication_id`` its deterministic one) and the row a received
message becomes (:func:`source_row`, :func:`timestamp`). The driver-side
helpers (:mod:`sqsqueue.spark`) and the data source
(:mod:`sqsqueue.spark._datasource`, ``_writer``, ``_reader``) both use these,
with no copy of their own, so a row becomes the same message, its
deduplication id made the same way, whichever side writes it. Needs PySpark.
The user guide is ``docs/spark.md``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import types as T

#: The columns a write reads; every other column is ignored. Only ``body`` is
#: required.
SINK_COLUMNS = (
    "body",
    "message_group_id",
    "message_deduplication_id",
    "message_attributes",
    "delay_seconds",
)

#: The schema of the DataFrames read from a queue.
SOURCE_SCHEMA = T.StructType(
    [
        T.StructField("queue_name", T.StringType(), False),
        T.StructField("message_id", T.StringType(), False),
        T.StructField("receipt_handle", T.StringType(), False),
        T.StructField("body", T.StringType(), False),
        T.StructField("md5_of_body", T.StringType(), False),
        T.StructField("message_group_id", T.StringType(), True),
        T.StructField("message_deduplication_id", T.StringType(), True),
        T.StructField("sequence_number", T.StringType(), True),
        T.StructField("sent_timestamp", T.TimestampType(), False),
        T.StructField("approximate_receive_count", T.IntegerType(), False),
        T.StructField("approximate_first_receive_timestamp", T.TimestampType(), True),
        #: User attributes; Binary values are base64 strings.
        T.StructField("message_attributes", T.MapType(T.StringType(), T.StringType()), False),
        #: All system attributes, as SQS's strings.
        T.StructField("attributes", T.MapType(T.StringType(), T.StringType()), False),
    ]
)


# -- writing ------------------------------------------------------------------------


def sink_schema_problem(schema: T.StructType) -> str | None:
    """Why a DataFrame of ``schema`` cannot be written to a queue, as a
    sentence for the caller's error; None when it can."""
    fields = {f.name: f.dataType for f in schema.fields}
    if "body" not in fields:
        return f"the DataFrame has no 'body' column (columns: {', '.join(fields) or 'none'})"
    if not isinstance(fields["body"], T.StringType):
        return (
            f"the 'body' column must be a string, not {fields['body'].simpleString()}; "
            "cast or serialise it first (e.g. to_json(struct(...)))"
        )
    return None


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """The message a written row becomes. A null ``body`` stays None, for the
    queue (or the writer's check) to refuse with the usual error."""

    body: str | None
    group_id: str | None
    deduplication_id: str | None
    #: User attributes, all sent as ``String`` attributes.
    attributes: dict[str, str] | None
    delay_seconds: int | None


class SinkRows:
    """Turns the rows of one write into messages, in the order given.

    The columns are sent as given, on either queue type (a queue refuses what
    it does not take: a ``message_deduplication_id`` on a standard queue, a FIFO
    row without a group). On a FIFO queue (``fifo``) a row without a
    ``message_deduplication_id`` gets a deterministic one: the SHA-256 of
    ``scope`` (the write's identity: the driver helpers' sink id and batch id;
    the data source's write identity and partition id), the row's occurrence
    number among identical rows of this write, and the row's content, the
    values of :data:`SINK_COLUMNS` (an absent column counts as null, since it
    makes the same message). Replaying the same rows with the same scope gives
    the same ids, in whatever order the rows come.
    """

    def __init__(self, fifo: bool, *scope: object) -> None:
        self.fifo = fifo
        self._prefix = "".join(f"{part}\x1f" for part in scope)
        self._seen: Counter[str] = Counter()

    def message(self, data: Mapping[str, Any]) -> OutgoingMessage:
        """The message of one row (``Row.asDict(recursive=True)``). Every FIFO
        row without an id counts, sent or not: a replay numbers them the same."""
        deduplication_id = data.get("message_deduplication_id")
        if self.fifo and deduplication_id is None:
            deduplication_id = self._deduplication_id(data)
        attributes = data.get("message_attributes")
        delay = data.get("delay_seconds")
        return OutgoingMessage(
            body=data.get("body"),
            group_id=data.get("message_group_id"),
            deduplication_id=deduplication_id,
            attributes=dict(attributes) if attributes else None,
            delay_seconds=None if delay is None else int(delay),
        )

    def _deduplication_id(self, data: Mapping[str, Any]) -> str:
        content = json.dumps(
            [data.get(column) for column in SINK_COLUMNS],
            sort_keys=True,
            default=str,
            ensure_ascii=False,
        )
        occurrence = self._seen[content]
        self._seen[content] += 1
        text = f"{self._prefix}{occurrence}\x1f{content}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- reading ------------------------------------------------------------------------


def timestamp(ms: str | None) -> datetime | None:
    """An SQS timestamp attribute (epoch milliseconds, as a string) in UTC;
    None when absent or 0."""
    if not ms or ms == "0":
        return None
    return datetime.fromtimestamp(int(ms) / 1000, tz=UTC)


def source_row(queue_name: str, message: Mapping[str, Any]) -> tuple[Any, ...]:
    """A received message as a :data:`SOURCE_SCHEMA` row. ``message`` has
    boto3's ``Message`` shape: the data source gets it from ReceiveMessage, the
    driver helpers from :meth:`sqsqueue.Message.to_aws`."""
    attributes: dict[str, str] = dict(message.get("Attributes", {}))
    user: dict[str, str] = {}
    for name, value in message.get("MessageAttributes", {}).items():
        binary = value.get("BinaryValue")
        text = value.get("StringValue") if binary is None else base64.b64encode(binary).decode()
        if text is not None:
            user[name] = text
    return (
        queue_name,
        message["MessageId"],
        message["ReceiptHandle"],
        message["Body"],
        message["MD5OfBody"],
        attributes.get("MessageGroupId"),
        attributes.get("MessageDeduplicationId"),
        attributes.get("SequenceNumber"),
        timestamp(attributes.get("SentTimestamp")),
        int(attributes.get("ApproximateReceiveCount", "0")),
        timestamp(attributes.get("ApproximateFirstReceiveTimestamp")),
        user,
        attributes,
    )
