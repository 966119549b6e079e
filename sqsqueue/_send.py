"""What happens on send (SendMessage, SendMessageBatch).

A message is validated first, changing nothing (:func:`prepare`: body,
attributes, size, delay, trace header, then the queue type's rules for group
and deduplication ids, ``_check_ids``); then, under the queue's lock with one
reading of the clock, the queue type stores it (``_commit``, ``_commit_all``)
and a waiting long poll is woken. The common message, a plain ASCII body on a
standard queue, is stored at once by the lifecycle (``_admit_body``; a batch of
them, ``_admit_bodies``) without those calls: tests hold each short path equal
to the general one.

A send batch's entries (``SendEntry``, plain bodies, boto3-shaped dicts) are
read once into Ids and either plain bodies or ``SendEntry`` objects
(``_batches.send_entries_of``); each form then takes the same path.

Every function is handed the queue; what it uses of it is :class:`Sendable`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Protocol

from sqsqueue import _batches, _validate
from sqsqueue._batches import FailsWholeBatch
from sqsqueue._clock import Waiter
from sqsqueue._limits import BATCH_PAYLOAD_MAX
from sqsqueue._message import (
    R_SIZE,
    BatchFailure,
    BatchResult,
    SendEntry,
    SendResult,
    _Record,
    batch_result,
    draft,
    md5_of_attributes,
)
from sqsqueue._settings import Operating
from sqsqueue._validate import ASCII_KEEP
from sqsqueue.errors import BatchRequestTooLong, SQSError

#: ``Message(...)`` and ``SendResult(...)`` without the named tuple's
#: Python-level ``__new__``: half the cost, and one is built for every message
#: sent or received. The tuple must list every field, in order.
new_send_result: Callable[[tuple[Any, ...]], SendResult] = partial(tuple.__new__, SendResult)
#: Nones for the optional fields of the SendResults of plain bodies.
_NONES = itertools.repeat(None)
#: A validated send: the draft record and its DelaySeconds (None: the queue's).
Prepared = tuple[_Record, int | None]


class Sendable(Operating, Protocol):
    """What a send uses of a queue (``_operations._BaseQueue``, with the queue
    type's send rules from ``_standard`` or ``_fifo``)."""

    FIFO: ClassVar[bool]
    _account_id: str
    _max_size: int
    _waiters: dict[Waiter, None]

    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]: ...

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult: ...

    def _commit_all(
        self, prepared: Sequence[Prepared], now: int, sender_id: str
    ) -> list[SendResult]: ...

    def _admit_body(self, body: str, now: int, sender_id: str) -> str: ...

    def _admit_bodies(self, bodies: list[str], now: int, sender_id: str) -> list[str]: ...


def prepare(
    queue: Sendable,
    body: object,
    delay_seconds: object,
    message_attributes: object,
    trace_header: object,
    group_id: object,
    deduplication_id: object,
    *,
    batch: bool,
) -> Prepared:
    """Validate one message (no state read or changed except settings)."""
    text, size = _validate.body(body)
    attributes_md5 = None
    if message_attributes is None:
        attributes = None
    else:
        attributes, attributes_size = _validate.message_attributes(message_attributes)
        size += attributes_size
        if attributes:
            attributes_md5 = md5_of_attributes(attributes)
    if size > queue._max_size:
        raise _validate.too_big(queue._max_size, batch=batch)
    delay = None if delay_seconds is None else _validate.delay_seconds(delay_seconds)
    trace = None if trace_header is None else _validate.trace_header(trace_header)
    if group_id is None and deduplication_id is None and not queue.FIFO:
        group = dedup = None  # what a standard queue's _check_ids answers, uncalled
    else:
        group, dedup = queue._check_ids(delay, group_id, deduplication_id, batch=batch)
    return draft(text, size, attributes, attributes_md5, trace, group, dedup), delay


def send_prepared(
    queue: Sendable, prepared: Sequence[Prepared], sender_id: str | None
) -> list[SendResult]:
    """Store validated sends, in order, under the lock (``_commit_all``)."""
    sender = sender_id if sender_id is not None else queue._account_id
    with queue._lock:
        now = queue._begin()
        results = queue._commit_all(prepared, now, sender)
        if queue._waiters:
            queue._notify(len(results))
    return results


def send(
    queue: Sendable,
    body: str,
    *,
    delay_seconds: int | None = None,
    message_attributes: Mapping[str, object] | None = None,
    trace_header: str | Mapping[str, Any] | None = None,
    group_id: str | None = None,
    deduplication_id: str | None = None,
    sender_id: str | None = None,
    principal: str | None = None,
) -> SendResult:
    """Send one message (SendMessage).

    ``message_attributes`` maps names to :class:`MessageAttributeValue`,
    boto3-shaped dicts (``{"DataType": "String", "StringValue": "x"}``) or
    plain values (``str`` -> String, ``bytes`` -> Binary, ``int``/``float``/
    ``Decimal`` -> Number). ``trace_header`` is the ``AWSTraceHeader`` system
    attribute. ``group_id`` on a standard queue makes it a fair queue.

    ``Queue.send`` is this function (``_operations._BaseQueue``), the queue
    its first argument. Runtime complexity: O(log n).
    """
    if principal is not None:
        sender_id = queue._authorize(principal, "SendMessage", sender_id)
    sender = sender_id if sender_id is not None else queue._account_id
    if (
        type(body) is str
        and body
        and delay_seconds is None
        and message_attributes is None
        and trace_header is None
        and group_id is None
        and deduplication_id is None
        and not queue.FIFO
        and body.isascii()
        and (encoded := body.encode("ascii")).translate(ASCII_KEEP) == encoded  # ascii_allowed
        and len(body) <= queue._max_size
    ):
        # prepare's answer for a plain ASCII body on a standard queue,
        # without its calls (as send_batch does for a batch of them), and
        # the standard queue's _commit of it, its record built at once.
        lock = queue._lock
        # `with queue._lock` in two calls: a with statement also looks up __enter__
        # and __exit__ (twice the cost). A DurableLock's acquire and release are its
        # __enter__ and __exit__.
        lock.acquire()
        try:
            now = queue._begin()
            message_id = queue._admit_body(body, now, sender)
            if queue._waiters:
                queue._notify(1)
        finally:
            lock.release()
        return new_send_result((message_id, body, None, None, None))
    # prepare's arguments, as send_batch passes an entry's (alike on purpose: one rule).
    rec, delay = prepare(
        queue,
        body,
        delay_seconds,
        message_attributes,
        trace_header,
        group_id,
        deduplication_id,
        batch=False,
    )
    # What send_prepared does for a batch, for one message: this is the
    # single-send path, and the batch's tuple, list and comprehension
    # cost about 5% of a send+receive+delete cycle (RESULTS.md §2).
    with queue._lock:
        now = queue._begin()
        result = queue._commit(rec, delay, now, sender)
        if queue._waiters:
            queue._notify(1)
    return result


def send_batch(
    queue: Sendable,
    entries: Iterable[SendEntry | str | Mapping[str, Any]],
    sender_id: str | None,
    principal: str | None,
) -> BatchResult:
    """SendMessageBatch (``Queue.send_batch``'s arguments, in its order)."""
    if principal is not None:
        sender_id = queue._authorize(principal, "SendMessageBatch", sender_id)
    entry_ids, send_entries, bodies = _batches.send_entries_of(
        entries, None if queue.FIFO else queue._max_size
    )
    if bodies is not None:
        # The common batch: every entry valid, the standard queue's _commit
        # of each, their records built at once (_admit_bodies).
        total = sum(map(len, bodies))  # ASCII: a body's size is its length
        if total > BATCH_PAYLOAD_MAX:
            raise _too_long(total)
        sender = sender_id if sender_id is not None else queue._account_id
        with queue._lock:
            now = queue._begin()
            message_ids = queue._admit_bodies(bodies, now, sender)
            if queue._waiters:
                queue._notify(len(message_ids))
        # SendResult(message_id, body), built in C (the Nones are endless).
        fields = zip(message_ids, bodies, _NONES, _NONES, _NONES, strict=False)
        return batch_result(dict(zip(entry_ids, map(new_send_result, fields), strict=True)))
    prepared: dict[str, Prepared] = {}
    failed: list[BatchFailure] = []
    total = 0
    for entry in send_entries:
        try:
            p = prepare(
                queue,
                entry.body,
                entry.delay_seconds,
                entry.message_attributes,
                entry.trace_header,
                entry.group_id,
                entry.deduplication_id,
                batch=True,
            )
        except FailsWholeBatch as whole:
            raise whole.error from None
        except SQSError as err:
            failed.append(BatchFailure(entry.id, err.code, err.message, err.sender_fault))
            total += _batches.rough_size(entry)
            continue
        prepared[entry.id] = p
        total += p[0][R_SIZE]
    if total > BATCH_PAYLOAD_MAX:
        raise _too_long(total)
    results = send_prepared(queue, list(prepared.values()), sender_id)
    successful: dict[str, SendResult | None] = dict(zip(prepared, results, strict=True))
    return BatchResult(successful, tuple(failed))


def _too_long(total: int) -> BatchRequestTooLong:
    return BatchRequestTooLong(
        f"Batch requests cannot be longer than {BATCH_PAYLOAD_MAX} bytes. "
        f"You have sent {total} bytes."
    )
