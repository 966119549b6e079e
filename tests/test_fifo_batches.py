"""FifoQueue batch operations: whole-request FIFO errors, batch order within a
group, deduplication inside a batch and batch deletes and visibility changes on
locked groups (``docs/aws-behaviour.md`` §§2.1, 8 and 9)."""

from __future__ import annotations

import pytest

from sqsqueue import ChangeVisibilityEntry, DeleteEntry, FifoQueue, ManualClock, Message, SendEntry
from sqsqueue.errors import InvalidParameterValue

MISSING_GROUP = "The request must contain the parameter MessageGroupId."
MISSING_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


class TestSendBatchRequestErrors:
    """A FIFO entry without a group or dedup id fails the whole request."""

    @pytest.mark.parametrize("bad_index", [0, 1, 2])
    def test_entry_without_group_id_fails_the_whole_request(
        self, fifo: FifoQueue, bad_index: int
    ) -> None:
        """Section 2.1: FIFO entry missing MessageGroupId -> the whole request
        fails with InvalidParameterValue `The request must contain the parameter
        MessageGroupId.`; nothing is sent."""
        entries = [SendEntry(str(i), f"m{i}", group_id="g1") for i in range(3)]
        entries[bad_index] = SendEntry(str(bad_index), "no group")
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.send_batch(entries)
        assert exc.value.message == MISSING_GROUP
        assert exc.value.code == "InvalidParameterValue"
        assert len(fifo) == 0
        fifo._check()

    def test_boto3_shaped_entry_without_group_id_fails_the_whole_request(
        self, fifo: FifoQueue
    ) -> None:
        """Section 2.1: the same rule for boto3-shaped entries."""
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.send_batch(
                [
                    {"Id": "a", "MessageBody": "x", "MessageGroupId": "g1"},
                    {"Id": "b", "MessageBody": "y"},
                ]
            )
        assert exc.value.message == MISSING_GROUP
        assert len(fifo) == 0

    def test_entry_without_dedup_id_fails_the_whole_request(self, clock: ManualClock) -> None:
        """Section 2.1: FIFO entry missing the dedup id (no content-based
        deduplication) -> the whole request fails with InvalidParameterValue
        `The queue should either have ContentBasedDeduplication enabled or
        MessageDeduplicationId provided explicitly`."""
        q = FifoQueue("plain.fifo", clock=clock)
        with pytest.raises(InvalidParameterValue) as exc:
            q.send_batch(
                [
                    SendEntry("a", "x", group_id="g1", deduplication_id="d1"),
                    SendEntry("b", "y", group_id="g1"),
                ]
            )
        assert exc.value.message == MISSING_DEDUP
        assert len(q) == 0
        q._check()

    def test_refused_batch_leaves_no_dedup_history(self, clock: ManualClock) -> None:
        """Section 2.1: nothing is sent by a failed request, so its valid
        entries' ids are not remembered as sent."""
        q = FifoQueue("plain.fifo", clock=clock)
        with pytest.raises(InvalidParameterValue):
            q.send_batch(
                [
                    SendEntry("a", "x", group_id="g1", deduplication_id="d1"),
                    SendEntry("b", "y", deduplication_id="d2"),
                ]
            )
        q.send("x", group_id="g1", deduplication_id="d1")
        assert bodies(q.receive()) == ["x"]


class TestSendBatchOrder:
    """A FIFO batch is enqueued in batch order."""

    def test_batch_order_is_kept_within_a_group(self, fifo: FifoQueue) -> None:
        """Section 2.1: "For FIFO, messages within a batch are enqueued in batch
        order"; section 9: a receive takes a group's messages first."""
        fifo.send("g1-m0", group_id="g1")
        result = fifo.send_batch(
            [
                SendEntry("a", "g1-m1", group_id="g1"),
                SendEntry("b", "g2-m1", group_id="g2"),
                SendEntry("c", "g1-m2", group_id="g1"),
                SendEntry("d", "g1-m3", group_id="g1"),
            ]
        )
        assert result.ok
        assert list(result.successful) == ["a", "b", "c", "d"]
        assert bodies(fifo.receive(10)) == ["g1-m0", "g1-m1", "g1-m2", "g1-m3", "g2-m1"]
        fifo._check()

    def test_sequence_numbers_follow_batch_order(self, fifo: FifoQueue) -> None:
        """Section 4: sequence numbers increase in the order messages are
        enqueued, here batch order."""
        result = fifo.send_batch([SendEntry(str(i), f"m{i}", group_id="g1") for i in range(10)])
        numbers = []
        for i in range(10):
            sent = result.successful[str(i)]
            assert sent is not None and sent.sequence_number is not None
            numbers.append(int(sent.sequence_number))
        assert numbers == sorted(numbers) and len(set(numbers)) == 10
        got = fifo.receive(10)
        assert [int(m.attributes["SequenceNumber"]) for m in got] == numbers

    def test_duplicate_inside_a_batch_is_accepted_but_not_delivered(self, fifo: FifoQueue) -> None:
        """Section 9: a duplicate within the 5-minute interval is accepted
        successfully but not delivered, also inside one batch."""
        result = fifo.send_batch(
            [
                SendEntry("a", "x", group_id="g1", deduplication_id="same"),
                SendEntry("b", "y", group_id="g1", deduplication_id="same"),
            ]
        )
        a, b = result.successful["a"], result.successful["b"]
        assert result.ok and a is not None and b is not None
        assert b.message_id == a.message_id
        assert bodies(fifo.receive(10)) == ["x"]


class TestBatchDeleteAndChange:
    """Batch deletes and visibility changes follow the FIFO handle and group rules."""

    def test_batch_delete_of_every_received_message_unlocks_the_group(
        self, fifo: FifoQueue
    ) -> None:
        """Section 9: deleting all received messages of a group unlocks it at once."""
        for i in range(1, 4):
            fifo.send(f"m{i}", group_id="g1")
        got = fifo.receive(2)
        result = fifo.delete_batch(
            [DeleteEntry(str(i), m.receipt_handle) for i, m in enumerate(got)]
        )
        assert result.ok
        assert bodies(fifo.receive(10)) == ["m3"]
        fifo._check()

    def test_batch_delete_reports_an_expired_handle_per_entry(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 8: a FIFO handle used after its visibility expired is refused
        with `The receipt handle has expired.`; in a batch it is reported per
        entry (section 2.1) and the other entries are done."""
        fifo.send("old", group_id="g1")
        [stale] = fifo.receive(visibility_timeout=10)
        clock.advance(10)
        fifo.send("new", group_id="g2")
        [fresh] = [m for m in fifo.receive(10) if m.body == "new"]
        result = fifo.delete_batch(
            [DeleteEntry("stale", stale.receipt_handle), DeleteEntry("fresh", fresh.receipt_handle)]
        )
        assert list(result.successful) == ["fresh"]
        [failure] = result.failed
        assert failure.id == "stale"
        assert failure.code == "InvalidParameterValue"
        assert failure.sender_fault
        assert failure.message == (
            f"Value {stale.receipt_handle} for parameter ReceiptHandle is invalid. "
            "Reason: The receipt handle has expired."
        )
        assert len(fifo) == 1
        fifo._check()

    def test_batch_terminate_of_the_head_frees_it(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: terminating the first message of a locked group makes it
        available at once; the others keep their timeout."""
        for i in range(1, 4):
            fifo.send(f"m{i}", group_id="g1")
        got = fifo.receive(3)
        result = fifo.change_visibility_batch(
            [ChangeVisibilityEntry("head", got[0].receipt_handle, 0)]
        )
        assert result.ok
        assert bodies(fifo.receive(10)) == ["m1"]
        fifo._check()
