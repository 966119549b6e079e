"""The ``sqs`` data source's write tasks (``df.write`` and ``df.writeStream``
with ``format("sqs")``): each task sends its partition's rows with
SendMessageBatch, 10 a call, in the partition's order, retries what failed
server-side, keeps each FIFO group in order across failures (checking rows
before sending, holding back a failed row's later rows, ``strictGroupOrder``),
and fails with an :class:`SqsWriteError` naming every row it did not store.
The message a row becomes and its deduplication id come from
:class:`._rows.SinkRows`; the queue is known only through
:class:`QueueTarget`. Behaviour and guarantees: ``docs/spark.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import botocore.exceptions
from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import Row

from sqsqueue import _limits, _validate
from sqsqueue.errors import MissingParameter, SQSError
from sqsqueue.spark._options import WriteOptions
from sqsqueue.spark._rows import OutgoingMessage, SinkRows

__all__ = ["SqsBatchWriter", "SqsCommitMessage", "SqsStreamWriter", "SqsWriteError"]

#: How many rows a FIFO write task with ``strictGroupOrder`` looks ahead for rows
#: of other groups to fill a call (a call then carries at most one row of a group).
LOOKAHEAD = 100
#: What a write task needs from the engine: the streaming query and micro-batch.
_QUERY_ID = "sql.streaming.queryId"
_BATCH_ID = "streaming.sql.batchId"
#: Errors for which SQS refuses a whole SendMessageBatch request (too large
#: together, one bad entry): its entries are then sent one a call.
_WHOLE_REQUEST = frozenset(
    {
        "BatchRequestTooLong",
        "AWS.SimpleQueueService.BatchRequestTooLong",
        "InvalidParameterValue",
        "MissingParameter",
    }
)


class SqsWriteError(RuntimeError):
    """Rows a write task could not send (or did not, to keep a FIFO group's order)."""


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


def _entry(index: int, message: OutgoingMessage) -> dict[str, Any]:
    """The SendMessageBatch entry of row ``index``."""
    entry: dict[str, Any] = {"Id": f"r{index}", "MessageBody": message.body}
    if message.group_id is not None:
        entry["MessageGroupId"] = message.group_id
    if message.deduplication_id is not None:
        entry["MessageDeduplicationId"] = message.deduplication_id
    if message.delay_seconds is not None:
        entry["DelaySeconds"] = message.delay_seconds
    if message.attributes:
        entry["MessageAttributes"] = {
            k: {"DataType": "String", "StringValue": v} for k, v in message.attributes.items()
        }
    return entry


@dataclass
class _Pending:
    """A row waiting to be sent (again)."""

    index: int
    entry: dict[str, Any]
    #: The FIFO group whose order the row keeps; None on a standard queue.
    group: str | None
    attempts: int = 0
    #: Sent in a call of its own (its batch was refused as a whole).
    alone: bool = False


class _Sender:
    """Sends one partition's rows: 10 a call, retrying what the server failed,
    a FIFO group's rows in order (``docs/spark.md``).

    ``add`` each row in the partition's order, then ``flush``; ``raise_failures``
    reports what was not stored. ``client`` and ``backoff`` (seconds before the
    first retry, doubling) are for tests.
    """

    def __init__(
        self,
        target: QueueTarget,
        retries: int,
        *,
        strict: bool = False,
        client: Any = None,
        backoff: float = 0.1,
    ) -> None:
        self.target = target
        self.fifo = target.fifo
        self.strict = strict
        self.client = client if client is not None else target.client()
        self.retries = retries
        self.backoff = backoff
        self.sent = 0
        self.failures: list[tuple[int, str, str]] = []  # (row index, code, message)
        #: FIFO rows failed after later rows of their group in the same call were
        #: stored: (row index, group, the stored later rows).
        self.broken: list[tuple[int, str, list[int]]] = []
        self._max_size: int | None = None
        #: FIFO group -> its row that failed for good; the group's later rows are held.
        self.blocked: dict[str, int] = {}
        #: FIFO group -> its rows not sent because an earlier row of it failed.
        self.held: dict[str, list[int]] = {}
        self._pending: list[_Pending] = []
        self._delay = 0.0

    def add(self, index: int, entry: dict[str, Any]) -> None:
        group = entry.get("MessageGroupId") if self.fifo else None
        if group is not None and group in self.blocked:
            self.held.setdefault(group, []).append(index)
            return
        if self.fifo:
            refused = _precheck(entry, self.max_size())
            if refused is not None:
                # Never sent, so never stored ahead of an earlier row of its group.
                self._fail(_Pending(index, entry, group), *refused)
                return
        self._pending.append(_Pending(index, entry, group))
        ahead = LOOKAHEAD if self.fifo and self.strict else _limits.BATCH_ENTRIES_MAX
        while len(self._pending) >= ahead:
            self._call()

    def max_size(self) -> int:
        """The queue's MaximumMessageSize, asked once per task (1 MiB, the most
        SQS takes, when it cannot be read: the queue then has the last word)."""
        if self._max_size is None:
            try:
                answer = self.client.get_queue_attributes(
                    QueueUrl=self.target.queue_url, AttributeNames=["MaximumMessageSize"]
                )
                self._max_size = int(answer["Attributes"]["MaximumMessageSize"])
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
                self._max_size = _limits.MESSAGE_SIZE_MAX
            except (KeyError, TypeError, ValueError):
                self._max_size = _limits.MESSAGE_SIZE_MAX
        return self._max_size

    def flush(self) -> None:
        while self._pending:
            self._call()

    def _take(self) -> list[_Pending]:
        """The next call's entries, in row order: up to 10 (with ``strict``, at
        most one per group, none of a group whose earlier row is still pending)."""
        taken: list[_Pending] = []
        rest: list[_Pending] = []
        seen: set[str] = set()
        for p in self._pending:
            free = p.group is None or not self.strict or p.group not in seen
            if p.group is not None:
                seen.add(p.group)
            fits = len(taken) < _limits.BATCH_ENTRIES_MAX and not (
                taken and (p.alone or taken[0].alone)
            )
            (taken if free and fits else rest).append(p)
        self._pending = rest
        return taken

    def _call(self) -> None:
        batch = self._take()
        if self._delay:
            threading.Event().wait(self._delay)
            self._delay = 0.0
        try:
            answer = self.client.send_message_batch(
                QueueUrl=self.target.queue_url, Entries=[p.entry for p in batch]
            )
        except botocore.exceptions.ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "?")
            if len(batch) > 1 and code in _WHOLE_REQUEST:
                # Refused as a whole: send one a call, so only the bad rows fail.
                for p in batch:
                    p.alone = True
                self._requeue(batch)
                return
            fault = _sender_fault(exc)
            self._settle([(p, code, error.get("Message", ""), fault) for p in batch])
            return
        except botocore.exceptions.BotoCoreError as exc:
            # The connection failed after boto3's own retries (maxAttempts).
            raise SqsWriteError(
                f"sqs data source: cannot send to {self.target.where()}: {exc} "
                f"({self.sent} row(s) of this task were sent before)"
            ) from exc
        self.sent += len(answer.get("Successful", []))
        by_id = {p.entry["Id"]: p for p in batch}
        failed = answer.get("Failed", [])
        failed_ids = {f["Id"] for f in failed}
        stored = [p for p in batch if p.entry["Id"] not in failed_ids]
        self._settle(
            [
                (
                    by_id[f["Id"]],
                    f.get("Code", "?"),
                    f.get("Message", ""),
                    bool(f.get("SenderFault")),
                )
                for f in failed
            ],
            stored,
        )

    def _settle(
        self, failed: list[tuple[_Pending, str, str, bool]], stored: Sequence[_Pending] = ()
    ) -> None:
        retry: list[_Pending] = []
        for p, code, message, sender_fault in sorted(failed, key=lambda f: f[0].index):
            later = [q.index for q in stored if q.group is not None and q.group == p.group]
            later = [i for i in later if i > p.index]
            if later:
                # A later row of its group is stored already: a retry would land
                # after it. Say so rather than break the order further.
                assert p.group is not None
                self.broken.append((p.index, p.group, later))
                self._fail(p, code, message)
            elif sender_fault or p.attempts >= self.retries:
                self._fail(p, code, message)
            else:
                p.attempts += 1
                retry.append(p)
        if retry:
            self._requeue(retry)
            self._delay = self.backoff * 2 ** (max(p.attempts for p in retry) - 1)

    def _requeue(self, entries: list[_Pending]) -> None:
        """Back in row order: ahead of their groups' later rows."""
        self._pending = sorted(entries + self._pending, key=lambda p: p.index)

    def _fail(self, p: _Pending, code: str, message: str) -> None:
        self.failures.append((p.index, code, message))
        if p.group is None:
            return
        self.blocked.setdefault(p.group, p.index)
        # Its group's later rows wait no more; earlier ones (a row refused before
        # it was sent has some still pending) go out as usual.
        later = [q for q in self._pending if q.group == p.group and q.index > p.index]
        if later:
            self.held.setdefault(p.group, []).extend(q.index for q in later)
            self._pending = [q for q in self._pending if q.group != p.group or q.index < p.index]

    def raise_failures(self, partition: int) -> None:
        if not self.failures:
            return
        self.failures.sort()
        index, code, message = self.failures[0]
        text = (
            f"sqs data source: {len(self.failures)} row(s) of partition {partition} could not "
            f"be sent to {self.target.where()} ({self.sent} were); first: row {index}: "
            f"{code}: {message}; all: "
            + "; ".join(f"row {i}: {c}" for i, c, _ in self.failures[:20])
            + (" ..." if len(self.failures) > 20 else "")
        )
        if self.broken:
            text += (
                ". The order of a group is broken: "
                + "; ".join(
                    f"rows {_rows(later)} of group {group!r} were stored before row {index}, "
                    "which the queue then failed"
                    for index, group, later in self.broken[:10]
                )
                + (" ..." if len(self.broken) > 10 else "")
                + " (strictGroupOrder=true sends one row of a group a call, so that cannot "
                "happen)"
            )
        held = sum(len(rows) for rows in self.held.values())
        if held:
            groups = sorted(self.held.items(), key=lambda g: self.blocked[g[0]])
            text += (
                f". {held} later row(s) were not sent, to keep their group's order: "
                + "; ".join(
                    f"rows {_rows(rows)}: an earlier row of group {g!r} failed "
                    f"(row {self.blocked[g]})"
                    for g, rows in groups[:10]
                )
                + (" ..." if len(groups) > 10 else "")
                + ". Replaying the write (same writeId, or the micro-batch from its "
                "checkpoint) stores them in order; rows already stored are deduplicated"
            )
        raise SqsWriteError(text)


def _precheck(entry: dict[str, Any], max_size: int) -> tuple[str, str] | None:
    """The (code, message) SQS would fail this FIFO entry with for its content,
    by the rules sqsqueue implements (``docs/aws-behaviour.md`` §2.1); None when
    it passes. Checked before sending, so that a row the queue would refuse is
    never sent after its group's earlier rows and before its later ones."""
    try:
        _, size = _validate.body(entry["MessageBody"])
        _, attributes_size = _validate.message_attributes(entry.get("MessageAttributes"))
        if size + attributes_size > max_size:
            raise _validate.too_big(max_size, batch=True)
        if entry.get("MessageGroupId") is None:
            raise MissingParameter("The request must contain the parameter MessageGroupId.")
        _validate.fifo_id("MessageGroupId", entry["MessageGroupId"])
        if "MessageDeduplicationId" in entry:
            _validate.fifo_id("MessageDeduplicationId", entry["MessageDeduplicationId"])
    except SQSError as exc:
        return exc.code, exc.message
    return None


def _rows(indexes: list[int]) -> str:
    shown = ", ".join(str(i) for i in sorted(indexes)[:20])
    return shown + (" ..." if len(indexes) > 20 else "")


def _sender_fault(exc: botocore.exceptions.ClientError) -> bool:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)
    return bool(status < 500)


def _write_partition(
    target: QueueTarget,
    rows: Iterator[Row],
    identity: str,
    retries: int,
    strict: bool = False,
) -> SqsCommitMessage:
    """One write task: ``identity`` (the write's, see :class:`SqsBatchWriter`
    and :class:`SqsStreamWriter`) and the partition id scope the FIFO
    deduplication ids."""
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    sender = _Sender(target, retries, strict=strict)
    messages = SinkRows(target.fifo, identity, partition)
    for index, row in enumerate(rows):
        sender.add(index, _entry(index, messages.message(row.asDict(recursive=True))))
    sender.flush()
    sender.raise_failures(partition)
    return SqsCommitMessage(partition, sender.sent)


class SqsBatchWriter(DataSourceWriter):
    """``df.write.format("sqs")``: each task sends its partition."""

    def __init__(self, target: QueueTarget, options: WriteOptions) -> None:
        assert options.write_id is not None  # a batch write always has one
        self.connection = target
        self.options = options

    def write(self, iterator: Iterator[Row]) -> SqsCommitMessage:
        return _write_partition(
            self.connection,
            iterator,
            f"write:{self.options.write_id}",
            self.options.retries,
            self.options.strict,
        )

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: every task's messages are already in the queue."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """SQS cannot take messages back: what was sent stays sent. On a FIFO
        queue, running the write again with the same ``writeId`` within 5
        minutes sends only what is missing."""


class SqsStreamWriter(DataSourceStreamWriter):
    """``df.writeStream.format("sqs")``: each micro-batch's tasks send their partitions."""

    def __init__(self, target: QueueTarget, options: WriteOptions) -> None:
        self.connection = target
        self.options = options

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
        identity = f"stream:{self.options.write_id or query}:{batch}"
        return _write_partition(
            self.connection, iterator, identity, self.options.retries, self.options.strict
        )

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: the micro-batch's messages are already in the queue."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """What was sent stays sent; the replayed micro-batch is deduplicated on FIFO."""
