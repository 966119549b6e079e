"""FifoQueue deduplication: the 5-minute window, content-based ids and the
deduplication scope (``docs/aws-behaviour.md`` §§2.1, 4, 6 and 9)."""

from __future__ import annotations

import hashlib

import pytest

from sqsqueue import FifoQueue, ManualClock, Message
from sqsqueue._fifo import DEDUP_BLOCK, _DedupWindow
from sqsqueue._limits import US
from sqsqueue._message import SEQ_BITS
from sqsqueue.errors import InvalidParameterValue

MISSING_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def plain(clock: ManualClock) -> FifoQueue:
    """A FIFO queue without content-based deduplication."""
    return FifoQueue("plain.fifo", clock=clock)


class TestDeduplicationWindow:
    """A deduplication id is remembered for exactly 5 minutes after the first send."""

    def test_duplicate_is_accepted_with_the_original_ids_and_not_delivered(
        self, plain: FifoQueue
    ) -> None:
        """Section 9: duplicates are "accepted successfully but aren't delivered";
        the answer carries the original MessageId and SequenceNumber (the
        emulators' choice, UNCONFIRMED for AWS, section 14 item 3)."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        again = plain.send("b", group_id="g1", deduplication_id="d1")
        assert again.message_id == first.message_id
        assert again.sequence_number == first.sequence_number
        assert len(plain) == 1
        assert bodies(plain.receive(10)) == ["a"]
        plain._check()

    def test_duplicate_within_the_window_while_in_flight(
        self, plain: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: the dedup id is remembered while the original is in flight."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        plain.receive()
        clock.advance(10)
        assert plain.send("a", group_id="g1", deduplication_id="d1").message_id == (
            first.message_id
        )
        assert len(plain) == 1

    def test_remembered_after_delete(self, plain: FifoQueue) -> None:
        """Section 9: dedup ids are remembered even after the message is
        received and deleted (AWS-obs `test_fifo_deduplication_arrives_once_after_delete`)."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        [m] = plain.receive()
        plain.delete(m.receipt_handle)
        again = plain.send("a", group_id="g1", deduplication_id="d1")
        assert again.message_id == first.message_id
        assert len(plain) == 0
        assert plain.receive(10) == []
        plain._check()

    def test_window_ends_exactly_300_seconds_after_the_first_send(
        self, plain: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 4: the FIFO deduplication interval is 5 minutes, counted
        from the first send (a duplicate does not extend it): a send at +300 s
        is new."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        clock.advance(200)
        assert plain.send("a", group_id="g1", deduplication_id="d1").message_id == (
            first.message_id
        )
        clock.advance(99.999)
        assert plain.send("a", group_id="g1", deduplication_id="d1").message_id == (
            first.message_id
        )
        clock.advance(0.001)  # exactly +300 s
        new = plain.send("a", group_id="g1", deduplication_id="d1")
        assert new.message_id != first.message_id
        assert new.sequence_number is not None and first.sequence_number is not None
        assert int(new.sequence_number) > int(first.sequence_number)
        assert len(plain) == 2
        plain._check()

    def test_new_message_starts_a_new_window(self, plain: FifoQueue, clock: ManualClock) -> None:
        """Section 9: once accepted again, the id is deduplicated for 5 more
        minutes."""
        plain.send("a", group_id="g1", deduplication_id="d1")
        clock.advance(300)
        second = plain.send("a", group_id="g1", deduplication_id="d1")
        clock.advance(299)
        assert plain.send("a", group_id="g1", deduplication_id="d1").message_id == (
            second.message_id
        )
        assert len(plain) == 2

    def test_purge_clears_the_history(self, plain: FifoQueue) -> None:
        """Section 2.1: purging also clears the FIFO deduplication history
        (AWS-obs `test_purge_queue_clears_fifo_deduplication_cache`)."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        plain.purge()
        again = plain.send("a", group_id="g1", deduplication_id="d1")
        assert again.message_id != first.message_id
        assert bodies(plain.receive()) == ["a"]
        plain._check()


class TestContentBasedDeduplication:
    """With ContentBasedDeduplication the id is the SHA-256 of the body."""

    def test_same_body_is_a_duplicate(self, fifo: FifoQueue) -> None:
        """Section 9: ContentBasedDeduplication uses the SHA-256 of the body."""
        first = fifo.send("hello", group_id="g1")
        assert fifo.send("hello", group_id="g1").message_id == first.message_id
        assert fifo.send("hello!", group_id="g1").message_id != first.message_id
        assert bodies(fifo.receive(10)) == ["hello", "hello!"]

    def test_attributes_are_not_part_of_the_content(self, fifo: FifoQueue) -> None:
        """Section 6: the content-based dedup id is the SHA-256 of the body, not
        of the attributes."""
        first = fifo.send("hello", group_id="g1", message_attributes={"a": "1"})
        again = fifo.send("hello", group_id="g1", message_attributes={"a": "2", "b": "3"})
        assert again.message_id == first.message_id
        assert len(fifo) == 1

    def test_explicit_id_wins_over_content(self, fifo: FifoQueue) -> None:
        """Section 9: an explicit MessageDeduplicationId overrides the content."""
        a = fifo.send("same", group_id="g1", deduplication_id="d1")
        b = fifo.send("same", group_id="g1", deduplication_id="d2")
        c = fifo.send("different", group_id="g1", deduplication_id="d1")
        assert a.message_id != b.message_id
        assert c.message_id == a.message_id
        assert bodies(fifo.receive(10)) == ["same", "same"]

    def test_colliding_generated_and_explicit_ids_are_duplicates(self, fifo: FifoQueue) -> None:
        """Section 9: mixing generated and explicit ids that collide gives a
        duplicate."""
        first = fifo.send("hello", group_id="g1")
        again = fifo.send("other", group_id="g1", deduplication_id=sha256("hello"))
        assert again.message_id == first.message_id
        assert len(fifo) == 1

    def test_dedup_id_attribute_is_the_sha256_hex_digest(self, fifo: FifoQueue) -> None:
        """Section 6: with content-based deduplication the MessageDeduplicationId
        returned is the hex SHA-256 of the body (emu, UNCONFIRMED); an
        explicit id is returned as given."""
        fifo.send("hello", group_id="g1")
        fifo.send("world", group_id="g1", deduplication_id="explicit")
        got = fifo.receive(10)
        assert [m.attributes["MessageDeduplicationId"] for m in got] == [
            sha256("hello"),
            "explicit",
        ]

    def test_can_be_switched_on_and_off(self, plain: FifoQueue) -> None:
        """Section 5: ContentBasedDeduplication can be changed with
        SetQueueAttributes (AWS-obs)."""
        with pytest.raises(InvalidParameterValue) as exc:
            plain.send("hello", group_id="g1")
        assert exc.value.message == MISSING_DEDUP
        plain.set_attributes({"ContentBasedDeduplication": "true"})
        assert plain.attributes["ContentBasedDeduplication"] == "true"
        first = plain.send("hello", group_id="g1")
        assert plain.send("hello", group_id="g1").message_id == first.message_id
        plain.set_attributes(content_based_deduplication=False)
        assert plain.attributes["ContentBasedDeduplication"] == "false"
        with pytest.raises(InvalidParameterValue) as exc:
            plain.send("hello", group_id="g1")
        assert exc.value.message == MISSING_DEDUP
        assert len(plain) == 1
        plain._check()


class TestDeduplicationScope:
    """DeduplicationScope chooses whether ids are per queue or per group."""

    def test_queue_scope_deduplicates_across_groups(self, plain: FifoQueue) -> None:
        """Section 9: `DeduplicationScope=queue` (default): the same dedup id in
        different groups is a duplicate (AWS-obs
        `test_fifo_deduplication_not_on_message_group_id`)."""
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        again = plain.send("b", group_id="g2", deduplication_id="d1")
        assert again.message_id == first.message_id
        assert bodies(plain.receive(10)) == ["a"]

    def test_queue_scope_content_based_deduplicates_across_groups(self, fifo: FifoQueue) -> None:
        """Section 9: with queue scope the same body in another group is a
        duplicate too."""
        fifo.send("hello", group_id="g1")
        fifo.send("hello", group_id="g2")
        assert len(fifo) == 1

    def test_message_group_scope_deduplicates_per_group(self, clock: ManualClock) -> None:
        """Section 9: `DeduplicationScope=messageGroup` deduplicates per group,
        even without `FifoThroughputLimit=perMessageGroupId` (AWS-obs
        `test_sqs_fifo_message_group_scope_no_throughput_setting`)."""
        q = FifoQueue("scoped.fifo", clock=clock, deduplication_scope="messageGroup")
        assert q.attributes["FifoThroughputLimit"] == "perQueue"
        a = q.send("a", group_id="g1", deduplication_id="d1")
        b = q.send("b", group_id="g2", deduplication_id="d1")
        c = q.send("c", group_id="g1", deduplication_id="d1")
        assert a.message_id != b.message_id
        assert c.message_id == a.message_id
        assert sorted(bodies(q.receive(10))) == ["a", "b"]
        q._check()

    def test_message_group_scope_with_content_based_ids(self, clock: ManualClock) -> None:
        """Section 9: per-group scope applies to content-based ids as well."""
        q = FifoQueue(
            "scoped.fifo",
            clock=clock,
            content_based_deduplication=True,
            deduplication_scope="messageGroup",
            fifo_throughput_limit="perMessageGroupId",
        )
        q.send("hello", group_id="g1")
        q.send("hello", group_id="g2")
        q.send("hello", group_id="g1")
        assert len(q) == 2
        q._check()

    @pytest.mark.parametrize(
        "change",
        [
            {"DeduplicationScope": "messageGroup"},
            {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"},
        ],
    )
    def test_switch_to_message_group_keeps_queue_wide_deduplication(
        self, plain: FifoQueue, change: dict[str, str]
    ) -> None:
        """Issue 12 §6 (recorded against real AWS; also LocalStack's AWS-validated
        test_fifo_change_to_high_throughput_after_creation): after SetQueueAttributes
        switches a queue-scoped queue to messageGroup, the attribute reads back
        changed but the same id in another group is still a duplicate."""
        plain.set_attributes(change)
        assert plain.attributes["DeduplicationScope"] == "messageGroup"
        first = plain.send("a", group_id="g1", deduplication_id="d1")
        again = plain.send("b", group_id="g2", deduplication_id="d1")
        assert again.message_id == first.message_id
        assert bodies(plain.receive(10)) == ["a"]
        plain._check()

    def test_switch_to_queue_keeps_per_group_deduplication(self, clock: ManualClock) -> None:
        """Issue 12 §6 and LocalStack's AWS-validated
        test_fifo_change_to_regular_throughput_after_creation: a queue created with
        messageGroup scope keeps deduplicating per group after a switch to queue."""
        q = FifoQueue(
            "scoped.fifo",
            clock=clock,
            deduplication_scope="messageGroup",
            fifo_throughput_limit="perMessageGroupId",
        )
        q.set_attributes({"FifoThroughputLimit": "perQueue", "DeduplicationScope": "queue"})
        assert q.attributes["DeduplicationScope"] == "queue"
        a = q.send("a", group_id="g1", deduplication_id="d1")
        b = q.send("b", group_id="g2", deduplication_id="d1")
        assert a.message_id != b.message_id
        assert sorted(bodies(q.receive(10))) == ["a", "b"]
        q._check()


class TestWindowStore:
    """The window's own structure (``_fifo._DedupWindow``): what it holds for a
    message sent here is the record's send key, from which the entry derives."""

    def test_an_entry_derives_the_original_answer_after_the_message_is_gone(
        self, plain: FifoQueue, clock: ManualClock
    ) -> None:
        """The window keeps no id or number of its own: a duplicate sent after
        the message was deleted still gets the original's, and so does every
        one of a few thousand (several chunks of the add order)."""
        first = [
            plain.send(f"m{i}", group_id=f"g{i % 7}", deduplication_id=f"d{i}")
            for i in range(2 * DEDUP_BLOCK + 5)
        ]
        plain.delete_batch([m.receipt_handle for m in plain.receive(10)])
        clock.advance(299)
        again = [
            plain.send("x", group_id="h", deduplication_id=f"d{i}")
            for i in range(2 * DEDUP_BLOCK + 5)
        ]
        assert [(r.message_id, r.sequence_number) for r in again] == [
            (r.message_id, r.sequence_number) for r in first
        ]
        assert len(plain) == 2 * DEDUP_BLOCK + 5 - 10
        plain._check()

    def test_expiry_walks_the_order_and_stops_at_the_first_live_entry(self) -> None:
        resolved: list[int] = []

        def resolve(skey: int) -> tuple[int, str, int]:
            resolved.append(skey)
            return ((skey >> SEQ_BITS) + 300 * US, f"id{skey & 0xFF}", skey & 0xFF)

        window = _DedupWindow(resolve)
        for i in range(1, 2 * DEDUP_BLOCK + 2):
            window.add(f"k{i}", ((i * 1000) << SEQ_BITS) | i)
        window.add("restored", ((2 * DEDUP_BLOCK + 1) * 1000 + 300 * US + 5, "rid", 7))
        window.check()
        assert window.get("k3") == (3000 + 300 * US, "id3", 3) and resolved == [
            (3000 << SEQ_BITS) | 3
        ]
        window.expire(300 * US + DEDUP_BLOCK * 1000)  # ends k1 .. k{DEDUP_BLOCK}
        window.check()
        assert window.get(f"k{DEDUP_BLOCK}") is None and window.get(f"k{DEDUP_BLOCK + 1}")
        assert len(window.chunks) == 1 and window.due == (DEDUP_BLOCK + 1) * 1000 + 300 * US
        window.expire(300 * US + (2 * DEDUP_BLOCK + 1) * 1000)
        assert list(window.entries) == ["restored"] and window.get("restored") == (
            (2 * DEDUP_BLOCK + 1) * 1000 + 300 * US + 5,
            "rid",
            7,
        )
        window.expire((2 * DEDUP_BLOCK + 1) * 1000 + 300 * US + 5)
        assert not window.entries and window.due > 10**20 and not window.chunks
        window.check()

    def test_an_expired_key_added_again_before_expiry_ran_is_late_never_wrong(self) -> None:
        """Should an add find its key's entry ended but not yet dropped, the key
        is in the order twice: expiry waits at the first place until the new
        entry ends, and ``get`` answers by the new entry all along."""
        window = _DedupWindow(lambda skey: ((skey >> SEQ_BITS) + 300 * US, "id", 1))
        window.add("a", (1 << SEQ_BITS) | 1)
        window.add("b", (2 << SEQ_BITS) | 2)
        window.add("a", ((400 * US) << SEQ_BITS) | 3)  # "a" ended at 300 s + 1 us
        window.expire(301 * US)
        assert window.get("a") == (700 * US, "id", 1) and window.get("b") is not None
        window.expire(700 * US)
        assert not window.entries
