"""Delays, retention and message counts on a standard queue (sections 2.1, 4, 5, 10)."""

from __future__ import annotations

import pytest

from sqsqueue import ManualClock, Queue, SystemClock
from sqsqueue.errors import InvalidParameterValue
from tests._helpers import counts

START = 1_700_000_000.0
FOUR_DAYS = 345_600


class TestMessageDelay:
    """Per-message DelaySeconds hides a new message until its delay ends (section 2.1)."""

    def test_per_message_delay(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: a message sent with DelaySeconds=10 is receivable at exactly +10 s."""
        queue.send("a", delay_seconds=10)
        assert counts(queue) == (0, 0, 1)
        assert queue.receive() == []
        clock.advance(9.999)
        assert queue.receive() == []
        assert counts(queue) == (0, 0, 1)
        clock.advance(0.001)
        assert counts(queue) == (1, 0, 0)
        assert [m.body for m in queue.receive()] == ["a"]
        queue._check()

    def test_maximum_delay(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: the longest delay, 900 s."""
        queue.send("a", delay_seconds=900)
        clock.advance(899)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1

    def test_queue_delay(self, clock: ManualClock) -> None:
        """Section 2.1: without a per-message value the queue's DelaySeconds applies."""
        q = Queue("q", clock=clock, delay_seconds=30)
        q.send("a")
        assert counts(q) == (0, 0, 1)
        clock.advance(29)
        assert q.receive() == []
        clock.advance(1)
        assert len(q.receive()) == 1
        q._check()

    def test_message_delay_overrides_queue_delay(self, clock: ManualClock) -> None:
        """Section 10: per-message DelaySeconds overrides the queue delay, both shorter (0)
        and longer."""
        q = Queue("q", clock=clock, delay_seconds=30)
        q.send("now", delay_seconds=0)
        q.send("later", delay_seconds=60)
        q.send("default")
        assert counts(q) == (1, 0, 2)
        assert [m.body for m in q.receive(10, visibility_timeout=3_600)] == ["now"]
        clock.advance(29)
        assert q.receive(10) == []
        clock.advance(1)
        assert [m.body for m in q.receive(10, visibility_timeout=3_600)] == ["default"]
        clock.advance(30)
        assert [m.body for m in q.receive(10, visibility_timeout=3_600)] == ["later"]
        q._check()

    def test_queue_delay_change_not_retroactive(self, clock: ManualClock) -> None:
        """Section 10: changing the queue's DelaySeconds does not affect messages already sent
        on a standard queue (in either direction)."""
        q = Queue("q", clock=clock, delay_seconds=60)
        q.send("long")
        q.set_attributes(delay_seconds=0)
        q.send("short")
        assert counts(q) == (1, 0, 1)
        assert [m.body for m in q.receive(10, visibility_timeout=3_600)] == ["short"]
        q.set_attributes(delay_seconds=900)
        clock.advance(59)
        assert q.receive(10) == []
        clock.advance(1)
        assert [m.body for m in q.receive(10)] == ["long"]
        q._check()

    def test_delay_then_visibility(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: the visibility timeout starts at the receive, after the delay."""
        queue.send("a", delay_seconds=10)
        clock.advance(10)
        queue.receive()
        assert counts(queue) == (0, 1, 0)
        clock.advance(29)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1
        queue._check()


class TestRetention:
    """Messages expire MessageRetentionPeriod after they were sent (section 2.1, 4)."""

    def test_default_four_days(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: the default retention is 345,600 s; a message expires exactly at
        sent + retention."""
        queue.send("a")
        clock.advance(FOUR_DAYS - 0.001)
        assert len(queue) == 1
        assert counts(queue) == (1, 0, 0)
        clock.advance(0.001)
        assert len(queue) == 0
        assert counts(queue) == (0, 0, 0)
        assert queue.receive() == []
        queue._check()

    def test_expires_while_in_flight(self, clock: ManualClock) -> None:
        """Section 2.1: retention applies in every state, in flight included."""
        q = Queue("q", clock=clock, message_retention_period=60)
        q.send("a")
        [m] = q.receive(visibility_timeout=600)
        assert counts(q) == (0, 1, 0)
        clock.advance(60)
        assert counts(q) == (0, 0, 0)
        assert len(q) == 0
        q.delete(m.receipt_handle)  # deleting an expired message is harmless
        q._check()

    def test_expires_while_delayed(self, clock: ManualClock) -> None:
        """Section 2.1: retention counts from the send, even for a delayed message."""
        q = Queue("q", clock=clock, message_retention_period=60)
        q.send("a", delay_seconds=900)
        assert counts(q) == (0, 0, 1)
        clock.advance(60)
        assert counts(q) == (0, 0, 0)
        q._check()

    def test_each_message_its_own_clock(self, clock: ManualClock) -> None:
        """Section 4: each message expires at its own send time + retention."""
        q = Queue("q", clock=clock, message_retention_period=60)
        q.send("a")
        clock.advance(30)
        q.send("b")
        clock.advance(30)
        assert [m.body for m in q.receive(10, visibility_timeout=0)] == ["b"]
        clock.advance(30)
        assert q.receive(10) == []
        q._check()

    def test_shortening_retention_expires_stored_messages(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Section 2.1: reducing MessageRetentionPeriod can expire existing messages."""
        queue.send("old")
        clock.advance(100)
        queue.send("new")
        queue.set_attributes(message_retention_period=60)
        assert len(queue) == 1
        assert [m.body for m in queue.receive(10)] == ["new"]
        clock.advance(60)
        assert len(queue) == 0
        queue._check()

    def test_lengthening_retention_keeps_messages(self, clock: ManualClock) -> None:
        """Section 5: a longer retention keeps a message that the old one would have dropped."""
        q = Queue("q", clock=clock, message_retention_period=60)
        q.send("a")
        clock.advance(30)
        q.set_attributes(message_retention_period=120)
        clock.advance(89)
        assert len(q) == 1
        clock.advance(1)
        assert len(q) == 0
        q._check()

    def test_dead_letter_queue_on_another_clock_is_refused(self) -> None:
        """Issue 12: a standalone DLQ on another clock than its source would time
        dead letters on the wrong clock (one running ahead expired them at once,
        silently). It is refused, and no queue is half made."""
        dlq = Queue("dlq", clock=ManualClock(start=START))
        with pytest.raises(InvalidParameterValue, match="same clock"):
            Queue("src", clock=ManualClock(start=START + 100), dead_letter_queue=dlq)
        with pytest.raises(InvalidParameterValue, match="same clock"):
            Queue("src", clock=SystemClock(), dead_letter_queue=dlq)
        assert counts(dlq) == (0, 0, 0)

    def test_a_source_without_a_clock_runs_on_its_dead_letter_queues(self) -> None:
        """The docs/queues.md idiom ``Queue("jobs", dead_letter_queue=dlq)``: a source
        given no clock takes its DLQ's, and two wall clocks tell one time."""
        clock = ManualClock(start=START)
        dlq = Queue("dlq", clock=clock)
        src = Queue("src", dead_letter_queue=dlq, max_receive_count=1, visibility_timeout=1)
        assert src.clock is clock
        src.send("x")
        src.receive()
        clock.advance(2)
        assert src.receive() == []
        assert [m.body for m in dlq.receive()] == ["x"]
        on_the_wall = Queue("dlq")  # a SystemClock of its own
        Queue("src", dead_letter_queue=on_the_wall)
        Queue("src", clock=SystemClock(), dead_letter_queue=on_the_wall)

    @pytest.mark.parametrize("deleted", ["a", "b"])
    def test_out_of_order_dead_letter_then_retention(self, deleted: str) -> None:
        """Section 11: a dead letter keeps its first enqueue time, so it arrives in
        the DLQ older than a message already there. Deleting either one, then
        retention, works from the right times (the out-of-order index is kept
        exact: a regression once left a deleted message in it)."""
        clock = ManualClock(start=START)
        dlq = Queue("dlq", clock=clock, message_retention_period=300)
        src = Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count=1)
        src.send("a")  # enqueued at START
        clock.advance(100)
        dlq.send("b")  # enqueued at START + 100
        src.receive(visibility_timeout=0)
        assert src.receive() == []  # "a" moves to the DLQ, still enqueued at START
        got = {m.body: m for m in dlq.receive(max_messages=10, visibility_timeout=0)}
        assert set(got) == {"a", "b"}
        dlq.delete(got[deleted].receipt_handle)
        dlq._check()
        kept_until = START + (400 if deleted == "a" else 300)
        clock.advance_to(kept_until - 0.001)
        assert len(dlq) == 1
        clock.advance(0.001)
        assert len(dlq) == 0

    @pytest.mark.parametrize("purged", [False, True])
    def test_dead_letter_older_than_the_dead_letter_queues_last_look(self, purged: bool) -> None:
        """Section 11: a dead letter keeps its first enqueue time, so it can be older
        than the moment its DLQ last applied retention, even into an empty DLQ
        (purged or never used). It still expires by its own time: operations skip
        the retention check only while no stored record can have expired."""
        clock = ManualClock(start=START)
        dlq = Queue("dlq", clock=clock, message_retention_period=300)
        src = Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count=1)
        src.send("a")  # enqueued at START
        if purged:
            dlq.send("b")
            dlq.purge()
        clock.advance(200)
        assert dlq.receive() == []  # the DLQ looks, empty, at START + 200
        src.receive(visibility_timeout=0)
        assert src.receive() == []  # "a" moves to the DLQ, still enqueued at START
        dlq._check()
        clock.advance_to(START + 300 - 0.001)
        assert [m.body for m in dlq.receive(visibility_timeout=0)] == ["a"]
        clock.advance(0.001)
        assert dlq.receive() == []  # expired: the receive's own start applied retention
        assert len(dlq) == 0
        dlq._check()
        dlq._check()


class TestCounts:
    """ApproximateNumberOfMessages / NotVisible / Delayed are exact here (section 5)."""

    def test_counts_at_each_step(self, clock: ManualClock, queue: Queue) -> None:
        """Section 5: visible, in-flight and delayed counts follow every transition."""
        assert counts(queue) == (0, 0, 0)
        queue.send("a")
        queue.send("b")
        queue.send("c", delay_seconds=20)
        assert counts(queue) == (2, 0, 1)
        [m] = queue.receive()
        assert counts(queue) == (1, 1, 0 + 1)
        queue.delete(m.receipt_handle)
        assert counts(queue) == (1, 0, 1)
        [m] = queue.receive(visibility_timeout=10)
        assert counts(queue) == (0, 1, 1)
        clock.advance(10)
        assert counts(queue) == (1, 0, 1)
        clock.advance(10)
        assert counts(queue) == (2, 0, 0)
        ms = queue.receive(10)
        assert len(ms) == 2
        assert counts(queue) == (0, 2, 0)
        queue.change_visibility(ms[0].receipt_handle, 0)
        assert counts(queue) == (1, 1, 0)
        for x in ms:
            queue.delete(x.receipt_handle)
        assert counts(queue) == (0, 0, 0)
        assert len(queue) == 0
        queue._check()

    def test_len_counts_every_state(self, queue: Queue) -> None:
        """Section 5: len(queue) counts visible, in-flight and delayed messages."""
        queue.send("a")
        queue.send("b", delay_seconds=5)
        queue.send("c")
        queue.receive()
        assert len(queue) == 3
        assert sum(counts(queue)) == 3
        queue._check()
