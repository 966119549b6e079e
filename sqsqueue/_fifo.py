"""The FIFO queue: message groups, strict per-group order, deduplication.

Its ordering policy is :class:`~sqsqueue._ordering.FifoOrdering` (per-group
chains and the group lock). This module adds the FIFO queue's send rules
(MessageGroupId, deduplication ids and their 5-minute window, sequence
numbers) and its ReceiveRequestAttemptIds (``docs/aws-behaviour.md`` §9); both
windows expire with the messages (``_lifecycle.Window``).
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable
from typing import Any, Final, Unpack

from sqsqueue import _validate
from sqsqueue._batches import FailsWholeBatch
from sqsqueue._faults import Faults
from sqsqueue._limits import DEDUP_WINDOW, US
from sqsqueue._message import (
    R_BODY,
    R_EXTRA,
    R_ID,
    R_RECEIPT,
    R_REHIDES,
    X_ATTRS_MD5,
    X_DEDUP,
    X_SEQNO,
    X_TRACE,
    SendResult,
    _Record,
    dedup_id_of,
    extra_of,
    group_id_of,
    receipt_no_of,
    receive_cap_of,
    rehides_of,
    seq_of,
    system_attributes_md5,
)
from sqsqueue._operations import FifoQueueOptions, _BaseQueue
from sqsqueue._ordering import FifoOrdering
from sqsqueue._state import QueueState
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue, MissingParameter

__all__ = ["FifoQueue"]

_MISSING_GROUP = "The request must contain the parameter MessageGroupId."
_MISSING_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)


#: A deduplication id sent in the last 5 minutes, and what it answers:
#: (expires, message id, sequence number). A plain tuple, one per message
#: sent in the window, which the collector untracks as it does records
#: (``_message``, "the stored record").
DedupEntry = tuple[int, str, int]
D_EXPIRES: Final = 0
D_MESSAGE_ID: Final = 1
D_SEQUENCE_NUMBER: Final = 2


class _Window:
    """Entries that each expire a fixed time after they were added: a dict for
    lookup and a deque in insertion order, which is expiry order. O(1) per
    entry added or expired."""

    __slots__ = ("entries", "order")

    def __init__(self) -> None:
        self.entries: dict[Any, Any] = {}
        self.order: deque[tuple[Any, Any, int]] = deque()

    def add(self, key: object, entry: Any, expires: int) -> None:
        self.entries[key] = entry
        self.order.append((key, entry, expires))

    def expire(self, now: int) -> None:
        order = self.order
        while order and order[0][2] <= now:
            key, entry, _ = order.popleft()
            if self.entries.get(key) is entry:
                del self.entries[key]

    def clear(self) -> None:
        self.entries.clear()
        self.order.clear()

    def check(self) -> None:
        """Every entry is in the expiry order under its key. O(n)."""
        entries = self.entries
        assert len({key for key, e, _ in self.order if entries.get(key) is e}) == len(entries)


class Attempt:
    """A remembered ReceiveRequestAttemptId (section 9)."""

    __slots__ = ("expires", "handles", "items")

    def __init__(self, expires: int, items: list[tuple[int, int, int]], handles: list[str]) -> None:
        self.expires = expires
        self.items = items  # (seq, receipt number, rehides) per message
        self.handles = handles


class _Attempts(_Window):
    """ReceiveRequestAttemptIds: a retry within 5 minutes replays a receive."""

    __slots__ = ("_queue",)

    def __init__(self, queue: FifoQueue) -> None:
        super().__init__()
        self._queue = queue

    def remember(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None:
        if not records:
            return  # nothing to replay: a retry is simply a new receive
        items = [(seq_of(r), r[R_RECEIPT], r[R_REHIDES]) for r in records]
        expires = now + DEDUP_WINDOW * US
        self.add(attempt_id, Attempt(expires, items, handles), expires)
        queue = self._queue
        if queue._observers:
            for rec, handle in zip(records, handles, strict=True):
                queue._report("receive_attempt", rec, now, attempt=attempt_id, handle=handle)

    def replay(
        self,
        attempt_id: str,
        now: int,
        visibility_us: int,
    ) -> tuple[list[_Record], list[str]] | None:
        """Section 9: a retry within 5 minutes returns the same messages and
        receipt handles, provided none was deleted or had its visibility
        changed, and resets their visibility timeout. Otherwise the retry is a
        new receive (UNCONFIRMED, the most plausible reading). Returns the
        records and their handles, for the receive to make its views of."""
        attempt = self.entries.get(attempt_id)
        if attempt is None or attempt.expires <= now:
            return None
        queue = self._queue
        records = []
        for seq, receipt_no, rehides in attempt.items:
            rec = queue._records.get(seq)
            # Any ChangeMessageVisibility counts, even one that set the same deadline.
            if rec is None or receipt_no_of(rec) != receipt_no or rehides_of(rec) != rehides:
                del self.entries[attempt_id]
                return None
            records.append(rec)
        items = []
        for i, old in enumerate(records):
            rec = records[i] = queue._rehide(
                old, min(now + visibility_us, receive_cap_of(old)), now
            )
            items.append((seq_of(rec), receipt_no_of(rec), rehides_of(rec)))
        attempt.items = items
        # The attempt changed (its records' re-hide counts moved with them): report
        # it as remember() does, or a reopened broker would find the old counts and
        # treat the next retry as a new receive. (An attempt dropped above needs no
        # report: its stored items mismatch the same records after a restart too.)
        if queue._observers:
            for rec, handle in zip(records, attempt.handles, strict=True):
                queue._report("receive_attempt", rec, now, attempt=attempt_id, handle=handle)
        return records, list(attempt.handles)


class FifoQueue(_BaseQueue):
    """An Amazon SQS FIFO queue, in process.

    >>> from sqsqueue import ManualClock
    >>> q = FifoQueue("orders.fifo", clock=ManualClock(), content_based_deduplication=True)
    >>> _ = q.send("a", group_id="g1"); _ = q.send("b", group_id="g1")
    >>> [m.body for m in q.receive(10)]
    ['a', 'b']

    Same operations as :class:`Queue`; ``send`` takes ``group_id`` (required)
    and ``deduplication_id``; ``receive`` takes ``receive_request_attempt_id``.
    Every keyword, with its type: ``_operations.FifoQueueOptions``.
    """

    FIFO = True
    _ORDERING = FifoOrdering

    def __init__(self, name: str, **options: Unpack[FifoQueueOptions]) -> None:
        super().__init__(name, **options)
        faults = options.get("faults")
        if faults is not None and not isinstance(faults, Faults):
            raise InvalidParameterValue(
                f"Value {show(faults)} for parameter faults is invalid. Reason: must be a Faults."
            )
        #: Accepted for symmetry with :class:`Queue` and ignored: FIFO queues
        #: stay exact, as AWS's do.
        self.faults = faults
        #: Whether deduplication is per message group: the DeduplicationScope
        #: the queue was *created* with. Real AWS kept deduplicating queue-wide
        #: after SetQueueAttributes switched a queue to messageGroup (and to
        #: high throughput with FifoThroughputLimit=perMessageGroupId), and kept
        #: per-group deduplication after a switch back (``docs/aws-behaviour.md``
        #: §9, Deduplication). So a later change is stored and reported by
        #: GetQueueAttributes but does not change which sends are duplicates;
        #: that is what was observed, not a documented rule.
        self._dedup_by_group = self._values["DeduplicationScope"] == "messageGroup"
        #: Deduplication ids sent in the last 5 minutes, and receive attempts.
        self._dedup = _Window()
        self._attempt_ids = _Attempts(self)
        self._attempts = self._attempt_ids
        self._windows = (self._dedup, self._attempt_ids)

    # -- send ---------------------------------------------------------------------

    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]:
        # A batch entry without a group id or a deduplication id fails the whole
        # request with InvalidParameterValue (section 2.1).
        if delay:
            raise InvalidParameterValue(
                f"Value {delay} for parameter DelaySeconds is invalid. Reason: The request "
                "include parameter that is not valid for this queue type."
            )
        if group_id is None:
            if batch:
                raise FailsWholeBatch(InvalidParameterValue(_MISSING_GROUP))
            raise MissingParameter(_MISSING_GROUP)
        group = _validate.fifo_id("MessageGroupId", group_id)
        if deduplication_id is None:
            if not self._values["ContentBasedDeduplication"]:
                missing = InvalidParameterValue(_MISSING_DEDUP)
                raise FailsWholeBatch(missing) if batch else missing
            return group, None
        return group, _validate.fifo_id("MessageDeduplicationId", deduplication_id)

    def _dedup_key(self, rec: _Record, dedup_id: str | None = None) -> object:
        """The deduplication window's key for ``rec``: its deduplication id, with
        its group under per-group deduplication (the scope at creation, see
        __init__)."""
        dedup = dedup_id_of(rec) if dedup_id is None else dedup_id
        return (group_id_of(rec), dedup) if self._dedup_by_group else dedup

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        # ``delay`` is None or 0: a FIFO message takes the queue's delay only
        # (_check_ids refuses any other DelaySeconds).
        extra = extra_of(rec)
        body = rec[R_BODY]
        dedup_id = extra[X_DEDUP]
        if dedup_id is None:
            # Content-based deduplication: SHA-256 of the body (section 6, 9).
            dedup_id = hashlib.sha256(body.encode("utf-8")).hexdigest()
        key = self._dedup_key(rec, dedup_id)
        system_md5 = system_attributes_md5(extra[X_TRACE])
        entry = self._dedup.entries.get(key)
        if entry is not None and entry[D_EXPIRES] > now:
            # A duplicate is "accepted successfully but not delivered"; we answer
            # with the original message's id and sequence number (UNCONFIRMED
            # for AWS; what LocalStack and other emulators do).
            if self._tally is not None:
                self._tally.deduplicated += 1  # NumberOfDeduplicatedSentMessages
            return SendResult(
                entry[D_MESSAGE_ID],
                body,
                extra[X_ATTRS_MD5],
                system_md5,
                str(entry[D_SEQUENCE_NUMBER]),
            )
        number = self._ordering.sequence_number(self._seq + 1)  # _stamp's number
        assert number is not None
        rec = self._stamp(
            (*rec[:R_EXTRA], (*extra[:X_DEDUP], dedup_id, number, *extra[X_SEQNO + 1 :])),
            now,
            now,
            sender_id,
        )
        self._enqueue(rec)
        expires = now + DEDUP_WINDOW * US
        self._dedup.add(key, (expires, rec[R_ID], number), expires)
        return SendResult(rec[R_ID], body, extra[X_ATTRS_MD5], system_md5, str(number))

    def _check(self) -> None:
        with self._lock:
            super()._check()
            self._dedup.check()
            self._attempt_ids.check()

    # -- what a durable store uses (``_durable.py``) ----------------------------

    def _stored_state(self) -> QueueState:
        state = super()._stored_state()
        state["dedup_by_group"] = self._dedup_by_group
        return state

    def _restore_state(self, state: QueueState, records: Iterable[_Record]) -> None:
        self._dedup_by_group = state["dedup_by_group"]
        super()._restore_state(state, records)

    def _dedup_entry(self, key: object) -> DedupEntry | None:
        """The window's entry for a deduplication key (``_dedup_key``), if any."""
        entry: DedupEntry | None = self._dedup.entries.get(key)
        return entry

    def _attempt(self, attempt_id: str) -> Attempt | None:
        """The remembered ReceiveRequestAttemptId ``attempt_id``, if any."""
        attempt: Attempt | None = self._attempt_ids.entries.get(attempt_id)
        return attempt

    def _restore_windows(
        self, dedup: Iterable[tuple[object, DedupEntry]], attempts: Iterable[tuple[str, Attempt]]
    ) -> None:
        """Take back a store's deduplication entries and receive attempts,
        oldest first (no reports). O(entries)."""
        for key, entry in dedup:
            self._dedup.add(key, entry, entry[D_EXPIRES])
        for attempt_id, attempt in attempts:
            self._attempt_ids.add(attempt_id, attempt, attempt.expires)
