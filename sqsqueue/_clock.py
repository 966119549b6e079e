"""Clocks: the only place sqsqueue reads time.

Every deadline in a queue (delay, visibility, retention, deduplication window,
purge and re-create windows, long-poll waits) is measured on an injected
:class:`Clock`. :class:`SystemClock` reads ``time.time()``, so freezegun and
time-machine keep working; :class:`ManualClock` is a virtual clock that only
moves when told to, so a 12-hour visibility timeout is tested in microseconds.

A long poll is a non-blocking receive attempt plus a *wait* on a
:class:`Waiter`. A waiter is woken by its queue (a send, a visibility change, a
close) or by the clock (time moved). How the wait passes is the clock's
business: ``SystemClock`` waits on the wall clock; ``ManualClock`` never moves
time by itself (unless autojump is asked for): it waits a bounded stretch of
wall time for another thread or task to act, then gives up, and the poll
returns what it has.

ruff's ``banned-api`` rule forbids ``time.time`` and friends everywhere else in
the package.
"""

from __future__ import annotations

import abc
import contextlib
import math
import threading
import time
from numbers import Real
from typing import TYPE_CHECKING

from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

# asyncio is imported inside the functions that use a loop, never by ``import
# sqsqueue``: whoever runs the loop imported it already. asyncio and what it
# brings (ssl, concurrent.futures) were 4,200 of the 22,750 objects a process
# that imported sqsqueue had tracked, which every full collection walks
# (``docs/architecture.md``, "What the collector sees"), in a process that may
# never run a loop. ``_polling`` and ``_receive`` do the same.
if TYPE_CHECKING:
    import asyncio

__all__ = ["Clock", "ManualClock", "SystemClock", "Waiter"]


class Waiter:
    """A blocked long poll, woken by its queue or by its clock.

    A waiter belongs to the thread (or asyncio task) that waits on it. ``wake``
    may be called from any thread, any number of times; the first call wins.
    """

    __slots__ = ("_called", "_event", "_future", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        self._called = False
        self._event: threading.Event | None = None
        self._future: asyncio.Future[None] | None = None
        if loop is None:
            self._event = threading.Event()
        else:
            self._future = loop.create_future()

    def wake(self) -> None:
        """Wake the waiter; safe from any thread."""
        self._called = True
        if self._event is not None:
            self._event.set()
            return
        loop, fut = self._loop, self._future
        assert loop is not None and fut is not None
        import asyncio  # the loop's owner imported it (see the imports)

        if asyncio._get_running_loop() is loop:
            _resolve(fut)  # on the loop's own thread: no wake-up of the loop needed
            return
        # A closed loop raises RuntimeError: nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_resolve, fut)

    @property
    def called(self) -> bool:
        """True once :meth:`wake` was called (it may not have taken effect yet)."""
        return self._called

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
        import asyncio  # the loop's owner imported it (see the imports)

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
        """Block until ``waiter`` is woken (True) or the wait ends (False).

        The wait ends when ``deadline`` passes, or early when the clock gives
        up: this base implementation waits on the wall clock and gives up when
        a full wall-clock wait left :meth:`now` where it was (time frozen by
        freezegun, say). A long poll whose wait ended before its deadline
        returns what is receivable.
        """
        while True:
            before = self.now()
            if deadline <= before:
                return waiter.woken
            if waiter.wait(deadline - before):
                return True
            if self.now() <= before:
                return False

    async def wait_async(self, waiter: Waiter, deadline: float) -> bool:
        """Like :meth:`wait`, for an asyncio task; never blocks the event loop."""
        while True:
            before = self.now()
            if deadline <= before:
                return waiter.woken
            if await waiter.wait_async(deadline - before):
                return True
            if self.now() <= before:
                return False


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


#: How long, in wall seconds, a long poll under a frozen ManualClock waits for
#: another thread or task to act before it gives up (the default of
#: ``ManualClock(max_wall_wait=...)``).
MAX_WALL_WAIT = 1.0


def _alone_in_thread() -> bool:
    """True when no other Python thread exists that could act on a queue."""
    return threading.active_count() <= 1


def _alone_in_loop() -> bool:
    """True when neither another thread, nor another asyncio task, nor a
    callback the loop is to run later (``loop.call_later``) could act."""
    import asyncio  # the loop's owner imported it (see the imports)

    if not _alone_in_thread() or len(asyncio.all_tasks()) > 1:
        return False
    # The loop's timer list is asyncio's own; read it where it is there (a loop
    # without one, uvloop say, counts as not alone: the poll waits max_wall_wait).
    scheduled = getattr(asyncio.get_running_loop(), "_scheduled", None)
    if scheduled is None:
        return False
    return all(handle.cancelled() for handle in scheduled)


class ManualClock(Clock):
    """A virtual clock that moves only when told to.

    >>> clock = ManualClock(start=1_700_000_000.0)
    >>> clock.advance(30)
    1700000030.0
    >>> clock.now()
    1700000030.0

    **Frozen time (the default, ``autojump_threshold=None``).** Only
    :meth:`advance` and :meth:`advance_to` move time, so nothing is redelivered,
    expires or becomes due that your test did not let time reach; threads and
    asyncio tasks keep their real-time relations (a consumer busy for a second
    of wall time is still within its 30-second visibility timeout). A long poll
    that finds nothing receivable waits in *wall* time for another thread or
    task to send, change visibility, advance the clock or close the queue; it
    is answered as soon as one does. It gives up, and returns what is receivable
    (usually ``[]``, time unchanged), after ``max_wall_wait`` wall seconds of
    nobody acting, or at once when no other thread or task exists that could
    act (a single-threaded test never waits).

    >>> from sqsqueue import Queue
    >>> q = Queue("jobs", clock=clock)
    >>> q.receive(wait_time_seconds=20)       # alone: returns at once, time frozen
    []
    >>> clock.now()
    1700000030.0

    **Autojump (opt-in, single-threaded code only).** With
    ``autojump_threshold=0`` a long poll that finds nothing jumps virtual time
    straight to its next deadline (a delayed or in-flight message becoming
    receivable, or the end of the wait); with a positive threshold it first
    waits that many wall seconds for another thread. This is trio's
    ``MockClock`` autojump without trio's knowledge of every task: a jump can
    pass a deadline another thread was still going to act before (a visibility
    timeout it was about to delete within), so use it only where the polling
    thread is the only actor.

    The clock refuses to go backwards. It is thread-safe.
    """

    def __init__(
        self,
        start: float = 0.0,
        *,
        autojump_threshold: float | None = None,
        max_wall_wait: float = MAX_WALL_WAIT,
    ) -> None:
        self._now = _check_seconds("start", start)
        if autojump_threshold is not None:
            autojump_threshold = _wall_seconds("autojump_threshold", autojump_threshold)
        self.autojump_threshold = autojump_threshold
        self.max_wall_wait = _wall_seconds("max_wall_wait", max_wall_wait)
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

    def _register(self, waiter: Waiter, deadline: float) -> bool:
        """Add ``waiter`` to those a move wakes; False if ``deadline`` passed."""
        with self._lock:
            if deadline <= self._now:
                return False
            self._waiters.add(waiter)
            return True

    def _unregister(self, waiter: Waiter, deadline: float, woken: bool) -> bool:
        """Remove ``waiter``; an autojump clock moves to ``deadline`` if nobody
        woke it. Returns ``woken``."""
        with self._lock:
            self._waiters.discard(waiter)
        if not woken and self.autojump_threshold is not None:
            self._move(deadline)
        return woken

    def _patience(self, alone: bool) -> float:
        """Wall seconds to wait for another actor before jumping or giving up."""
        if self.autojump_threshold is not None:
            return self.autojump_threshold
        return 0.0 if alone else self.max_wall_wait

    def wait(self, waiter: Waiter, deadline: float) -> bool:
        if not self._register(waiter, deadline):
            return waiter.woken
        try:
            woken = waiter.wait(self._patience(_alone_in_thread()))
        except BaseException:
            self._unregister(waiter, deadline, woken=True)
            raise
        return self._unregister(waiter, deadline, woken)

    async def wait_async(self, waiter: Waiter, deadline: float) -> bool:
        if not self._register(waiter, deadline):
            return waiter.woken
        try:
            woken = await waiter.wait_async(self._patience(_alone_in_loop()))
        except BaseException:  # cancelled: leave, and move no time
            self._unregister(waiter, deadline, woken=True)
            raise
        return self._unregister(waiter, deadline, woken)


def _wall_seconds(name: str, value: object) -> float:
    seconds = _check_seconds(name, value)
    if not 0 <= seconds <= threading.TIMEOUT_MAX:
        # Waiting longer than TIMEOUT_MAX raises OverflowError in threading.
        raise InvalidParameterValue(
            f"Value {seconds} for parameter {name} is invalid. "
            f"Reason: must be >= 0 and <= {threading.TIMEOUT_MAX:g}."
        )
    return seconds
