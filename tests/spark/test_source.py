"""The source: queue messages into DataFrames (``QueueBatch``, ``stream_batches``)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue
from sqsqueue.spark import SOURCE_SCHEMA, QueueBatch, stream_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

START_MS = 1_700_000_000_000


def collect_by_body(batch: QueueBatch) -> dict[str, dict]:
    """The batch's rows as dicts keyed by body, timestamps as epoch milliseconds."""
    from pyspark.sql import functions as F

    df = batch.df.withColumn("sent_ms", F.unix_millis("sent_timestamp")).withColumn(
        "first_receive_ms", F.unix_millis("approximate_first_receive_timestamp")
    )
    return {r["body"]: r.asDict(recursive=True) for r in df.collect()}


class TestSourceRoundTrip:
    """Received messages become rows of SOURCE_SCHEMA with every field filled in."""

    def test_standard_queue(self, spark: SparkSession, broker: Broker, clock: ManualClock) -> None:
        """Body, ids, MD5, timestamps from the queue's clock, receive count, user
        attributes (Binary as base64, Number as its string) and the system attribute
        map are all in the DataFrame; leaving the batch deletes its messages."""
        queue = broker.create_queue("src-std")
        sent = {
            "a": queue.send("a", message_attributes={"s": "text", "bin": b"\x00\xffhi", "n": 42}),
            "b": queue.send("b", group_id="tenant-7"),
        }
        clock.advance(5)
        with QueueBatch(spark, queue, max_messages=10, heartbeat_interval=None) as batch:
            assert batch.df.schema == SOURCE_SCHEMA
            rows = collect_by_body(batch)
        assert set(rows) == {"a", "b"}
        a, b = rows["a"], rows["b"]
        assert a["queue_name"] == "src-std"
        assert a["message_id"] == sent["a"].message_id
        assert a["md5_of_body"] == sent["a"].md5_of_body
        assert a["receipt_handle"] == next(
            m.receipt_handle for m in batch.messages if m.body == "a"
        )
        assert a["sent_ms"] == START_MS
        assert a["first_receive_ms"] == START_MS + 5_000
        assert a["approximate_receive_count"] == 1
        assert a["message_attributes"] == {
            "s": "text",
            "bin": base64.b64encode(b"\x00\xffhi").decode(),
            "n": "42",
        }
        assert a["message_group_id"] is None and a["sequence_number"] is None
        assert a["message_deduplication_id"] is None
        assert a["attributes"]["SentTimestamp"] == str(START_MS)
        assert a["attributes"]["ApproximateReceiveCount"] == "1"
        assert a["attributes"]["SenderId"] == "123456789012"
        assert b["message_group_id"] == "tenant-7"
        assert b["message_attributes"] == {}
        assert len(queue) == 0, "leaving the batch normally deletes its messages"

    def test_fifo_queue(self, spark: SparkSession, broker: Broker, clock: ManualClock) -> None:
        """FIFO rows carry group, deduplication id and sequence number; the rows of
        one group are in send order; the batch's messages are deleted on exit."""
        queue = broker.create_queue("src.fifo", fifo_queue=True)
        results = []
        for i in range(6):
            results.append(
                queue.send(
                    f"m{i}",
                    group_id=f"g{i % 2}",
                    deduplication_id=f"d{i}",
                    message_attributes={"bin": bytes([i])},
                )
            )
            clock.advance(1)
        with QueueBatch(spark, queue, heartbeat_interval=None) as batch:
            assert len(batch) == 6
            assert batch.df.schema == SOURCE_SCHEMA
            ordered = batch.df.select(
                "body",
                "message_group_id",
                "message_deduplication_id",
                "sequence_number",
                "message_attributes",
            ).collect()
            rows = collect_by_body(batch)
        for group in ("g0", "g1"):
            bodies = [r["body"] for r in ordered if r["message_group_id"] == group]
            assert bodies == [f"m{i}" for i in range(6) if f"g{i % 2}" == group]
        for i in range(6):
            row = rows[f"m{i}"]
            assert row["message_group_id"] == f"g{i % 2}"
            assert row["message_deduplication_id"] == f"d{i}"
            assert row["sequence_number"] == results[i].sequence_number
            assert row["sent_ms"] == START_MS + i * 1000
            assert row["message_attributes"] == {"bin": base64.b64encode(bytes([i])).decode()}
        assert len(queue) == 0

    def test_empty_queue_gives_an_empty_dataframe(
        self, spark: SparkSession, broker: Broker
    ) -> None:
        """An empty receive is an empty DataFrame with the same schema."""
        queue = broker.create_queue("src-empty")
        with QueueBatch(spark, queue) as batch:
            assert len(batch) == 0
            assert batch.df.schema == SOURCE_SCHEMA
            assert batch.df.count() == 0
        assert batch.heartbeats == 0


class TestReject:
    """reject() releases chosen messages; the others are deleted on exit."""

    @pytest.mark.parametrize("fifo", [False, True], ids=["standard", "fifo"])
    def test_reject_releases_only_those(
        self, spark: SparkSession, broker: Broker, fifo: bool
    ) -> None:
        """Rejected messages are visible again at once (visibility 0) and the
        rest of the batch is deleted; unknown ids are ignored."""
        queue: Queue | FifoQueue
        if fifo:
            queue = broker.create_queue("rej.fifo", fifo_queue=True)
            for i in range(5):
                queue.send(f"m{i}", group_id=f"g{i}", deduplication_id=f"d{i}")
        else:
            queue = broker.create_queue("rej")
            for i in range(5):
                queue.send(f"m{i}")
        with QueueBatch(spark, queue, visibility_timeout=300, heartbeat_interval=None) as batch:
            ids = {m.body: m.message_id for m in batch.messages}
            assert len(ids) == 5
            batch.reject([ids["m1"], ids["m3"], "not-in-this-batch"])
        # No clock movement: the rejected messages are receivable right away.
        again = queue.receive(10)
        assert sorted(m.body for m in again) == ["m1", "m3"]
        assert all(m.attributes["ApproximateReceiveCount"] == "2" for m in again)
        assert {m.message_id for m in again} == {ids["m1"], ids["m3"]}
        assert len(queue) == 2


class TestStreamBatches:
    """stream_batches yields batches until the queue is empty."""

    def test_drains_the_queue_in_batches(self, spark: SparkSession, broker: Broker) -> None:
        """Every message is in exactly one batch; the loop stops on an empty receive."""
        queue = broker.create_queue("stream-src")
        for i in range(25):
            queue.send(f"m{i}")
        seen: list[str] = []
        sizes = []
        for batch in stream_batches(spark, queue, max_messages=10, heartbeat_interval=None):
            with batch:
                sizes.append(len(batch))
                seen.extend(m.body for m in batch.messages)
        assert sizes == [10, 10, 5]
        assert sorted(seen) == sorted(f"m{i}" for i in range(25))
        assert len(queue) == 0

    def test_max_batches(self, spark: SparkSession, broker: Broker) -> None:
        """``max_batches`` stops the loop early; the rest stay in the queue."""
        queue = broker.create_queue("stream-max")
        for i in range(25):
            queue.send(f"m{i}")
        for batch in stream_batches(spark, queue, max_messages=10, max_batches=1):
            with batch:
                pass
        assert len(queue) == 15
