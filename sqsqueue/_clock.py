"""Clocks: the only place sqsqueue reads time.

Every deadline in a queue (delay, visibility, retention, deduplication window,
purge and re-create windows, long-poll waits) is measured on an injected
:class:`Clock`. :class:`SystemClock` reads ``time.time()``, so freezegun and
time-machine keep working; :class:`ManualClock` is a virtual clock that only
moves when told to, so a 12-hour visibility timeout is tested in microseconds.

A long poll is a non-blocking receive attempt plus a *wait* on a
:class:`Waiter`. A waiter is woken by its queue (a send, a visibility change) or
by the clock (time moved). How the wait passes is the clock's business:
``SystemClock`` waits on the wall clock; ``ManualClock`` never sleeps on the wall
clock but waits for another thread to act and, by default, jumps virtual time
straight to the waiter's next deadline (trio's ``MockClock`` autojump).

ruff's ``banned-api`` rule forbids ``time.time`` and friends everywhere else in
the package.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import math
import threading
import time
from numbers import Real

from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["Clock", "ManualClock", "SystemClock", "Waiter"]


class Waiter:
    """A blocked long poll, woken by its queue or by its clock.

    A waiter belongs to the thread (or asyncio task) that waits on it. ``wake``
    may be called from any thread, any number of times; the first call wins.
    """

    __slots__ = ("_event", "_future", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._event: threading.Event | None = None
        self._future: asyncio.Future[None] | None = None
        if loop is None:
            self._event = threading.Event()
        else:
            self._future = loop.create_future()

    def wake(self) -> None:
        """Wake the waiter; safe from any thread."""
        if self._event is not None:
            self._event.set()
            return
        loop, fut = self._loop, self._future
        assert loop is not None and fut is not None
        # A closed loop raises RuntimeError: nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_resolve, fut)

    @property
    def woken(self) -> bool:
        """True once :meth:`wake` has taken effect."""
        if self._event is not None:
            return self._event.is_set()
        assert self._future is not None
        return self._future.done()

    def wait(self, timeout: float | None) -> bool:
        """Block the calling thread until woken or ``timeout`` wall seconds pass."""
        assert self._event is not None, "an asyncio waiter cannot block a thread"
        return self._event.wait(timeout)

    async def wait_async(self, timeout: float | None) -> bool:
        """Suspend the calling task until woken or ``timeout`` seconds pass."""
        fut = self._future
        assert fut is not None, "a thread waiter cannot be awaited"
        if timeout is None:
            await asyncio.shield(fut)
            return True
        if timeout <= 0:
            await asyncio.sleep(0)
            return fut.done()
        done, _ = await asyncio.wait({fut}, timeout=timeout)
        return bool(done)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Clock(abc.ABC):
    """What a queue needs from time: a reading, and a way to wait for a deadline.

    Subclass it to drive queues from your own notion of time; only :meth:`now`
    is required. Times are POSIX epoch seconds as floats.
    """

    @abc.abstractmethod
    def now(self) -> float:
        """The current time in epoch seconds."""

    def wait(self, waiter: Waiter, deadline: float) -> bool:
        """Block until ``waiter`` is woken (True) or ``deadline`` passes (False)."""
        timeout = deadline - self.now()
        if timeout <= 0:
            return waiter.woken
        return waiter.wait(timeout)

    async def wait_async(self, waiter: Waiter, deadline: float) -> bool:
        """Like :meth:`wait`, for an asyncio task; never blocks the event loop."""
        timeout = deadline - self.now()
        if timeout <= 0:
            return waiter.woken
        return await waiter.wait_async(timeout)


class SystemClock(Clock):
    """Wall-clock time from ``time.time()`` (the default clock).

    >>> abs(SystemClock().now() - time.time()) < 5
    True
    """

    def now(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "SystemClock()"


#: The largest time or interval a ManualClock takes, in seconds (some 31 million
#: years): queues count in integer microseconds, and beyond this a float time no
#: longer converts to them and back.
MAX_SECONDS = 1e15


def _check_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter {name} is invalid. Reason: must be a number."
        )
    try:
        seconds = float(value)
    except (OverflowError, ValueError):  # an int or Fraction too large for a float
        seconds = math.inf
    if not math.isfinite(seconds):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter {name} is invalid. Reason: must be finite."
        )
    if abs(seconds) > MAX_SECONDS:
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter {name} is invalid. Reason: must be at most "
            f"{MAX_SECONDS:g} in magnitude."
        )
    return seconds


class ManualClock(Clock):
    """A virtual clock that moves only when told to.

    >>> clock = ManualClock(start=1_700_000_000.0)
    >>> clock.advance(30)
    1700000030.0
    >>> clock.now()
    1700000030.0

    ``autojump_threshold`` says what a long poll does when nothing is receivable:

    * ``0`` (default): jump virtual time at once to the poll's next deadline (the
      moment a delayed or in-flight message becomes receivable, or the end of
      the wait). A single-threaded test never blocks and never sleeps.
    * a positive number: first wait that many *wall* seconds for another thread
      to send, change visibility or advance the clock, then jump.
    * ``None``: never jump; another thread or task must send or call
      :meth:`advance`. Use this when producer and consumer threads share a clock
      and the test drives time itself.

    The clock refuses to go backwards. It is thread-safe.
    """

    def __init__(self, start: float = 0.0, *, autojump_threshold: float | None = 0.0) -> None:
        self._now = _check_seconds("start", start)
        if autojump_threshold is not None:
            autojump_threshold = _check_seconds("autojump_threshold", autojump_threshold)
            if not 0 <= autojump_threshold <= threading.TIMEOUT_MAX:
                # Waiting longer than TIMEOUT_MAX raises OverflowError in threading.
                raise InvalidParameterValue(
                    f"Value {autojump_threshold} for parameter autojump_threshold is "
                    f"invalid. Reason: must be >= 0 and <= {threading.TIMEOUT_MAX:g}."
                )
        self.autojump_threshold = autojump_threshold
        self._lock = threading.Lock()
        self._waiters: set[Waiter] = set()

    def __repr__(self) -> str:
        return f"ManualClock(start={self._now!r})"

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (>= 0) and wake every long poll.

        Returns the new time.
        """
        seconds = _check_seconds("seconds", seconds)
        if seconds < 0:
            raise InvalidParameterValue(
                f"Value {seconds} for parameter seconds is invalid. "
                "Reason: the clock cannot go backwards."
            )
        if self._now + seconds > MAX_SECONDS:
            raise InvalidParameterValue(
                f"Value {seconds} for parameter seconds is invalid. Reason: the clock would "
                f"pass {MAX_SECONDS:g}."
            )
        return self._move(self._now + seconds)

    def advance_to(self, timestamp: float) -> float:
        """Move time forward to ``timestamp``; earlier timestamps are refused."""
        timestamp = _check_seconds("timestamp", timestamp)
        if timestamp < self._now:
            raise InvalidParameterValue(
                f"Value {timestamp} for parameter timestamp is invalid. "
                "Reason: the clock cannot go backwards."
            )
        return self._move(timestamp)

    def _move(self, timestamp: float) -> float:
        with self._lock:
            self._now = max(self._now, timestamp)
            waiters = list(self._waiters)
            now = self._now
        for waiter in waiters:
            waiter.wake()
        return now

    def wait(self, waiter: Waiter, deadline: float) -> bool:
        with self._lock:
            if deadline <= self._now:
                return waiter.woken
            self._waiters.add(waiter)
        try:
            woken = waiter.wait(self.autojump_threshold)
        finally:
            with self._lock:
                self._waiters.discard(waiter)
        if not woken:
            self._move(deadline)
        return woken

    async def wait_async(self, waiter: Waiter, deadline: float) -> bool:
        with self._lock:
            if deadline <= self._now:
                return waiter.woken
            self._waiters.add(waiter)
        try:
            woken = await waiter.wait_async(self.autojump_threshold)
        finally:
            with self._lock:
                self._waiters.discard(waiter)
        if not woken:
            self._move(deadline)
        return woken
