"""CloudWatch's SQS metrics: ``Queue.metrics()`` and ``Broker.metrics()``
(docs/console.md, "Metrics").

A scripted sequence on the virtual clock, each metric checked against what
CloudWatch's definitions say it would report (the definitions are quoted in
docs/console.md): counters count API events (a duplicate delete with a valid
handle counts; a dead-lettered message is not "sent" to its DLQ; a
deduplicated FIFO send is not sent), gauges are the exact counts, and the
age of the oldest message counts, in a standard DLQ, from the move
(docs/aws-behaviour.md §10: the enqueue time is kept for retention only).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sqsqueue import Broker, Faults, FifoQueue, ManualClock, Queue, QueueMetrics

START = 1_700_000_000.0


def cloudwatch(q: Queue | FifoQueue) -> dict[str, float]:
    return q.metrics().as_cloudwatch()


@pytest.fixture
def broker(clock: ManualClock) -> Broker[ManualClock]:
    return Broker(clock=clock)


def test_a_scripted_sequence(broker: Broker[ManualClock]) -> None:
    clock = broker.clock
    dlq = broker.create_queue("orders-dlq")
    orders = broker.create_queue(
        "orders", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 2}
    )
    for body in ("a" * 10, "b" * 20, "c" * 30):
        orders.send(body)
    orders.send(
        "d" * 30, message_attributes={"k": "vvvvv"}, delay_seconds=60
    )  # 30 + 1 + 6 + 5 bytes
    a, _b, _c = orders.receive(max_messages=10, visibility_timeout=30)
    orders.delete(a.receipt_handle)
    orders.delete(a.receipt_handle)  # a duplicate delete with a valid handle counts too
    assert orders.receive() == []  # an empty receive
    clock.advance(10)
    assert cloudwatch(orders) == {
        "NumberOfMessagesSent": 4,
        "NumberOfMessagesReceived": 3,
        "NumberOfMessagesDeleted": 2,
        "NumberOfEmptyReceives": 1,
        "SentMessageSize": (10 + 20 + 30 + 42) / 4,
        "ApproximateNumberOfMessagesVisible": 0,
        "ApproximateNumberOfMessagesNotVisible": 2,
        "ApproximateNumberOfMessagesDelayed": 1,
        "ApproximateAgeOfOldestMessage": 10,
    }
    assert orders.metrics().sent_message_size_sum == 102
    clock.advance(50)  # t=60: the delay and the visibility timeouts are over
    got = cloudwatch(orders)
    assert (got["ApproximateNumberOfMessagesVisible"], got["ApproximateAgeOfOldestMessage"]) == (
        3,
        60,
    )
    assert len(orders.receive(max_messages=10, visibility_timeout=30)) == 3
    clock.advance(30)  # t=90: b and c were received twice: the next receive moves them
    [d] = orders.receive(max_messages=10)
    assert d.body == "d" * 30
    clock.advance(15)  # t=105
    got = cloudwatch(orders)
    assert got["NumberOfMessagesReceived"] == 7
    assert got["ApproximateNumberOfMessagesNotVisible"] == 1
    assert got["ApproximateAgeOfOldestMessage"] == 105
    # The DLQ: its messages were not "sent" to it; their age counts from the move
    # at t=90, though retention still counts from the first send at t=0.
    assert cloudwatch(dlq) == {
        "NumberOfMessagesSent": 0,
        "NumberOfMessagesReceived": 0,
        "NumberOfMessagesDeleted": 0,
        "NumberOfEmptyReceives": 0,
        "SentMessageSize": 0,
        "ApproximateNumberOfMessagesVisible": 2,
        "ApproximateNumberOfMessagesNotVisible": 0,
        "ApproximateNumberOfMessagesDelayed": 0,
        "ApproximateAgeOfOldestMessage": 15,
    }
    assert set(broker.metrics()) == {"orders", "orders-dlq"}
    assert broker.metrics()["orders"] == orders.metrics()


def test_the_age_follows_the_message_that_arrived_first(broker: Broker[ManualClock]) -> None:
    """Deleting the oldest makes the next one the oldest; an empty queue is 0."""
    q = broker.create_queue("q")
    q.send("first")
    broker.clock.advance(100)
    q.send("second")
    broker.clock.advance(5)
    assert q.metrics().approximate_age_of_oldest_message == 105
    [m] = q.receive()
    q.delete(m.receipt_handle)
    assert q.metrics().approximate_age_of_oldest_message == 5
    [m] = q.receive()
    q.delete(m.receipt_handle)
    assert q.metrics().approximate_age_of_oldest_message == 0


def test_a_message_moved_by_a_redrive_is_sent(broker: Broker[ManualClock]) -> None:
    """A move task adds new messages to the destination: they count as sent
    there (docs/aws-behaviour.md §11: a moved message is a new message)."""
    dlq = broker.create_queue("dlq")
    src = broker.create_queue(
        "src", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}
    )
    src.send("x")
    src.receive(visibility_timeout=0)
    assert src.receive() == []  # moved to the DLQ
    broker.start_message_move_task(dlq.arn)
    broker.clock.advance(1)
    assert src.metrics().number_of_messages_sent == 2
    assert dlq.metrics().approximate_number_of_messages_visible == 0


def test_fifo_deduplicated_sends(broker: Broker[ManualClock]) -> None:
    q = broker.create_queue("e.fifo", fifo_queue=True)
    q.send("x", group_id="g", deduplication_id="1")
    q.send("x", group_id="g", deduplication_id="1")
    q.send("y", group_id="g", deduplication_id="2")
    got = cloudwatch(q)
    assert got["NumberOfMessagesSent"] == 2
    assert got["NumberOfDeduplicatedSentMessages"] == 1
    assert "NumberOfDeduplicatedSentMessages" not in cloudwatch(broker.create_queue("s"))


def test_an_empty_long_poll_counts_once(autojump: ManualClock) -> None:
    """NumberOfEmptyReceives counts ReceiveMessage calls, not the looks a long
    poll takes while it waits."""
    q = Queue("q", clock=autojump)
    assert q.receive(wait_time_seconds=20) == []
    assert q.metrics().number_of_empty_receives == 1


def test_an_empty_async_long_poll_counts_once(autojump: ManualClock) -> None:
    q = Queue("q", clock=autojump)

    async def main() -> None:
        assert await q.receive_async(wait_time_seconds=5) == []
        q.send("x")
        assert await q.receive_async(wait_time_seconds=5)

    asyncio.run(main())
    assert q.metrics().number_of_empty_receives == 1


def test_fault_lost_deletes_still_count(clock: ManualClock) -> None:
    """A delete that fault emulation loses was acknowledged: AWS would count it."""
    q = Queue("q", clock=clock, faults=Faults(duplicate_rate=1.0))
    q.send("x")
    [m] = q.receive()
    q.delete(m.receipt_handle)
    assert q.metrics().number_of_messages_deleted == 1
    assert len(q) == 1


def test_reading_metrics_changes_nothing(broker: Broker[ManualClock]) -> None:
    q = broker.create_queue("q")
    q.keep_history = True
    sent = q.send("x")
    before = q.inspect()
    for _ in range(3):
        q.metrics()
        broker.metrics()
    assert q.inspect() == before
    assert [e.event for e in q.history(sent.message_id)] == ["sent"]


def test_as_cloudwatch_names_every_metric() -> None:
    metrics = QueueMetrics("q", 1, 2, 3, 4, 10, 5, 6, 7, 8, 9)
    names: dict[str, Any] = metrics.as_cloudwatch()
    assert list(names) == [
        "NumberOfMessagesSent",
        "NumberOfMessagesReceived",
        "NumberOfMessagesDeleted",
        "NumberOfEmptyReceives",
        "SentMessageSize",
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateAgeOfOldestMessage",
        "NumberOfDeduplicatedSentMessages",
    ]
    assert names["SentMessageSize"] == 10
