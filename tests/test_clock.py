"""Clocks: ManualClock and SystemClock (docs/design.md principle 1)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import subprocess
import sys
import threading
import time

import pytest

from sqsqueue import Clock, ManualClock, Message, Queue, SystemClock, errors
from sqsqueue._clock import Waiter

START = 1_700_000_000.0


class TestManualClockReadings:
    """ManualClock starts where told and moves only when told."""

    def test_start(self) -> None:
        """Design principle 1: The clock reads its start time until moved."""
        clock = ManualClock(start=START)
        assert clock.now() == START
        assert clock.now() == START

    def test_default_start_is_zero(self) -> None:
        """Design principle 1: Without a start the clock reads 0.0."""
        assert ManualClock().now() == 0.0

    def test_advance(self) -> None:
        """Design principle 1: advance(s) moves time forward by s and returns the new time."""
        clock = ManualClock(start=START)
        assert clock.advance(30) == START + 30
        assert clock.now() == START + 30
        assert clock.advance(0.5) == START + 30.5
        assert clock.now() == START + 30.5

    def test_advance_zero(self) -> None:
        """Design principle 1: advance(0) is allowed and changes nothing."""
        clock = ManualClock(start=START)
        assert clock.advance(0) == START

    def test_advance_to(self) -> None:
        """Design principle 1: advance_to(t) moves time to t; t equal to now is allowed."""
        clock = ManualClock(start=START)
        assert clock.advance_to(START + 100) == START + 100
        assert clock.now() == START + 100
        assert clock.advance_to(START + 100) == START + 100

    def test_is_a_clock(self) -> None:
        """Design principle 1: ManualClock and SystemClock implement the Clock interface."""
        assert isinstance(ManualClock(), Clock)
        assert isinstance(SystemClock(), Clock)

    def test_repr(self) -> None:
        """Design principle 1: The repr shows the current time."""
        clock = ManualClock(start=START)
        clock.advance(1)
        assert repr(clock) == f"ManualClock(start={START + 1!r})"


class TestManualClockRefusals:
    """ManualClock refuses to go backwards and refuses non-numbers, with SQSErrors."""

    def test_negative_advance(self) -> None:
        """Design principle 1: advance with a negative duration raises and leaves time
        unchanged."""
        clock = ManualClock(start=START)
        with pytest.raises(errors.InvalidParameterValue) as info:
            clock.advance(-1)
        assert "backwards" in info.value.message
        assert clock.now() == START

    def test_advance_to_the_past(self) -> None:
        """Design principle 1: advance_to an earlier time raises and leaves time unchanged."""
        clock = ManualClock(start=START)
        with pytest.raises(errors.InvalidParameterValue):
            clock.advance_to(START - 0.001)
        assert clock.now() == START

    @pytest.mark.parametrize("bad", ["1", None, True, float("nan"), float("inf"), [1]])
    def test_non_numbers(self, bad: object) -> None:
        """Design principle 1: Non-numeric, boolean, NaN and infinite durations are refused with
        SQSErrors."""
        clock = ManualClock(start=START)
        with pytest.raises(errors.SQSError):
            clock.advance(bad)  # type: ignore[arg-type]
        with pytest.raises(errors.SQSError):
            clock.advance_to(bad)  # type: ignore[arg-type]
        assert clock.now() == START

    @pytest.mark.parametrize("bad", ["0", None, float("nan"), float("inf"), True])
    def test_bad_start(self, bad: object) -> None:
        """Design principle 1: A non-numeric, boolean or non-finite start is an SQSError."""
        with pytest.raises(errors.InvalidParameterValue):
            ManualClock(start=bad)  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", ["0", float("nan"), -1.0, -0.001, True])
    def test_bad_autojump_threshold(self, bad: object) -> None:
        """Design principle 1: A negative or non-numeric autojump_threshold is an SQSError."""
        with pytest.raises(errors.InvalidParameterValue):
            ManualClock(start=START, autojump_threshold=bad)  # type: ignore[arg-type]

    @pytest.mark.parametrize("threshold", [None, 0, 0.5, 2])
    def test_good_autojump_threshold(self, threshold: float | None) -> None:
        """Design principle 1: 0, None and positive thresholds are accepted and kept."""
        assert (
            ManualClock(start=START, autojump_threshold=threshold).autojump_threshold == threshold
        )


class TestManualClockThreads:
    """ManualClock is thread-safe."""

    def test_concurrent_advances_add_up(self) -> None:
        """Design principle 1: Concurrent advances from many threads are all applied exactly."""
        clock = ManualClock(start=START)
        threads = [
            threading.Thread(target=lambda: [clock.advance(1) for _ in range(500)])
            for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
            assert not t.is_alive()
        assert clock.now() == START + 8 * 500

    def test_concurrent_advance_to_is_monotonic(self) -> None:
        """Design principle 1: Concurrent advance_to calls never move time backwards."""
        clock = ManualClock(start=START)
        seen: list[float] = []
        lock = threading.Lock()

        def work(offset: int) -> None:
            for i in range(200):
                # Refused (not applied) when another thread already got further.
                with contextlib.suppress(errors.InvalidParameterValue):
                    clock.advance_to(START + i * 8 + offset)
                with lock:
                    seen.append(clock.now())

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
            assert not t.is_alive()
        assert clock.now() == START + 199 * 8 + 7
        assert max(seen) == clock.now()


class TestManualClockWaiting:
    """How a ManualClock passes a long poll's wait (autojump_threshold)."""

    def test_default_is_frozen_and_never_waits_alone(self) -> None:
        """Frozen time is the default (issue 12): alone in the process, a wait
        gives up at once and time does not move (a fresh interpreter, since
        this one may hold other tests' threads)."""
        assert ManualClock().autojump_threshold is None
        code = (
            "import threading, time\n"
            "from sqsqueue._clock import ManualClock, Waiter\n"
            "clock = ManualClock(start=1_700_000_000.0)\n"
            "assert threading.active_count() == 1\n"
            "started = time.perf_counter()\n"
            "assert clock.wait(Waiter(), 1_700_000_020.0) is False\n"
            "assert time.perf_counter() - started < 0.5\n"
            "assert clock.now() == 1_700_000_000.0\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
        )
        assert result.returncode == 0, result.stderr

    def test_frozen_wait_gives_up_after_max_wall_wait(self) -> None:
        """Frozen time with another thread alive: a wait lasts max_wall_wait wall
        seconds when nobody acts, then gives up without moving time."""
        clock = ManualClock(start=START, max_wall_wait=0.2)
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            started = time.perf_counter()
            assert clock.wait(Waiter(), START + 20) is False
            elapsed = time.perf_counter() - started
        finally:
            stop.set()
            other.join()
        assert 0.15 <= elapsed < 5
        assert clock.now() == START

    @pytest.mark.parametrize("bad", [-1, "1", math.inf, None])
    def test_bad_max_wall_wait(self, bad: object) -> None:
        """max_wall_wait is a finite number of seconds >= 0."""
        with pytest.raises(errors.InvalidParameterValue):
            ManualClock(max_wall_wait=bad)  # type: ignore[arg-type]

    def test_autojump_zero_jumps_to_deadline(self) -> None:
        """Design principle 1: autojump_threshold=0: a wait jumps virtual time to its
        deadline at once."""
        clock = ManualClock(start=START, autojump_threshold=0)
        waiter = Waiter()
        assert clock.wait(waiter, START + 20) is False
        assert clock.now() == START + 20

    def test_deadline_already_passed(self) -> None:
        """Design principle 1: A wait whose deadline has passed returns at once and does not move
        time."""
        clock = ManualClock(start=START)
        assert clock.wait(Waiter(), START - 1) is False
        assert clock.now() == START

    def test_woken_waiter(self) -> None:
        """Design principle 1: A waiter woken before the wait reports True and time does not
        move."""
        clock = ManualClock(start=START, autojump_threshold=None)
        waiter = Waiter()
        waiter.wake()
        assert clock.wait(waiter, START + 20) is True
        assert clock.now() == START

    def test_autojump_none_blocks_until_advance(self) -> None:
        """Design principle 1: autojump_threshold=None: a wait blocks until another thread
        advances the clock."""
        clock = ManualClock(start=START, autojump_threshold=None)
        waiter = Waiter()
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(clock.wait(waiter, START + 20)))
        t.start()
        while not clock._waiters and t.is_alive():
            t.join(timeout=0.001)
        t.join(timeout=0.05)
        assert t.is_alive(), "the wait must not return while nobody moves time"
        clock.advance(5)
        t.join(timeout=10)
        assert not t.is_alive()
        assert result == [True]  # woken by the advance, not by a jump
        assert clock.now() == START + 5

    @pytest.mark.parametrize("threshold", [None, 60])
    def test_wake_from_another_thread_ends_the_wait(self, threshold: float | None) -> None:
        """Design principle 1: with autojump_threshold=None, or a positive
        threshold not yet reached, a wake from another thread ends the wait and
        time is unchanged."""
        clock = ManualClock(start=START, autojump_threshold=threshold)
        waiter = Waiter()
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(clock.wait(waiter, START + 20)))
        t.start()
        while not clock._waiters and t.is_alive():
            t.join(timeout=0.001)
        waiter.wake()
        t.join(timeout=10)
        assert not t.is_alive()
        assert result == [True]
        assert clock.now() == START

    def test_positive_threshold_jumps_when_nobody_acts(self) -> None:
        """Design principle 1: A positive threshold waits that long on the wall clock, then jumps
        to the deadline."""
        clock = ManualClock(start=START, autojump_threshold=0.001)
        assert clock.wait(Waiter(), START + 20) is False
        assert clock.now() == START + 20

    def test_async_autojump(self) -> None:
        """Design principle 1: wait_async with autojump 0 jumps to the deadline without blocking
        the loop."""
        clock = ManualClock(start=START, autojump_threshold=0)

        async def main() -> bool:
            return await clock.wait_async(Waiter(asyncio.get_running_loop()), START + 7)

        assert asyncio.run(main()) is False
        assert clock.now() == START + 7

    def test_async_wait_woken_by_advance(self) -> None:
        """Design principle 1: wait_async with autojump None is woken by an advance from another
        task."""
        clock = ManualClock(start=START, autojump_threshold=None)

        async def main() -> bool:
            waiter = Waiter(asyncio.get_running_loop())
            task = asyncio.create_task(clock.wait_async(waiter, START + 20))
            while not clock._waiters:
                await asyncio.sleep(0)
            clock.advance(3)
            return await asyncio.wait_for(task, timeout=10)

        assert asyncio.run(main()) is True
        assert clock.now() == START + 3


class TestWaiter:
    """Waiter: the first wake wins, from any thread."""

    def test_wake_is_idempotent(self) -> None:
        """Design principle 1: Waking twice is harmless; woken stays True."""
        w = Waiter()
        assert not w.woken
        w.wake()
        w.wake()
        assert w.woken
        assert w.wait(0) is True

    def test_thread_waiter_times_out(self) -> None:
        """Design principle 1: An unwoken thread waiter's wait(0) reports False."""
        assert Waiter().wait(0) is False

    def test_async_waiter_woken_from_thread(self) -> None:
        """Design principle 1: An asyncio waiter can be woken from another thread."""

        async def main() -> bool:
            w = Waiter(asyncio.get_running_loop())
            t = threading.Thread(target=w.wake)
            t.start()
            ok = await w.wait_async(10)
            t.join(timeout=10)
            return ok and w.woken

        assert asyncio.run(main()) is True


class TestSystemClock:
    """SystemClock reads time.time() (so freezegun and time-machine work)."""

    def test_reads_time_time(self) -> None:
        """Design principle 1: now() lies between two time.time() readings taken around it."""
        before = time.time()  # noqa: TID251
        now = SystemClock().now()
        after = time.time()  # noqa: TID251
        assert before <= now <= after

    def test_follows_patched_time(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Design principle 1: now() reads time.time() at call time, so patching time.time moves
        it."""
        monkeypatch.setattr(time, "time", lambda: 1234.5)
        assert SystemClock().now() == 1234.5

    def test_repr(self) -> None:
        """Design principle 1: The repr is SystemClock()."""
        assert repr(SystemClock()) == "SystemClock()"

    def test_wait_with_passed_deadline(self) -> None:
        """Design principle 1: A SystemClock wait whose deadline has passed returns at once."""
        clock = SystemClock()
        w = Waiter()
        assert clock.wait(w, clock.now() - 1) is False
        w.wake()
        assert clock.wait(w, clock.now() + 60) is True

    def test_queue_defaults_to_system_clock(self) -> None:
        """Design principle 1: a queue without a clock uses SystemClock."""
        assert isinstance(Queue("q").clock, SystemClock)

    def test_long_poll_on_system_clock_woken_by_send(self) -> None:
        """§12 / docs/design.md principle 1: a SystemClock long poll returns when another
        thread sends (the wait is woken, not timed out)."""
        q = Queue("q", clock=SystemClock())
        got: list[list[Message]] = []
        t = threading.Thread(target=lambda: got.append(q.receive(wait_time_seconds=20)))
        t.start()
        while not q._waiters and t.is_alive():
            t.join(timeout=0.001)
        q.send("wake up")
        t.join(timeout=30)
        assert not t.is_alive()
        assert [m.body for m in got[0]] == ["wake up"]
        q._check()
