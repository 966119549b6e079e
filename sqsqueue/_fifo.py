"""The FIFO queue: message groups, strict per-group order, deduplication.

Its ordering policy is :class:`~sqsqueue._ordering.FifoOrdering` (per-group
chains and the group lock). This module adds the FIFO queue's send rules
(MessageGroupId, deduplication ids and their 5-minute window, sequence
numbers) and its ReceiveRequestAttemptIds (``docs/aws-behaviour.md`` §9); both
windows expire with the messages (``_lifecycle.Window``). The deduplication
window holds an entry per message sent in 5 minutes, in blocks the collector
does not walk (:class:`_DedupWindow`, ``docs/architecture.md``, "What the
collector sees").
"""

from __future__ import annotations

import gc
import hashlib
import operator
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
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
#: (``_message``, "the stored record"), held in blocks (:class:`_DedupWindow`).
DedupEntry = tuple[int, str, int]
D_EXPIRES: Final = 0
D_MESSAGE_ID: Final = 1
D_SEQUENCE_NUMBER: Final = 2


#: Deduplication entries per block (the window's unit of settling and expiry).
DEDUP_BLOCK = 4096
#: The window's key index is split over this many dicts by the key's hash: a
#: dict of a million keys copies itself whole when it grows (tens of
#: milliseconds, in one send); each part grows in small steps.
_KEY_PARTS = 256
_KEY_MASK = _KEY_PARTS - 1
_NEVER = 1 << 80  # later than any expiry (microseconds)


def _atom(key: object) -> str:
    """A deduplication key as a string: the id, or under per-group scope the
    group and the id joined by a newline (which no FIFO id contains). A dict
    of strings and ints is one the collector never tracks."""
    if type(key) is str:
        return key
    assert isinstance(key, tuple)
    return "\n".join(key)


def _key_of(atom: str) -> object:
    """The deduplication key :func:`_atom` made ``atom`` of."""
    return tuple(atom.split("\n")) if "\n" in atom else atom


#: How many of the newest FIFO records' extra-field tuples (of every FIFO
#: queue: collections are the process's) are held, from a list that lives
#: as long as this module (``_HELD_EXTRAS``; between half and all of them,
#: at most some 250 KB however many queues there are). A young
#: collection finds such a tuple referenced from outside the young objects,
#: so it keeps its place before its record (created after it) instead of
#: being moved behind it when the record is found to reach it; CPython
#: untracks tuples in that order, so the record is untracked by its first
#: collection rather than its second. Without it the records whose first
#: collection is a middle-generation one (one young collection in ten) go
#: to the oldest generation still tracked, and every block holding one stays
#: tracked, walked by each full collection, until the next full collection.
#: An epoch between two young collections is at most some 700 allocations,
#: and a FIFO send allocates at least three tracked objects (its draft and
#: its record, and the extra fields), so half of this covers one.
_HELD = 1024
_HELD_EXTRAS: list[tuple[Any, ...]] = []


class _DedupWindow:
    """The deduplication ids sent in the last 5 minutes, held where the
    collector does not look (``docs/architecture.md``, "What the collector
    sees"): a million sends in 5 minutes are a million entries.

    Entries (:data:`DedupEntry`, tuples the collector untracks) are stored in
    *blocks*, dicts of up to ``DEDUP_BLOCK`` entries in the order they were
    added, which is expiry order (each expires a fixed time after it was
    added). Adds go to the newest block; a block adds have filled is
    *settled* when the block after next opens, copied by insertion into a
    dict the collector never tracks (as ``_store.Records`` settles its
    blocks). A key finds its block through ``where``: dicts of key strings to
    block numbers, which the collector never tracks. Expiry walks the oldest
    block with one iterator, closing the newest block if it gets there (adds
    then open another), and drops a block once it is passed: an entry is
    never deleted from a block, so the walk never passes a hole twice.
    ``add``, ``get`` and expiring an entry are O(1); a settle copies a block
    once, at most two a block opened."""

    __slots__ = (
        "blocks",
        "closed",
        "cursor",
        "due",
        "first",
        "last",
        "pending",
        "settled",
        "where",
    )

    def __init__(self) -> None:
        #: Block number -> {key string: entry}, oldest first.
        self.blocks: dict[int, dict[str, DedupEntry]] = {}
        #: Per part (``hash(key string) & _KEY_MASK``): key string -> its block.
        self.where: list[dict[str, int]] = [{} for _ in range(_KEY_PARTS)]
        #: The oldest block's number and the newest's (blocks are numbered in
        #: order; every number between them has its block), and whether adds
        #: may still go to the newest.
        self.first = 0
        self.last = -1
        self.closed = True
        #: Blocks below this one were settled (or never needed it).
        self.settled = 0
        #: Expiry's walk of the oldest block, and the entry it stopped at.
        self.cursor: Iterator[tuple[str, DedupEntry]] | None = None
        self.pending: tuple[str, DedupEntry] | None = None
        #: When the next entry expires: expiry does nothing before then.
        self.due = _NEVER

    def get(self, key: object) -> DedupEntry | None:
        atom = _atom(key)
        k = self.where[hash(atom) & _KEY_MASK].get(atom)
        return None if k is None else self.blocks[k][atom]

    def add(self, key: object, entry: DedupEntry, expires: int) -> None:
        """Remember ``entry`` for ``key`` until ``expires`` (no earlier than the
        last add's). O(1), and O(DEDUP_BLOCK) once a block to settle others."""
        atom = _atom(key)
        blocks = self.blocks
        block = blocks.get(self.last)
        if self.closed or block is None or len(block) >= DEDUP_BLOCK:
            self.last += 1
            block = blocks[self.last] = {}
            self.closed = False
            self._settle()
        elif atom in block:
            del block[atom]  # re-added: it moves to the end (expiry order)
        block[atom] = entry
        self.where[hash(atom) & _KEY_MASK][atom] = self.last
        if self.due == _NEVER:
            self.due = expires

    def _settle(self) -> None:
        """Copy (by insertion) the filled blocks below the previous one that are
        still tracked, at most two: an untracked copy replaces the block; a
        copy still tracked (an entry no collection has seen yet) is tried again
        when the next block opens."""
        blocks = self.blocks
        done = 0
        while self.settled < self.last - 1 and done < 2:
            old = blocks.get(self.settled)
            # The oldest block, while expiry walks it, is left as it is.
            walked = self.cursor is not None and self.settled == self.first
            if old is not None and not walked and gc.is_tracked(old):
                done += 1
                new = dict(old.items())  # by insertion: see _store.Records.opened
                if gc.is_tracked(new):
                    return
                blocks[self.settled] = new
            self.settled += 1

    def expire(self, now: int) -> None:
        """Forget the entries that ended by ``now``. O(1) when none did, else
        O(1) per entry and block passed."""
        if self.due > now:
            return
        blocks = self.blocks
        where = self.where
        while True:
            k = self.first
            if self.cursor is None:
                if k > self.last:
                    self.due = _NEVER
                    return
                if k == self.last:
                    self.closed = True  # expiry reached it: adds open another
                self.cursor = iter(blocks[k].items())
            pending = self.pending
            items = self.cursor if pending is None else chain((pending,), self.cursor)
            self.pending = None
            for atom, entry in items:
                if entry[D_EXPIRES] > now:
                    self.pending = atom, entry
                    self.due = entry[D_EXPIRES]
                    return
                part = where[hash(atom) & _KEY_MASK]
                if part.get(atom) == k:
                    del part[atom]
            del blocks[k]
            self.first = k + 1
            self.cursor = None

    def clear(self) -> None:
        self.blocks.clear()
        for part in self.where:
            part.clear()
        self.closed = True
        self.first = self.settled = self.last + 1
        self.cursor = self.pending = None
        self.due = _NEVER

    def check(self) -> None:
        """Every key's block holds its entry; blocks are in expiry order and
        none expires before ``due``. O(n)."""
        blocks = self.blocks
        assert list(blocks) == list(range(self.first, self.last + 1)), "blocks in order"
        assert all(blocks.values()), "a block is made for an add"
        for i, part in enumerate(self.where):
            for atom, k in part.items():
                assert hash(atom) & _KEY_MASK == i and atom in blocks[k]
                assert blocks[k][atom][D_EXPIRES] >= self.due or self.due == _NEVER
        expires = [e[D_EXPIRES] for b in blocks.values() for e in b.values()]
        assert all(map(operator.le, expires, expires[1:])), "blocks hold entries in expiry order"
        assert len(blocks) == 0 or self.due != _NEVER

    @property
    def entries(self) -> Mapping[object, DedupEntry]:
        """The live entries by deduplication key, read-only (tests, the store)."""
        return _Entries(self)


class _Entries(Mapping[object, DedupEntry]):
    """A read-only view of a :class:`_DedupWindow` by deduplication key."""

    __slots__ = ("_window",)

    def __init__(self, window: _DedupWindow) -> None:
        self._window = window

    def __getitem__(self, key: object) -> DedupEntry:
        entry = self._window.get(key)
        if entry is None:
            raise KeyError(key)
        return entry

    def __iter__(self) -> Iterator[object]:
        for part in self._window.where:
            for atom in part:
                yield _key_of(atom)

    def __len__(self) -> int:
        return sum(map(len, self._window.where))


class _Window:
    """Entries that each expire a fixed time after they were added: a dict for
    lookup and a deque in insertion order, which is expiry order. O(1) per
    entry added or expired. Receive attempts (one a receive that names one;
    what they hold is tracked: lists, an object)."""

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
        self._dedup = _DedupWindow()
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
        entry = self._dedup.get(key)
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
        extra = (*extra[:X_DEDUP], dedup_id, number, *extra[X_SEQNO + 1 :])
        # Held from a long-lived list until collections have seen it: see _HELD.
        held = _HELD_EXTRAS
        held.append(extra)
        if len(held) >= _HELD:
            del held[: _HELD // 2]
        rec = self._stamp((*rec[:R_EXTRA], extra), now, now, sender_id)
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
        return self._dedup.get(key)

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
