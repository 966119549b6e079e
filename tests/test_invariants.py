"""``_check()``, the invariant checker every state machine runs after each step,
only reads: it must not settle the in-flight lane, move the retention pointer,
read the clock or expire anything, or it would hide the very states it checks
(issue 15)."""

from __future__ import annotations

from typing import Any

from sqsqueue import FifoQueue, ManualClock, Queue

START = 1_700_000_000.0


def internals(q: Queue | FifoQueue) -> tuple[Any, ...]:
    return (
        q._last_now,
        q._oldest_seq,
        q._lane_min,
        list(q._lane),
        list(q._received),
        list(q._revisible),
        list(q._ready),
        list(q._fresh),
        sorted(q._records),
    )


def test_check_changes_nothing_standard() -> None:
    clock = ManualClock(start=START)
    q = Queue("q", clock=clock, message_retention_period=60)
    for i in range(6):
        q.send(f"m{i}")
    q.send("late", delay_seconds=30)
    first, *_ = q.receive(10, visibility_timeout=1)
    q.delete(first.receipt_handle)  # the retention pointer now lags behind seq 1
    clock.advance(90)  # lane deadlines and every retention period have passed
    before = internals(q)
    q._check()
    assert internals(q) == before
    assert q._lane, "the lane still holds records whose deadline passed: nothing settled them"
    assert len(q) == 0  # an operation does apply the deadlines


def test_check_changes_nothing_fifo() -> None:
    clock = ManualClock(start=START)
    q = FifoQueue("q.fifo", clock=clock, content_based_deduplication=True)
    for i in range(4):
        q.send(f"m{i}", group_id=f"g{i % 2}")
    q.receive(10, visibility_timeout=1, receive_request_attempt_id="a")
    clock.advance(400)  # visibility and the deduplication window have ended
    before = internals(q), dict(q._dedup.entries), dict(q._attempt_ids.entries)
    q._check()
    assert (internals(q), dict(q._dedup.entries), dict(q._attempt_ids.entries)) == before
    assert q._dedup.entries, "expired deduplication entries stay until an operation"
