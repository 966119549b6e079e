"""The sink: DataFrame rows into queues (``write_dataframe``)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue
from sqsqueue.spark import SinkResult, write_dataframe

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

SINK_SCHEMA = (
    "body string, message_group_id string, message_attributes map<string,string>, delay_seconds int"
)


def receive_all(queue: Queue | FifoQueue) -> list:
    """Every receivable message, in the order the queue hands them out (each
    batch is deleted, so a FIFO group's next messages become receivable)."""
    out = []
    while batch := queue.receive(10, visibility_timeout=600):
        out.extend(batch)
        queue.delete_batch([m.receipt_handle for m in batch])
    return out


class TestStandardSink:
    """Rows of a DataFrame become messages of a standard queue, column for column."""

    def test_round_trip(self, spark: SparkSession, broker: Broker, clock: ManualClock) -> None:
        """Each row is one message with exactly its body, String attributes, group id
        and per-message delay; absent optional values fall back to the queue's."""
        queue = broker.create_queue("sink-std")
        rows = [
            ("plain", None, None, None),
            ("with-attrs", None, {"kind": "order", "region": "eu"}, None),
            ("grouped", "tenant-1", None, 0),
            ("delayed", "tenant-2", {"k": "v"}, 30),
        ]
        df = spark.createDataFrame(rows, SINK_SCHEMA)

        result = write_dataframe(df, queue, batch_id=1)

        assert isinstance(result, SinkResult)
        assert result.sent == 4
        assert len(result.message_ids) == 4 == len(set(result.message_ids))
        assert result.deduplicated == 0
        info = {m.body: m for m in queue.inspect()}
        assert set(info) == {"plain", "with-attrs", "grouped", "delayed"}
        assert set(result.message_ids) == {m.message_id for m in info.values()}
        assert info["delayed"].state == "delayed"
        assert info["delayed"].visible_at == clock.now() + 30
        assert {b for b, m in info.items() if m.state == "visible"} == {
            "plain",
            "with-attrs",
            "grouped",
        }

        clock.advance(30)
        received = {m.body: m for m in receive_all(queue)}
        assert set(received) == set(info)
        assert {
            name: (v.data_type, v.value)
            for name, v in received["with-attrs"].message_attributes.items()
        } == {"kind": ("String", "order"), "region": ("String", "eu")}
        assert dict(received["delayed"].message_attributes)["k"].value == "v"
        assert received["plain"].message_attributes == {}
        assert received["grouped"].attributes["MessageGroupId"] == "tenant-1"
        assert "MessageGroupId" not in received["plain"].attributes
        assert "MessageDeduplicationId" not in received["plain"].attributes

    def test_body_only_dataframe(self, spark: SparkSession, broker: Broker) -> None:
        """Only ``body`` is required; other columns are ignored, not sent."""
        queue = broker.create_queue("sink-body-only")
        df = spark.createDataFrame([(i, f"m{i}") for i in range(25)], "n long, body string")
        result = write_dataframe(df, queue, batch_id=1)
        assert result.sent == 25
        assert sorted(m.body for m in queue.inspect()) == sorted(f"m{i}" for i in range(25))
        assert all(m.message_attributes == {} for m in receive_all(queue))


class TestFifoSink:
    """Rows become FIFO messages; each group keeps the ``order_by`` order."""

    def test_round_trip_and_group_order(self, spark: SparkSession, broker: Broker) -> None:
        """Groups, explicit deduplication ids and attributes arrive as given; within
        each group messages are in ``order_by`` order even though the DataFrame was
        shuffled; the SinkResult counts every row once."""
        queue = broker.create_queue("sink.fifo", fifo_queue=True)
        rows = [(seq, f"g{seq % 3}", f"event-{seq:03d}", {"seq": str(seq)}) for seq in range(60)]
        df = spark.createDataFrame(
            rows,
            "seq long, message_group_id string, body string, message_attributes map<string,string>",
        ).repartition(4)

        result = write_dataframe(df, queue, sink_id="fifo-rt", order_by="seq", batch_id=1)

        assert result.sent == 60 == len(result.message_ids) == len(set(result.message_ids))
        assert result.deduplicated == 0
        received = receive_all(queue)
        assert len(received) == 60
        by_group: dict[str, list[int]] = defaultdict(list)
        for m in received:
            seq = int(m.message_attributes["seq"].value)
            assert m.body == f"event-{seq:03d}"
            assert m.attributes["MessageGroupId"] == f"g{seq % 3}"
            by_group[m.attributes["MessageGroupId"]].append(seq)
        for group, seqs in by_group.items():
            assert seqs == sorted(seqs), f"group {group} out of order"
            assert seqs == [s for s in range(60) if f"g{s % 3}" == group]
        # Sequence numbers grow in the same order.
        seq_numbers = {
            int(m.message_attributes["seq"].value): int(m.attributes["SequenceNumber"])
            for m in received
        }
        assert [seq_numbers[s] for s in range(60)] == sorted(seq_numbers.values())

    def test_explicit_deduplication_ids(self, spark: SparkSession, broker: Broker) -> None:
        """A ``message_deduplication_id`` column is used as given: two rows with the
        same id store one message and count one duplicate in the SinkResult."""
        queue = broker.create_queue("sink-dedup.fifo", fifo_queue=True)
        df = spark.createDataFrame(
            [("a", "g", "id-1"), ("b", "g", "id-2"), ("a-again", "g", "id-1")],
            "body string, message_group_id string, message_deduplication_id string",
        ).coalesce(1)
        result = write_dataframe(df, queue, batch_id=1)
        assert result.sent == 3
        assert result.deduplicated == 1
        assert result.message_ids[0] == result.message_ids[2]
        stored = queue.inspect()
        assert sorted(m.body for m in stored) == ["a", "b"]
        assert {m.deduplication_id for m in stored} == {"id-1", "id-2"}

    def test_generated_deduplication_ids_are_stored(
        self, spark: SparkSession, broker: Broker
    ) -> None:
        """Without a deduplication id column, each message gets a SHA-256 hex id."""
        queue = broker.create_queue("sink-gen.fifo", fifo_queue=True)
        df = spark.createDataFrame([("x", "g"), ("y", "g")], "body string, message_group_id string")
        write_dataframe(df, queue, batch_id=1)
        ids = [m.deduplication_id for m in queue.inspect()]
        assert len(ids) == 2 and len(set(ids)) == 2
        assert all(i is not None and len(i) == 64 for i in ids)
