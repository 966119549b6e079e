"""FifoQueue ordering and message-group locking: every observed case of
``docs/aws-behaviour.md`` §9, the FIFO message counts (section 5), long
polling on locked groups (section 12) and a scale sanity check."""

from __future__ import annotations

import threading

import pytest

from sqsqueue import FifoQueue, ManualClock, Message, SendEntry
from sqsqueue._clock import Waiter
from tests._helpers import counts

START = 1_700_000_000.0


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


def send_group(q: FifoQueue, group: str, n: int) -> None:
    for i in range(1, n + 1):
        q.send(f"{group}-m{i}", group_id=group)


class TestGroupOrdering:
    """Messages come back in send order within a group, groups filled first."""

    def test_receive_takes_as_many_of_one_group_as_possible(self, fifo: FifoQueue) -> None:
        """Section 9: send g1-m1, g2-m1, g1-m2, g1-m3; receive(10) -> g1-m1,
        g1-m2, g1-m3, g2-m1 (AWS-obs `test_fifo_receive_message_group_id_ordering`)."""
        for body, group in [("g1-m1", "g1"), ("g2-m1", "g2"), ("g1-m2", "g1"), ("g1-m3", "g1")]:
            fifo.send(body, group_id=group)
        assert bodies(fifo.receive(10)) == ["g1-m1", "g1-m2", "g1-m3", "g2-m1"]
        fifo._check()

    def test_partial_receive_locks_the_group_and_the_next_receive_takes_another(
        self, fifo: FifoQueue
    ) -> None:
        """Section 9: receive(2) -> g1-m1, g1-m2 locks group 1 (g1-m3, g1-m4
        withheld); the next receive(1) -> g2-m1 (AWS-obs
        `test_fifo_receive_message_visibility_timeout_shared_in_group`)."""
        send_group(fifo, "g1", 4)
        fifo.send("g2-m1", group_id="g2")
        assert bodies(fifo.receive(2)) == ["g1-m1", "g1-m2"]
        fifo._check()
        assert bodies(fifo.receive(1)) == ["g2-m1"]
        assert fifo.receive(10) == []
        fifo._check()

    def test_strict_order_within_groups_across_many_receives(self, fifo: FifoQueue) -> None:
        """Section 9: ordering is per MessageGroupId; different groups may
        interleave but each group is delivered strictly in send order."""
        sent: dict[str, list[str]] = {"a": [], "b": [], "c": []}
        for i in range(60):
            group = "abc"[(i * 7) % 3] if i % 4 else "a"
            body = f"{group}-{i}"
            fifo.send(body, group_id=group)
            sent[group].append(body)
        got: dict[str, list[str]] = {"a": [], "b": [], "c": []}
        for step in range(200):
            batch = fifo.receive(1 + step % 10)
            if not batch and not len(fifo):
                break
            for m in batch:
                got[m.attributes["MessageGroupId"]].append(m.body)
                fifo.delete(m.receipt_handle)
            fifo._check()
        assert got == sent

    def test_redelivered_head_comes_before_the_rest_of_its_group(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: a message whose visibility ended is delivered again before
        the later messages of its group."""
        send_group(fifo, "g1", 3)
        [first] = fifo.receive()
        assert fifo.receive(10) == []
        clock.advance(30)
        again = fifo.receive(10)
        assert bodies(again) == ["g1-m1", "g1-m2", "g1-m3"]
        assert again[0].message_id == first.message_id
        assert [m.attributes["ApproximateReceiveCount"] for m in again] == ["2", "1", "1"]
        fifo._check()

    def test_zero_visibility_receive_does_not_lock_the_group(self, fifo: FifoQueue) -> None:
        """Section 8: `VisibilityTimeout=0` on ReceiveMessage returns the message
        and leaves it immediately receivable, so its group stays open."""
        send_group(fifo, "g1", 2)
        assert bodies(fifo.receive(1, visibility_timeout=0)) == ["g1-m1"]
        assert bodies(fifo.receive(10)) == ["g1-m1", "g1-m2"]
        fifo._check()


class TestGroupLock:
    """A received message in flight holds back the rest of its group."""

    def test_locked_group_returns_nothing(self, fifo: FifoQueue) -> None:
        """Section 9: while any received message of a group is in flight, no
        further messages of that group are returned."""
        send_group(fifo, "g1", 3)
        assert bodies(fifo.receive(1)) == ["g1-m1"]
        assert fifo.receive(10) == []
        fifo._check()

    @pytest.mark.parametrize("p", [0, 1, 2])
    def test_extending_position_p_returns_only_the_messages_before_it(
        self, fifo: FifoQueue, clock: ManualClock, p: int
    ) -> None:
        """Section 9: receive 3 messages of a group, extend the visibility of the
        one at position p, let the others expire: the next receive returns only
        the messages before p (AWS-obs 2025-11-19)."""
        send_group(fifo, "g1", 4)
        received = fifo.receive(3)
        assert bodies(received) == ["g1-m1", "g1-m2", "g1-m3"]
        clock.advance(10)
        fifo.change_visibility(received[p].receipt_handle, 100)
        clock.advance(20)  # the other two expired at +30
        assert bodies(fifo.receive(10)) == [f"g1-m{i}" for i in range(1, p + 1)]
        fifo._check()
        clock.advance(80)  # the extended message is visible again at +110
        assert bodies(fifo.receive(10)) == ["g1-m1", "g1-m2", "g1-m3", "g1-m4"]
        fifo._check()

    def test_terminating_the_head_frees_it_while_the_others_keep_their_timeout(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: terminating the visibility of the first message of a locked
        group makes it available at once; the other in-flight messages keep
        their timeout (AWS-obs 2025-11-17)."""
        send_group(fifo, "g1", 4)
        received = fifo.receive(3)
        clock.advance(10)
        fifo.change_visibility(received[0].receipt_handle, 0)
        again = fifo.receive(10)
        assert bodies(again) == ["g1-m1"]  # m2, m3 still in flight; m4 waits
        assert counts(fifo) == (1, 3, 0)
        fifo.delete(again[0].receipt_handle)
        clock.advance(19)  # +29: m2 and m3 are still in flight
        assert fifo.receive(10) == []
        clock.advance(1)  # +30: their original timeout ends
        assert bodies(fifo.receive(10)) == ["g1-m2", "g1-m3", "g1-m4"]
        fifo._check()

    def test_shortening_the_head_frees_it_when_the_new_timeout_ends(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: changing the visibility of the first message of a locked
        group makes it available when the new timeout ends."""
        send_group(fifo, "g1", 2)
        received = fifo.receive(2)
        fifo.change_visibility(received[0].receipt_handle, 5)
        clock.advance(4)
        assert fifo.receive(10) == []
        clock.advance(1)
        assert bodies(fifo.receive(10)) == ["g1-m1"]
        fifo._check()

    def test_deleting_every_received_message_unlocks_at_once(self, fifo: FifoQueue) -> None:
        """Section 9: deleting all received messages of a group unlocks it
        immediately (AWS-obs `…after_delete`)."""
        send_group(fifo, "g1", 3)
        received = fifo.receive(2)
        for m in received:
            fifo.delete(m.receipt_handle)
        assert bodies(fifo.receive(10)) == ["g1-m3"]
        fifo._check()

    @pytest.mark.parametrize("kept", [0, 1])
    def test_deleting_only_some_keeps_the_group_locked(
        self, fifo: FifoQueue, clock: ManualClock, kept: int
    ) -> None:
        """Section 9: deleting only some of a group's received messages keeps it
        locked (AWS-obs `…after_partial_delete`)."""
        send_group(fifo, "g1", 3)
        received = fifo.receive(2)
        fifo.delete(received[1 - kept].receipt_handle)
        assert fifo.receive(10) == []
        clock.advance(30)
        assert bodies(fifo.receive(10)) == [received[kept].body, "g1-m3"]
        fifo._check()

    def test_sending_to_a_locked_group_does_not_unlock_it(self, fifo: FifoQueue) -> None:
        """Section 9: sending new messages to a locked group does not unlock it
        (AWS-obs `test_fifo_message_group_visibility`)."""
        fifo.send("g1-m1", group_id="g1")
        assert bodies(fifo.receive()) == ["g1-m1"]
        fifo.send("g1-m2", group_id="g1")
        fifo.send("g2-m1", group_id="g2")
        assert bodies(fifo.receive(10)) == ["g2-m1"]
        assert fifo.receive(10) == []
        fifo._check()

    def test_an_emptied_group_is_reusable(self, fifo: FifoQueue) -> None:
        """Section 9: an emptied group is reusable (AWS-obs
        `test_fifo_empty_message_groups_added_back_to_queue`)."""
        fifo.send("first", group_id="g1")
        [m] = fifo.receive()
        fifo.delete(m.receipt_handle)
        fifo._check()
        assert fifo.receive() == []
        fifo.send("second", group_id="g1")
        assert bodies(fifo.receive(10)) == ["second"]
        fifo._check()


class TestCounts:
    """Messages of a locked group still count as visible."""

    def test_locked_group_messages_count_as_visible(self, fifo: FifoQueue) -> None:
        """Section 5: messages in a locked group still count as
        ApproximateNumberOfMessages; 6 messages, 3 groups, 1 received from each
        of 2 groups -> 4 / 2 / 0 (AWS-obs 2025-09-26)."""
        for i in range(1, 3):
            for group in ("g1", "g2", "g3"):
                fifo.send(f"{group}-m{i}", group_id=group)
        assert bodies(fifo.receive(1)) == ["g1-m1"]
        assert bodies(fifo.receive(1)) == ["g2-m1"]
        assert counts(fifo) == (4, 2, 0)
        assert len(fifo) == 6
        fifo._check()


class _SignallingClock(ManualClock):
    """A ManualClock that never autojumps and says when a long poll waits."""

    def __init__(self) -> None:
        super().__init__(start=START, autojump_threshold=None)
        self.waiting = threading.Event()

    def wait(self, waiter: Waiter, deadline: float) -> bool:
        self.waiting.set()
        return super().wait(waiter, deadline)


class TestLongPolling:
    """A long poll on a FIFO queue wakes when a locked group opens."""

    @pytest.mark.parametrize("action", ["delete", "terminate"])
    def test_long_poll_wakes_when_another_thread_unlocks_the_group(self, action: str) -> None:
        """Section 12: a long poll returns as soon as a message is deliverable;
        deleting (section 9) or terminating the visibility of the head of a
        locked group makes its next message deliverable at once."""
        clock = _SignallingClock()
        q = FifoQueue("poll.fifo", clock=clock, content_based_deduplication=True)
        send_group(q, "g1", 2)
        [head] = q.receive()
        result: list[list[Message]] = []
        consumer = threading.Thread(
            target=lambda: result.append(q.receive(10, wait_time_seconds=20)), daemon=True
        )
        consumer.start()
        try:
            assert clock.waiting.wait(timeout=30), "the long poll never waited"
            assert result == []
            if action == "delete":
                q.delete(head.receipt_handle)
            else:
                q.change_visibility(head.receipt_handle, 0)
            consumer.join(timeout=30)
            assert not consumer.is_alive()
        finally:
            if consumer.is_alive():
                clock.advance(20)  # releases the consumer after a failure
                consumer.join(timeout=30)
        expected = ["g1-m2"] if action == "delete" else ["g1-m1", "g1-m2"]
        assert [bodies(r) for r in result] == [expected]
        assert clock.now() == START  # woken by the queue, not by time
        q._check()

    @pytest.mark.usefixtures("autojump")
    def test_long_poll_wakes_when_the_visibility_timeout_ends(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 12: messages become deliverable when visibility expires; a
        long poll wakes then (ManualClock autojumps to that moment)."""
        send_group(fifo, "g1", 2)
        fifo.receive(1, visibility_timeout=5)
        got = fifo.receive(10, wait_time_seconds=20)
        assert bodies(got) == ["g1-m1", "g1-m2"]
        assert clock.now() == START + 5
        fifo._check()

    @pytest.mark.usefixtures("autojump")
    def test_long_poll_on_a_locked_group_ends_empty_at_its_deadline(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 12: a long poll with nothing deliverable returns empty when
        the wait expires; a locked group's later messages are not deliverable."""
        send_group(fifo, "g1", 2)
        fifo.receive(1, visibility_timeout=60)
        assert fifo.receive(10, wait_time_seconds=20) == []
        assert clock.now() == START + 20


class TestScale:
    """Receive does not depend on scanning locked groups (functional check only)."""

    def test_receivable_group_found_among_many_locked_groups(self, clock: ManualClock) -> None:
        """Section 9 and design principle 5: with 100,000 groups each holding
        one in-flight message plus one group with a receivable message, a
        receive returns that message."""
        q = FifoQueue("big.fifo", clock=clock, content_based_deduplication=True)
        n = 100_000
        for start in range(0, n, 10):
            q.send_batch(
                [SendEntry(str(j), f"m{start + j}", group_id=f"g{start + j}") for j in range(10)]
            )
        in_flight = 0
        while batch := q.receive(10, visibility_timeout=3600):
            in_flight += len(batch)
        assert in_flight == n
        q.send("open", group_id="open")
        assert bodies(q.receive(10)) == ["open"]
        assert counts(q) == (0, n + 1, 0)
        q._check()
