"""PurgeQueue on a standard queue (docs/aws-behaviour.md §§1.4, 2.1, 4)."""

from __future__ import annotations

import pytest

from sqsqueue import ManualClock, Queue, errors
from tests._helpers import counts


class TestPurge:
    """PurgeQueue deletes every message and is allowed once per 60 s."""

    def test_deletes_visible_in_flight_and_delayed(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: purge deletes visible, in-flight and delayed messages."""
        queue.send("visible")
        queue.send("in flight")
        queue.send("delayed", delay_seconds=100)
        queue.receive()
        assert counts(queue) == (1, 1, 1)
        queue.purge()
        assert counts(queue) == (0, 0, 0)
        assert len(queue) == 0
        clock.advance(900)
        assert queue.receive(10) == []
        queue._check()

    def test_old_handles_after_purge(self, queue: Queue) -> None:
        """Section 8: after a purge, deleting with an old handle succeeds (the message is gone)
        and changing its visibility says the message does not exist."""
        queue.send("a")
        [m] = queue.receive()
        queue.purge()
        queue.delete(m.receipt_handle)
        with pytest.raises(errors.InvalidParameterValue):
            queue.change_visibility(m.receipt_handle, 10)
        queue._check()

    def test_second_purge_within_60_seconds(self, clock: ManualClock, queue: Queue) -> None:
        """Section 1.4: a second purge within 60 s -> PurgeQueueInProgress, HTTP 403, AWS text."""
        queue.purge()
        clock.advance(59.999)
        queue.send("kept")
        with pytest.raises(errors.PurgeQueueInProgress) as info:
            queue.purge()
        assert info.value.http_status == 403
        assert info.value.query_code == "AWS.SimpleQueueService.PurgeQueueInProgress"
        assert info.value.message == (
            "Only one PurgeQueue operation on jobs is allowed every 60 seconds."
        )
        assert len(queue) == 1  # the refused purge deleted nothing
        queue._check()

    def test_allowed_again_after_60_seconds(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: once 60 s have passed since the last purge, purging works again."""
        queue.purge()
        clock.advance(60)
        queue.send("a")
        queue.purge()
        assert len(queue) == 0
        with pytest.raises(errors.PurgeQueueInProgress):
            queue.purge()
        queue._check()

    def test_refused_purge_does_not_restart_window(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: the 60 s window counts from the last successful purge."""
        queue.purge()
        clock.advance(30)
        with pytest.raises(errors.PurgeQueueInProgress):
            queue.purge()
        clock.advance(30)
        queue.purge()

    def test_queue_name_in_message(self, clock: ManualClock) -> None:
        """Section 1.4: the PurgeQueueInProgress text names the queue."""
        q = Queue("orders-2", clock=clock)
        q.purge()
        with pytest.raises(errors.PurgeQueueInProgress) as info:
            q.purge()
        assert "on orders-2 is allowed" in info.value.message

    def test_queue_usable_after_purge(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: messages sent after the purge are delivered normally."""
        queue.send("before")
        queue.purge()
        queue.send("after")
        [m] = queue.receive()
        assert m.body == "after"
        assert m.attributes["ApproximateReceiveCount"] == "1"
        queue._check()
