"""The ``sqs`` data source's stream reader, driven directly, without a SparkSession.

The reader is what Spark's driver-side Python process runs for a streaming
query: ``initialOffset``, ``latestOffset``, ``partitions``, ``commit``. Here the
test calls them itself, against a broker served over HTTP in this process,
the way the engine does (offsets pass through JSON, as through the offset log).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from sqsqueue import Broker, FifoQueue, Queue
from sqsqueue.spark._datasource import SqsDataSource
from sqsqueue.spark._options import Connection, SqsOptionError
from sqsqueue.spark._reader import SqsStreamReader
from sqsqueue.spark._rows import SOURCE_SCHEMA

AnyQueue = Queue | FifoQueue


_names = iter(range(1_000_000))


def new_queue(broker: Broker, fifo: bool = False) -> AnyQueue:
    name = f"rd-{next(_names)}"
    if fifo:
        return broker.create_queue(name + ".fifo", fifo_queue=True)
    return broker.create_queue(name)


def options(endpoint: str, queue: AnyQueue, **more: str) -> dict[str, str]:
    return {
        "queueUrl": queue.url,
        "endpointUrl": endpoint,
        "accessKeyId": "test",
        "secretAccessKey": "test",
        "waitTimeSeconds": "1",
        **more,
    }


def reader(opts: dict[str, str]) -> SqsStreamReader:
    made = SqsDataSource(opts).streamReader(SOURCE_SCHEMA)
    assert isinstance(made, SqsStreamReader)
    return made


def logged(offset: dict[str, Any]) -> dict[str, Any]:
    """The offset as the next run reads it back from the offset log."""
    loaded: dict[str, Any] = json.loads(json.dumps(offset))
    return loaded


def states(queue: AnyQueue) -> tuple[int, int]:
    a = queue.get_attributes(
        ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )
    return int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"])


def bodies_of(r: SqsStreamReader, start: dict[str, Any], end: dict[str, Any]) -> list[str]:
    return [row[3] for p in r.partitions(start, end) for row in r.read(p)]


class Wrapped:
    """A boto3 SQS client whose calls can be watched or made to fail."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.receives = 0
        self.fail_visibility = False
        self.fail_deletes = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def receive_message(self, **kwargs: Any) -> Any:
        with self.lock:
            self.receives += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return self.real.receive_message(**kwargs)
        finally:
            with self.lock:
                self.in_flight -= 1

    def change_message_visibility_batch(self, **kwargs: Any) -> Any:
        if self.fail_visibility:
            raise ConnectionResetError("injected: connection reset")
        return self.real.change_message_visibility_batch(**kwargs)

    def delete_message_batch(self, **kwargs: Any) -> Any:
        if not self.fail_deletes:
            return self.real.delete_message_batch(**kwargs)
        return {
            "Successful": [],
            "Failed": [
                {
                    "Id": e["Id"],
                    "SenderFault": True,
                    "Code": "ReceiptHandleIsInvalid",
                    "Message": "injected",
                }
                for e in kwargs["Entries"]
            ],
        }


@pytest.fixture
def wrapped(monkeypatch: pytest.MonkeyPatch) -> list[Wrapped]:
    """Every client a Connection makes from now on, wrapped (in order)."""
    made: list[Wrapped] = []
    real = Connection.client

    def client(self: Connection, **kwargs: Any) -> Any:
        made.append(Wrapped(real(self, **kwargs)))
        return made[-1]

    monkeypatch.setattr(Connection, "client", client)
    return made


class TestOptions:
    @pytest.mark.parametrize(
        ("more", "message"),
        [
            (
                {"waitTimeSeconds": "0"},
                r"option waitTimeSeconds must be between 1 and 20 \(a long poll: with 0 an "
                r"idle stream would poll in a busy loop\), got 0",
            ),
            ({"waitTimeSeconds": "21"}, "option waitTimeSeconds must be between 1 and 20"),
            ({"receiveConcurrency": "0"}, "option receiveConcurrency must be between 1 and 32"),
            ({"receiveConcurrency": "x"}, "option receiveConcurrency must be an integer"),
        ],
    )
    def test_refused(self, served: tuple[Broker, str], more: dict[str, str], message: str) -> None:
        broker, endpoint = served
        with pytest.raises(SqsOptionError, match=message):
            reader(options(endpoint, new_queue(broker), **more))


class TestRows:
    def test_a_message_becomes_a_source_schema_row(self, served: tuple[Broker, str]) -> None:
        """What a read task yields for a message: user attributes as strings
        (Binary in base64, Number as its string), SQS's epoch-millisecond
        timestamps as UTC datetimes, the system attributes as SQS's strings.
        The driver helpers' rows are pinned the same way in test_source.py."""
        broker, endpoint = served
        queue = new_queue(broker)
        sent = queue.send("a", message_attributes={"s": "text", "bin": b"\x00\xffhi", "n": 42})
        r = reader(options(endpoint, queue, heartbeatSeconds="0"))
        start = r.initialOffset()
        end = r.latestOffset(start, ReadAllAvailable())
        [partition] = r.partitions(start, end)
        [row] = list(r.read(partition))
        r.stop()
        named = dict(zip(SOURCE_SCHEMA.names, row, strict=True))
        assert named["queue_name"] == queue.name
        assert named["message_id"] == sent.message_id
        assert named["md5_of_body"] == sent.md5_of_body
        assert named["message_attributes"] == {
            "s": "text",
            "bin": base64.b64encode(b"\x00\xffhi").decode(),
            "n": "42",
        }
        sent_ms = int(named["attributes"]["SentTimestamp"])
        assert named["sent_timestamp"] == datetime.fromtimestamp(sent_ms / 1000, tz=UTC)
        first_ms = int(named["attributes"]["ApproximateFirstReceiveTimestamp"])
        assert named["approximate_first_receive_timestamp"].timestamp() * 1000 == first_ms
        assert named["approximate_receive_count"] == 1
        assert named["message_group_id"] is None and named["sequence_number"] is None


class TestReceive:
    def test_polls_run_concurrently_once_messages_arrive(
        self, served: tuple[Broker, str], wrapped: list[Wrapped]
    ) -> None:
        """``receiveConcurrency`` 4: the batch of 300 fills with several receives
        in flight at once; with 1, one at a time. Both take exactly 300."""
        broker, endpoint = served
        for concurrency, most in ((4, range(2, 5)), (1, range(1, 2))):
            queue = new_queue(broker)
            for i in range(0, 400, 10):
                queue.send_batch([f"m{i + j:03d}" for j in range(10)])
            r = reader(
                options(
                    endpoint,
                    queue,
                    maxMessagesPerBatch="300",
                    receiveConcurrency=str(concurrency),
                    heartbeatSeconds="0",
                )
            )
            start = r.initialOffset()
            end = r.latestOffset(start, ReadAllAvailable())
            assert len(end["handles"]) == 300
            assert states(queue) == (100, 300)
            assert wrapped[-1].most_in_flight in most
            r.stop()

    def test_idle_stream_waits_in_one_long_poll(
        self, served: tuple[Broker, str], wrapped: list[Wrapped]
    ) -> None:
        """An empty queue: one ReceiveMessage per ``latestOffset``, which waits
        ``waitTimeSeconds``, not one per receive thread."""
        broker, endpoint = served
        queue = new_queue(broker)
        r = reader(options(endpoint, queue, receiveConcurrency="8"))
        start = r.initialOffset()
        assert r.latestOffset(start, ReadAllAvailable()) == start
        assert r.latestOffset(start, ReadAllAvailable()) == start
        assert wrapped[-1].receives == 2

    def test_fifo_groups_keep_their_order_with_concurrent_receives(
        self, served: tuple[Broker, str]
    ) -> None:
        broker, endpoint = served
        queue = new_queue(broker, fifo=True)
        sent = [f"g{i % 7}:{i:03d}" for i in range(210)]
        for body in sent:
            queue.send(body, group_id=body[:2], deduplication_id=body)
        r = reader(options(endpoint, queue, numPartitions="3", heartbeatSeconds="0"))
        start = r.initialOffset()
        seen: list[str] = []
        for _ in range(100):
            end = r.latestOffset(start, ReadAllAvailable())
            if end == start:
                break
            seen += bodies_of(r, start, end)
            r.commit(end)
            start = end
        assert sorted(seen) == sorted(sent)
        for group in range(7):
            assert [b for b in seen if b[:2] == f"g{group}"] == [
                b for b in sent if b[:2] == f"g{group}"
            ]
        assert len(queue) == 0


class TestRestart:
    def test_batch_committed_before_a_stop_is_deleted_by_the_next_run(
        self, served: tuple[Broker, str]
    ) -> None:
        """Run 1 received a batch; Spark committed it and the run stopped before
        its delete. Run 2 starts from that offset and deletes its messages at
        once, rather than receiving them again after their 60 s timeout."""
        broker, endpoint = served
        queue = new_queue(broker)
        queue.send_batch([f"m{i}" for i in range(5)])
        opts = options(endpoint, queue, visibilityTimeout="60", heartbeatSeconds="0")
        first = reader(opts)
        end = logged(first.latestOffset(first.initialOffset(), ReadAllAvailable()))
        assert states(queue) == (0, 5)
        second = reader(opts)
        second.initialOffset()
        assert second.latestOffset(end, ReadAllAvailable()) == end
        assert len(queue) == 0

    def test_released_batch_is_not_deleted(self, served: tuple[Broker, str]) -> None:
        """A batch the next run replays (released, never committed) stays."""
        broker, endpoint = served
        queue = new_queue(broker)
        queue.send_batch([f"m{i}" for i in range(5)])
        opts = options(endpoint, queue, visibilityTimeout="60", heartbeatSeconds="0")
        first = reader(opts)
        start = first.initialOffset()
        end = logged(first.latestOffset(start, ReadAllAvailable()))
        second = reader(opts)
        second.initialOffset()
        assert second.partitions(start, end) == []  # the replay releases it
        second.commit(end)
        assert states(queue) == (5, 0)


class TestAvailableNow:
    def test_takes_what_was_there_and_stops(self, served: tuple[Broker, str]) -> None:
        """30 messages when the query starts; 5 more sent before each batch are
        not taken: the query stops after 3 batches (12 + 12 + 6)."""
        broker, endpoint = served
        queue = new_queue(broker)
        queue.send_batch([f"a{i}" for i in range(10)])
        queue.send_batch([f"a{i}" for i in range(10, 20)])
        queue.send_batch([f"a{i}" for i in range(20, 30)])
        r = reader(options(endpoint, queue, maxMessagesPerBatch="12", heartbeatSeconds="0"))
        start = r.initialOffset()
        r.prepareForTriggerAvailableNow()
        taken: list[str] = []
        batches = 0
        for n in range(10):
            queue.send_batch([f"late{n}-{i}" for i in range(5)])
            end = r.latestOffset(start, ReadAllAvailable())
            if end == start:
                break
            batches += 1
            taken += bodies_of(r, start, end)
            r.commit(end)
            start = end
        assert batches == 3
        assert sorted(taken) == sorted(f"a{i}" for i in range(30))


class TestSilentFailures:
    def test_heartbeat_failure_is_logged_at_the_next_commit(
        self, served: tuple[Broker, str], wrapped: list[Wrapped], caplog: pytest.LogCaptureFixture
    ) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        queue.send("m")
        r = reader(options(endpoint, queue, visibilityTimeout="10", heartbeatSeconds="1"))
        start = r.initialOffset()
        end = r.latestOffset(start, ReadAllAvailable())
        wrapped[-1].fail_visibility = True
        threading.Event().wait(2.5)
        with caplog.at_level(logging.WARNING, logger="sqsqueue.spark._reader"):
            r.commit(end)
        r.stop()
        [record] = [r for r in caplog.records if r.name == "sqsqueue.spark._reader"]
        assert "the heartbeat could not extend the visibility" in record.getMessage()
        assert "injected: connection reset" in record.getMessage()
        assert "may become visible before their batch is committed" in record.getMessage()

    def test_failed_deletes_are_logged(
        self, served: tuple[Broker, str], wrapped: list[Wrapped], caplog: pytest.LogCaptureFixture
    ) -> None:
        broker, endpoint = served
        queue = new_queue(broker)
        queue.send_batch([f"m{i}" for i in range(3)])
        r = reader(options(endpoint, queue, heartbeatSeconds="0"))
        start = r.initialOffset()
        end = r.latestOffset(start, ReadAllAvailable())
        wrapped[-1].fail_deletes = True
        with caplog.at_level(logging.WARNING, logger="sqsqueue.spark._reader"):
            r.commit(end)
        [record] = [r for r in caplog.records if r.name == "sqsqueue.spark._reader"]
        text = record.getMessage()
        assert "3 message(s) of a committed micro-batch could not be deleted" in text
        assert "ReceiptHandleIsInvalid: injected" in text
        assert "come back after their visibility timeout" in text
