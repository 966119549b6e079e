"""The standard queue: best-effort order, at-least-once, fair-queue group ids.

Ordering policy: AWS keeps a standard queue's send order on a best-effort
basis, and a message whose visibility timeout ended is delivered before visible
messages sent after it (recorded against real AWS, issue 12 §6). So a receive
returns the receivable messages in this order: a never-received message by the
moment it became receivable (its send time plus delay), a received message that
is visible again by its send time, ties in send order.

It merges three streams, each already in that order: the ready deque of
undelayed fresh messages kept here, the lifecycle's sorted index of delayed (or
dead-letter) fresh messages by due time, and its index of received messages
visible again by send time (``_revisible``). Received messages wait in flight
in the in-flight lane or in ``_received`` (by deadline); when their deadline
has passed, ``_select`` first moves them into ``_revisible``, each once per
visibility timeout, in O(log n). Taking k messages costs O(log n + k log n);
nothing scans the queue.
"""

from __future__ import annotations

import heapq
import random as _random
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from operator import attrgetter
from typing import Any

from sqsqueue import _limits as L
from sqsqueue import _validate
from sqsqueue._clock import Clock
from sqsqueue._faults import REORDER_WINDOW, SMALL_QUEUE, Faults
from sqsqueue._lifecycle import _BaseQueue, _new_send_result
from sqsqueue._message import SEQ_BITS, SEQ_MASK, SendResult, _Record, md5_of_attributes
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["Queue"]

_VKEY = attrgetter("vkey")


def _order(rec: _Record) -> int:
    """A receivable record's place in the standard order (see the module
    docstring): due time for a fresh record, send time for a received one."""
    return rec.vkey if rec.receive_count == 0 else rec.skey


def system_attributes_md5(trace_header: str | None) -> str | None:
    """MD5OfMessageSystemAttributes (section 7.3)."""
    if trace_header is None:
        return None
    return md5_of_attributes((("AWSTraceHeader", "String", trace_header),))


class Queue(_BaseQueue):
    """An Amazon SQS standard queue, in process.

    >>> from sqsqueue import ManualClock
    >>> clock = ManualClock(start=1_700_000_000.0)
    >>> q = Queue("jobs", clock=clock, visibility_timeout=30)
    >>> _ = q.send("hello")
    >>> [m] = q.receive()
    >>> q.receive()            # in flight for 30 s
    []
    >>> _ = clock.advance(30)
    >>> q.receive()[0].body    # visible again: redelivered
    'hello'

    Queue attributes are keywords (``visibility_timeout=30``) or AWS names in
    ``attributes={"VisibilityTimeout": "30"}``; both are validated with AWS's
    rules. ``clock`` defaults to :class:`SystemClock`; ``random`` (a seeded
    ``random.Random``) makes message ids and receipt handles reproducible.
    Thread-safe.
    """

    FIFO = False

    def __init__(
        self,
        name: str,
        *,
        clock: Clock | None = None,
        visibility_timeout: int | None = None,
        delay_seconds: int | None = None,
        message_retention_period: int | None = None,
        maximum_message_size: int | None = None,
        receive_message_wait_time_seconds: int | None = None,
        attributes: Mapping[str, object] | None = None,
        random: _random.Random | None = None,
        region: str = "us-east-1",
        account_id: str = "000000000000",
        dead_letter_queue: _BaseQueue | None = None,
        max_receive_count: int | None = None,
        faults: Faults | None = None,
        _lock: threading.RLock | None = None,
        _resolver: Callable[[str], _BaseQueue | None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name,
            clock=clock,
            attributes=attributes,
            random=random,
            region=region,
            account_id=account_id,
            dead_letter_queue=dead_letter_queue,
            max_receive_count=max_receive_count,
            _lock=_lock,
            _resolver=_resolver,
            visibility_timeout=visibility_timeout,
            delay_seconds=delay_seconds,
            message_retention_period=message_retention_period,
            maximum_message_size=maximum_message_size,
            receive_message_wait_time_seconds=receive_message_wait_time_seconds,
            **kwargs,
        )
        self._fault_rng = _random.Random(0)
        self.faults = faults

    @property
    def faults(self) -> Faults | None:
        """The faults this queue emulates (see :class:`Faults`); None = exact."""
        return self._faults

    @faults.setter
    def faults(self, faults: Faults | None) -> None:
        if faults is not None and not isinstance(faults, Faults):
            raise InvalidParameterValue(
                f"Value {show(faults)} for parameter faults is invalid. Reason: must be a Faults."
            )
        with self._lock:
            self._faults = faults if faults is not None and faults.active else None
            self._fault_rng = _random.Random(faults.seed if faults is not None else 0)

    # -- ordering policy: the lifecycle's indexes plus the ready deque -------------

    def _reset_policy(self) -> None:
        # Fast lane: never-received messages sent without delay are receivable
        # at once and arrive in key order, so a deque holds them in order and
        # saves a sorted-index insert and removal per message (the hot path).
        # Delayed messages and dead letters go to the lifecycle's sorted index.
        self._ready: deque[_Record] = deque()

    def _add_fresh(self, rec: _Record) -> None:
        ready = self._ready
        if rec.vkey >> SEQ_BITS == rec.skey >> SEQ_BITS and (
            not ready or ready[-1].vkey < rec.vkey
        ):
            ready.append(rec)
        else:
            self._fresh.add(rec)

    def _remove_fresh(self, rec: _Record) -> None:
        ready = self._ready
        if ready and ready[0] is rec:
            ready.popleft()
        elif rec.vkey >> SEQ_BITS == rec.skey >> SEQ_BITS and rec in ready:
            # Only a reordering fault takes from further in, within its window.
            ready.remove(rec)
        else:
            self._fresh.remove(rec)

    def _fresh_count(self) -> int:
        return len(self._fresh) + len(self._ready)

    def _is_fresh_indexed(self, rec: _Record) -> bool:
        return rec in self._fresh or rec in self._ready

    def _select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        self._settle(now)  # records that became visible again leave the lane
        bound = (now << SEQ_BITS) | SEQ_MASK
        received = self._received
        revisible = self._revisible
        if received and received[0].vkey <= bound:
            # Visible again: from deadline order to send order, once each.
            while received and received[0].vkey <= bound:
                revisible.add(received.pop(0))
        streams: list[Iterable[_Record]] = []
        if self._ready:
            streams.append(self._ready)  # every fast-lane record is receivable
        fresh = self._fresh
        if fresh and fresh[0].vkey <= bound:
            streams.append(fresh.irange_key(max_key=bound))
        if revisible:
            streams.append(revisible)  # every one is receivable
        if not streams:
            return [], []
        faults = self._faults
        window = limit * REORDER_WINDOW if faults is not None and faults.reorder else limit
        if len(streams) == 1:
            if not threshold and window == limit:
                # The common case, one stream and nothing to dead-letter: in C.
                return list(islice(streams[0], limit)), []
            candidates: Iterable[_Record] = streams[0]
        else:
            candidates = heapq.merge(*streams, key=_order)
        deliver: list[_Record] = []
        dead: list[_Record] = []
        for rec in candidates:
            if threshold and rec.receive_base + rec.receive_count >= threshold:
                dead.append(rec)
                continue
            deliver.append(rec)
            if len(deliver) == window:
                break
        if window != limit:
            self._fault_rng.shuffle(deliver)
            del deliver[limit:]
        return deliver, dead

    def _filter_delivery(self, deliver: list[_Record], long_poll: bool) -> list[_Record]:
        faults = self._faults
        if (
            faults is not None
            and faults.partial_short_polls
            and not long_poll
            and len(self._records) < SMALL_QUEUE
        ):
            return deliver[: self._fault_rng.randint(0, len(deliver))]
        return deliver

    def _lose_delete(self, rec: _Record) -> bool:
        faults = self._faults
        return faults is not None and self._fault_rng.random() < faults.duplicate_rate

    def _next_due(self, now: int) -> int | None:
        self._settle(now)
        bound = (now << SEQ_BITS) | SEQ_MASK
        due = None
        for index in (self._fresh, self._received):
            i = index.bisect_key_right(bound)
            if i < len(index):
                t = index[i].vkey >> SEQ_BITS
                due = t if due is None else min(due, t)
        if self._lane:
            t = next(iter(self._lane.values())).vkey >> SEQ_BITS
            due = t if due is None else min(due, t)
        return due

    def _check_policy(self) -> None:
        pass

    # -- send --------------------------------------------------------------------

    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]:
        if deduplication_id is not None:
            # FIFO-only parameter; message text UNCONFIRMED (section 2.1).
            raise InvalidParameterValue(
                f"Value {_validate.echo(deduplication_id)} for parameter "
                "MessageDeduplicationId is invalid. Reason: The request include parameter "
                "that is not valid for this queue type."
            )
        if group_id is None:
            return None, None
        # Fair queues: a MessageGroupId is accepted and returned (section 10.1).
        return _validate.fifo_id("MessageGroupId", group_id), None

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        delay_s = self._delay_s if delay is None else delay
        self._sequence(rec, now, now + delay_s * L.US, sender_id)
        self._enqueue(rec)
        return _new_send_result(
            (
                rec.message_id,
                rec.body,
                rec.attributes_md5,
                None if rec.trace_header is None else system_attributes_md5(rec.trace_header),
                None,
            )
        )
