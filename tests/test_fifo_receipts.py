"""FifoQueue receipt handles and the in-flight limit (``docs/aws-behaviour.md``
sections 4, 8 and 9)."""

from __future__ import annotations

import pytest

import sqsqueue._limits
from sqsqueue import FifoQueue, ManualClock, Message
from sqsqueue.errors import InvalidParameterValue


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


def expired(handle: str) -> str:
    """AWS's text for a FIFO handle used outside its visibility window (section 8)."""
    return (
        f"Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt "
        "handle has expired."
    )


class TestReceiptHandles:
    """A FIFO receipt handle acts only while its message is in flight under it."""

    def test_delete_inside_the_visibility_window_succeeds(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 8: a FIFO delete within the visibility timeout deletes."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive()
        clock.advance(29.999)
        fifo.delete(m.receipt_handle)
        assert len(fifo) == 0
        fifo._check()

    @pytest.mark.parametrize("elapsed", [30, 31, 3600])
    def test_delete_after_the_visibility_expired_is_refused(
        self, fifo: FifoQueue, clock: ManualClock, elapsed: int
    ) -> None:
        """Section 8: FIFO, handle used after its visibility expired:
        DeleteMessage -> InvalidParameterValue `Value <h> for parameter
        ReceiptHandle is invalid. Reason: The receipt handle has expired.`
        (AWS-obs 2025-03-28); the failed call changes nothing."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive()
        clock.advance(elapsed)
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.delete(m.receipt_handle)
        assert exc.value.message == expired(m.receipt_handle)
        assert len(fifo) == 1
        [again] = fifo.receive()
        assert again.message_id == m.message_id
        assert again.attributes["ApproximateReceiveCount"] == "2"
        fifo._check()

    def test_delete_inside_an_extended_window_succeeds(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 8: if extended via ChangeMessageVisibility before expiry,
        deletion inside the extended window succeeds (AWS-obs 2025-10-05)."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive()
        clock.advance(20)
        fifo.change_visibility(m.receipt_handle, 60)
        clock.advance(59)  # +79: past the original 30 s, inside the new window
        fifo.delete(m.receipt_handle)
        assert len(fifo) == 0
        fifo._check()

    def test_delete_after_the_extended_window_is_refused(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 8: the extended window ends too; the handle then has expired."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive()
        fifo.change_visibility(m.receipt_handle, 60)
        clock.advance(60)
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.delete(m.receipt_handle)
        assert exc.value.message == expired(m.receipt_handle)
        assert len(fifo) == 1

    def test_old_handle_after_a_new_receive_is_refused(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 8: only the latest receipt acts on a FIFO message ("always use
        the latest receipt handle"); the refusal changes nothing."""
        fifo.send("m", group_id="g1")
        [old] = fifo.receive()
        clock.advance(30)
        [new] = fifo.receive()
        assert new.receipt_handle != old.receipt_handle
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.delete(old.receipt_handle)
        assert exc.value.message == expired(old.receipt_handle)
        assert len(fifo) == 1
        assert fifo.receive() == []  # still in flight under the new handle
        fifo.delete(new.receipt_handle)
        assert len(fifo) == 0
        fifo._check()

    def test_refused_delete_keeps_the_group_order(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: after a refused delete the message is still the head of
        its group and is delivered again before the rest."""
        fifo.send("m1", group_id="g1")
        fifo.send("m2", group_id="g1")
        [m] = fifo.receive()
        clock.advance(30)
        with pytest.raises(InvalidParameterValue):
            fifo.delete(m.receipt_handle)
        assert bodies(fifo.receive(10)) == ["m1", "m2"]
        fifo._check()

    def test_deleting_a_deleted_message_succeeds(self, fifo: FifoQueue) -> None:
        """Section 8: DeleteMessage again with the same handle succeeds
        (idempotent, AWS-obs)."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive()
        fifo.delete(m.receipt_handle)
        fifo.delete(m.receipt_handle)
        assert len(fifo) == 0
        fifo._check()


class TestInFlightLimit:
    """At the in-flight limit a FIFO receive finds nothing, without an error."""

    @pytest.fixture(autouse=True)
    def small_limit(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(sqsqueue._limits, "IN_FLIGHT_MAX", 3)

    def test_short_poll_at_the_limit_returns_nothing(self, fifo: FifoQueue) -> None:
        """Section 4: FIFO in-flight limit reached -> no error, "processing may
        be impacted": a short poll returns no messages."""
        for i in range(5):
            fifo.send(f"m{i}", group_id=f"g{i}")
        assert len(fifo.receive(10)) == 3
        assert fifo.receive(10) == []
        fifo._check()

    def test_receive_is_capped_at_the_room_left(self, fifo: FifoQueue) -> None:
        """Section 4: a receive never takes the queue past the in-flight limit."""
        for i in range(5):
            fifo.send(f"m{i}", group_id=f"g{i}")
        assert bodies(fifo.receive(2)) == ["m0", "m1"]
        assert bodies(fifo.receive(10)) == ["m2"]
        assert fifo.receive(10) == []

    def test_room_comes_back_after_a_delete(self, fifo: FifoQueue) -> None:
        """Section 4: the limit counts in-flight messages; deleting one frees room."""
        for i in range(5):
            fifo.send(f"m{i}", group_id=f"g{i}")
        got = fifo.receive(10)
        fifo.delete(got[0].receipt_handle)
        assert bodies(fifo.receive(10)) == ["m3"]
        fifo._check()

    @pytest.mark.usefixtures("autojump")
    def test_long_poll_at_the_limit_ends_empty(self, fifo: FifoQueue, clock: ManualClock) -> None:
        """Section 4: at the in-flight limit long polling gives empty responses,
        not errors."""
        for i in range(5):
            fifo.send(f"m{i}", group_id=f"g{i}")
        fifo.receive(10, visibility_timeout=100)
        assert fifo.receive(10, wait_time_seconds=20) == []
        assert clock.now() == 1_700_000_020.0
