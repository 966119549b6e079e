"""foreachBatch streams restarted from their checkpoint (``foreach_batch_sink``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sqsqueue import Broker, FifoQueue, Queue
from sqsqueue.spark import foreach_batch_sink

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

#: Three input files, one micro-batch each (maxFilesPerTrigger=1). "e-00" is in
#: batch 0 and batch 2: the same content in two batches is two messages.
FILES = [
    ["e-00", "e-01", "e-02"],
    ["e-03", "e-04", "e-04"],  # batch 1, replayed after the crash; e-04 twice on purpose
    ["e-05", "e-00"],
]


class Crash(Exception):
    """The driver failing after the sink sent batch 1, before Spark committed it."""


def write_input(directory: Path) -> None:
    directory.mkdir()
    for index, bodies in enumerate(FILES):
        path = directory / f"part-{index}.json"
        path.write_text(
            "".join(json.dumps({"body": b, "message_group_id": "g"}) + "\n" for b in bodies)
        )
        stamp = 1_700_000_000 + index * 10  # file order = batch order
        os.utime(path, (stamp, stamp))


def run_stream(
    spark: SparkSession,
    source: Path,
    checkpoint: Path,
    fn: Callable[[DataFrame, int], None],
) -> None:
    """Run the file stream to the end of its input (``availableNow``)."""
    query = (
        spark.readStream.schema("body string, message_group_id string")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .writeStream.foreachBatch(fn)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()


def crash_then_restart(
    spark: SparkSession, queue: Queue | FifoQueue, tmp: Path, *, partial: bool = False
) -> list[int]:
    """Run 1 sends batch 1 (only its first 2 rows when ``partial``) and crashes
    before the commit; run 2 restarts from the checkpoint with the plain sink.
    Returns the batch ids run 2 processed."""
    from pyspark.errors import StreamingQueryException

    source, checkpoint = tmp / "in", tmp / "checkpoint"
    write_input(source)
    sink = foreach_batch_sink(queue, sink_id="s")

    def crashing(df: DataFrame, batch_id: int) -> None:
        if batch_id == 1 and partial:
            sink(df.limit(2), batch_id)  # the crash cut the send short
        else:
            sink(df, batch_id)
        if batch_id == 1:
            raise Crash("crash after sending batch 1")

    with pytest.raises(StreamingQueryException, match="crash after sending batch 1"):
        run_stream(spark, source, checkpoint, crashing)

    replayed: list[int] = []

    def recording(df: DataFrame, batch_id: int) -> None:
        replayed.append(batch_id)
        sink(df, batch_id)

    run_stream(spark, source, checkpoint, recording)
    return replayed


def stored_bodies(queue: Queue | FifoQueue) -> Counter[str]:
    return Counter(m.body for m in queue.inspect())


class TestRestartFromCheckpoint:
    """A micro-batch Spark replays after a crash is deduplicated on FIFO queues."""

    @pytest.mark.parametrize("partial", [False, True], ids=["complete-send", "partial-send"])
    def test_fifo_replay_adds_no_duplicate(
        self, spark: SparkSession, broker: Broker, tmp_path: Path, partial: bool
    ) -> None:
        """Batch 1 was sent (wholly or in part), then the query crashed before
        committing it; the restarted query replays batch 1 with the same
        deterministic deduplication ids, so the FIFO queue holds every input row
        exactly once (identical rows within a batch and the same content in another
        batch are kept), in order."""
        queue = broker.create_queue("stream.fifo", fifo_queue=True)
        replayed = crash_then_restart(spark, queue, tmp_path, partial=partial)
        assert replayed == [1, 2], "Spark must replay the uncommitted batch 1"
        expected = Counter(body for bodies in FILES for body in bodies)
        assert stored_bodies(queue) == expected
        bodies = [m.body for m in queue.inspect()]
        assert bodies[:3] == FILES[0] and bodies[-2:] == FILES[2]

    def test_standard_replay_duplicates(
        self, spark: SparkSession, broker: Broker, tmp_path: Path
    ) -> None:
        """The same crash on a standard queue delivers batch 1's rows twice: the
        documented at-least-once guarantee."""
        queue = broker.create_queue("stream-std")
        replayed = crash_then_restart(spark, queue, tmp_path)
        assert replayed == [1, 2]
        expected = Counter(body for bodies in FILES for body in bodies)
        expected.update(FILES[1])  # batch 1 sent by both runs
        assert stored_bodies(queue) == expected
