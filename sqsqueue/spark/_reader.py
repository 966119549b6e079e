"""The ``sqs`` data source's stream reader (``spark.readStream.format("sqs")``).
It lives in the one Python process Spark keeps on the driver for a streaming
query: it receives each micro-batch's messages (a long poll, then
``receiveConcurrency`` short polls at once), holds their receipt handles under
the batch's offset, keeps them invisible with a heartbeat thread, deletes them
once Spark has committed the batch, and releases or deletes, after a restart,
what an earlier run of the query left. Executor tasks only turn its messages
into rows (:func:`._rows.source_row`). Its behaviour and guarantee (at least
once) are described in ``docs/spark.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from sqsqueue import _limits
from sqsqueue.spark._options import Connection, ReadOptions, SqsConnectionError
from sqsqueue.spark._rows import source_row

__all__ = ["MessagePartition", "SqsStreamReader"]

_log = logging.getLogger(__name__)


@dataclass
class MessagePartition(InputPartition):
    """Received messages (boto3's dicts) for one read task."""

    queue_name: str
    messages: list[dict[str, Any]]


class SqsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of received messages, deleted once Spark commits them.

    Lives in the Python process Spark keeps on the driver for the query (one
    object for the query's whole run); executors get pickled copies for
    :meth:`read` only, without its client, pool, lock, thread or held messages.
    """

    def __init__(self, connection: Connection, options: Mapping[str, str]) -> None:
        self.connection = connection
        self.queue_name = connection.queue_url.rstrip("/").rsplit("/", 1)[-1]
        self.settings = ReadOptions.from_options(options)
        #: The visibility timeout of received messages: the queue's unless set.
        self.visibility = self.settings.visibility
        self.reader_id = uuid.uuid4().hex
        self._reset_runtime()

    def _reset_runtime(self) -> None:
        self._client: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._batch = 0
        #: batch number -> its messages (boto3 dicts), until deleted or released.
        self._held: dict[int, list[dict[str, Any]]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The heartbeat's last failure and how many beats failed, until reported.
        self._heartbeat_error: tuple[str, int] | None = None
        #: Batches of earlier runs whose messages this run released or deleted.
        self._released: set[tuple[str, int]] = set()
        self._deleted_earlier: set[tuple[str, int]] = set()
        #: ``trigger(availableNow=True)``: how many messages this run may still take.
        self._left: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in _RUNTIME:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_runtime()

    # -- driver side ---------------------------------------------------------------

    def _sqs(self) -> Any:
        if self._client is None:
            attributes = self.connection.check()
            if self.visibility is None:
                self.visibility = int(
                    attributes.get("VisibilityTimeout", _limits.VISIBILITY_TIMEOUT_DEFAULT)
                )
            self._client = self.connection.client(read_timeout=self.settings.wait_time + 30)
        return self._client

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                self.settings.concurrency, thread_name_prefix="sqs-reader"
            )
        return self._pool

    def initialOffset(self) -> dict[str, Any]:
        self._sqs()  # fail at start, with a sentence, if the queue cannot be reached
        return {"reader": "", "batch": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        """``trigger(availableNow=True)``: take what the queue holds now, then stop.

        SQS has no offsets, so "now" is a count: the queue's
        ApproximateNumberOfMessages at this call. ``latestOffset`` takes at most
        that many messages in all (plus those this run releases from a failed
        batch of an earlier run) and stops early when a long poll finds
        nothing, so a producer that keeps sending cannot keep the query alive.
        """
        answer = self._call(
            "read the queue's depth from",
            lambda: self._sqs().get_queue_attributes(
                QueueUrl=self.connection.queue_url,
                AttributeNames=["ApproximateNumberOfMessages"],
            ),
        )
        self._left = int(answer.get("Attributes", {}).get("ApproximateNumberOfMessages", "0"))

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        self._report_heartbeat()
        # The engine asks for the next offset only after the batch ending at
        # ``start`` was written to its commit log: that batch can go.
        self._delete_through(start)
        wanted = self.settings.max_messages
        if isinstance(limit, ReadMaxRows):
            wanted = min(wanted, limit.max_rows)
        if self._left is not None:
            wanted = min(wanted, self._left)
            if wanted <= 0:
                return start  # availableNow: everything there at the start was taken
        messages = self._receive(wanted)
        if not messages:
            return start
        if self._left is not None:
            self._left -= len(messages)
        with self._lock:
            self._batch += 1
            self._held[self._batch] = messages
        self._start_heartbeat()
        offset: dict[str, Any] = {"reader": self.reader_id, "batch": self._batch}
        if self.settings.release_on_restart:
            # In the checkpoint's offset log, for a restarted query to release.
            offset["handles"] = [m["ReceiptHandle"] for m in messages]
        return offset

    def _receive_once(self, wanted: int, wait: int) -> list[dict[str, Any]]:
        answer = self._call(
            "receive from",
            lambda: self._sqs().receive_message(
                QueueUrl=self.connection.queue_url,
                MaxNumberOfMessages=min(_limits.MAX_MESSAGES_MAX, wanted),
                WaitTimeSeconds=wait,
                VisibilityTimeout=self.visibility,
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ),
        )
        got: list[dict[str, Any]] = answer.get("Messages", [])
        return got

    def _receive(self, wanted: int) -> list[dict[str, Any]]:
        """Up to ``wanted`` messages: one long poll waits for the first (an idle
        stream waits in SQS); then ``receiveConcurrency`` short polls at a time
        take what is there, until ``wanted`` or a poll comes back empty."""
        first = self._receive_once(wanted, self.settings.wait_time)
        if not first or len(first) >= wanted:
            return first
        lock = threading.Lock()
        calls: list[list[dict[str, Any]]] = [first]
        state = {"asked": len(first), "done": False}

        def poll() -> None:
            while True:
                with lock:
                    ask = min(_limits.MAX_MESSAGES_MAX, wanted - state["asked"])
                    if state["done"] or ask <= 0:
                        return
                    state["asked"] += ask
                try:
                    got = self._receive_once(ask, 0)
                except BaseException:
                    with lock:
                        state["done"] = True  # the others stop; the error goes up
                    raise
                with lock:
                    state["asked"] -= ask - len(got)
                    if got:
                        # A call's messages stay together, in the order received:
                        # a FIFO group's messages come in one call (SQS keeps the
                        # group locked while they are in flight).
                        calls.append(got)
                    else:
                        state["done"] = True

        pool = self._workers()
        for future in [pool.submit(poll) for _ in range(self.settings.concurrency)]:
            future.result()
        return [m for call in calls for m in call]

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if end.get("reader") != self.reader_id:
            # Planned by an earlier run of the query, which stopped before the
            # batch was committed: its messages were never deleted. Release them
            # (visibility 0) so they come back at once rather than after their
            # visibility timeout, into a later batch of this run. Only released,
            # never deleted: nothing here knows whether they were processed.
            self._release_earlier(end)
            return []
        first = start.get("batch", 0) + 1 if start.get("reader") == self.reader_id else 1
        with self._lock:
            messages = [m for n in range(first, end["batch"] + 1) for m in self._held.get(n, [])]
        if not messages:
            return []
        count = min(self.settings.num_partitions, len(messages))
        buckets: list[list[dict[str, Any]]] = [[] for _ in range(count)]
        if self.connection.fifo:
            # One group in one partition, in the order received.
            for m in messages:
                group = m.get("Attributes", {}).get("MessageGroupId", "")
                digest = hashlib.sha256(group.encode("utf-8")).digest()
                buckets[int.from_bytes(digest[:4], "big") % count].append(m)
        else:
            size = -(-len(messages) // count)
            buckets = [messages[i : i + size] for i in range(0, len(messages), size)]
        return [MessagePartition(self.queue_name, b) for b in buckets if b]

    def _release_earlier(self, end: Mapping[str, Any]) -> None:
        key = (str(end.get("reader")), int(end.get("batch", 0)))
        handles = end.get("handles") or []
        if key in self._released or not handles:
            return
        self._released.add(key)
        if self._left is not None:
            # availableNow was prepared before these came back: they count too.
            self._left += len(handles)
        # Stale handles fail: those messages come back after their timeout anyway.
        with contextlib.suppress(SqsConnectionError):
            self._change_visibility([{"ReceiptHandle": h} for h in handles], 0)

    def commit(self, end: dict[str, Any]) -> None:
        self._report_heartbeat()
        self._delete_through(end)

    def _delete_through(self, end: Mapping[str, Any]) -> None:
        if end.get("reader") != self.reader_id:
            self._delete_earlier(end)
            return
        with self._lock:
            done = [n for n in self._held if n <= end["batch"]]
            messages = [m for n in done for m in self._held.pop(n)]
        failed = self._delete(messages)
        if failed:
            code, message = failed[0]
            _log.warning(
                "sqs data source: %d message(s) of a committed micro-batch could not be "
                "deleted from %s (first: %s: %s); they come back after their visibility "
                "timeout and are processed again",
                len(failed),
                self.connection.where(),
                code,
                message,
            )

    def _delete_earlier(self, end: Mapping[str, Any]) -> None:
        """A restarted query's start offset, committed by an earlier run that
        stopped before deleting it: delete its messages now rather than process
        them again after their visibility timeout. Handles the earlier run
        already deleted, or whose messages came back since, fail quietly."""
        key = (str(end.get("reader")), int(end.get("batch", 0)))
        handles = end.get("handles") or []
        if not handles or key in self._released or key in self._deleted_earlier:
            return
        self._deleted_earlier.add(key)
        failed = self._delete([{"ReceiptHandle": h} for h in handles])
        _log.debug(
            "sqs data source: deleted the committed batch %s of an earlier run (%d of %d "
            "handles already deleted or stale)",
            key,
            len(failed),
            len(handles),
        )

    def _delete(self, messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Deletes in calls of 10; returns the entries that failed (code, message)."""
        answers = self._each_ten(
            messages,
            lambda chunk: self._call(
                "delete from",
                lambda: self._sqs().delete_message_batch(
                    QueueUrl=self.connection.queue_url,
                    Entries=[
                        {"Id": f"m{i}", "ReceiptHandle": m["ReceiptHandle"]}
                        for i, m in enumerate(chunk)
                    ],
                ),
            ),
        )
        return [
            (f.get("Code", "?"), f.get("Message", ""))
            for answer in answers
            for f in answer.get("Failed", [])
        ]

    def _change_visibility(self, messages: list[dict[str, Any]], timeout: int) -> None:
        self._each_ten(
            messages,
            lambda chunk: self._call(
                "change visibility in",
                lambda: self._sqs().change_message_visibility_batch(
                    QueueUrl=self.connection.queue_url,
                    Entries=[
                        {
                            "Id": f"m{i}",
                            "ReceiptHandle": m["ReceiptHandle"],
                            "VisibilityTimeout": timeout,
                        }
                        for i, m in enumerate(chunk)
                    ],
                ),
            ),
        )

    def _each_ten(
        self, messages: list[dict[str, Any]], call: Callable[[list[dict[str, Any]]], Any]
    ) -> list[dict[str, Any]]:
        """``call`` on each 10 messages, ``receiveConcurrency`` calls at a time."""
        size = _limits.BATCH_ENTRIES_MAX
        chunks = [messages[i : i + size] for i in range(0, len(messages), size)]
        if len(chunks) <= 1:
            return [call(chunk) for chunk in chunks]
        return list(self._workers().map(call, chunks))

    def _call(self, what: str, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """One SQS call; a failure becomes an error naming the queue and the cause."""
        try:
            return call()
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise SqsConnectionError(
                f"sqs data source: cannot {what} {self.connection.where()}: {exc}"
            ) from exc

    def _start_heartbeat(self) -> None:
        if self._thread is not None:
            return
        interval = self.settings.heartbeat
        if interval is None:
            interval = max(1, (self.visibility or _limits.VISIBILITY_TIMEOUT_DEFAULT) // 3)
        if interval == 0:
            return
        self._thread = threading.Thread(
            target=self._beat, args=(interval,), name="sqs-heartbeat", daemon=True
        )
        self._thread.start()

    def _beat(self, interval: int) -> None:
        while not self._stop.wait(interval):
            with self._lock:
                held = [m for batch in self._held.values() for m in batch]
            try:
                self._change_visibility(held, self.visibility or _limits.VISIBILITY_TIMEOUT_DEFAULT)
            except Exception as exc:  # the thread must go on beating
                with self._lock:
                    failures = self._heartbeat_error[1] if self._heartbeat_error else 0
                    self._heartbeat_error = (str(exc), failures + 1)

    def _report_heartbeat(self) -> None:
        """Logs a heartbeat failure since the last call (from the engine's thread).

        Not raised: the held messages are still held, and failing the query
        would bring all of them back; at worst some come back early and are
        delivered twice, which at least once allows."""
        with self._lock:
            error, self._heartbeat_error = self._heartbeat_error, None
        if error is not None:
            _log.warning(
                "sqs data source: the heartbeat could not extend the visibility of held "
                "messages of %s (%d beat(s) failed; last: %s): they may become visible "
                "before their batch is committed and be delivered again",
                self.connection.where(),
                error[1],
                error[0],
            )

    def stop(self) -> None:
        """Stops the heartbeat. (PySpark 4.3 ends this process without calling
        it when a query stops or fails; nothing relies on it.)"""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    # -- executor side -------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, MessagePartition)
        for m in partition.messages:
            yield source_row(partition.queue_name, m)


#: What a pickled copy of the reader leaves behind (rebuilt empty on unpickling).
_RUNTIME = (
    "_client",
    "_pool",
    "_lock",
    "_held",
    "_stop",
    "_thread",
    "_released",
    "_deleted_earlier",
    "_heartbeat_error",
    "_left",
)
