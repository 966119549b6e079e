"""The ``sqs`` data source against a broker served over HTTP in this process.

Spark's Python workers (separate processes) reach the broker through boto3 and
the endpoint, exactly as they would reach AWS. The broker runs on the system
clock: visibility timeouts here are real seconds, so they are short.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sqsqueue import Broker, FifoQueue, Queue

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

AnyQueue = Queue | FifoQueue


@pytest.fixture(scope="module")
def sqs(spark: SparkSession) -> SparkSession:
    """The shared session with ``format("sqs")`` registered."""
    from sqsqueue.spark import register

    register(spark)
    return spark


_names = iter(range(1_000_000))


def new_queue(broker: Broker, fifo: bool = False, **attributes: Any) -> AnyQueue:
    name = f"ds-{next(_names)}" + (".fifo" if fifo else "")
    return (
        broker.create_queue(name, fifo_queue=True, **attributes)
        if fifo
        else (broker.create_queue(name, **attributes))
    )


def options(endpoint: str, queue: AnyQueue, **more: str) -> dict[str, str]:
    return {
        "queueUrl": queue.url,
        "endpointUrl": endpoint,
        "accessKeyId": "test",
        "secretAccessKey": "test",
        **more,
    }


def bodies(queue: AnyQueue) -> Counter[str]:
    return Counter(m.body for m in queue.inspect())


def visible_and_in_flight(queue: AnyQueue) -> tuple[int, int]:
    a = queue.get_attributes(
        ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )
    return int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"])


def error_text(exc: BaseException) -> str:
    return str(exc)


# -- batch write --------------------------------------------------------------------


class TestBatchWrite:
    """``df.write.format("sqs")``: executor tasks send their partitions."""

    def test_standard_queue_gets_every_row_with_its_columns(
        self, sqs: SparkSession, served: tuple[Broker, str]
    ) -> None:
        """Every row of 3 partitions arrives once, with its attributes and delay."""
        broker, endpoint = served
        queue = new_queue(broker)
        rows = [(f"b{i}", {"k": str(i)}, 0) for i in range(45)]
        df = sqs.createDataFrame(
            rows, "body string, message_attributes map<string,string>, delay_seconds int"
        ).repartition(3)
        df.write.format("sqs").options(**options(endpoint, queue)).mode("append").save()
        assert bodies(queue) == Counter(f"b{i}" for i in range(45))
        got = {m.body: m for m in queue.receive(10)}
        for body, message in got.items():
            assert message.message_attributes["k"].string_value == body[1:]

    def test_fifo_groups_keep_their_order(
        self, sqs: SparkSession, served: tuple[Broker, str]
    ) -> None:
        """``repartition(n, group).sortWithinPartitions(seq)``: each group's messages
        are stored in sequence order, on 4 partitions."""
        broker, endpoint = served
        queue = new_queue(broker, fifo=True)
        rows = [(i, f"g{i % 5}", f"{i % 5}:{i}") for i in range(120)]
        df = (
            sqs.createDataFrame(rows, "seq int, message_group_id string, body string")
            .repartition(4, "message_group_id")
            .sortWithinPartitions("seq")
        )
        df.drop("seq").write.format("sqs").options(**options(endpoint, queue)).mode("append").save()
        stored = [m.body for m in queue.inspect()]
        assert len(stored) == 120
        for group in range(5):
            seqs = [int(b.split(":")[1]) for b in stored if b.startswith(f"{group}:")]
            assert seqs == sorted(seqs) and len(seqs) == 24

    def test_fifo_replay_with_the_same_write_id_adds_nothing(
        self, sqs: SparkSession, served: tuple[Broker, str]
    ) -> None:
        """The same job run twice with one ``writeId`` (identical rows included) stores
        each row once; another ``writeId`` is another write."""
        broker, endpoint = served
        queue = new_queue(broker, fifo=True)
        rows = [("same", "g"), ("same", "g"), *((f"r{i}", f"g{i % 3}") for i in range(30))]
        df = sqs.createDataFrame(rows, "body string, message_group_id string").coalesce(2)
        write = df.write.format("sqs").options(**options(endpoint, queue, writeId="job-1"))
        write.mode("append").save()
        write.mode("append").save()
        assert len(queue) == 32
        assert bodies(queue)["same"] == 2
        other = df.write.format("sqs").options(**options(endpoint, queue, writeId="job-2"))
        other.mode("append").save()
        assert len(queue) == 64

    def test_standard_replay_sends_again(
        self, sqs: SparkSession, served: tuple[Broker, str]
    ) -> None:
        """At least once on a standard queue: the replayed write is stored twice."""
        broker, endpoint = served
        queue = new_queue(broker)
        df = sqs.createDataFrame([(f"r{i}",) for i in range(12)], "body string")
        write = df.write.format("sqs").options(**options(endpoint, queue, writeId="job-1"))
        write.mode("append").save()
        write.mode("append").save()
        assert bodies(queue) == Counter({f"r{i}": 2 for i in range(12)})


class TestRowFailures:
    """Rows the queue refuses fail the job with their errors; the others are sent."""

    @pytest.mark.parametrize("fifo", [True, False], ids=["fifo", "standard"])
    def test_refused_row_fails_the_job_and_the_task_retry(
        self, sqs: SparkSession, served: tuple[Broker, str], fifo: bool
    ) -> None:
        """A body with a character SQS refuses (U+0000): the task fails naming
        InvalidMessageContents and the row; Spark retries the task (``local[2,2]``),
        which fails the same way, and the job fails with that error. Standard
        queue: each attempt sent the other 14 rows, so it holds each twice (at
        least once). FIFO queue (one group): rows 8-14 are not sent, to keep the
        group's order (the error says so); the retry resent rows 0-6 with the same
        deduplication ids, so the queue holds each once."""
        broker, endpoint = served
        queue = new_queue(broker, fifo=fifo)
        rows = [(f"r{i}" if i != 7 else "bad\x00", "g") for i in range(15)]
        df = sqs.createDataFrame(rows, "body string, message_group_id string").coalesce(1)
        if not fifo:
            df = df.drop("message_group_id")
        with pytest.raises(Exception, match="InvalidMessageContents") as caught:
            df.write.format("sqs").options(**options(endpoint, queue)).mode("append").save()
        assert "row 7" in error_text(caught.value)
        assert "1 row(s) of partition 0 could not be sent" in error_text(caught.value)
        if fifo:
            assert "7 later row(s) were not sent" in error_text(caught.value)
            assert "rows 8, 9, 10, 11, 12, 13, 14: an earlier row of group 'g' failed" in (
                error_text(caught.value)
            )
            assert [m.body for m in queue.inspect()] == [f"r{i}" for i in range(7)]
        else:
            good = Counter(f"r{i}" for i in range(15) if i != 7)
            assert bodies(queue) == good + good


# -- streaming read -----------------------------------------------------------------


def fill(queue: AnyQueue, count: int, groups: int = 0) -> list[str]:
    sent = [f"m{i:03d}" for i in range(count)]
    for body in sent:
        if groups:
            queue.send(body, group_id=f"g{int(body[1:]) % groups}", deduplication_id=body)
        else:
            queue.send(body)
    return sent


def run_stream(
    spark: SparkSession,
    opts: dict[str, str],
    checkpoint: Path,
    fn: Callable[[DataFrame, int], None],
) -> None:
    """Read the queue until a long poll finds nothing (``availableNow``)."""
    query = (
        spark.readStream.format("sqs")
        .options(**opts)
        .load()
        .writeStream.foreachBatch(fn)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()


class TestStreamingRead:
    """``spark.readStream.format("sqs")``: delete after commit, redeliver after failure."""

    def test_messages_are_deleted_only_after_the_batch(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path
    ) -> None:
        """While foreachBatch runs, the batch's messages are in flight, not deleted;
        after the query every message was seen once and the queue is empty."""
        broker, endpoint = served
        queue = new_queue(broker)
        sent = fill(queue, 45)
        seen: list[str] = []
        states: list[tuple[int, int]] = []

        def process(df: DataFrame, batch_id: int) -> None:
            rows = df.select("body", "approximate_receive_count", "queue_name").collect()
            states.append(visible_and_in_flight(queue))
            assert all(r.approximate_receive_count == 1 for r in rows)
            assert {r.queue_name for r in rows} == {queue.name}
            seen.extend(r.body for r in rows)

        opts = options(endpoint, queue, maxMessagesPerBatch="20", waitTimeSeconds="1")
        run_stream(sqs, opts, tmp_path / "ck", process)
        assert sorted(seen) == sent
        assert states == [(25, 20), (5, 20), (0, 5)]
        assert len(queue) == 0

    def test_fifo_groups_stay_in_order_within_a_batch(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path
    ) -> None:
        """Each group's messages land in one partition, in sequence order."""
        from pyspark.sql import functions as F

        broker, endpoint = served
        queue = new_queue(broker, fifo=True)
        fill(queue, 40, groups=4)
        per_group: dict[str, list[str]] = {}

        def process(df: DataFrame, batch_id: int) -> None:
            rows = df.select(
                "message_group_id", "body", F.spark_partition_id().alias("p")
            ).collect()
            partitions: dict[str, set[int]] = {}
            for r in rows:
                per_group.setdefault(r.message_group_id, []).append(r.body)
                partitions.setdefault(r.message_group_id, set()).add(r.p)
            assert all(len(p) == 1 for p in partitions.values())

        opts = options(endpoint, queue, waitTimeSeconds="1", numPartitions="3")
        run_stream(sqs, opts, tmp_path / "ck", process)
        assert sorted(per_group) == ["g0", "g1", "g2", "g3"]
        for bodies_ in per_group.values():
            assert bodies_ == sorted(bodies_) and len(bodies_) == 10
        assert len(queue) == 0

    @pytest.mark.parametrize("release", [True, False], ids=["released", "timed-out"])
    def test_failed_batch_is_redelivered_after_restart(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path, release: bool
    ) -> None:
        """Batch 1 fails: the query stops without deleting it. Restarted from its
        checkpoint, the query releases batch 1 at once (its visibility timeout is
        60 s, so nothing else could bring it back in time), or, with
        ``releaseOnRestart=false``, receives it after its 2 s timeout. Every message
        is processed; batch 0's exactly once."""
        from pyspark.errors import StreamingQueryException

        broker, endpoint = served
        queue = new_queue(broker)
        sent = fill(queue, 30)
        opts = options(
            endpoint,
            queue,
            maxMessagesPerBatch="10",
            waitTimeSeconds="1",
            visibilityTimeout="60" if release else "2",
            releaseOnRestart=str(release).lower(),
        )
        first: list[str] = []
        failed: list[str] = []

        def failing(df: DataFrame, batch_id: int) -> None:
            got = [r.body for r in df.select("body").collect()]
            if batch_id == 1:
                failed.extend(got)
                raise RuntimeError("injected failure in batch 1")
            first.extend(got)

        with pytest.raises(StreamingQueryException, match="injected failure in batch 1"):
            run_stream(sqs, opts, tmp_path / "ck", failing)
        assert len(first) == len(failed) == 10
        assert visible_and_in_flight(queue) == (10, 10)  # batch 0 deleted, batch 1 held

        second: list[str] = []

        def recording(df: DataFrame, batch_id: int) -> None:
            second.extend(r.body for r in df.select("body").collect())

        if not release:
            threading.Event().wait(2.5)  # batch 1's visibility timeout runs out
        run_stream(sqs, opts, tmp_path / "ck", recording)
        assert sorted(first + second) == sent
        assert set(failed) <= set(second)
        assert len(queue) == 0

    def test_available_now_ends_while_a_producer_keeps_sending(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path
    ) -> None:
        """``trigger(availableNow=True)`` takes the 40 messages the queue held when
        the query started and ends, although a producer, started by the first
        batch, sends one every 10 ms during the drain (faster than 10-message
        batches take them)."""
        broker, endpoint = served
        queue = new_queue(broker)
        sent = fill(queue, 40)
        stop = threading.Event()

        def produce() -> None:
            for n in range(3000):
                if stop.wait(0.01):
                    return
                queue.send(f"late{n}")

        producer = threading.Thread(target=produce, daemon=True)
        seen: list[str] = []

        def process(df: DataFrame, batch_id: int) -> None:
            if batch_id == 0:
                producer.start()
            seen.extend(r.body for r in df.select("body").collect())

        opts = options(endpoint, queue, maxMessagesPerBatch="10", waitTimeSeconds="1")
        query = (
            sqs.readStream.format("sqs")
            .options(**opts)
            .load()
            .writeStream.foreachBatch(process)
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            ended = query.awaitTermination(45)
        finally:
            query.stop()
            stop.set()
            if producer.ident is not None:
                producer.join()
        assert ended, "the availableNow query was still running after 45 s"
        assert sorted(seen) == sent
        assert len(queue) > 0  # the producer's messages, left for the next run

    def test_idle_stream_long_polls(
        self,
        sqs: SparkSession,
        served: tuple[Broker, str],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """An empty queue for 4 s under the default trigger (as fast as possible):
        the stream's ReceiveMessage calls are 1-second long polls, a handful of
        them, not a busy loop. Counted where the broker serves them."""
        from sqsqueue._operations import _BaseQueue

        broker, endpoint = served
        queue = new_queue(broker)
        waits: list[object] = []
        polling = threading.Event()
        # Where every ReceiveMessage the endpoint serves passes, JSON or query,
        # by the codec's short path or the dict client: the queue's receive.
        real = _BaseQueue._receive_as_async

        async def counting(self: Any, views: Any, most: Any, vt: Any, wait: Any, *rest: Any) -> Any:
            if self.name == queue.name:
                waits.append(wait)
                polling.set()
            return await real(self, views, most, vt, wait, *rest)

        monkeypatch.setattr(_BaseQueue, "_receive_as_async", counting)
        opts = options(endpoint, queue, waitTimeSeconds="1", receiveConcurrency="4")
        query = (
            sqs.readStream.format("sqs")
            .options(**opts)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "ck"))
            .start()
        )
        try:
            # Counted from the stream's first poll: starting the query (its
            # executors, the first micro-batch) takes seconds of its own.
            polling.wait(60)
            first = len(waits)
            threading.Event().wait(4)
            polls = waits[first:]
        finally:
            query.stop()
        # It goes on polling, a handful of times (a busy loop would make
        # hundreds of calls); a cold JVM plans its first micro-batches slowly,
        # so the lower bound is one more poll.
        assert 1 <= len(polls) <= 6, waits
        assert set(waits) == {1}

    def test_heartbeat_keeps_a_slow_batch_invisible(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path
    ) -> None:
        """A batch that takes 3 s with a 2 s visibility timeout: the heartbeat
        extends it, so nothing is received twice."""
        broker, endpoint = served
        queue = new_queue(broker)
        sent = fill(queue, 5)
        seen: list[str] = []

        def slow(df: DataFrame, batch_id: int) -> None:
            seen.extend(r.body for r in df.select("body").collect())
            threading.Event().wait(3)
            assert visible_and_in_flight(queue) == (0, 5)

        opts = options(
            endpoint, queue, waitTimeSeconds="1", visibilityTimeout="2", heartbeatSeconds="1"
        )
        run_stream(sqs, opts, tmp_path / "ck", slow)
        assert sorted(seen) == sent
        assert len(queue) == 0


# -- streaming write ----------------------------------------------------------------

#: One input file per micro-batch. Batch 1 holds a body too large for the queue
#: in the first run (its limit is then raised), "e-04" twice on purpose, and
#: "e-00" in batches 0 and 2: the same content twice is two messages.
BIG = "x" * 2000
FILES = [
    ["e-00", "e-01", "e-02"],
    ["e-03", "e-04", "e-04", BIG, "e-05"],
    ["e-06", "e-00"],
]


def write_input(directory: Path) -> None:
    directory.mkdir()
    for index, rows in enumerate(FILES):
        path = directory / f"part-{index}.json"
        path.write_text(
            "".join(json.dumps({"body": b, "message_group_id": "g"}) + "\n" for b in rows)
        )
        stamp = 1_700_000_000 + index * 10  # file order = batch order
        os.utime(path, (stamp, stamp))


def stream_to_queue(
    spark: SparkSession, source: Path, checkpoint: Path, opts: dict[str, str]
) -> None:
    query = (
        spark.readStream.schema("body string, message_group_id string")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .writeStream.format("sqs")
        .options(**opts)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()


class TestStreamingWrite:
    """``writeStream.format("sqs")``: a micro-batch replayed after a restart."""

    @pytest.mark.parametrize("fifo", [True, False], ids=["fifo", "standard"])
    def test_replayed_micro_batch(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path, fifo: bool
    ) -> None:
        """Run 1 fails micro-batch 1's too-large row (in both attempts of the task)
        and dies; the queue's size limit is raised and run 2 restarts from the
        checkpoint, replaying batch 1 with the same query and batch ids. FIFO (one
        group): run 1 sent the rows before the refused one, not the one after it
        (the group's order); every input row stored exactly once (identical rows
        kept), in input order. Standard: run 1 sent batch 1's other rows in both
        attempts, so they are stored three times (at least once)."""
        from pyspark.errors import StreamingQueryException

        broker, endpoint = served
        queue = new_queue(broker, fifo=fifo, maximum_message_size=1024)
        source, checkpoint = tmp_path / "in", tmp_path / "ck"
        write_input(source)
        opts = options(endpoint, queue)
        with pytest.raises(StreamingQueryException, match="shorter than 1024 bytes"):
            stream_to_queue(sqs, source, checkpoint, opts)
        others = Counter(b for b in FILES[1] if b != BIG)
        if fifo:
            before = FILES[1][: FILES[1].index(BIG)]
            assert [m.body for m in queue.inspect()] == FILES[0] + before
        else:
            assert bodies(queue) == Counter(FILES[0]) + others + others
        queue.set_attributes({"MaximumMessageSize": "262144"})
        stream_to_queue(sqs, source, checkpoint, opts)
        expected = Counter(b for rows in FILES for b in rows)
        if fifo:
            assert bodies(queue) == expected
            # Every group in input order: the refused row's successor waited for it.
            assert [m.body for m in queue.inspect()] == [b for rows in FILES for b in rows]
        else:
            assert bodies(queue) == expected + others + others


# -- errors -------------------------------------------------------------------------


class TestErrors:
    """Wrong options, URLs and credentials fail with a sentence naming what to fix."""

    def write(self, spark: SparkSession, opts: dict[str, str]) -> None:
        df = spark.createDataFrame([("x",)], "body string")
        df.write.format("sqs").options(**opts).mode("append").save()

    def test_nothing_listening_at_the_endpoint(
        self, sqs: SparkSession, served: tuple[Broker, str]
    ) -> None:
        broker, _ = served
        queue = new_queue(broker)
        opts = options("http://127.0.0.1:9", queue)
        with pytest.raises(Exception, match="sqs data source: cannot reach queueUrl") as caught:
            self.write(sqs, opts)
        assert "check options endpointUrl and queueUrl" in error_text(caught.value)

    def test_no_such_queue(self, sqs: SparkSession, served: tuple[Broker, str]) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        opts = options(endpoint, queue, queueUrl=queue.url + "-missing")
        with pytest.raises(Exception, match="sqs data source: no such queue"):
            self.write(sqs, opts)

    def test_missing_credentials(
        self, sqs: SparkSession, served: tuple[Broker, str], tmp_path: Path
    ) -> None:
        """No options and nothing in the default chain (the conftest empties it)."""
        broker, endpoint = served
        queue = new_queue(broker)
        opts = {"queueUrl": queue.url, "endpointUrl": endpoint}
        with pytest.raises(Exception, match="sqs data source: no AWS credentials"):
            self.write(sqs, opts)
        with pytest.raises(Exception, match="sqs data source: no AWS credentials"):
            run_stream(sqs, opts, tmp_path / "ck", lambda df, i: None)

    @pytest.mark.parametrize(
        ("more", "message"),
        [
            ({"queueUrl": ""}, "option queueUrl is required"),
            ({"queueUrl": "orders"}, "option queueUrl must be a queue URL"),
            ({"maxRetries": "many"}, "option maxRetries must be an integer"),
            ({"accessKeyId": ""}, "options accessKeyId and secretAccessKey go together"),
            ({"queueURLs": "x"}, "unknown option"),
        ],
    )
    def test_bad_options(
        self, sqs: SparkSession, served: tuple[Broker, str], more: dict[str, str], message: str
    ) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        with pytest.raises(Exception, match=message):
            self.write(sqs, options(endpoint, queue, **more))

    def test_body_column_and_mode(self, sqs: SparkSession, served: tuple[Broker, str]) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        opts = options(endpoint, queue)
        df = sqs.createDataFrame([(1,)], "payload int")
        with pytest.raises(Exception, match=r"no 'body' column \(columns: payload\)"):
            df.write.format("sqs").options(**opts).mode("append").save()
        df = sqs.createDataFrame([(1,)], "body int")
        with pytest.raises(Exception, match="'body' column must be a string, not int"):
            df.write.format("sqs").options(**opts).mode("append").save()
        df = sqs.createDataFrame([("x",)], "body string")
        with pytest.raises(Exception, match="save mode overwrite is not supported"):
            df.write.format("sqs").options(**opts).mode("overwrite").save()
        assert len(queue) == 0

    def test_batch_read_is_refused(self, sqs: SparkSession, served: tuple[Broker, str]) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        with pytest.raises(Exception, match="batch reads are not supported"):
            sqs.read.format("sqs").options(**options(endpoint, queue)).load().collect()
