"""What happens on receive (ReceiveMessage): one path, from the request to the answer.

A receive request is planned once (:func:`plan`: the caller authorized, every
parameter checked) into a :class:`ReceivePlan`, and that value is all the rest
takes: the short poll (:func:`short_poll`, WaitTimeSeconds 0), the long poll's
generator (:func:`long_poll`, the loop of ``_polling.long_poll`` repeating one
attempt) and its two drivers, :func:`receive` for a thread and
:func:`receive_async` for asyncio, which differ only in how they wait
(``_polling.run_sync``, ``_polling.run_async``). One attempt under the lock is
:func:`attempt`: a FIFO queue's ReceiveRequestAttemptId replayed, the in-flight
limit, dead letters moved, the records delivered, and the answer made by the
caller's ``views`` (the :class:`~sqsqueue.Message` views, or an adapter's
bytes).

Every function is handed the queue; what it uses of it is :class:`Receivable`.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from sqsqueue import _deadletter, _faults, _limits, _validate
from sqsqueue._deadletter import Redrivable
from sqsqueue._faults import Faults
from sqsqueue._limits import MAX_MESSAGES_MAX, US, WAIT_TIME_MAX
from sqsqueue._message import _Record
from sqsqueue._metrics import Tally
from sqsqueue._polling import Poll, Pollable, run_async, run_sync
from sqsqueue._polling import long_poll as _poll_loop
from sqsqueue._settings import ALL, Operating, names_of
from sqsqueue._store import Records
from sqsqueue.errors import OverLimit

if TYPE_CHECKING:  # imported by whoever runs a loop (see _clock's imports)
    import asyncio

T = TypeVar("T")

#: What a receive makes of the records it delivered and their receipt
#: handles, under the queue's lock, given the system and message attribute
#: names asked for: the :class:`Message` views (``_views.message_views``), or
#: an adapter's answer written from the records (``sqsqueue.aws._wire``). It
#: must return an empty list exactly when there are no records: a long poll
#: waits on, and NumberOfEmptyReceives counts, an empty answer.
Views = Callable[[list[_Record], list[str], Sequence[str], Sequence[str]], list[T]]


class ReceivePlan(NamedTuple):
    """A ReceiveMessage request, checked: what every step of a receive takes."""

    #: MaxNumberOfMessages (1..10).
    limit: int
    #: VisibilityTimeout in seconds; None: the queue's, read at each attempt
    #: (a long poll sees a SetQueueAttributes made while it waits).
    visibility_timeout: int | None
    #: WaitTimeSeconds (0..20), the queue's ReceiveMessageWaitTimeSeconds if
    #: the request named none: 0 is a short poll.
    wait: int
    #: The system and message attribute names asked for.
    names: Sequence[str]
    user_names: Sequence[str]
    #: A FIFO queue's ReceiveRequestAttemptId (None on a standard queue).
    attempt_id: str | None


#: ``ReceivePlan(...)`` without the named tuple's Python-level ``__new__``.
_new_plan: Callable[[tuple[Any, ...]], ReceivePlan] = partial(tuple.__new__, ReceivePlan)
#: The plans of the most common call, every parameter left at its default,
#: made once: ``_DEFAULT_PLANS[wait][limit - 1]``, by the queue's wait time.
_DEFAULT_PLANS = tuple(
    tuple(
        _new_plan((limit, None, wait, ALL, ALL, None)) for limit in range(1, MAX_MESSAGES_MAX + 1)
    )
    for wait in range(WAIT_TIME_MAX + 1)
)


class Attempts(Protocol):
    """What a receive needs of the FIFO queue's ReceiveRequestAttemptIds."""

    def remember(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None: ...

    def replay(
        self, attempt_id: str, now: int, visibility_us: int
    ) -> tuple[list[_Record], list[str]] | None: ...


class Receivable(Operating, Pollable, Redrivable, Protocol):
    """What a receive uses of a queue (``_operations._BaseQueue``), besides what
    every operation (``_settings.Operating``), its long poll
    (``_polling.Pollable``) and its dead letters (``_deadletter.Redrivable``) do."""

    _records: Records
    _lane: OrderedDict[int, _Record]
    _received: Any  # a SortedKeyList (sortedcontainers is untyped)
    _tally: Tally | None
    _faults: Faults | None
    _fault_rng: random.Random
    _visibility_us: int
    _wait_s: int
    _max_receive_count: int

    @property
    def _attempts(self) -> Attempts | None: ...

    def _check_alive(self) -> None: ...

    def _in_flight(self, now: int) -> int: ...

    def _deliver_all(self, recs: list[_Record], now: int, visibility_us: int) -> list[str]: ...


# -- the plan -------------------------------------------------------------------------


def plan(
    queue: Receivable,
    max_messages: object,
    visibility_timeout: object,
    wait_time_seconds: object,
    attribute_names: object,
    message_attribute_names: object,
    receive_request_attempt_id: object,
    principal: str | None,
) -> ReceivePlan:
    """Check a ReceiveMessage's caller and parameters (``Queue.receive``'s, in
    its order: the entries of ``_operations`` pass them on as they stand),
    once: the plan every later step takes. The plan of the most common call
    (every parameter at its default) is one made in advance."""
    if (
        type(max_messages) is int
        and 0 < max_messages <= MAX_MESSAGES_MAX
        and visibility_timeout is None
        and wait_time_seconds is None
        and attribute_names is ALL
        and message_attribute_names is ALL
        and receive_request_attempt_id is None
        and principal is None
    ):
        return _DEFAULT_PLANS[queue._wait_s][max_messages - 1]
    if principal is not None:
        queue._authorize(principal, "ReceiveMessage")
    limit = _validate.max_messages(max_messages)
    vt = None if visibility_timeout is None else _validate.visibility_timeout(visibility_timeout)
    wait = queue._wait_s if wait_time_seconds is None else _validate.wait_time(wait_time_seconds)
    names = names_of("AttributeNames", attribute_names)
    # Unknown system attribute names are ignored, as unknown message
    # attribute names are (section 2.1; UNCONFIRMED for system names).
    user_names = names_of("MessageAttributeNames", message_attribute_names)
    attempt_id = None
    if receive_request_attempt_id is not None:
        # ReceiveRequestAttemptId applies to FIFO queues only [BM]; a standard
        # queue ignores it (UNCONFIRMED) after validating its format.
        attempt_id = _validate.fifo_id("ReceiveRequestAttemptId", receive_request_attempt_id)
        if not queue.FIFO:
            attempt_id = None
    return _new_plan((limit, vt, wait, names, user_names, attempt_id))


# -- one attempt, under the lock ------------------------------------------------------


def attempt(
    queue: Receivable,
    views: Views[T],
    plan: ReceivePlan,
    now: int,
    waits: bool,
) -> list[T]:
    """One non-blocking receive under the queue's lock, once the queue was found
    open and the deadlines up to ``now`` applied (``_begin``); ``waits``: a
    long poll's attempt. ``views`` makes the answer."""
    vt = plan.visibility_timeout
    visibility_us = queue._visibility_us if vt is None else vt * US
    attempt_id = plan.attempt_id
    if attempt_id is not None:
        attempts = queue._attempts
        assert attempts is not None  # attempt ids are kept on FIFO queues only
        replay = attempts.replay(attempt_id, now, visibility_us)
        if replay is not None:
            if queue._tally is not None:
                queue._tally.received += len(replay[0])
            return views(*replay, plan.names, plan.user_names)
    if not queue._records.count:
        return []
    limit = plan.limit
    # In flight <= lane + received: only a receive that could cross the limit
    # needs the exact count (section 4).
    # The limit is read from its module at each receive: tests lower it.
    in_flight_max = _limits.IN_FLIGHT_MAX
    if len(queue._lane) + queue._received._len + limit > in_flight_max:  # SortedList length
        room = in_flight_max - queue._in_flight(now)
        if room <= 0:
            return _at_in_flight_limit(queue, waits)
        limit = min(limit, room)
    target = _deadletter.redrive_target(queue) if queue._max_receive_count else None
    threshold = queue._max_receive_count if target is not None else 0
    deliver, dead = queue._ordering.select(now, limit, threshold)
    if queue._faults is not None:
        deliver = _faults.partial_poll(
            queue._faults, queue._fault_rng, deliver, waits, len(queue._records)
        )
    if dead:
        assert target is not None
        _deadletter.dead_letter(queue, dead, target, now)
    handles = queue._deliver_all(deliver, now, visibility_us)
    if attempt_id is not None:
        attempts = queue._attempts
        assert attempts is not None
        attempts.remember(attempt_id, now, deliver, handles)
    return views(deliver, handles, plan.names, plan.user_names)


def _at_in_flight_limit(queue: Receivable, waits: bool) -> list[Any]:
    """Standard queues: short polls raise OverLimit, long polls find nothing.
    FIFO queues: no error at the in-flight limit (section 4)."""
    if waits or queue.FIFO:
        return []
    # Message text UNCONFIRMED (section 4 gives the code only).
    raise OverLimit(
        "The maximum number of in flight messages is reached: "
        f"{_limits.IN_FLIGHT_MAX} messages are in flight."
    )


# -- the short poll, the long poll and its two drivers -------------------------------


def short_poll(queue: Receivable, views: Views[T], plan: ReceivePlan) -> list[T]:
    """A receive that never waits (WaitTimeSeconds 0): what a long poll's
    first attempt does, without the poll's generator and driver."""
    lock = queue._lock
    # `with queue._lock` in two calls: a with statement also looks up __enter__
    # and __exit__ (twice the cost). A DurableLock's acquire and release are its
    # __enter__ and __exit__.
    lock.acquire()
    try:
        got = attempt(queue, views, plan, queue._begin(), False)
        if not got and queue._tally is not None:
            queue._tally.empty_receives += 1  # NumberOfEmptyReceives: one per call
        return got
    finally:
        lock.release()


def long_poll(
    queue: Receivable, views: Views[T], plan: ReceivePlan, loop: asyncio.AbstractEventLoop | None
) -> Poll[T]:
    """The generator of a receive that waits up to ``plan.wait`` seconds
    (``_polling.long_poll``), for the thread's driver (``loop`` None) or
    asyncio's: each attempt is :func:`attempt` of the plan."""

    def attempt_at(now: int) -> list[T]:
        queue._check_alive()
        queue._advance(now)
        return attempt(queue, views, plan, now, True)

    return _poll_loop(queue, loop, attempt_at, plan.wait)


def receive(queue: Receivable, views: Views[T], plan: ReceivePlan) -> list[T]:
    """Receive as ``plan`` says, blocking the calling thread while a long poll waits."""
    if plan.wait == 0:
        return short_poll(queue, views, plan)
    return _counted(queue, run_sync(long_poll(queue, views, plan, None), queue._clock))


async def receive_async(queue: Receivable, views: Views[T], plan: ReceivePlan) -> list[T]:
    """:func:`receive` for asyncio: a long poll suspends the task, never the loop."""
    if plan.wait == 0:
        return short_poll(queue, views, plan)
    import asyncio  # the caller's loop imported it (see _clock's imports)

    loop = asyncio.get_running_loop()
    return _counted(queue, await run_async(long_poll(queue, views, plan, loop), queue._clock))


def _counted(queue: Receivable, got: list[T]) -> list[T]:
    """A long poll's answer, counted in NumberOfEmptyReceives when empty."""
    if not got:
        with queue._lock:
            if queue._tally is not None:
                queue._tally.empty_receives += 1
    return got
