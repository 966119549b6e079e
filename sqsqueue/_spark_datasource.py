"""The ``sqs`` PySpark data source: Spark's executors talk to SQS through boto3.

Registered by :func:`sqsqueue.spark.register`; every part of it reaches the
queue over HTTP with boto3, so it works the same against a broker served with
``Broker.serve()``, against moto's server, and against AWS SQS. Nothing here
needs the driver's Python process: the writer runs in executor tasks, the
stream reader in the Python process Spark keeps on the driver for it.

Write (``df.write.format("sqs")`` and ``df.writeStream.format("sqs")``)
    Each task (:mod:`sqsqueue._spark_writer`) sends its partition with
    SendMessageBatch, 10 entries a call, in the partition's order (so
    ``repartition(n, group).sortWithinPartitions(..)`` keeps each FIFO group in
    order). Entries that fail with a server-side error (``SenderFault`` false:
    throttling, internal errors) are retried up to ``maxRetries`` times;
    entries that still fail, or fail with a client-side error, make the task
    fail with an :class:`SqsWriteError` naming them after the rest of the
    partition was sent. A connection that fails (after boto3's ``maxAttempts``)
    fails the task with an ``sqs data source: cannot send to <queue>: <cause>``
    error. Nothing is dropped silently.

    **FIFO queue: a group's rows are stored in order.** Each row is checked on
    the executor against the queue's content rules (body characters, size
    against its ``MaximumMessageSize``, attributes, ids) before it is sent; a
    row that would be refused is not sent, nor are its group's later rows in
    the partition (the task's error lists them: "an earlier row of group G
    failed"), while the other groups' rows are. A retried row goes out before
    its group's later rows. Only a server-side failure of a row whose later
    rows of the same group were stored by the same call can break a group's
    order; the task's error then says so, and ``strictGroupOrder=true`` (one
    row of a group a call, the task looking 100 rows ahead to fill calls with
    other groups; a single-group partition then sends one row a call) rules it
    out. A replay (same ``writeId``, or the micro-batch from the checkpoint)
    stores the rows not yet stored after those that were, which it
    deduplicates.

    **FIFO queue: exactly once within the 5-minute deduplication window.** A
    row without ``message_deduplication_id`` gets a deterministic one: SHA-256
    of the write's identity, the partition id, the row's content and its
    occurrence number among identical rows of that partition. The identity is
    ``writeId`` for a batch write (default: a fresh id per ``save()``, which
    covers task retries and speculative tasks; give your own to make a replayed
    job idempotent) and the streaming query id plus the micro-batch id for a
    streaming write (a micro-batch replayed after a restart from the
    checkpoint gets the same ids). Rows must be deterministic for this to hold
    (no ``rand()``, no ``current_timestamp()``); an explicit
    ``message_deduplication_id`` column replaces the scheme.
    **Standard queue: at least once**: a retried task or a replayed micro-batch
    sends its rows again.

Streaming read (``spark.readStream.format("sqs")``)
    **Where it runs.** Receiving and deleting happen in the one Python process
    Spark keeps on the driver for the query (the stream reader); executor tasks
    only build the :data:`~sqsqueue.spark.SOURCE_SCHEMA` rows. That is what
    Spark's offsets require: an offset must name a batch's messages so the batch
    can be planned, replayed after a failure and deleted once committed, and
    SQS hands a message to whoever receives it, so the receiving has to happen
    where offsets are planned and the receipt handles kept.

    ``latestOffset`` receives up to ``maxMessagesPerBatch`` messages and keeps
    them, receipt handles included, under a new offset ``{"reader": <this
    reader's id>, "batch": n}``. The first ReceiveMessage is a long poll of
    ``waitTimeSeconds`` (1 to 20: an idle stream waits in SQS, never spins);
    once it returns messages, ``receiveConcurrency`` threads (default 4) keep
    up to that many short polls in flight until the batch is full or a poll
    comes back empty. Each call's messages stay together in the order received
    (a FIFO group's messages come in one call: SQS locks the group while they
    are in flight). Deletes and visibility changes go out in calls of 10, as
    many at once. ``partitions`` hands the messages to executor tasks (a FIFO
    group stays in one partition, in order). A heartbeat thread extends the
    visibility of every message held, so a long batch never times out; if it
    fails, the next ``latestOffset`` or ``commit`` logs a warning (not raised:
    the messages are still held, and failing the query would bring all of them
    back; at worst some come back early and are delivered again).

    A batch's messages are deleted once Spark has committed the batch: on
    ``commit(end)``, or earlier, when the engine asks ``latestOffset(start)``
    for the next batch (it does so only after the batch ending at ``start`` was
    written to the commit log). Entries SQS fails to delete are logged as a
    warning: they come back after their visibility timeout and are processed
    again. A failed batch is never deleted, and the query stops (PySpark ends
    the reader's process without calling ``stop()``). Its messages come back: a
    query restarted from the checkpoint replays the failed batch as an empty
    one and releases its messages (visibility 0, with the receipt handles its
    offset carries in the offset log; option ``releaseOnRestart``, default
    true), so the new run receives them at once; without a restart, or with
    ``releaseOnRestart`` false, they come back after their visibility timeout.
    Nothing is lost. A batch committed just before a stop, whose delete had not
    happened yet, is deleted by the restarted query from the handles of its
    start offset (with ``releaseOnRestart`` false the offsets carry no handles,
    and it comes back after its visibility timeout and is processed again).
    **Guarantee: at least once.** For exactly-once results, write them to a
    FIFO queue with ``message_deduplication_id`` set from the source's
    ``message_id``.

    ``trigger(availableNow=True)`` reads the queue's ApproximateNumberOfMessages
    when the query starts and takes at most that many messages (plus those it
    releases from an earlier run's failed batch), stopping earlier if a long
    poll finds nothing: a producer that keeps sending does not keep the query
    running.

Batch read: not offered. A batch read has no point at which Spark says the data
was used, so it could only delete messages before they were processed (loss) or
never (each read redelivers). ``spark.read.format("sqs")`` says so and points to
``readStream`` with ``trigger(availableNow=True)``, which drains a queue with
deletes after commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import botocore.exceptions
from botocore.config import Config
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StringType, StructType

from sqsqueue._spark_schema import SOURCE_SCHEMA
from sqsqueue._spark_writer import SqsBatchWriter, SqsStreamWriter, SqsWriteError

__all__ = ["SqsDataSource", "SqsOptionError", "SqsWriteError"]

NAME = "sqs"
_log = logging.getLogger(__name__)
_REGION_IN_HOST = re.compile(r"^https?://sqs[.-]([a-z0-9-]+)\.amazonaws\.com", re.IGNORECASE)


class SqsOptionError(ValueError):
    """An option of the ``sqs`` data source is missing or wrong (the message names it)."""


class SqsConnectionError(RuntimeError):
    """The queue cannot be reached: endpoint, credentials, or the queue itself."""


# -- options ------------------------------------------------------------------------


def _int_option(
    options: Mapping[str, str], name: str, default: int, low: int, high: int, why: str = ""
) -> int:
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw))
    except ValueError:
        raise SqsOptionError(
            f"sqs data source: option {name} must be an integer, got {raw!r}"
        ) from None
    if not low <= value <= high:
        raise SqsOptionError(
            f"sqs data source: option {name} must be between {low} and {high}{why}, got {value}"
        )
    return value


def _bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise SqsOptionError(f"sqs data source: option {name} must be true or false, got {raw!r}")
    return text == "true"


#: Every option the data source reads; anything else is refused (a typo must not
#: silently fall back to a default).
KNOWN_OPTIONS = frozenset(
    name.lower()
    for name in (
        "queueUrl",
        "endpointUrl",
        "region",
        "accessKeyId",
        "secretAccessKey",
        "sessionToken",
        "profile",
        "maxAttempts",
        "writeId",
        "maxRetries",
        "strictGroupOrder",
        "maxMessagesPerBatch",
        "waitTimeSeconds",
        "receiveConcurrency",
        "visibilityTimeout",
        "numPartitions",
        "releaseOnRestart",
        "heartbeatSeconds",
        "path",  # DataFrameWriter.save(path) passes one; refused below when set
        "checkpointLocation",  # writeStream passes its own options along
    )
)


@dataclass(frozen=True)
class Connection:
    """How to reach the queue with boto3 (picklable; clients are made where used)."""

    queue_url: str
    endpoint_url: str | None
    region: str
    access_key_id: str | None
    secret_access_key: str | None
    session_token: str | None
    profile: str | None
    max_attempts: int

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> Connection:
        unknown = sorted(k for k in options if k.lower() not in KNOWN_OPTIONS)
        if unknown:
            raise SqsOptionError(
                f"sqs data source: unknown option(s) {', '.join(unknown)}; known options: "
                "queueUrl, endpointUrl, region, accessKeyId, secretAccessKey, sessionToken, "
                "profile, maxAttempts, writeId, maxRetries, strictGroupOrder, maxMessagesPerBatch, "
                "waitTimeSeconds, receiveConcurrency, visibilityTimeout, numPartitions, "
                "releaseOnRestart, heartbeatSeconds"
            )
        if options.get("path"):
            raise SqsOptionError(
                "sqs data source: give the queue with option queueUrl, not as a path"
            )
        queue_url = options.get("queueUrl")
        if not queue_url:
            raise SqsOptionError("sqs data source: option queueUrl is required")
        if not re.match(r"^https?://[^/]+/.+", queue_url):
            raise SqsOptionError(
                f"sqs data source: option queueUrl must be a queue URL "
                f"(https://sqs.<region>.amazonaws.com/<account>/<name>), got {queue_url!r}"
            )
        endpoint_url = options.get("endpointUrl") or None
        if endpoint_url is not None and not re.match(r"^https?://[^/]+", endpoint_url):
            raise SqsOptionError(
                f"sqs data source: option endpointUrl must be an http(s) URL, got {endpoint_url!r}"
            )
        region = options.get("region") or _default_region(queue_url)
        if not region:
            raise SqsOptionError(
                "sqs data source: no region: set option region (or AWS_REGION / "
                f"AWS_DEFAULT_REGION); it cannot be read from queueUrl {queue_url!r}"
            )
        key, secret = options.get("accessKeyId"), options.get("secretAccessKey")
        if bool(key) != bool(secret):
            raise SqsOptionError(
                "sqs data source: options accessKeyId and secretAccessKey go together "
                "(or leave both out to use the default credential chain)"
            )
        return cls(
            queue_url=queue_url,
            endpoint_url=endpoint_url,
            region=region,
            access_key_id=key or None,
            secret_access_key=secret or None,
            session_token=options.get("sessionToken") or None,
            profile=options.get("profile") or None,
            max_attempts=_int_option(options, "maxAttempts", 5, 1, 20),
        )

    @property
    def fifo(self) -> bool:
        """FIFO queue names end in ``.fifo`` (docs/aws-behaviour.md §9)."""
        return self.queue_url.rstrip("/").endswith(".fifo")

    def client(self, *, read_timeout: int = 60, max_attempts: int | None = None) -> Any:
        session = boto3.session.Session(
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            aws_session_token=self.session_token,
            region_name=self.region,
            profile_name=self.profile,
        )
        config = Config(
            connect_timeout=5,
            read_timeout=read_timeout,
            retries={"mode": "standard", "max_attempts": max_attempts or self.max_attempts},
        )
        return session.client("sqs", endpoint_url=self.endpoint_url, config=config)

    def where(self) -> str:
        at = f" at endpointUrl {self.endpoint_url!r}" if self.endpoint_url else ""
        return f"queueUrl {self.queue_url!r}{at}"

    def check(self) -> dict[str, str]:
        """Ask for the queue's attributes once, turning failures into clear errors.

        Runs on the driver before any task, so a wrong URL or missing
        credentials fail the query at once with a sentence, not in every task.
        """
        try:
            client = self.client(max_attempts=2)
            answer = client.get_queue_attributes(
                QueueUrl=self.queue_url, AttributeNames=["VisibilityTimeout"]
            )
        except botocore.exceptions.NoCredentialsError:
            raise SqsConnectionError(
                f"sqs data source: no AWS credentials for {self.where()}: set options "
                "accessKeyId and secretAccessKey (or profile), or configure the default "
                "credential chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, an "
                "instance role)"
            ) from None
        except botocore.exceptions.ProfileNotFound as exc:
            raise SqsConnectionError(f"sqs data source: option profile: {exc}") from None
        except (
            botocore.exceptions.EndpointConnectionError,
            botocore.exceptions.ConnectTimeoutError,
            botocore.exceptions.ReadTimeoutError,
        ) as exc:
            raise SqsConnectionError(
                f"sqs data source: cannot reach {self.where()}: {exc} "
                "(check options endpointUrl and queueUrl)"
            ) from None
        except botocore.exceptions.ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "?")
            if code in ("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"):
                raise SqsConnectionError(
                    f"sqs data source: no such queue: {self.where()} (option queueUrl)"
                ) from None
            raise SqsConnectionError(
                f"sqs data source: {self.where()} refused GetQueueAttributes: {code}: "
                f"{error.get('Message', '')}"
            ) from None
        except botocore.exceptions.BotoCoreError as exc:
            raise SqsConnectionError(f"sqs data source: {self.where()}: {exc}") from None
        attributes: dict[str, str] = answer.get("Attributes", {})
        return attributes


def _default_region(queue_url: str) -> str | None:
    match = _REGION_IN_HOST.match(queue_url)
    if match:
        return match.group(1).lower()
    region: str | None = boto3.session.Session().region_name  # AWS_REGION, ~/.aws/config
    return region


# -- the data source ----------------------------------------------------------------


class SqsDataSource(DataSource):
    """``format("sqs")``: write DataFrames to an SQS queue, stream messages out of one.

    Options: ``queueUrl`` (required); ``endpointUrl`` (default: AWS's);
    ``region`` (default: from the queue URL's host, else boto3's default);
    ``accessKeyId``/``secretAccessKey``/``sessionToken`` or ``profile``
    (default: boto3's credential chain); ``maxAttempts`` (boto3 retries per
    call, 5). Write: ``writeId``, ``maxRetries`` (3). Streaming read:
    ``maxMessagesPerBatch`` (1000), ``waitTimeSeconds`` (long poll, 1 to 20,
    5), ``receiveConcurrency`` (ReceiveMessage calls at once while a batch
    fills, 4), ``visibilityTimeout`` (default: the queue's), ``numPartitions`` (2),
    ``releaseOnRestart`` (true), ``heartbeatSeconds`` (a third of the
    visibility timeout).
    """

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.connection = Connection.from_options(options)

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return SOURCE_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        raise SqsOptionError(
            "sqs data source: batch reads are not supported: nothing would tell the source "
            "when the rows were used, so it could only delete messages before processing "
            "(loss) or never (redelivery). Use spark.readStream.format('sqs') with "
            ".trigger(availableNow=True) to drain a queue, deleting after each commit."
        )

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        _check_sink_schema(schema, overwrite)
        self.connection.check()
        write_id = self.options.get("writeId") or uuid.uuid4().hex
        return SqsBatchWriter(
            self.connection, schema, write_id, _retries(self.options), _strict(self.options)
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        _check_sink_schema(schema, overwrite)
        self.connection.check()
        return SqsStreamWriter(
            self.connection,
            schema,
            self.options.get("writeId"),
            _retries(self.options),
            _strict(self.options),
        )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SqsStreamReader(self.connection, self.options)


def _retries(options: Mapping[str, str]) -> int:
    return _int_option(options, "maxRetries", 3, 0, 20)


def _strict(options: Mapping[str, str]) -> bool:
    return _bool_option(options, "strictGroupOrder", False)


def _check_sink_schema(schema: StructType, overwrite: bool) -> None:
    if overwrite:
        raise SqsOptionError(
            "sqs data source: save mode overwrite is not supported: a queue can only be "
            'appended to; use .mode("append")'
        )
    fields = {f.name: f.dataType for f in schema.fields}
    if "body" not in fields:
        raise SqsOptionError(
            f"sqs data source: the DataFrame has no 'body' column "
            f"(columns: {', '.join(fields) or 'none'})"
        )
    if not isinstance(fields["body"], StringType):
        raise SqsOptionError(
            f"sqs data source: the 'body' column must be a string, not "
            f"{fields['body'].simpleString()}; cast or serialise it first (to_json(struct(...)))"
        )


# -- streaming read -----------------------------------------------------------------


@dataclass
class MessagePartition(InputPartition):
    """Received messages (boto3's dicts) for one read task."""

    queue_name: str
    messages: list[dict[str, Any]]


def _timestamp(ms: str | None) -> datetime | None:
    if not ms or ms == "0":
        return None
    return datetime.fromtimestamp(int(ms) / 1000, tz=UTC)


def _row(queue_name: str, m: Mapping[str, Any]) -> tuple[Any, ...]:
    attributes: dict[str, str] = dict(m.get("Attributes", {}))
    user = {
        name: value.get("StringValue", value.get("BinaryValue"))
        for name, value in m.get("MessageAttributes", {}).items()
    }
    user = {k: (v if isinstance(v, str) else _b64(v)) for k, v in user.items() if v is not None}
    return (
        queue_name,
        m["MessageId"],
        m["ReceiptHandle"],
        m["Body"],
        m["MD5OfBody"],
        attributes.get("MessageGroupId"),
        attributes.get("MessageDeduplicationId"),
        attributes.get("SequenceNumber"),
        _timestamp(attributes.get("SentTimestamp")),
        int(attributes.get("ApproximateReceiveCount", "0")),
        _timestamp(attributes.get("ApproximateFirstReceiveTimestamp")),
        user,
        attributes,
    )


def _b64(value: bytes) -> str:
    import base64

    return base64.b64encode(value).decode("ascii")


class SqsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of received messages, deleted once Spark commits them.

    Lives in the Python process Spark keeps on the driver for the query (one
    object for the query's whole run); executors get pickled copies for
    :meth:`read` only, without its client, pool, lock, thread or held messages.
    """

    def __init__(self, connection: Connection, options: Mapping[str, str]) -> None:
        self.connection = connection
        self.queue_name = connection.queue_url.rstrip("/").rsplit("/", 1)[-1]
        self.max_messages = _int_option(options, "maxMessagesPerBatch", 1000, 1, 1_000_000)
        self.wait_time = _int_option(
            options,
            "waitTimeSeconds",
            5,
            1,
            20,
            why=" (a long poll: with 0 an idle stream would poll in a busy loop)",
        )
        self.concurrency = _int_option(options, "receiveConcurrency", 4, 1, 32)
        self.num_partitions = _int_option(options, "numPartitions", 2, 1, 10_000)
        self.release_on_restart = _bool_option(options, "releaseOnRestart", True)
        raw_visibility = options.get("visibilityTimeout")
        self.visibility: int | None = (
            None
            if raw_visibility is None
            else _int_option(options, "visibilityTimeout", 30, 1, 43_200)
        )
        raw_heartbeat = options.get("heartbeatSeconds")
        self.heartbeat: int | None = (
            None
            if raw_heartbeat is None
            else _int_option(options, "heartbeatSeconds", 10, 0, 43_200)
        )
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
                self.visibility = int(attributes.get("VisibilityTimeout", "30"))
            self._client = self.connection.client(read_timeout=self.wait_time + 30)
        return self._client

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="sqs-reader")
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
        wanted = self.max_messages
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
        if self.release_on_restart:
            # In the checkpoint's offset log, for a restarted query to release.
            offset["handles"] = [m["ReceiptHandle"] for m in messages]
        return offset

    def _receive_once(self, wanted: int, wait: int) -> list[dict[str, Any]]:
        answer = self._call(
            "receive from",
            lambda: self._sqs().receive_message(
                QueueUrl=self.connection.queue_url,
                MaxNumberOfMessages=min(10, wanted),
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
        first = self._receive_once(wanted, self.wait_time)
        if not first or len(first) >= wanted:
            return first
        lock = threading.Lock()
        calls: list[list[dict[str, Any]]] = [first]
        state = {"asked": len(first), "done": False}

        def poll() -> None:
            while True:
                with lock:
                    ask = min(10, wanted - state["asked"])
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
        for future in [pool.submit(poll) for _ in range(self.concurrency)]:
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
        count = min(self.num_partitions, len(messages))
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
        chunks = [messages[i : i + 10] for i in range(0, len(messages), 10)]
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
        interval = self.heartbeat
        if interval is None:
            interval = max(1, (self.visibility or 30) // 3)
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
                self._change_visibility(held, self.visibility or 30)
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
            yield _row(partition.queue_name, m)


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
