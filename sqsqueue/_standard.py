"""The standard queue: best-effort order, at-least-once, fair-queue group ids.

Its ordering policy is :class:`~sqsqueue._ordering.StandardOrdering` (oldest
receivable first, a message visible again before later ones); this module adds
the standard queue's send rules and its fault emulation (``_faults.py``).
"""

from __future__ import annotations

import random as _random
import threading
from collections.abc import Callable, Mapping
from typing import Any

from sqsqueue import _limits as L
from sqsqueue import _validate
from sqsqueue._clock import Clock
from sqsqueue._faults import Faults
from sqsqueue._message import SendResult, _Record, system_attributes_md5
from sqsqueue._operations import _BaseQueue, new_send_result
from sqsqueue._ordering import StandardOrdering
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["Queue"]


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
    _ORDERING = StandardOrdering

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
        account_id: str | None = None,
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
        self._stamp(rec, now, now + delay_s * L.US, sender_id)
        self._enqueue(rec)
        return new_send_result(
            (
                rec.message_id,
                rec.body,
                rec.attributes_md5,
                None if rec.trace_header is None else system_attributes_md5(rec.trace_header),
                None,
            )
        )
