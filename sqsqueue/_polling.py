"""Long polling: one loop (:func:`long_poll`), a thread driver and an asyncio driver.

A long poll is a non-blocking receive attempt under the queue's lock, then,
if it found nothing, a wait *outside* the lock on a :class:`~sqsqueue._clock.Waiter`
until something could have changed: a send, a visibility change or a close
(the queue wakes its waiters, ``Lifecycle._notify``), the next deadline (a
delay or visibility timeout ending, a move task acting: :func:`wake_time`), or
the clock moving. How the wait passes is the clock's business
(``_clock.py``); the loop is written once, as a generator, and
:func:`run_sync` and :func:`run_async` drive it.

The loop is handed the queue and the receive to repeat; what it uses of the
queue is :class:`Pollable`, so this module imports no queue class.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Protocol, TypeVar

from sqsqueue._clock import Clock, Waiter
from sqsqueue._lifecycle import Ordering
from sqsqueue._limits import US

if TYPE_CHECKING:  # imported by whoever runs a loop (see _clock's imports)
    import asyncio

T = TypeVar("T")
#: What a poll yields to its driver: the waiter and when to stop waiting (µs);
#: it returns the receive's answer (the Message views, or an adapter's).
Poll = Generator[tuple[Waiter, int], bool, list[T]]


class Pollable(Protocol):
    """What a long poll uses of a queue (``_operations._BaseQueue``)."""

    _lock: threading.RLock
    _clock: Clock
    _closed: bool
    _waiters: dict[Waiter, None]
    #: The next moment after ``now`` a move task acts (a Broker's queues).
    _next_tick: Callable[[int], int | None] | None
    _ordering: Ordering

    def _now_us(self) -> int: ...

    def _notify(self, count: int | None = None) -> None: ...


def long_poll(
    queue: Pollable,
    loop: asyncio.AbstractEventLoop | None,
    receive_at: Callable[[int], list[T]],
    wait: int,
) -> Poll[T]:
    """A receive with its long poll, written once for both drivers:
    ``receive_at(now)`` (a non-blocking receive, called under the queue's
    lock) until it finds messages or ``wait`` seconds pass.

    Yields ``(waiter, wake_at)`` (microseconds on the queue's clock) for the
    driver to wait on, the thread's way or asyncio's, and is sent whether
    the waiter was woken. Returns the messages: as soon as any is receivable,
    ``[]`` at the poll's deadline, what is receivable when the clock gives
    up waiting (a frozen ManualClock with nobody else acting), and ``[]``
    when the queue is closed during the wait.
    """
    deadline: int | None = None
    last_try = False
    while True:
        with queue._lock:
            if deadline is not None and queue._closed:
                return []
            now = queue._now_us()
            msgs = receive_at(now)
            if deadline is None:
                deadline = now + wait * US
            if msgs or last_try or now >= deadline:
                return msgs
            wake_at = wake_time(queue, now, deadline)
            waiter = Waiter(loop)
            queue._waiters[waiter] = None
        looked = False
        try:
            woken = yield waiter, wake_at
            looked = True
        finally:
            with queue._lock:
                del queue._waiters[waiter]
                if not looked and waiter.called and queue._waiters:
                    # Woken for a message, but leaving without looking (the
                    # task was cancelled): another poll looks instead.
                    queue._notify(1)
        # Not woken, and time has not reached wake_at: the clock gave up
        # waiting. One last attempt, then the poll returns what it found.
        last_try = not woken and round(queue._clock.now() * US) < wake_at


def wake_time(queue: Pollable, now: int, deadline: int) -> int:
    """When a poll that found nothing at ``now`` should look again: the next
    deadline of the queue's messages or move tasks, at the latest ``deadline``."""
    due = queue._ordering.next_due(now)
    if queue._next_tick is not None:
        # A move task may send a message here before then (section 12: a
        # long poll returns as soon as a message is receivable).
        moves = queue._next_tick(now)
        if moves is not None and (due is None or moves < due):
            due = moves
    return deadline if due is None else min(deadline, due)


def run_sync(poll: Poll[T], clock: Clock) -> list[T]:
    """Drive ``poll`` in the calling thread, blocking it while the poll waits."""
    with contextlib.closing(poll):
        try:
            waiter, wake_at = next(poll)
            while True:
                waiter, wake_at = poll.send(clock.wait(waiter, wake_at / US))
        except StopIteration as done:
            msgs: list[T] = done.value
            return msgs


async def run_async(poll: Poll[T], clock: Clock) -> list[T]:
    """Drive ``poll`` in the calling asyncio task; the loop never blocks."""
    with contextlib.closing(poll):
        try:
            waiter, wake_at = next(poll)
            while True:
                waiter, wake_at = poll.send(await clock.wait_async(waiter, wake_at / US))
        except StopIteration as done:
            msgs: list[T] = done.value
            return msgs
