"""Test-only inspection: ``Queue.inspect()`` and ``Queue.history()``.

``inspect()`` reports every stored message's lifecycle state (the states of
docs/aws-behaviour.md §8 plus delays, sections 4 and 10) without receiving
it; ``history()`` lists the lifecycle events of one message (sections 8, 10,
11 and PurgeQueue, section 2.1), timed on the queue's clock.
"""

from __future__ import annotations

import hashlib

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, MessageInfo, Queue, errors
from tests._helpers import counts

START = 1_700_000_000.0
VT = 30


def by_body(q: Queue | FifoQueue) -> dict[str, MessageInfo]:
    return {info.body: info for info in q.inspect()}


def events(q: Queue | FifoQueue, message_id: str) -> list[tuple[float, str]]:
    return [(e.time - START, e.event) for e in q.history(message_id)]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=START)


@pytest.fixture
def q(clock: ManualClock) -> Queue:
    queue = Queue("jobs", clock=clock, visibility_timeout=VT)
    queue.keep_history = True
    return queue


class TestInspectStates:
    """Section 8: a message is delayed, visible or in flight; inspect() says which."""

    def test_states_and_deadlines(self, clock: ManualClock, q: Queue) -> None:
        """Sections 4, 8 and 10: a delayed message shows its delay's end, an
        in-flight one its visibility deadline and receive count, a visible one
        its (past) deadline; counts agree with GetQueueAttributes."""
        q.send("visible")
        q.send("delayed", delay_seconds=10)
        q.send("flight")
        clock.advance(1)
        [m] = q.receive()
        assert m.body == "visible"
        info = by_body(q)
        assert info["visible"].state == "in_flight"
        assert info["visible"].receive_count == 1
        assert info["visible"].visible_at == START + 1 + VT
        assert info["delayed"].state == "delayed"
        assert info["delayed"].visible_at == START + 10
        assert info["delayed"].receive_count == 0
        assert info["flight"].state == "visible"
        assert info["flight"].visible_at == START
        assert all(i.sent_at == START for i in info.values())
        assert counts(q) == (1, 1, 1)
        clock.advance(9)  # delay over at START + 10
        assert by_body(q)["delayed"].state == "visible"
        clock.advance(VT - 9)  # visibility over at START + 1 + VT
        info = by_body(q)
        assert info["visible"].state == "visible"
        assert info["visible"].receive_count == 1
        assert counts(q) == (3, 0, 0)

    def test_receive_counts_accumulate(self, clock: ManualClock, q: Queue) -> None:
        """Section 8: each receive counts (ApproximateReceiveCount); inspect agrees."""
        sent = q.send("a")
        for n in range(1, 5):
            [m] = q.receive(attribute_names=["ApproximateReceiveCount"])
            assert m.attributes["ApproximateReceiveCount"] == str(n)
            [info] = q.inspect()
            assert (info.message_id, info.receive_count, info.state) == (
                sent.message_id,
                n,
                "in_flight",
            )
            clock.advance(VT)

    def test_change_visibility_moves_the_deadline(self, clock: ManualClock, q: Queue) -> None:
        """Section 8: ChangeMessageVisibility counts from the call; 0 makes it visible."""
        q.send("a")
        [m] = q.receive()
        clock.advance(15)
        q.change_visibility(m.receipt_handle, 10)
        [info] = q.inspect()
        assert info.visible_at == START + 25 and info.state == "in_flight"
        q.change_visibility(m.receipt_handle, 0)
        [info] = q.inspect()
        assert info.visible_at == START + 15 and info.state == "visible"

    def test_fair_queue_group_id(self, q: Queue) -> None:
        """Section 10.1: a standard queue shows a MessageGroupId, and never a
        deduplication id or sequence number."""
        q.send("a", group_id="tenant-1")
        q.send("b")
        info = by_body(q)
        assert info["a"].group_id == "tenant-1"
        assert info["b"].group_id is None
        for i in info.values():
            assert i.deduplication_id is None and i.sequence_number is None

    def test_expired_messages_are_gone(self, clock: ManualClock) -> None:
        """Section 4: a message past MessageRetentionPeriod is not listed."""
        q = Queue("short", clock=clock, message_retention_period=60)
        q.send("old")
        clock.advance(30)
        q.send("new")
        clock.advance(30)
        assert [i.body for i in q.inspect()] == ["new"]

    def test_deleted_queue(self, clock: ManualClock) -> None:
        """Section 3: operations on a deleted queue raise QueueDoesNotExist."""
        broker = Broker(clock=clock)
        q = broker.create_queue("q")
        broker.delete_queue(q.url)
        with pytest.raises(errors.QueueDoesNotExist):
            q.inspect()


class TestInspectFifo:
    """Section 9: FIFO messages carry group, deduplication id and sequence number."""

    def test_group_dedup_sequence(self, clock: ManualClock) -> None:
        """Section 9: inspect() shows the group, the explicit or content-based
        (SHA-256 of the body) deduplication id and the send's sequence number."""
        f = FifoQueue("o.fifo", clock=clock, content_based_deduplication=True)
        explicit = f.send("a", group_id="g1", deduplication_id="d-1")
        content = f.send("b", group_id="g2")
        info = by_body(f)
        a, b = info["a"], info["b"]
        assert (a.group_id, a.deduplication_id, a.sequence_number) == (
            "g1",
            "d-1",
            explicit.sequence_number,
        )
        assert b.group_id == "g2"
        assert b.deduplication_id == hashlib.sha256(b"b").hexdigest()
        assert b.sequence_number == content.sequence_number
        assert a.sequence_number is not None and b.sequence_number is not None
        assert int(a.sequence_number) < int(b.sequence_number)

    def test_duplicate_send_stores_nothing(self, clock: ManualClock) -> None:
        """Section 9: a duplicate within the window is accepted but not stored."""
        f = FifoQueue("o.fifo", clock=clock)
        f.send("a", group_id="g", deduplication_id="same")
        f.send("a-again", group_id="g", deduplication_id="same")
        assert [i.body for i in f.inspect()] == ["a"]

    def test_fifo_queue_delay_is_retroactive(self, clock: ManualClock) -> None:
        """Section 9: on FIFO, changing DelaySeconds applies to stored messages;
        inspect() reports the new deadline."""
        f = FifoQueue("o.fifo", clock=clock, content_based_deduplication=True, delay_seconds=10)
        f.send("a", group_id="g")
        [info] = f.inspect()
        assert (info.state, info.visible_at) == ("delayed", START + 10)
        f.set_attributes(delay_seconds=5)
        [info] = f.inspect()
        assert (info.state, info.visible_at) == ("delayed", START + 5)
        clock.advance(5)
        [info] = f.inspect()
        assert info.state == "visible"

    def test_fifo_in_flight(self, clock: ManualClock) -> None:
        """Section 9: a received FIFO message is in flight until its deadline."""
        f = FifoQueue("o.fifo", clock=clock, content_based_deduplication=True)
        f.send("a", group_id="g")
        f.send("b", group_id="g")
        f.receive(1)
        info = by_body(f)
        assert info["a"].state == "in_flight"
        assert info["a"].visible_at == START + 30
        assert info["b"].state == "visible"  # group locked, yet stored visible


class TestInspectChangesNothing:
    """inspect() is an observer: it must not receive, re-hide or count anything (section 8)."""

    def script(self, clock: ManualClock, peek: bool) -> list[object]:
        q = Queue("twin", clock=clock, visibility_timeout=VT)
        q.keep_history = True
        out: list[object] = []
        for i in range(12):
            q.send(f"m{i}", delay_seconds=5 if i % 4 == 0 else None)
        for step in range(6):
            if peek:
                q.inspect()
                q.inspect()
            got = q.receive(3, attribute_names=["ApproximateReceiveCount"])
            out.append([(m.body, m.attributes["ApproximateReceiveCount"]) for m in got])
            if peek:
                q.inspect()
            out.append(counts(q))
            if step % 2:
                clock.advance(VT)
        out.append([(e.event, e.time) for i in q.inspect() for e in q.history(i.message_id)])
        return out

    def test_same_run_with_and_without_inspect(self) -> None:
        """Section 8: receives, receive counts, queue counts and histories are
        identical whether or not inspect() is called between them."""
        assert self.script(ManualClock(start=START), True) == self.script(
            ManualClock(start=START), False
        )

    def test_inspect_does_not_deliver(self, q: Queue) -> None:
        """Section 8: inspecting a visible message leaves it visible, count 0."""
        q.send("a")
        for _ in range(3):
            [info] = q.inspect()
            assert info.state == "visible" and info.receive_count == 0
        assert counts(q) == (1, 0, 0)
        [m] = q.receive(attribute_names=["ApproximateReceiveCount"])
        assert m.attributes["ApproximateReceiveCount"] == "1"
        assert [e.event for e in q.history(m.message_id)] == ["sent", "received"]


class TestHistory:
    """Message histories: the lifecycle events of sections 8, 10 and 11, timed on the clock."""

    def test_full_lifecycle(self, clock: ManualClock, q: Queue) -> None:
        """Section 8: sent, received (receipt 1), visibility_changed (counts from
        the call), received again after expiry (receipt 2), deleted; times are
        the ManualClock's at each step."""
        sent = q.send("a", delay_seconds=5)
        clock.advance(5)
        [m] = q.receive()
        clock.advance(10)
        q.change_visibility(m.receipt_handle, 20)
        clock.advance(20)
        [m2] = q.receive()
        clock.advance(3)
        q.delete(m2.receipt_handle)
        history = q.history(sent.message_id)
        assert [(e.time - START, e.event) for e in history] == [
            (0, "sent"),
            (5, "received"),
            (15, "visibility_changed"),
            (35, "received"),
            (38, "deleted"),
        ]
        assert history[0].detail["visible_at"] == START + 5
        assert history[1].detail == {"receipt": 1, "visible_at": START + 5 + VT}
        assert history[2].detail["visible_at"] == START + 35
        assert history[3].detail == {"receipt": 2, "visible_at": START + 35 + VT}

    def test_expired(self, clock: ManualClock) -> None:
        """Section 4: retention ends a message's life with ``expired``."""
        q = Queue("short", clock=clock, message_retention_period=60)
        q.keep_history = True
        sent = q.send("a")
        clock.advance(60)
        assert len(q) == 0
        assert events(q, sent.message_id) == [(0, "sent"), (60, "expired")]

    def test_purged(self, clock: ManualClock, q: Queue) -> None:
        """Section 2.1 (PurgeQueue): every stored message, in flight or delayed, is ``purged``."""
        a = q.send("a")
        b = q.send("b", delay_seconds=100)
        q.receive()
        clock.advance(2)
        q.purge()
        assert events(q, a.message_id) == [(0, "sent"), (0, "received"), (2, "purged")]
        assert events(q, b.message_id) == [(0, "sent"), (2, "purged")]

    def test_dead_lettered_and_arrived(self, clock: ManualClock) -> None:
        """Section 11: with maxReceiveCount 1, the second receive attempt moves the
        message: ``dead_lettered`` in the source and ``dead_letter_arrived`` in the
        DLQ, both at the time of that receive; the message id is kept (section 10)."""
        broker = Broker(clock=clock, keep_history=True)
        dlq = broker.create_queue("dlq")
        src = broker.create_queue(
            "src",
            visibility_timeout=VT,
            redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1},
        )
        sent = src.send("a")
        clock.advance(1)
        assert len(src.receive()) == 1
        clock.advance(VT)
        assert src.receive() == []  # the receive attempt moves it
        assert events(src, sent.message_id) == [
            (0, "sent"),
            (1, "received"),
            (1 + VT, "dead_lettered"),
        ]
        assert events(dlq, sent.message_id) == [(1 + VT, "dead_letter_arrived")]
        [info] = dlq.inspect()
        assert info.message_id == sent.message_id and info.receive_count == 1
        assert info.sent_at == START  # standard: enqueue time unchanged (section 10)

    def test_moved_by_move_task(self, clock: ManualClock) -> None:
        """Section 11: a move task takes DLQ messages back to their source as new
        messages: ``moved`` in the DLQ, a new id ``sent`` in the source."""
        broker = Broker(clock=clock, keep_history=True)
        dlq = broker.create_queue("dlq")
        src = broker.create_queue(
            "src", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}
        )
        sent = src.send("a")
        src.receive(visibility_timeout=0)
        assert src.receive() == []
        clock.advance(7)
        broker.start_message_move_task(dlq.arn)
        assert events(dlq, sent.message_id) == [(0, "dead_letter_arrived"), (7, "moved")]
        [back] = src.inspect()
        assert back.body == "a" and back.message_id != sent.message_id
        assert back.receive_count == 0 and back.sent_at == START + 7
        assert events(src, back.message_id) == [(7, "sent")]
        assert events(src, sent.message_id)[-1] == (0, "dead_lettered")

    def test_fifo_dead_letter_times(self, clock: ManualClock) -> None:
        """Sections 9 and 11: FIFO dead-lettering happens at the receive attempt
        (the enqueue time resets on FIFO), and a FIFO ``sent`` event's
        visible_at includes the queue delay."""
        broker = Broker(clock=clock, keep_history=True)
        dlq = broker.create_queue("dlq.fifo", attributes={"FifoQueue": "true"})
        src = broker.create_queue(
            "src.fifo",
            attributes={
                "FifoQueue": "true",
                "ContentBasedDeduplication": "true",
                "DelaySeconds": "4",
                "RedrivePolicy": {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1},
            },
        )
        sent = src.send("a", group_id="g")
        assert src.history(sent.message_id)[0].detail["visible_at"] == START + 4
        clock.advance(4)
        assert len(src.receive(visibility_timeout=5)) == 1
        clock.advance(5)
        assert src.receive() == []
        assert events(src, sent.message_id) == [(0, "sent"), (4, "received"), (9, "dead_lettered")]
        [arrived] = dlq.history(sent.message_id)
        assert (arrived.time - START, arrived.event) == (9, "dead_letter_arrived")
        assert arrived.detail["visible_at"] == START + 9
        [info] = dlq.inspect()
        assert info.sent_at == START + 9 and info.state == "visible"

    def test_unknown_message_has_no_history(self, q: Queue) -> None:
        """A message id this queue never stored has an empty history."""
        assert q.history("00000000-0000-4000-8000-000000000000") == []

    def test_history_outlives_the_message(self, q: Queue) -> None:
        """Section 8: a deleted message's history stays available."""
        sent = q.send("a")
        [m] = q.receive()
        q.delete(m.receipt_handle)
        assert len(q) == 0
        assert [e.event for e in q.history(sent.message_id)] == ["sent", "received", "deleted"]


class TestHistorySwitch:
    """History costs memory per message, so it is off unless asked for."""

    def test_off_by_default_raises(self, clock: ManualClock) -> None:
        """History without keep_history raises an sqsqueue.errors exception."""
        q = Queue("q", clock=clock)
        assert q.keep_history is False
        sent = q.send("a")
        with pytest.raises(errors.SQSError, match="keep_history"):
            q.history(sent.message_id)
        with pytest.raises(errors.InvalidParameterValue):
            q.history(sent.message_id)

    def test_turned_on_later_records_from_then(self, clock: ManualClock) -> None:
        """Only events after keep_history is set are recorded; turning it off
        drops what was kept."""
        q = Queue("q", clock=clock)
        sent = q.send("a")
        q.keep_history = True
        [m] = q.receive()
        assert [e.event for e in q.history(sent.message_id)] == ["received"]
        q.keep_history = False
        with pytest.raises(errors.InvalidParameterValue):
            q.history(m.message_id)

    def test_broker_keep_history(self, clock: ManualClock) -> None:
        """Broker(keep_history=True) records for every queue it creates, FIFO
        included; a default Broker records nothing."""
        recording = Broker(clock=clock, keep_history=True)
        std = recording.create_queue("std")
        fifo = recording.create_queue(
            "f.fifo", attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        )
        assert std.keep_history and fifo.keep_history
        a = std.send("a")
        b = fifo.send("b", group_id="g")
        assert [e.event for e in std.history(a.message_id)] == ["sent"]
        assert [e.event for e in fifo.history(b.message_id)] == ["sent"]
        plain = Broker(clock=clock).create_queue("plain")
        assert not plain.keep_history
        with pytest.raises(errors.SQSError):
            plain.history(plain.send("x").message_id)
