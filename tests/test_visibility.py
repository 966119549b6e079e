"""Visibility timeouts on a standard queue (docs/aws-behaviour.md §§4 and 8)."""

from __future__ import annotations

import pytest

from sqsqueue import ManualClock, Queue, errors
from tests._helpers import counts

START = 1_700_000_000.0


class TestQueueVisibilityTimeout:
    """A received message is hidden for the queue's VisibilityTimeout (default 30 s)."""

    def test_default_is_30_seconds(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: default 30 s; hidden until exactly 30 s after the receive."""
        queue.send("a")
        [m] = queue.receive()
        assert queue.receive() == []
        clock.advance(29.999)
        assert queue.receive() == []
        assert counts(queue) == (0, 1, 0)
        clock.advance(0.001)
        assert counts(queue) == (1, 0, 0)
        [again] = queue.receive()
        assert again.message_id == m.message_id
        assert again.body == "a"
        queue._check()

    def test_queue_attribute(self, clock: ManualClock) -> None:
        """Section 4: the queue's VisibilityTimeout attribute sets the hiding time."""
        q = Queue("q", clock=clock, visibility_timeout=60)
        q.send("a")
        q.receive()
        clock.advance(59)
        assert q.receive() == []
        clock.advance(1)
        assert len(q.receive()) == 1
        q._check()

    def test_set_attributes_applies_to_next_receive(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: a new queue timeout applies to later receives, not to messages in flight."""
        queue.send("a")
        queue.send("b")
        queue.receive()  # a: hidden for 30 s
        queue.set_attributes(visibility_timeout=100)
        [b] = queue.receive()  # b: hidden for 100 s
        assert b.body == "b"
        clock.advance(30)
        [a] = queue.receive(visibility_timeout=0)
        assert a.body == "a"
        clock.advance(69)
        assert [m.body for m in queue.receive(10, visibility_timeout=0)] == ["a"]
        clock.advance(1)
        assert sorted(m.body for m in queue.receive(10)) == ["a", "b"]
        queue._check()

    def test_zero_queue_timeout(self, clock: ManualClock) -> None:
        """Section 4: a queue VisibilityTimeout of 0 leaves received messages visible."""
        q = Queue("q", clock=clock, visibility_timeout=0)
        q.send("a")
        assert len(q.receive()) == 1
        assert len(q.receive()) == 1
        assert counts(q) == (1, 0, 0)
        q._check()


class TestReceiveVisibilityTimeout:
    """ReceiveMessage's VisibilityTimeout overrides the queue's for that receive (section 2.1)."""

    def test_override(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: the receive's timeout applies to the returned messages."""
        queue.send("a")
        queue.receive(visibility_timeout=5)
        clock.advance(4.999)
        assert queue.receive() == []
        clock.advance(0.001)
        assert len(queue.receive()) == 1
        queue._check()

    def test_override_longer_than_queue(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: an override can be longer than the queue's 30 s."""
        queue.send("a")
        queue.receive(visibility_timeout=300)
        clock.advance(299)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1

    def test_zero_leaves_message_receivable(self, queue: Queue) -> None:
        """Section 8: VisibilityTimeout=0 on receive returns the message and leaves it
        immediately receivable (AWS-observed)."""
        queue.send("a")
        [first] = queue.receive(visibility_timeout=0)
        assert counts(queue) == (1, 0, 0)
        [second] = queue.receive(visibility_timeout=0)
        assert second.message_id == first.message_id
        assert second.attributes["ApproximateReceiveCount"] == "2"
        queue._check()

    def test_next_receive_uses_queue_value_again(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: a receive's override is not remembered; the next receive uses 30 s."""
        queue.send("a")
        queue.receive(visibility_timeout=5)
        clock.advance(5)
        queue.receive()
        clock.advance(29)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1


class TestChangeVisibility:
    """ChangeMessageVisibility counts from the time of the call (section 8)."""

    def test_counts_from_the_call(self, clock: ManualClock) -> None:
        """Section 8: 60 s queue timeout, 15 s elapsed, change to 10 -> visible at 25 s."""
        q = Queue("q", clock=clock, visibility_timeout=60)
        q.send("a")
        [m] = q.receive()
        clock.advance(15)
        q.change_visibility(m.receipt_handle, 10)
        clock.advance(9.999)  # t = 24.999
        assert q.receive() == []
        assert counts(q) == (0, 1, 0)
        clock.advance(0.001)  # t = 25
        assert counts(q) == (1, 0, 0)
        [again] = q.receive()
        assert again.message_id == m.message_id
        q._check()

    def test_extend(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: changing to a longer timeout keeps the message hidden past the old end."""
        queue.send("a")
        [m] = queue.receive()
        clock.advance(20)
        queue.change_visibility(m.receipt_handle, 100)
        clock.advance(99)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1
        queue._check()

    def test_zero_makes_visible_at_once(self, queue: Queue) -> None:
        """Section 8: VisibilityTimeout=0 terminates visibility: receivable at once."""
        queue.send("a")
        [m] = queue.receive()
        assert counts(queue) == (0, 1, 0)
        queue.change_visibility(m.receipt_handle, 0)
        assert counts(queue) == (1, 0, 0)
        [again] = queue.receive()
        assert again.message_id == m.message_id
        queue._check()

    def test_applies_only_to_that_receipt(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: the changed timeout is not remembered; the next receive uses 30 s again."""
        queue.send("a")
        [m] = queue.receive()
        queue.change_visibility(m.receipt_handle, 500)
        clock.advance(500)
        queue.receive()
        clock.advance(29)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1
        queue._check()

    def test_only_that_message(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: changing one message's timeout does not touch the others in flight."""
        queue.send("a")
        queue.send("b")
        ms = queue.receive(2)
        assert len(ms) == 2
        queue.change_visibility(ms[0].receipt_handle, 0)
        [again] = queue.receive(10)
        assert again.message_id == ms[0].message_id
        assert counts(queue) == (0, 2, 0)
        queue._check()

    def test_repeated_changes(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: each change counts from its own call; the last one wins."""
        queue.send("a")
        [m] = queue.receive()
        queue.change_visibility(m.receipt_handle, 100)
        clock.advance(10)
        queue.change_visibility(m.receipt_handle, 5)
        clock.advance(5)
        assert len(queue.receive()) == 1
        queue._check()


class TestTwelveHourBudget:
    """Visibility can never extend past 12 hours from the receive (sections 4 and 8)."""

    def test_full_budget_right_after_receive(self, queue: Queue) -> None:
        """Section 4: right after the receive, 43,200 s is still within the budget."""
        queue.send("a")
        [m] = queue.receive()
        queue.change_visibility(m.receipt_handle, 43_200)
        assert counts(queue) == (0, 1, 0)
        queue._check()

    def test_change_after_five_seconds(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: 5 s after the receive, 43,195 works and 43,200 fails with
        InvalidParameterValue (no clamping)."""
        queue.send("a")
        [m] = queue.receive()
        clock.advance(5)
        with pytest.raises(errors.InvalidParameterValue) as info:
            queue.change_visibility(m.receipt_handle, 43_200)
        assert "VisibilityTimeout" in info.value.message
        with pytest.raises(errors.InvalidParameterValue):
            queue.change_visibility(m.receipt_handle, 43_196)
        # The refused changes did nothing: the 30 s timeout still ends at t = 30.
        clock.advance(25)
        assert counts(queue) == (1, 0, 0)
        [m] = queue.receive()
        clock.advance(5)
        queue.change_visibility(m.receipt_handle, 43_195)
        clock.advance(43_194)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1
        queue._check()

    def test_extending_does_not_reset_budget(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: "Extending the visibility timeout does not reset the 12 hour maximum"."""
        queue.send("a")
        [m] = queue.receive()
        clock.advance(10)
        queue.change_visibility(m.receipt_handle, 3_600)
        clock.advance(3_000)
        with pytest.raises(errors.InvalidParameterValue):
            queue.change_visibility(m.receipt_handle, 43_200 - 3_010 + 1)
        queue.change_visibility(m.receipt_handle, 43_200 - 3_010)
        queue._check()

    def test_new_receive_starts_a_new_budget(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: the budget belongs to the receive that returned the message, so a later
        receive starts a fresh 12 hours (interpretation, UNCONFIRMED)."""
        queue.send("a")
        [first] = queue.receive(visibility_timeout=43_200)
        clock.advance(43_200)
        [m2] = queue.receive()
        assert m2.message_id == first.message_id
        queue.change_visibility(m2.receipt_handle, 43_200)
        queue._check()

    def test_receive_with_maximum_timeout(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: a receive may ask for the full 43,200 s; the message returns after it."""
        queue.send("a")
        queue.receive(visibility_timeout=43_200)
        clock.advance(43_199)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1


class TestRedeliveryOrder:
    """Standard queues keep send order on a best-effort basis: a message that is
    visible again after its visibility timeout is delivered before visible
    messages sent after it (recorded against real AWS, issue 12 §6)."""

    def test_expired_message_comes_before_later_sends(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Issue 12 §6: A is received and not deleted; B and C are sent while it
        is in flight; once A's 30 s are over, a receive returns A, B, C."""
        queue.send("A")
        [a] = queue.receive()
        clock.advance(10)
        queue.send("B")
        queue.send("C")
        clock.advance(20)
        got = queue.receive(10)
        assert [m.body for m in got] == ["A", "B", "C"]
        assert got[0].message_id == a.message_id
        assert got[0].attributes["ApproximateReceiveCount"] == "2"
        queue._check()

    def test_several_expired_messages_keep_their_send_order(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Issue 12 §6: messages visible again are ordered by send time, not by
        when their timeouts ended, and come before anything sent after them;
        a message made visible with change_visibility(0) takes its place too."""
        for body in ("m1", "m2", "m3"):
            queue.send(body)
            clock.advance(1)
        first = {m.body: m for m in queue.receive(3, visibility_timeout=60)}
        queue.send("late")
        queue.change_visibility(first["m3"].receipt_handle, 5)  # visible first
        queue.change_visibility(first["m2"].receipt_handle, 0)
        clock.advance(60)
        assert [m.body for m in queue.receive(10)] == ["m1", "m2", "m3", "late"]
        queue._check()

    def test_delayed_message_keeps_its_due_time(self, clock: ManualClock, queue: Queue) -> None:
        """Never-received messages are still ordered by when they became
        receivable: a delayed one comes after undelayed ones sent before it ends,
        and after an expired message sent before those."""
        queue.send("early")
        queue.receive(visibility_timeout=5)
        queue.send("delayed", delay_seconds=10)
        clock.advance(1)
        queue.send("plain")
        clock.advance(10)
        assert [m.body for m in queue.receive(10)] == ["early", "plain", "delayed"]
        queue._check()

    def test_dead_letter_threshold_skips_without_reordering(self, clock: ManualClock) -> None:
        """An exhausted message that a receive moves to the DLQ leaves the others
        in order (section 11)."""
        dlq = Queue("dlq", clock=clock)
        src = Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count=1)
        src.send("old")
        src.receive(visibility_timeout=5)
        src.send("a")
        src.send("b")
        src.receive(visibility_timeout=5)  # "a" received once
        clock.advance(5)
        assert [m.body for m in src.receive(10)] == ["b"]
        assert sorted(m.body for m in dlq.receive(10)) == ["a", "old"]
        src._check()
