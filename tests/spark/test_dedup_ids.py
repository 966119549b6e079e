"""Deterministic deduplication ids of the FIFO sink, and the one definition of
them the driver helpers and the data source's write tasks share."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest
from pyspark.sql import Row

from sqsqueue import Broker, FifoQueue, ManualClock
from sqsqueue.spark import foreach_batch_sink, write_dataframe
from sqsqueue.spark._writer import _write_partition
from tests.spark.test_writer import StubSqs, target

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ROWS = [("same", "g"), ("same", "g"), ("other", "g")]


def frame(spark: SparkSession, rows: list[tuple[str, str]]) -> DataFrame:
    return spark.createDataFrame(rows, "body string, message_group_id string").coalesce(1)


def bodies(queue: FifoQueue) -> Counter[str]:
    return Counter(m.body for m in queue.inspect())


@pytest.fixture
def queue(broker: Broker) -> FifoQueue:
    queue = broker.create_queue("ids.fifo", fifo_queue=True)
    assert isinstance(queue, FifoQueue)
    return queue


class TestDeterministicIds:
    """Ids come from (sink id, batch id, row content, occurrence among identical rows)."""

    def test_identical_rows_in_one_batch_are_all_sent(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """Two identical rows are two messages: the occurrence counter gives them
        different deduplication ids."""
        result = write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        assert result.sent == 3 and result.deduplicated == 0
        assert len(set(result.message_ids)) == 3
        assert bodies(queue) == Counter({"same": 2, "other": 1})

    def test_replay_of_a_batch_sends_nothing_new(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """The same batch id again, rows in another order, sends nothing new: each
        row gets the id it had and the queue answers with the original message."""
        first = write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        replay = write_dataframe(frame(spark, ROWS[::-1]), queue, sink_id="s", batch_id=1)
        assert bodies(queue) == Counter({"same": 2, "other": 1})
        assert set(replay.message_ids) == set(first.message_ids)

    def test_another_batch_id_or_sink_id_sends_again(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """A different batch id (or sink id) is a different write: the same rows
        are sent again."""
        write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=2)
        assert bodies(queue) == Counter({"same": 4, "other": 2})
        write_dataframe(frame(spark, ROWS), queue, sink_id="t", batch_id=1)
        assert bodies(queue) == Counter({"same": 6, "other": 3})

    def test_foreach_batch_sink_uses_the_batch_id(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """The foreachBatch function keys ids on Spark's batch id: calling it twice
        with one id is a replay, with the next id a new batch."""
        sink = foreach_batch_sink(queue, sink_id="stream")
        sink(frame(spark, ROWS), 7)
        sink(frame(spark, ROWS), 7)
        assert bodies(queue) == Counter({"same": 2, "other": 1})
        sink(frame(spark, ROWS), 8)
        assert bodies(queue) == Counter({"same": 4, "other": 2})

    def test_replay_after_the_window_duplicates(
        self, spark: SparkSession, queue: FifoQueue, clock: ManualClock
    ) -> None:
        """The guarantee holds within SQS's 5-minute deduplication window only: a
        replay after it sends the rows again (documented)."""
        write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        clock.advance(301)
        write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        assert bodies(queue) == Counter({"same": 4, "other": 2})


class TestOneDefinition:
    """The driver helpers and the data source's write tasks make ids with one
    piece of code (``sqsqueue.spark._rows.SinkRows``); docs/spark.md defines it."""

    def test_the_content_is_the_sink_columns_values(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """A row's content is the values of the five sink columns, an absent
        column counting as null and other columns not at all: the same rows
        with an all-null ``delay_seconds`` column and a new ``n`` column are a
        replay, not new rows."""
        write_dataframe(frame(spark, ROWS), queue, sink_id="s", batch_id=1)
        more = spark.createDataFrame(
            [(body, group, None, n) for n, (body, group) in enumerate(ROWS)],
            "body string, message_group_id string, delay_seconds int, n int",
        ).coalesce(1)
        write_dataframe(more, queue, sink_id="s", batch_id=1)
        assert bodies(queue) == Counter({"same": 2, "other": 1})

    def test_the_driver_and_a_write_task_agree_given_one_scope(
        self, spark: SparkSession, queue: FifoQueue
    ) -> None:
        """A write task's ids are scoped by its write identity and partition id,
        ``write_dataframe``'s by its sink id and batch id: given the same scope
        (here "write:w" and 0; outside a Spark task the partition id is 0) both
        give the same rows the same ids."""
        write_dataframe(frame(spark, ROWS), queue, sink_id="write:w", batch_id=0)
        stub = StubSqs()
        rows = [Row(body=body, message_group_id=group) for body, group in ROWS]
        _write_partition(target(stub, fifo=True), iter(rows), "write:w", 3)
        by_driver = Counter(m.deduplication_id for m in queue.inspect())
        by_task = Counter(e["MessageDeduplicationId"] for e in stub.entries)
        assert by_task == by_driver and len(by_driver) == 3
