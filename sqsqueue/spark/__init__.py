"""DataFrames into and out of sqsqueue queues (extra ``sqsqueue[spark]``).

:func:`register` adds the ``sqs`` data source (``format("sqs")``): Spark's
executors read and write over HTTP with boto3, against a broker served with
``Broker.serve()`` or AWS SQS; this is the way for pipelines. The other
helpers here run in the Spark driver, in this process, on an in-process queue
(:func:`write_dataframe`, :func:`foreach_batch_sink`, :class:`QueueBatch`,
:func:`stream_batches`): they are for Spark code tested on virtual time. This
module owns those driver-side helpers and the environment checks; what a row
means is in ``_rows`` (shared with the data source), the data source in
``_datasource``, ``_options``, ``_reader`` and ``_writer``. Options, guarantees
and errors of both ways: ``docs/spark.md``.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs

from sqsqueue import _limits
from sqsqueue._fifo import FifoQueue
from sqsqueue._message import (
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    Message,
    SendEntry,
    SendResult,
)
from sqsqueue._standard import Queue
from sqsqueue.errors import BatchRequestTooLong, InvalidParameterValue, SQSError

try:
    from pyspark.sql import DataFrame, SparkSession
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("sqsqueue.spark needs PySpark 4: pip install 'sqsqueue[spark]'") from exc

# Need pyspark, imported above.
from sqsqueue.spark._rows import (
    SINK_COLUMNS,
    SOURCE_SCHEMA,
    SinkRows,
    sink_schema_problem,
    source_row,
)

if TYPE_CHECKING:
    AnyQueue = Queue | FifoQueue

__all__ = [
    "SOURCE_SCHEMA",
    "QueueBatch",
    "SinkError",
    "SinkResult",
    "SparkSupportError",
    "foreach_batch_sink",
    "local_session",
    "register",
    "stream_batches",
    "write_dataframe",
]


class SparkSupportError(RuntimeError):
    """The Spark environment cannot run the connector (Java, Spark Connect)."""


class SinkError(SQSError, RuntimeError):
    """Rows the sink could not send; every other row of the batch was sent."""

    code = "SinkError"
    query_code = "SinkError"
    wire_type = "SinkError"
    http_status = 400
    sender_fault = True

    def __init__(self, failures: Sequence[BatchFailure], sent: int) -> None:
        self.failures = tuple(failures)
        self.sent = sent
        first = self.failures[0]
        super().__init__(
            f"{len(self.failures)} row(s) could not be sent ({sent} were): first "
            f"{first.id}: {first.code}: {first.message}"
        )


@attrs.frozen
class SinkResult:
    """What one write sent: message ids by row, and how many were duplicates.

    ``deduplicated`` counts rows that got a message id another row of *this*
    write already got (a repeated ``message_deduplication_id``). A row the FIFO
    queue dropped as a duplicate of an earlier write (a replay) is not counted:
    it reports the original message's id, so compare ``message_ids``.
    """

    sent: int
    message_ids: tuple[str, ...]
    deduplicated: int = 0


# -- environment checks -------------------------------------------------------------


def _check_session(spark: Any) -> SparkSession:
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        raise SparkSupportError(
            "Spark Connect sessions are not supported: foreachBatch callbacks and "
            "toLocalIterator would run in the Connect server, not in this process "
            "where the queue lives. Use a classic SparkSession (local or cluster)."
        )
    if not isinstance(spark, SparkSession):
        raise SparkSupportError(f"Expected a SparkSession, got {type(spark).__name__}.")
    return spark


def check_java() -> str:
    """The java executable Spark will use; raises if there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java")
    if found is None:
        raise SparkSupportError(
            "Java was not found: PySpark needs a Java 17+ runtime on PATH or in JAVA_HOME."
        )
    return found


def local_session(
    master: str = "local[2,2]", app_name: str = "sqsqueue", **conf: str
) -> SparkSession:
    """A local SparkSession tuned for tests and demos: UI off, few shuffle
    partitions, ``local[2,2]`` so failed tasks are retried once, and Python
    workers (the ``sqs`` data source's tasks) running this interpreter, so they
    import the same sqsqueue, boto3 and pyspark."""
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
    )
    for key, value in conf.items():
        builder = builder.config(key.replace("_", "."), value)
    return builder.getOrCreate()


def register(spark: SparkSession) -> None:
    """Register the ``sqs`` data source (``format("sqs")``) with ``spark``.

    Reads and writes go through boto3 from Spark's executors, to a broker
    served with ``Broker.serve()`` or to AWS SQS; ``docs/spark.md`` has the
    options and guarantees. Needs boto3 (``pip install 'sqsqueue[spark]'``) on
    the driver and the workers. Spark pickles the class by reference, so the
    workers import it from :mod:`sqsqueue.spark._datasource` themselves.
    """
    try:
        from sqsqueue.spark._datasource import SqsDataSource
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the sqs data source needs boto3: pip install 'sqsqueue[spark]'") from exc
    spark.dataSource.register(SqsDataSource)


# -- sink ---------------------------------------------------------------------------


def _send_each(queue: AnyQueue, entries: Sequence[SendEntry]) -> BatchResult:
    """``send_batch`` as single sends, each failure reported per entry."""
    successful: dict[str, SendResult | None] = {}
    failed: list[BatchFailure] = []
    for e in entries:
        try:
            successful[e.id] = queue.send(
                e.body,
                delay_seconds=e.delay_seconds,
                message_attributes=e.message_attributes,
                group_id=e.group_id,
                deduplication_id=e.deduplication_id,
            )
        except SQSError as err:
            failed.append(BatchFailure(e.id, err.code, err.message, err.sender_fault))
    return BatchResult(successful, tuple(failed))


def write_dataframe(
    df: DataFrame,
    queue: AnyQueue,
    *,
    sink_id: str = "sqsqueue-sink",
    batch_id: int,
    order_by: str | Sequence[str] | None = None,
) -> SinkResult:
    """Send every row of ``df`` to ``queue`` (a batch write).

    ``sink_id`` and ``batch_id`` seed the deterministic deduplication ids on a
    FIFO queue (``docs/spark.md``); give each logical write its own pair.
    Raises :class:`SinkError` listing every row that failed, after sending the
    others.
    """
    _check_session(df.sparkSession)
    problem = sink_schema_problem(df.schema)
    if problem is not None:
        raise SparkSupportError(f"write_dataframe: {problem}")
    columns = [c for c in SINK_COLUMNS if c in df.columns]
    ordered = df.select(*columns)
    if order_by is not None:
        ordered = df.orderBy(*([order_by] if isinstance(order_by, str) else order_by)).select(
            *columns
        )
    rows = SinkRows(isinstance(queue, FifoQueue), sink_id, batch_id)
    failures: list[BatchFailure] = []
    message_ids: list[str] = []
    sent = 0
    deduplicated = 0
    seen_ids: set[str] = set()
    chunk: list[SendEntry] = []

    def flush() -> None:
        nonlocal sent, deduplicated
        try:
            result = queue.send_batch(chunk)
        except (BatchRequestTooLong, InvalidParameterValue):
            # Request-level errors send nothing: entries adding up to more than
            # 1 MiB, a FIFO entry without a group. Send one by one so only the
            # bad rows fail and the others still go.
            result = _send_each(queue, chunk)
        failures.extend(result.failed)
        for entry in chunk:
            outcome = result.successful.get(entry.id)
            if outcome is None:
                continue
            if outcome.message_id in seen_ids:
                deduplicated += 1
            seen_ids.add(outcome.message_id)
            message_ids.append(outcome.message_id)
            sent += 1
        chunk.clear()

    for index, row in enumerate(ordered.toLocalIterator()):
        message = rows.message(row.asDict(recursive=True))
        chunk.append(
            SendEntry(
                id=f"r{index}",
                body=message.body,  # type: ignore[arg-type]  # null: the queue refuses it
                delay_seconds=message.delay_seconds,
                message_attributes=message.attributes,
                group_id=message.group_id,
                deduplication_id=message.deduplication_id,
            )
        )
        if len(chunk) == _limits.BATCH_ENTRIES_MAX:
            flush()
    if chunk:
        flush()
    if failures:
        raise SinkError(failures, sent)
    return SinkResult(sent, tuple(message_ids), deduplicated)


def foreach_batch_sink(
    queue: AnyQueue,
    *,
    sink_id: str = "sqsqueue-sink",
    order_by: str | Sequence[str] | None = None,
) -> Callable[[DataFrame, int], None]:
    """A function for ``df.writeStream.foreachBatch(...)`` sending each
    micro-batch to ``queue``; the stream's batch id feeds the deduplication
    ids, so replays are exactly-once on FIFO queues within 5 minutes."""

    def sink(batch_df: DataFrame, batch_id: int) -> None:
        write_dataframe(batch_df, queue, sink_id=sink_id, batch_id=batch_id, order_by=order_by)

    return sink


# -- source -------------------------------------------------------------------------


class QueueBatch:
    """Messages received from a queue, as a DataFrame, acknowledged on exit.

    ::

        with QueueBatch(spark, queue, max_messages=100) as batch:
            process(batch.df)          # raise to have every message redelivered
            batch.reject(bad_ids)      # or release just some of them

    ``heartbeat_interval`` (wall seconds, default a third of the visibility
    timeout) controls the thread that extends the batch's visibility while it
    is open; ``None`` turns it off.
    """

    def __init__(
        self,
        spark: SparkSession,
        queue: AnyQueue,
        *,
        max_messages: int = 100,
        visibility_timeout: int | None = None,
        wait_time_seconds: int = 0,
        heartbeat_interval: float | str | None = "auto",
    ) -> None:
        self.spark = _check_session(spark)
        self.queue = queue
        self.max_messages = max_messages
        self.visibility_timeout = (
            int(queue.get_attributes(["VisibilityTimeout"])["VisibilityTimeout"])
            if visibility_timeout is None
            else visibility_timeout
        )
        self.wait_time_seconds = wait_time_seconds
        if heartbeat_interval == "auto":
            heartbeat_interval = max(self.visibility_timeout / 3, 0.05)
        self.heartbeat_interval = heartbeat_interval
        self.messages: list[Message] = []
        #: Messages whose delete failed at exit; they will be redelivered.
        self.unacknowledged: list[Message] = []
        self._received = False
        self._rejected: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._df: DataFrame | None = None
        self.heartbeats = 0

    def receive(self) -> list[Message]:
        """Receive up to ``max_messages`` (several ReceiveMessage calls of 10).
        Only the first call receives; later calls return the same messages."""
        if self._received:
            return self.messages
        self._received = True
        while len(self.messages) < self.max_messages:
            wanted = min(_limits.MAX_MESSAGES_MAX, self.max_messages - len(self.messages))
            got = self.queue.receive(
                wanted,
                visibility_timeout=self.visibility_timeout,
                wait_time_seconds=self.wait_time_seconds if not self.messages else 0,
            )
            if not got:
                break
            self.messages.extend(got)
        return self.messages

    @property
    def df(self) -> DataFrame:
        """The batch as a DataFrame with :data:`SOURCE_SCHEMA`."""
        if self._df is None:
            rows = [source_row(self.queue.name, m.to_aws()) for m in self.messages]
            self._df = self.spark.createDataFrame(rows, SOURCE_SCHEMA)
        return self._df

    def __len__(self) -> int:
        return len(self.messages)

    def reject(self, message_ids: Iterable[str]) -> None:
        """Release these messages at exit (visibility 0) instead of deleting them."""
        known = {m.message_id for m in self.messages}
        for message_id in message_ids:
            if message_id in known:
                self._rejected.add(message_id)

    def heartbeat(self) -> None:
        """Extend every message's visibility by ``visibility_timeout`` from now."""
        self._change(
            [m for m in self.messages if m.message_id not in self._rejected],
            self.visibility_timeout,
        )
        self.heartbeats += 1

    def _beat(self) -> None:
        assert self.heartbeat_interval is not None
        while not self._stop.wait(float(self.heartbeat_interval)):
            try:
                self.heartbeat()
            except SQSError:  # the queue went away; the exit will report it
                return

    def _change(self, messages: Sequence[Message], timeout: int) -> None:
        for start in range(0, len(messages), _limits.BATCH_ENTRIES_MAX):
            chunk = messages[start : start + _limits.BATCH_ENTRIES_MAX]
            self.queue.change_visibility_batch(
                [
                    ChangeVisibilityEntry(f"m{i}", m.receipt_handle, timeout)
                    for i, m in enumerate(chunk)
                ]
            )

    def __enter__(self) -> QueueBatch:
        self.receive()
        if self.messages and self.heartbeat_interval is not None:
            self._thread = threading.Thread(
                target=self._beat, name="sqsqueue-heartbeat", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if exc_type is not None:
            self._change(self.messages, 0)  # redeliver everything
            return
        self._change([m for m in self.messages if m.message_id in self._rejected], 0)
        keep = [m for m in self.messages if m.message_id not in self._rejected]
        for start in range(0, len(keep), _limits.BATCH_ENTRIES_MAX):
            chunk = keep[start : start + _limits.BATCH_ENTRIES_MAX]
            result = self.queue.delete_batch(
                [DeleteEntry(f"m{i}", m.receipt_handle) for i, m in enumerate(chunk)]
            )
            # A delete can fail (on FIFO, once the visibility timeout ran out):
            # the message comes back, which at-least-once allows. Say which.
            self.unacknowledged.extend(chunk[int(f.id[1:])] for f in result.failed)


def stream_batches(
    spark: SparkSession,
    queue: AnyQueue,
    *,
    max_messages: int = 100,
    max_batches: int | None = None,
    stop_when_empty: bool = True,
    visibility_timeout: int | None = None,
    wait_time_seconds: int = 0,
    heartbeat_interval: float | str | None = "auto",
) -> Iterator[QueueBatch]:
    """A micro-batch loop: yields :class:`QueueBatch` objects to use as context
    managers, until the queue is empty (or ``max_batches``).

    With ``stop_when_empty=False`` the loop waits for messages with long polls
    (20 s unless ``wait_time_seconds`` says otherwise) rather than spinning.
    On a FIFO queue a batch can hold fewer than ``max_messages`` even when more
    are stored: a group received in part stays locked until the batch ends.
    """
    if not stop_when_empty and wait_time_seconds == 0:
        wait_time_seconds = 20
    count = 0
    while max_batches is None or count < max_batches:
        batch = QueueBatch(
            spark,
            queue,
            max_messages=max_messages,
            visibility_timeout=visibility_timeout,
            wait_time_seconds=wait_time_seconds,
            heartbeat_interval=heartbeat_interval,
        )
        if not batch.receive():
            if stop_when_empty:
                return
            continue
        count += 1
        yield batch
