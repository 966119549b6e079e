"""The standard queue: best-effort order, at-least-once, fair-queue group ids.

Its ordering policy is :class:`~sqsqueue._ordering.StandardOrdering` (oldest
receivable first, a message visible again before later ones); this module adds
the standard queue's send rules and its fault emulation (``_faults.py``).
"""

from __future__ import annotations

import random as _random
from collections.abc import Sequence
from typing import Unpack

from sqsqueue import _validate
from sqsqueue._faults import Faults
from sqsqueue._message import (
    R_BODY,
    R_EXTRA,
    R_ID,
    X_ATTRS_MD5,
    X_TRACE,
    SendResult,
    _Record,
    system_attributes_md5,
)
from sqsqueue._operations import QueueOptions, _BaseQueue
from sqsqueue._ordering import StandardOrdering
from sqsqueue._send import new_send_result
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
    Every keyword, with its type: ``_operations.QueueOptions``. Thread-safe.
    """

    FIFO = False
    _ORDERING = StandardOrdering

    def __init__(self, name: str, **options: Unpack[QueueOptions]) -> None:
        super().__init__(name, **options)
        self._fault_rng = _random.Random(0)
        self.faults = options.get("faults")

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

    def _commit_all(
        self, prepared: Sequence[tuple[_Record, int | None]], now: int, sender_id: str
    ) -> list[SendResult]:
        stored = self._admit(prepared, now, sender_id)
        return [_result(rec) for rec in stored]

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        return _result(self._admit(((rec, delay),), now, sender_id)[0])


def _result(rec: _Record) -> SendResult:
    """The SendResult of a stored record of a standard queue."""
    extra = rec[R_EXTRA]
    if extra is None:
        return new_send_result((rec[R_ID], rec[R_BODY], None, None, None))
    trace = extra[X_TRACE]
    return new_send_result(
        (
            rec[R_ID],
            rec[R_BODY],
            extra[X_ATTRS_MD5],
            None if trace is None else system_attributes_md5(trace),
            None,
        )
    )
