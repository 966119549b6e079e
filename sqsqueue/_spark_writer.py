"""The write side of the ``sqs`` data source: executor tasks send their partitions.

Split from :mod:`sqsqueue._spark_datasource` (options, the connection, the
stream reader), which documents the guarantees; this module knows the queue
only through :class:`QueueTarget`, which that module's ``Connection`` is.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import botocore.exceptions
from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import Row, StructType

from sqsqueue._spark_schema import OPTIONAL_COLUMNS

__all__ = ["SqsBatchWriter", "SqsCommitMessage", "SqsStreamWriter", "SqsWriteError"]

SEND_BATCH = 10
#: What a write task needs from the engine: the streaming query and micro-batch.
_QUERY_ID = "sql.streaming.queryId"
_BATCH_ID = "streaming.sql.batchId"


class SqsWriteError(RuntimeError):
    """Rows a write task could not send; the task's other rows were sent."""


class QueueTarget(Protocol):
    """What the writer needs to know about the queue (``Connection`` is one)."""

    @property
    def queue_url(self) -> str: ...

    @property
    def fifo(self) -> bool: ...

    def client(self, *, read_timeout: int = 60, max_attempts: int | None = None) -> Any: ...

    def where(self) -> str: ...


@dataclass
class SqsCommitMessage(WriterCommitMessage):
    """What one task sent."""

    partition: int
    sent: int


def _dedup_id(identity: str, partition: int, key: str, occurrence: int) -> str:
    text = f"{identity}\x1f{partition}\x1f{occurrence}\x1f{key}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry(index: int, data: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"Id": f"r{index}", "MessageBody": data["body"]}
    if data.get("message_group_id") is not None:
        entry["MessageGroupId"] = data["message_group_id"]
    if data.get("message_deduplication_id") is not None:
        entry["MessageDeduplicationId"] = data["message_deduplication_id"]
    if data.get("delay_seconds") is not None:
        entry["DelaySeconds"] = int(data["delay_seconds"])
    attributes = data.get("message_attributes")
    if attributes:
        entry["MessageAttributes"] = {
            k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()
        }
    return entry


class _Sender:
    """Sends one partition in batches of 10, retrying what the server failed."""

    def __init__(self, connection: QueueTarget, retries: int) -> None:
        self.connection = connection
        self.client = connection.client()
        self.retries = retries
        self.sent = 0
        self.failures: list[tuple[int, str, str]] = []  # (row index, code, message)

    def send(self, entries: list[dict[str, Any]]) -> None:
        pending = entries
        for attempt in range(self.retries + 1):
            try:
                answer = self.client.send_message_batch(
                    QueueUrl=self.connection.queue_url, Entries=pending
                )
            except botocore.exceptions.ClientError as exc:
                error = exc.response.get("Error", {})
                code = error.get("Code", "?")
                if len(pending) > 1 and code in (
                    "BatchRequestTooLong",
                    "AWS.SimpleQueueService.BatchRequestTooLong",
                    "InvalidParameterValue",
                    "MissingParameter",
                ):
                    # The request as a whole was refused (too large together, one bad
                    # entry): send one by one so only the bad rows fail.
                    for entry in pending:
                        self.send([entry])
                    return
                if attempt < self.retries and not _sender_fault(exc):
                    threading.Event().wait(0.1 * 2**attempt)
                    continue
                self.failures.extend(
                    (int(e["Id"][1:]), code, error.get("Message", "")) for e in pending
                )
                return
            self.sent += len(answer.get("Successful", []))
            failed = answer.get("Failed", [])
            if not failed:
                return
            by_id = {e["Id"]: e for e in pending}
            retry = [f for f in failed if not f.get("SenderFault")]
            for f in failed:
                if f.get("SenderFault") or attempt == self.retries:
                    self.failures.append(
                        (int(f["Id"][1:]), f.get("Code", "?"), f.get("Message", ""))
                    )
            if attempt == self.retries or not retry:
                return
            pending = [by_id[f["Id"]] for f in retry]
            threading.Event().wait(0.1 * 2**attempt)

    def raise_failures(self, partition: int) -> None:
        if not self.failures:
            return
        self.failures.sort()
        index, code, message = self.failures[0]
        raise SqsWriteError(
            f"sqs data source: {len(self.failures)} row(s) of partition {partition} could not "
            f"be sent to {self.connection.where()} ({self.sent} were); first: row {index}: "
            f"{code}: {message}; all: "
            + "; ".join(f"row {i}: {c}" for i, c, _ in self.failures[:20])
            + (" ..." if len(self.failures) > 20 else "")
        )


def _sender_fault(exc: botocore.exceptions.ClientError) -> bool:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)
    return bool(status < 500)


def _write_partition(
    connection: QueueTarget, rows: Iterator[Row], identity: str | None, retries: int
) -> SqsCommitMessage:
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    fifo = connection.fifo
    sender = _Sender(connection, retries)
    seen: dict[str, int] = {}
    chunk: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        data = row.asDict(recursive=True)
        entry = _entry(index, data)
        if fifo and "MessageDeduplicationId" not in entry:
            assert identity is not None
            key = json.dumps(
                [data.get(c) for c in ("body", *OPTIONAL_COLUMNS)],
                sort_keys=True,
                default=str,
                ensure_ascii=False,
            )
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            entry["MessageDeduplicationId"] = _dedup_id(identity, partition, key, occurrence)
        chunk.append(entry)
        if len(chunk) == SEND_BATCH:
            sender.send(chunk)
            chunk = []
    if chunk:
        sender.send(chunk)
    sender.raise_failures(partition)
    return SqsCommitMessage(partition, sender.sent)


class SqsBatchWriter(DataSourceWriter):
    """``df.write.format("sqs")``: each task sends its partition."""

    def __init__(self, connection: QueueTarget, schema: StructType, write_id: str, retries: int):
        self.connection = connection
        self.write_id = write_id
        self.retries = retries

    def write(self, iterator: Iterator[Row]) -> SqsCommitMessage:
        return _write_partition(self.connection, iterator, f"write:{self.write_id}", self.retries)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: every task's messages are already in the queue."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """SQS cannot take messages back: what was sent stays sent. On a FIFO
        queue, running the write again with the same ``writeId`` within 5
        minutes sends only what is missing."""


class SqsStreamWriter(DataSourceStreamWriter):
    """``df.writeStream.format("sqs")``: each micro-batch's tasks send their partitions."""

    def __init__(
        self, connection: QueueTarget, schema: StructType, write_id: str | None, retries: int
    ) -> None:
        self.connection = connection
        self.write_id = write_id
        self.retries = retries

    def write(self, iterator: Iterator[Row]) -> SqsCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        batch = context.getLocalProperty(_BATCH_ID) if context is not None else None
        query = context.getLocalProperty(_QUERY_ID) if context is not None else None
        if batch is None:
            raise SqsWriteError(
                "sqs data source: a streaming write task does not know its micro-batch id "
                f"(local property {_BATCH_ID} is missing)"
            )
        identity = f"stream:{self.write_id or query}:{batch}"
        return _write_partition(self.connection, iterator, identity, self.retries)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: the micro-batch's messages are already in the queue."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """What was sent stays sent; the replayed micro-batch is deduplicated on FIFO."""
