"""Long polling and the in-flight limit on a standard queue
(docs/aws-behaviour.md §§2.1, 4, 10, 12).

Time is virtual: the consumer threads below wait on a ManualClock, so nothing
here sleeps on the wall clock and nothing asserts on wall-clock durations.
Threads are joined with generous timeouts only so that a bug fails the test
instead of hanging it.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from sqsqueue import ManualClock, Message, Queue, _limits, errors

START = 1_700_000_000.0
JOIN = 30.0  # seconds: only reached when something is broken


class Consumer(threading.Thread):
    """A thread running one receive call and keeping its result."""

    def __init__(self, q: Queue, **kwargs: object) -> None:
        super().__init__(daemon=True)
        self.q = q
        self.kwargs = kwargs
        self.result: list[Message] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.q.receive(**self.kwargs)  # type: ignore[arg-type]
        except BaseException as exc:  # pragma: no cover - reported by the test
            self.error = exc

    def finish(self) -> list[Message]:
        self.join(timeout=JOIN)
        assert not self.is_alive(), "the long poll did not return"
        assert self.error is None, self.error
        assert self.result is not None
        return self.result


def wait_until_blocked(clock: ManualClock, *threads: threading.Thread, waiting: int = 1) -> None:
    """Return once ``waiting`` long polls are parked on ``clock`` (or a thread ended)."""
    for _ in range(30_000):
        if len(clock._waiters) >= waiting or not all(t.is_alive() for t in threads):
            return
        threads[0].join(timeout=0.001)
    raise AssertionError("the consumer never started waiting")


@pytest.fixture
def manual() -> ManualClock:
    """A clock that never jumps: only the test moves time."""
    return ManualClock(start=START, autojump_threshold=None)


@pytest.fixture
def q(manual: ManualClock) -> Queue:
    return Queue("lp", clock=manual)


@pytest.mark.usefixtures("autojump")
class TestLongPollSingleThread:
    """Under an autojump ManualClock a long poll never blocks: it jumps to its
    next deadline (section 12)."""

    def test_empty_queue_returns_empty_at_deadline(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: with nothing to receive a long poll returns [] at the deadline; the
        virtual clock has advanced by exactly the wait time."""
        assert queue.receive(wait_time_seconds=20) == []
        assert clock.now() == START + 20
        queue._check()

    def test_queue_attribute_is_default_wait(self, clock: ManualClock) -> None:
        """Section 2.1: without WaitTimeSeconds, ReceiveMessageWaitTimeSeconds applies."""
        q = Queue("q", clock=clock, receive_message_wait_time_seconds=13)
        assert q.receive() == []
        assert clock.now() == START + 13

    def test_explicit_zero_overrides_queue_attribute(self, clock: ManualClock) -> None:
        """Section 12: WaitTimeSeconds=0 makes it a short poll despite the queue's 20 s."""
        q = Queue("q", clock=clock, receive_message_wait_time_seconds=20)
        assert q.receive(wait_time_seconds=0) == []
        assert clock.now() == START

    def test_short_poll_does_not_move_time(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: a short poll on an empty queue returns at once."""
        assert queue.receive() == []
        assert clock.now() == START

    def test_available_message_returns_at_once(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: with messages available a long poll returns immediately."""
        queue.send("a")
        assert [m.body for m in queue.receive(wait_time_seconds=20)] == ["a"]
        assert clock.now() == START

    def test_does_not_wait_to_fill(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: return up to Max immediately, do not wait to fill."""
        queue.send("a")
        queue.send("b")
        queue.send("c", delay_seconds=5)
        ms = queue.receive(10, wait_time_seconds=20)
        assert sorted(m.body for m in ms) == ["a", "b"]
        assert clock.now() == START

    def test_delay_ending_during_wait(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: a message whose delay ends during the wait is returned, at that moment."""
        queue.send("late", delay_seconds=5)
        [m] = queue.receive(wait_time_seconds=20)
        assert m.body == "late"
        assert clock.now() == START + 5
        queue._check()

    def test_visibility_ending_during_wait(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: a message whose visibility timeout ends during the wait is returned."""
        queue.send("a")
        queue.receive(visibility_timeout=7)
        [m] = queue.receive(wait_time_seconds=20)
        assert m.body == "a"
        assert m.attributes["ApproximateReceiveCount"] == "2"
        assert clock.now() == START + 7
        queue._check()

    def test_delay_ending_after_deadline(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: a message due after the deadline is not waited for."""
        queue.send("late", delay_seconds=30)
        assert queue.receive(wait_time_seconds=20) == []
        assert clock.now() == START + 20
        assert queue.receive(wait_time_seconds=20) != []
        assert clock.now() == START + 30

    def test_positive_autojump_threshold(self) -> None:
        """§12 / docs/design.md principle 1: A positive autojump threshold ends a lonely long poll
        with [] at the deadline."""
        clock = ManualClock(start=START, autojump_threshold=0.001)
        q = Queue("q", clock=clock)
        assert q.receive(wait_time_seconds=15) == []
        assert clock.now() == START + 15


class TestLongPollThreads:
    """A consumer thread blocks until the test thread sends or advances (section 12)."""

    def test_returns_on_send_from_another_thread(self, manual: ManualClock, q: Queue) -> None:
        """Section 10: a long poll returns as soon as a message is sent, time unchanged."""
        c = Consumer(q, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        assert c.is_alive()
        q.send("hello")
        assert [m.body for m in c.finish()] == ["hello"]
        assert manual.now() == START
        q._check()

    def test_blocks_until_deadline(self, manual: ManualClock, q: Queue) -> None:
        """Section 12: empty only when the wait expires; advancing part-way keeps it waiting."""
        c = Consumer(q, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        manual.advance(19.999)
        wait_until_blocked(manual, c)
        c.join(timeout=0.01)
        assert c.is_alive(), "returned before its deadline"
        manual.advance(0.001)
        assert c.finish() == []
        assert manual.now() == START + 20

    def test_delay_ends_during_wait(self, manual: ManualClock, q: Queue) -> None:
        """Section 12: advancing the clock past a message's delay wakes the poll."""
        q.send("late", delay_seconds=5)
        c = Consumer(q, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        manual.advance(5)
        assert [m.body for m in c.finish()] == ["late"]
        assert manual.now() == START + 5

    def test_visibility_ends_during_wait(self, manual: ManualClock, q: Queue) -> None:
        """Section 12: advancing the clock past a visibility timeout wakes the poll."""
        q.send("a")
        q.receive(visibility_timeout=10)
        c = Consumer(q, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        manual.advance(10)
        [m] = c.finish()
        assert m.body == "a"
        assert m.attributes["ApproximateReceiveCount"] == "2"

    def test_change_visibility_zero_wakes_poll(self, manual: ManualClock, q: Queue) -> None:
        """Section 8/12: ChangeMessageVisibility(0) makes the message visible to a waiting poll."""
        q.send("a")
        [held] = q.receive()
        c = Consumer(q, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        q.change_visibility(held.receipt_handle, 0)
        [m] = c.finish()
        assert m.message_id == held.message_id
        assert manual.now() == START

    def test_one_message_two_consumers(self, manual: ManualClock, q: Queue) -> None:
        """Section 12: one message goes to one waiting consumer; the other keeps waiting until
        its deadline."""
        a = Consumer(q, wait_time_seconds=20)
        b = Consumer(q, wait_time_seconds=20)
        a.start()
        b.start()
        wait_until_blocked(manual, a, b, waiting=2)
        q.send("only")
        # Exactly one of them gets it; wait for that one.
        for _ in range(30_000):
            if not a.is_alive() or not b.is_alive():
                break
            a.join(timeout=0.001)
        winner, loser = (a, b) if not a.is_alive() else (b, a)
        assert [m.body for m in winner.finish()] == ["only"]
        wait_until_blocked(manual, loser)
        assert loser.is_alive()
        manual.advance(20)
        assert loser.finish() == []
        q._check()

    def test_max_messages_respected(self, manual: ManualClock, q: Queue) -> None:
        """Section 12: a woken long poll returns at most MaxNumberOfMessages."""
        c = Consumer(q, max_messages=2, wait_time_seconds=20)
        c.start()
        wait_until_blocked(manual, c)
        q.send_batch(["a", "b", "c"])  # committed and announced together
        assert len(c.finish()) == 2
        assert len(q) == 3


class TestLongPollAsync:
    """receive_async suspends the task, never the event loop (section 12)."""

    def test_returns_on_send_from_another_task(self) -> None:
        """Section 12: receive_async returns when another task sends; meanwhile other tasks
        keep running."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = Queue("aq", clock=clock)

        async def main() -> tuple[int, list[Message]]:
            ticks = 0
            poll = asyncio.create_task(q.receive_async(wait_time_seconds=20))
            while not clock._waiters:
                await asyncio.sleep(0)
            for _ in range(100):  # the loop is free while the poll waits
                ticks += 1
                await asyncio.sleep(0)
            assert not poll.done()
            q.send("from a task")
            return ticks, await asyncio.wait_for(poll, timeout=JOIN)

        ticks, msgs = asyncio.run(main())
        assert ticks == 100
        assert [m.body for m in msgs] == ["from a task"]
        assert clock.now() == START
        q._check()

    def test_advance_from_another_task(self) -> None:
        """Section 12: advancing the clock past a delay wakes an async long poll."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = Queue("aq", clock=clock)
        q.send("late", delay_seconds=3)

        async def main() -> list[Message]:
            poll = asyncio.create_task(q.receive_async(wait_time_seconds=20))
            while not clock._waiters:
                await asyncio.sleep(0)
            clock.advance(3)
            return await asyncio.wait_for(poll, timeout=JOIN)

        assert [m.body for m in asyncio.run(main())] == ["late"]

    @pytest.mark.usefixtures("autojump")
    def test_default_clock_empty_queue(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: under an autojump ManualClock an async long poll on an empty
        queue returns [] and the clock has advanced by exactly the wait time."""
        assert asyncio.run(queue.receive_async(wait_time_seconds=20)) == []
        assert clock.now() == START + 20

    def test_default_clock_available_message(self, clock: ManualClock, queue: Queue) -> None:
        """Section 12: an async receive returns available messages at once."""
        queue.send("a")
        msgs = asyncio.run(queue.receive_async(5, wait_time_seconds=20))
        assert [m.body for m in msgs] == ["a"]
        assert clock.now() == START

    def test_async_validates_like_sync(self, queue: Queue) -> None:
        """Section 2.1: receive_async applies the same parameter validation."""
        with pytest.raises(errors.InvalidParameterValue):
            asyncio.run(queue.receive_async(11))
        with pytest.raises(errors.InvalidParameterValue):
            asyncio.run(queue.receive_async(wait_time_seconds=21))


class TestInFlightLimit:
    """At the in-flight limit short polls raise OverLimit, long polls find nothing (section 4)."""

    @pytest.fixture(autouse=True)
    def small_limit(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(_limits, "IN_FLIGHT_MAX", 5)

    def test_short_poll_at_limit_raises(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: a short poll at the in-flight limit -> OverLimit (HTTP 403)."""
        for i in range(8):
            queue.send(str(i))
        assert len(queue.receive(5)) == 5
        with pytest.raises(errors.OverLimit) as info:
            queue.receive()
        assert info.value.http_status == 403
        assert len(queue) == 8
        queue._check()

    @pytest.mark.usefixtures("autojump")
    def test_long_poll_at_limit_returns_empty(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: a long poll at the limit gets no error, only an empty response."""
        for i in range(8):
            queue.send(str(i))
        queue.receive(5, visibility_timeout=600)
        assert queue.receive(wait_time_seconds=10) == []
        assert clock.now() == START + 10
        queue._check()

    def test_receive_never_crosses_the_limit(self, queue: Queue) -> None:
        """Section 4: a receive returns only as many messages as fit under the limit."""
        for i in range(10):
            queue.send(str(i))
        assert len(queue.receive(4)) == 4
        assert len(queue.receive(4)) == 1
        assert int(queue.get_attributes(["All"])["ApproximateNumberOfMessagesNotVisible"]) == 5
        queue._check()

    def test_delete_frees_room(self, queue: Queue) -> None:
        """Section 4: deleting an in-flight message makes room for one more."""
        for i in range(8):
            queue.send(str(i))
        msgs = queue.receive(5)
        queue.delete(msgs[0].receipt_handle)
        assert len(queue.receive(5)) == 1
        with pytest.raises(errors.OverLimit):
            queue.receive()

    def test_visibility_expiry_frees_room(self, clock: ManualClock, queue: Queue) -> None:
        """Section 4: messages whose visibility ended no longer count as in flight."""
        for i in range(8):
            queue.send(str(i))
        queue.receive(5, visibility_timeout=10)
        clock.advance(10)
        assert len(queue.receive(5)) == 5
        queue._check()

    def test_empty_queue_at_limit(self, queue: Queue) -> None:
        """Section 4: at the limit with nothing else stored, a short poll still raises."""
        for i in range(5):
            queue.send(str(i))
        queue.receive(5)
        with pytest.raises(errors.OverLimit):
            queue.receive()
