"""What a receipt handle can do: delete its message (DeleteMessage) or change
its visibility timeout (ChangeMessageVisibility), one at a time or in batches.

A handle is parsed and its MAC verified (``_receipts.py``) before it acts; on
a standard queue any handle ever issued for the message acts, on a FIFO queue
only the latest while the message is in flight (``docs/aws-behaviour.md`` §8).
The common delete, the latest receipt of a stored message, is found by the
lifecycle in one step (``_delete_latest``; a batch of them, ``Receipts.latest_all``
then ``_drop_all``); every other handle goes through :func:`delete_one`, and
tests hold the short paths equal to it.

Every function is handed the queue; what it uses of it is :class:`Acknowledgeable`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, Protocol

from sqsqueue import _batches, _faults, _validate
from sqsqueue._clock import Waiter
from sqsqueue._faults import Faults
from sqsqueue._lifecycle import Ordering
from sqsqueue._limits import US
from sqsqueue._message import (
    R_SKEY,
    R_VKEY,
    SEQ_BITS,
    SEQ_MASK,
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    SendResult,
    _Record,
    batch_result,
    key_time,
    receipt_no_of,
    receive_cap_of,
)
from sqsqueue._metrics import Tally
from sqsqueue._receipts import Receipts
from sqsqueue._settings import Operating
from sqsqueue._store import Records
from sqsqueue.errors import InvalidParameterValue, SQSError


class Acknowledgeable(Operating, Protocol):
    """What a delete or a visibility change uses of a queue (``_operations._BaseQueue``)."""

    _records: Records
    _receipts: Receipts
    _ordering: Ordering
    _faults: Faults | None
    _fault_rng: random.Random
    _tally: Tally | None
    _waiters: dict[Waiter, None]

    def _drop(self, rec: _Record, reason: str, now: int, **detail: object) -> None: ...

    def _drop_all(self, recs: Iterable[_Record], reason: str, now: int) -> None: ...

    def _delete_latest(self, handle: object, now: int) -> bool: ...

    def _rehide(self, rec: _Record, due: int, now: int) -> _Record: ...


def _expired_handle(handle: object) -> SQSError:
    return InvalidParameterValue(
        f"Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt "
        "handle has expired."
    )


def acting(queue: Acknowledgeable, handle: object, now: int) -> tuple[_Record | None, bool]:
    """The record a handle acts on (None if the message is gone) and whether
    the handle may still act: on a standard queue any handle ever issued for
    it; on a FIFO queue only the latest, while in flight: "DeleteMessage
    operations will fail if the request is received outside of the
    visibility timeout window" (section 8). Refuses forged handles."""
    receipts = queue._receipts
    seq, receipt_no, token, version = receipts.parse(handle)
    rec = receipts.verify(handle, queue._records.get(seq), receipt_no, seq, token, version)  # type: ignore[arg-type]
    if rec is None or not queue._ordering.LATEST_RECEIPT_ONLY:
        return rec, True
    return rec, receipt_no == receipt_no_of(rec) and key_time(rec[R_VKEY]) > now


# -- delete -------------------------------------------------------------------------


def delete_one(queue: Acknowledgeable, handle: object, now: int) -> None:
    """Delete by ``handle`` under the lock at ``now`` (the operation's own: a
    history stamp must not read the clock again halfway through a batch)."""
    rec = queue._receipts.latest(handle, queue._records)
    if (
        rec is not None
        and queue._faults is None
        and (not queue._ordering.LATEST_RECEIPT_ONLY or rec[R_VKEY] >> SEQ_BITS > now)
    ):
        # The common case: the latest receipt of a stored message, which
        # may act (a FIFO one while in flight; key_time, inlined).
        if queue._tally is not None:
            queue._tally.deleted += 1
        queue._drop(rec, "deleted", now)
        return
    # acting, inlined: every other handle, refused or not.
    receipts = queue._receipts
    seq, receipt_no, token, version = receipts.parse(handle)
    rec = receipts.verify(handle, queue._records.get(seq), receipt_no, seq, token, version)  # type: ignore[arg-type]
    tally = queue._tally
    if rec is None:
        # Already deleted: DeleteMessage is idempotent (section 8), and
        # CloudWatch counts "every successful deletion operation that uses
        # a valid receipt handle, including duplicate deletions" (DG:
        # sqs-available-cloudwatch-metrics).
        if tally is not None:
            tally.deleted += 1
        return
    if queue._ordering.LATEST_RECEIPT_ONLY and not (
        receipt_no == receipt_no_of(rec) and key_time(rec[R_VKEY]) > now
    ):
        raise _expired_handle(handle)
    if tally is not None:
        tally.deleted += 1
    if queue._faults is not None and _faults.lose_delete(queue._faults, queue._fault_rng):
        return  # fault emulation: acknowledged, but the message survives
    queue._drop(rec, "deleted", now)


def delete(queue: Acknowledgeable, receipt_handle: str, *, principal: str | None = None) -> None:
    """Delete a received message (DeleteMessage).

    Standard queues accept any handle ever issued for the message, even
    after its visibility timeout ended; deleting a deleted message succeeds
    (section 8). ``Queue.delete`` is this function (``_operations._BaseQueue``),
    the queue its first argument. Runtime complexity: O(log n).
    """
    if principal is not None:
        queue._authorize(principal, "DeleteMessage")
    lock = queue._lock
    # `with queue._lock` in two calls: a with statement also looks up __enter__
    # and __exit__ (twice the cost). A DurableLock's acquire and release are its
    # __enter__ and __exit__.
    lock.acquire()
    try:
        now = queue._begin()
        if (
            queue._faults is not None
            or queue._ordering.LATEST_RECEIPT_ONLY
            or not queue._delete_latest(receipt_handle, now)
        ):
            # Any other handle, or a FIFO queue's, or with faults emulated.
            delete_one(queue, receipt_handle, now)
        if queue._waiters:
            queue._notify()
    finally:
        lock.release()


def delete_batch(
    queue: Acknowledgeable,
    entries: Iterable[DeleteEntry | str | Mapping[str, Any]],
    principal: str | None,
) -> BatchResult:
    """DeleteMessageBatch (``Queue.delete_batch``'s arguments, in its order)."""
    if principal is not None:
        queue._authorize(principal, "DeleteMessageBatch")
    entry_ids, handles = _batches.delete_entries_of(entries)
    with queue._lock:
        now = queue._begin()
        result = _delete_all(queue, entry_ids, handles, now)
        if queue._waiters:
            queue._notify()
    return result


def _delete_all(
    queue: Acknowledgeable, entry_ids: list[str], handles: list[Any], now: int
) -> BatchResult:
    """``_batches.each`` of :func:`delete_one`, in one pass: the handles are
    checked in one call, and an entry holding the latest receipt of a stored
    message is deleted without the calls of ``delete_one``. Every other entry
    goes through ``delete_one`` at its turn, so the entries act in order, as
    each would alone."""
    if queue._faults is not None or queue._ordering.LATEST_RECEIPT_ONLY:
        return _batches.each(
            list(zip(entry_ids, zip(handles), strict=True)), partial(delete_one, queue), now
        )
    records = queue._records
    found = queue._receipts.latest_all(handles, records)
    tally = queue._tally
    if None not in found:
        # The common batch: every entry the latest receipt of a stored
        # message (one named twice is deleted once, and the second entry
        # succeeds and counts as a duplicate deletion does, see delete_one).
        if tally is not None:
            tally.deleted += len(found)
        queue._drop_all(found, "deleted", now)  # type: ignore[arg-type]
        return batch_result(_batches.none_for_each(entry_ids))
    drop = queue._drop
    successful: dict[str, SendResult | None] = {}
    failed: list[BatchFailure] = []
    for entry_id, handle, rec in zip(entry_ids, handles, found, strict=True):
        # Still stored: an earlier entry of the batch may have deleted it.
        if rec is not None and records.get(rec[R_SKEY] & SEQ_MASK) is rec:  # key_seq, inlined
            if tally is not None:
                tally.deleted += 1
            drop(rec, "deleted", now)
            successful[entry_id] = None
            continue
        try:
            delete_one(queue, handle, now)
        except SQSError as err:
            failed.append(BatchFailure(entry_id, err.code, err.message, err.sender_fault))
        else:
            successful[entry_id] = None
    return BatchResult(successful, tuple(failed))


# -- change visibility ------------------------------------------------------------------


def change_one(queue: Acknowledgeable, handle: object, timeout: object, now: int) -> None:
    """ChangeMessageVisibility of one handle under the lock at ``now``."""
    queue._receipts.parse(handle)
    vt = _validate.visibility_timeout(timeout)
    rec, may_act = acting(queue, handle, now)
    if rec is None or not may_act:
        raise InvalidParameterValue(
            f"Value {handle} for parameter ReceiptHandle is invalid. Reason: Message "
            "does not exist or is not available for visibility timeout change."
        )
    due = now + vt * US
    if due > receive_cap_of(rec):
        # "Extending the visibility timeout does not reset the 12 hour
        # maximum"; no clamping (section 4). Message text UNCONFIRMED.
        raise InvalidParameterValue(
            f"Value {vt} for parameter VisibilityTimeout is invalid. Reason: Total "
            "VisibilityTimeout for the message is beyond the limit [43200 seconds]."
        )
    queue._rehide(rec, due, now)


def change_visibility(
    queue: Acknowledgeable, receipt_handle: str, visibility_timeout: int, principal: str | None
) -> None:
    """ChangeMessageVisibility (``Queue.change_visibility``'s arguments, in its order)."""
    if principal is not None:
        queue._authorize(principal, "ChangeMessageVisibility")
    with queue._lock:
        now = queue._begin()
        change_one(queue, receipt_handle, visibility_timeout, now)
        queue._notify()


def change_visibility_batch(
    queue: Acknowledgeable,
    entries: Iterable[ChangeVisibilityEntry | Mapping[str, Any]],
    principal: str | None,
) -> BatchResult:
    """ChangeMessageVisibilityBatch (``Queue.change_visibility_batch``'s arguments)."""
    if principal is not None:
        queue._authorize(principal, "ChangeMessageVisibilityBatch")
    items = _batches.entries_of(
        entries, "ChangeMessageVisibilityBatchRequestEntry", _batches.coerce_change
    )
    with queue._lock:
        now = queue._begin()
        result = _batches.each(items, partial(change_one, queue), now)
        queue._notify()
    return result
