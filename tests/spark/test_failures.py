"""Failures: Spark task retries, failed processing, dead-lettering, heartbeats."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue
from sqsqueue.spark import QueueBatch, stream_batches, write_dataframe

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


class Boom(Exception):
    """The failure a test injects into processing."""


def process_then_fail(batch: QueueBatch, expected: int) -> None:
    """Open the batch, look at its DataFrame, then fail inside the ``with``."""
    with batch:
        assert len(batch) == expected
        assert batch.df.count() == expected
        raise Boom


def drain(queue: Queue | FifoQueue) -> list[str]:
    """Receive and delete everything receivable; the bodies in receive order."""
    bodies = []
    while batch := queue.receive(10):
        bodies.extend(m.body for m in batch)
        queue.delete_batch([m.receipt_handle for m in batch])
    return bodies


class TestSparkTaskRetry:
    """A failed Spark task is retried by Spark; the sink still sends each row once."""

    def test_task_failure_then_retry_sends_every_row_once(
        self, spark: SparkSession, broker: Broker, tmp_path: Path
    ) -> None:
        """With ``local[2,2]`` a task that fails on its first attempt is retried;
        the write succeeds and the FIFO queue holds every row exactly once, in
        ``order_by`` order per group."""
        from pyspark import TaskContext
        from pyspark.sql import functions as F

        marker_dir = str(tmp_path)

        @F.udf("string", useArrow=False)
        def flaky_body(n):  # type: ignore[no-untyped-def]
            ctx = TaskContext.get()
            assert ctx is not None
            if n == 7 and ctx.attemptNumber() == 0:  # one partition fails once
                Path(marker_dir, f"failed-{ctx.stageId()}-{ctx.partitionId()}").touch()
                raise RuntimeError("injected task failure")
            return f"row-{n:02d}"

        queue = broker.create_queue("retry.fifo", fifo_queue=True)
        df = (
            spark.range(0, 40, numPartitions=4)
            .withColumn("body", flaky_body("id"))
            .withColumn("message_group_id", F.concat(F.lit("g"), (F.col("id") % 2).cast("string")))
        )

        result = write_dataframe(df, queue, sink_id="retry", order_by="id", batch_id=1)

        assert list(tmp_path.glob("failed-*")), "the injected task failure did not happen"
        assert result.sent == 40
        bodies = drain(queue)
        assert Counter(bodies) == Counter(f"row-{n:02d}" for n in range(40))
        for parity in (0, 1):
            group = [b for b in bodies if int(b[4:]) % 2 == parity]
            assert group == sorted(group)


class TestProcessingFailure:
    """An exception inside ``with QueueBatch(...)`` hands every message back."""

    @pytest.mark.parametrize("fifo", [False, True], ids=["standard", "fifo"])
    def test_failure_redelivers_at_once(
        self, spark: SparkSession, broker: Broker, clock: ManualClock, fifo: bool
    ) -> None:
        """The messages are receivable immediately (visibility 0, no clock movement),
        with ApproximateReceiveCount incremented on the next receive; the exception
        propagates."""
        if fifo:
            queue = broker.create_queue("fail.fifo", fifo_queue=True, visibility_timeout=600)
            for i in range(12):
                queue.send(f"m{i}", group_id=f"g{i // 2}", deduplication_id=f"d{i}")
        else:
            queue = broker.create_queue("fail", visibility_timeout=600)
            for i in range(12):
                queue.send(f"m{i}")
        before = clock.now()
        with pytest.raises(Boom):
            process_then_fail(QueueBatch(spark, queue, heartbeat_interval=None), 12)
        assert clock.now() == before
        with QueueBatch(spark, queue, heartbeat_interval=None) as again:
            counts = {
                r["body"]: r["approximate_receive_count"]
                for r in again.df.select("body", "approximate_receive_count").collect()
            }
        assert counts == {f"m{i}": 2 for i in range(12)}
        assert len(queue) == 0

    @pytest.mark.parametrize("fifo", [False, True], ids=["standard", "fifo"])
    def test_repeated_failures_dead_letter_without_loss(
        self, spark: SparkSession, broker: Broker, fifo: bool
    ) -> None:
        """With maxReceiveCount=2, two failed batches move every message to the DLQ
        on the next receive; nothing is lost or duplicated."""
        suffix = ".fifo" if fifo else ""
        dlq = broker.create_queue(f"dlq{suffix}", fifo_queue=fifo or None)
        queue = broker.create_queue(
            f"work{suffix}",
            fifo_queue=fifo or None,
            visibility_timeout=600,
            redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 2},
        )
        bodies = {f"m{i}" for i in range(8)}
        for i, body in enumerate(sorted(bodies)):
            if isinstance(queue, FifoQueue):
                queue.send(body, group_id=f"g{i % 2}", deduplication_id=body)
            else:
                queue.send(body)

        attempts = []
        for _ in range(3):
            try:
                for batch in stream_batches(
                    spark, queue, max_messages=100, max_batches=1, heartbeat_interval=None
                ):
                    with batch:
                        attempts.append(len(batch))
                        raise Boom
            except Boom:
                pass
        assert attempts == [8, 8], "the third receive dead-letters instead of delivering"
        assert len(queue) == 0
        in_dlq = dlq.receive(10, visibility_timeout=600)
        assert sorted(m.body for m in in_dlq) == sorted(bodies)
        assert all(int(m.attributes["ApproximateReceiveCount"]) >= 2 for m in in_dlq)


class TestHeartbeat:
    """While a batch is open its heartbeat keeps the messages hidden (wall clock)."""

    HOLD_SECONDS = 2.5

    def _hold_batch_and_peek(self, spark: SparkSession, interval: float | None) -> tuple:
        queue = Queue("hb", visibility_timeout=30)  # SystemClock: real seconds
        for i in range(3):
            queue.send(f"m{i}")
        with QueueBatch(spark, queue, visibility_timeout=1, heartbeat_interval=interval) as batch:
            assert len(batch) == 3
            threading.Event().wait(self.HOLD_SECONDS)
            stolen = queue.receive(10, visibility_timeout=30)
            beats = batch.heartbeats
        return stolen, beats, queue

    def test_heartbeat_keeps_messages_in_flight(self, spark: SparkSession) -> None:
        """visibility_timeout=1 s and a 0.2 s heartbeat: held for 2.5 s, no other
        consumer receives the messages, and the heartbeat ran; on exit they are gone."""
        stolen, beats, queue = self._hold_batch_and_peek(spark, 0.2)
        assert stolen == []
        assert beats > 0
        assert len(queue) == 0

    def test_without_heartbeat_messages_time_out(self, spark: SparkSession) -> None:
        """heartbeat_interval=None: after the 1 s visibility timeout another consumer
        receives the batch's messages (at-least-once, as documented)."""
        stolen, beats, _queue = self._hold_batch_and_peek(spark, None)
        assert sorted(m.body for m in stolen) == ["m0", "m1", "m2"]
        assert beats == 0
