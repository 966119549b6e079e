"""FifoQueue ReceiveRequestAttemptId: replaying a receive for 5 minutes
(``docs/aws-behaviour.md`` §§2.1, 4 and 9)."""

from __future__ import annotations

import pytest

from sqsqueue import FifoQueue, ManualClock, Message
from sqsqueue.errors import InvalidParameterValue


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


def handles(messages: list[Message]) -> list[str]:
    return [m.receipt_handle for m in messages]


def in_flight(q: FifoQueue) -> int:
    return int(
        q.get_attributes(["ApproximateNumberOfMessagesNotVisible"])[
            "ApproximateNumberOfMessagesNotVisible"
        ]
    )


def send_group(q: FifoQueue, group: str, n: int) -> None:
    for i in range(1, n + 1):
        q.send(f"{group}-m{i}", group_id=group)


class TestReplay:
    """A retry with the same attempt id returns the same messages and handles."""

    def test_retry_returns_the_same_messages_and_handles_while_in_flight(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: retrying with the same id returns the same messages and
        receipt handles, even if their visibility timeout has not expired."""
        send_group(fifo, "g1", 3)
        first = fifo.receive(2, receive_request_attempt_id="attempt-1")
        assert bodies(first) == ["g1-m1", "g1-m2"]
        assert fifo.receive(10) == []  # the group is locked
        clock.advance(10)
        retry = fifo.receive(2, receive_request_attempt_id="attempt-1")
        assert bodies(retry) == bodies(first)
        assert [m.message_id for m in retry] == [m.message_id for m in first]
        assert handles(retry) == handles(first)
        assert [m.attributes["ApproximateReceiveCount"] for m in retry] == ["1", "1"]
        fifo._check()

    def test_retry_resets_the_visibility_timeout(self, fifo: FifoQueue, clock: ManualClock) -> None:
        """Section 9: "If a retry occurs within the deduplication interval, it
        resets the visibility timeout."."""
        send_group(fifo, "g1", 2)
        first = fifo.receive(2, receive_request_attempt_id="a")
        clock.advance(20)
        fifo.receive(2, receive_request_attempt_id="a")
        clock.advance(20)  # +40: past the first timeout, inside the reset one
        assert in_flight(fifo) == 2
        assert fifo.receive(10) == []
        for m in first:
            fifo.delete(m.receipt_handle)  # FIFO handles work only while in flight
        assert len(fifo) == 0
        fifo._check()

    def test_replayed_handles_stay_valid_for_the_new_timeout_only(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: the reset timeout counts from the retry (section 8: FIFO
        handles expire with it)."""
        fifo.send("m", group_id="g1")
        [m] = fifo.receive(receive_request_attempt_id="a")
        clock.advance(20)
        fifo.receive(receive_request_attempt_id="a")
        clock.advance(30)  # +50: the reset timeout (from +20) ended
        assert in_flight(fifo) == 0
        with pytest.raises(InvalidParameterValue):
            fifo.delete(m.receipt_handle)

    def test_another_attempt_id_is_a_new_receive(self, fifo: FifoQueue) -> None:
        """Section 9: only a retry with the same id replays; another id is a new
        receive, which finds the group locked."""
        send_group(fifo, "g1", 2)
        fifo.receive(1, receive_request_attempt_id="a")
        assert fifo.receive(1, receive_request_attempt_id="b") == []


class TestFreshReceive:
    """When a replay is no longer possible the retry is a fresh receive."""

    def test_after_a_delete_the_retry_is_fresh(self, fifo: FifoQueue) -> None:
        """Section 9: the replay holds only if none of the messages was deleted;
        otherwise the retry is a fresh receive (UNCONFIRMED, section 14 item 4)."""
        send_group(fifo, "g1", 2)
        first = fifo.receive(2, receive_request_attempt_id="a")
        fifo.delete(first[0].receipt_handle)
        fifo.send("g2-m1", group_id="g2")
        retry = fifo.receive(10, receive_request_attempt_id="a")
        assert bodies(retry) == ["g2-m1"]  # g1-m2 is still in flight
        fifo._check()

    def test_after_a_visibility_change_the_retry_is_fresh(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: the replay holds only if no message had its visibility
        changed; otherwise the retry is a fresh receive (UNCONFIRMED)."""
        send_group(fifo, "g1", 2)
        first = fifo.receive(2, receive_request_attempt_id="a")
        clock.advance(5)
        fifo.change_visibility(first[0].receipt_handle, 0)
        retry = fifo.receive(10, receive_request_attempt_id="a")
        assert bodies(retry) == ["g1-m1"]  # g1-m2 keeps the group locked after it
        assert retry[0].receipt_handle != first[0].receipt_handle
        assert retry[0].attributes["ApproximateReceiveCount"] == "2"
        fifo._check()

    def test_after_another_consumer_received_the_messages_the_retry_is_fresh(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: once another receive took the messages (after their
        timeout), the old attempt no longer replays them."""
        fifo.send("m", group_id="g1")
        fifo.receive(receive_request_attempt_id="a")
        clock.advance(30)
        [other] = fifo.receive()
        assert fifo.receive(receive_request_attempt_id="a") == []
        fifo.delete(other.receipt_handle)  # the other consumer's handle is current
        assert len(fifo) == 0

    def test_within_five_minutes_the_retry_replays(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 4: a ReceiveRequestAttemptId is usable for 5 minutes."""
        send_group(fifo, "g1", 2)
        first = fifo.receive(2, receive_request_attempt_id="a")
        clock.advance(299)
        retry = fifo.receive(2, receive_request_attempt_id="a")
        assert handles(retry) == handles(first)
        assert [m.attributes["ApproximateReceiveCount"] for m in retry] == ["1", "1"]

    def test_after_five_minutes_the_retry_is_fresh(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: after 5 minutes a retry is a fresh receive (UNCONFIRMED,
        section 14 item 4)."""
        send_group(fifo, "g1", 2)
        first = fifo.receive(2, receive_request_attempt_id="a")
        clock.advance(300)
        retry = fifo.receive(2, receive_request_attempt_id="a")
        assert bodies(retry) == bodies(first)
        assert set(handles(retry)).isdisjoint(handles(first))
        assert [m.attributes["ApproximateReceiveCount"] for m in retry] == ["2", "2"]
        fifo._check()

    def test_an_empty_result_is_not_replayed(self, fifo: FifoQueue) -> None:
        """Section 9: a retry of a receive that returned nothing is a new
        receive, which sees messages sent since."""
        assert fifo.receive(10, receive_request_attempt_id="a") == []
        fifo.send("m", group_id="g1")
        assert bodies(fifo.receive(10, receive_request_attempt_id="a")) == ["m"]


class TestAttemptIdValidation:
    """Attempt ids follow the MessageGroupId format rules."""

    @pytest.mark.parametrize("bad", ["", "a" * 129, "has space"])
    def test_invalid_attempt_id_is_rejected(self, fifo: FifoQueue, bad: str) -> None:
        """Section 4: ReceiveRequestAttemptId is 1..128 alphanumeric or
        punctuation characters (text by analogy with MessageGroupId, section
        2.1)."""
        fifo.send("m", group_id="g1")
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.receive(receive_request_attempt_id=bad)
        assert exc.value.message == (
            f"Value {bad} for parameter ReceiveRequestAttemptId is invalid. Reason: "
            "ReceiveRequestAttemptId can only include alphanumeric and punctuation "
            "characters. 1 to 128 in length."
        )
        assert bodies(fifo.receive()) == ["m"]  # the failed receive took nothing

    def test_longest_valid_attempt_id_works(self, fifo: FifoQueue) -> None:
        """Section 4: 128 characters are allowed."""
        fifo.send("m", group_id="g1")
        attempt = "!" * 64 + "z" * 64
        first = fifo.receive(receive_request_attempt_id=attempt)
        assert handles(fifo.receive(receive_request_attempt_id=attempt)) == handles(first)
