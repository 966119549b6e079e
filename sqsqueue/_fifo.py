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

import hashlib
import operator
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any, Final, Unpack

from sqsqueue import _validate
from sqsqueue._batches import FailsWholeBatch
from sqsqueue._faults import Faults
from sqsqueue._limits import DEDUP_WINDOW, US
from sqsqueue._message import (
    NO_EXTRA,
    R_BODY,
    R_COUNT,
    R_DEDUP,
    R_EXTRA,
    R_GROUP,
    R_RECEIPT,
    R_REHIDES,
    R_SIZE,
    SEQ_BITS,
    SEQ_MASK,
    X_ATTRS_MD5,
    X_TRACE,
    SendResult,
    _Record,
    dedup_id_of,
    group_id_of,
    key_time,
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
#: (expires, message id, sequence number). What the window gives readers;
#: what it holds for a message sent here is less (:class:`_DedupWindow`).
DedupEntry = tuple[int, str, int]
D_EXPIRES: Final = 0
D_MESSAGE_ID: Final = 1
D_SEQUENCE_NUMBER: Final = 2
#: What the window holds for a key: the sent record's ``R_SKEY`` (its send
#: time and sequence number, from which the entry derives), or, for an entry
#: restored from a durable store, the entry itself.
DedupValue = int | DedupEntry

#: Keys per chunk of the window's add order (a tuple the collector untracks).
DEDUP_BLOCK = 1024
#: The window's key index is split over this many dicts by the key's hash: a
#: dict of a million keys copies itself whole when it grows (tens of
#: milliseconds, in one send); each part grows in small steps.
_KEY_PARTS = 256
_KEY_MASK = _KEY_PARTS - 1
_NEVER = 1 << 80  # later than any expiry (microseconds)
_WINDOW_US = DEDUP_WINDOW * US


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
#: queue: collections are the process's; only a message with attributes or a
#: trace header has one when sent) are held, from a list that lives
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
#: and a FIFO send with extra fields allocates at least three tracked objects
#: (its draft, its record, and the extra fields), so half of this covers one.
_HELD = 1024
_HELD_EXTRAS: list[tuple[Any, ...]] = []


class _DedupWindow:
    """The deduplication ids sent in the last 5 minutes, held where the
    collector does not look (``docs/architecture.md``, "What the collector
    sees"): a million sends in 5 minutes are a million entries.

    * ``where``: key string -> :data:`DedupValue`, split over ``_KEY_PARTS``
      dicts by the key's hash. For a message sent here the value is its
      record's send key, the very int object the record holds: its expiry
      is its send time plus 5 minutes and its message id and sequence number
      derive from its sequence number (``resolve``), so an entry costs a
      dict slot and no object of its own. Dicts of strings and ints are
      never tracked.
    * The add order, which is expiry order (each entry ends a fixed time
      after its send): the keys in *chunks*, tuples of ``DEDUP_BLOCK`` key
      strings (which the collector untracks), and a ``tail`` list filling
      the next. Expiry reads keys from the head and drops each whose entry
      ended; it stops at the first that has not.

    A key is added only when it has no live entry, and every expired entry
    is gone before an add (``_advance`` expires the windows first), so a key
    is in the order once. Should an expired entry not yet dropped be added
    again, the order holds the key twice and expiry stops at the first until
    the new entry ends: late, never wrong (``get`` answers by the value).
    ``get``, ``add`` and expiring an entry are O(1)."""

    __slots__ = ("chunks", "due", "head_at", "resolve", "tail", "where")

    def __init__(self, resolve: Callable[[int], DedupEntry]) -> None:
        #: The entry of a message sent here, from its record's send key.
        self.resolve = resolve
        #: Per part (``hash(key string) & _KEY_MASK``): key string -> value.
        self.where: list[dict[str, DedupValue]] = [{} for _ in range(_KEY_PARTS)]
        self.chunks: deque[tuple[str, ...]] = deque()
        self.tail: list[str] = []
        #: Where the oldest key is in the first chunk (or the tail).
        self.head_at = 0
        #: When the oldest entry ends: expiry does nothing before then.
        self.due = _NEVER

    @staticmethod
    def _expires(value: DedupValue) -> int:
        if isinstance(value, int):
            return (value >> SEQ_BITS) + _WINDOW_US  # key_time, inlined
        return value[D_EXPIRES]

    def get(self, key: object) -> DedupEntry | None:
        atom = _atom(key)
        value = self.where[hash(atom) & _KEY_MASK].get(atom)
        if value is None or isinstance(value, tuple):
            return value
        return self.resolve(value)

    def add(self, key: object, value: DedupValue) -> None:
        """Remember ``value`` for ``key`` (see the class docstring). O(1), and
        O(DEDUP_BLOCK) once a chunk (a tuple of its keys)."""
        atom = _atom(key)
        self.where[hash(atom) & _KEY_MASK][atom] = value
        tail = self.tail
        tail.append(atom)
        if len(tail) == DEDUP_BLOCK:
            self.chunks.append(tuple(tail))
            tail.clear()
        if self.due == _NEVER:
            self.due = self._expires(value)

    def expire(self, now: int) -> None:
        """Forget the entries that ended by ``now``. O(1) when none did, else
        O(1) per key passed."""
        if self.due > now:
            return
        where = self.where
        chunks = self.chunks
        at = self.head_at
        part = chunks[0] if chunks else self.tail
        while True:
            if at == len(part):
                if part is self.tail:  # everything added has ended
                    self.tail.clear()
                    self.head_at = 0
                    self.due = _NEVER
                    return
                chunks.popleft()
                at = 0
                part = chunks[0] if chunks else self.tail
                continue
            atom = part[at]
            keys = where[hash(atom) & _KEY_MASK]
            value = keys.get(atom)
            if value is not None:
                expires = self._expires(value)
                if expires > now:
                    self.head_at = at
                    self.due = expires
                    return
                del keys[atom]
            at += 1

    def clear(self) -> None:
        for part in self.where:
            part.clear()
        self.chunks.clear()
        self.tail.clear()
        self.head_at = 0
        self.due = _NEVER

    def order(self) -> Iterator[str]:
        """The keys from the head, in add order (tests and checks). O(n)."""
        first = True
        for part in chain(self.chunks, (self.tail,)):
            yield from part[self.head_at :] if first else part
            first = False

    def check(self) -> None:
        """Every key is in the order once, with entries in expiry order, none
        ending before ``due``. O(n)."""
        order = [atom for atom in self.order() if atom in self.where[hash(atom) & _KEY_MASK]]
        assert len(order) == len(set(order)) == sum(map(len, self.where)), "each key in order once"
        expires = [self._expires(self.where[hash(a) & _KEY_MASK][a]) for a in order]
        assert all(map(operator.le, expires, expires[1:])), "the order is expiry order"
        assert not expires or self.due <= expires[0]
        assert all(len(c) == DEDUP_BLOCK for c in self.chunks) and len(self.tail) < DEDUP_BLOCK

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
        assert isinstance(self._ordering, FifoOrdering)
        #: The ordering, by its type: the chains' own operations.
        self._chains: FifoOrdering = self._ordering
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
        self._dedup = _DedupWindow(self._resolve_dedup)
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
        extra = rec[R_EXTRA]
        body = rec[R_BODY]
        dedup_id = rec[R_DEDUP]
        if dedup_id is None:
            # Content-based deduplication: SHA-256 of the body (section 6, 9).
            dedup_id = hashlib.sha256(body.encode("utf-8")).hexdigest()
        key = self._dedup_key(rec, dedup_id)
        attributes_md5, trace = (None, None) if extra is None else extra[X_ATTRS_MD5 : X_TRACE + 1]
        system_md5 = system_attributes_md5(trace)
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
                attributes_md5,
                system_md5,
                str(entry[D_SEQUENCE_NUMBER]),
            )
        if extra is not NO_EXTRA:
            # Held from a long-lived list until collections have seen it: see _HELD.
            held = _HELD_EXTRAS
            held.append(extra)
            if len(held) >= _HELD:
                del held[: _HELD // 2]
        self._seq = seq = self._seq + 1  # _next_seq, inlined
        skey = (now << SEQ_BITS) | seq  # key_at, inlined
        # No message id and no sequence number: both are functions of ``seq``
        # (``_message``, "the stored record"); the group's own id string.
        group = self._chains.group_name(rec[R_GROUP])
        rec = (
            skey,
            skey,
            None,
            body,
            rec[R_SIZE],
            sender_id,
            *rec[R_COUNT:R_EXTRA],
            extra,
            group,
            dedup_id,
        )
        self._enqueue(rec)
        # The record's send key stands for the entry (_DedupWindow): its id
        # and number are those of its sequence number, its expiry 5 minutes on.
        self._dedup.add(key, skey)
        message_id, number = self._ids_of(seq)
        return SendResult(message_id, body, attributes_md5, system_md5, str(number))

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

    def _resolve_dedup(self, skey: int) -> DedupEntry:
        """The deduplication entry of the message sent here under send key
        ``skey`` (what _commit gave the window). O(1)."""
        message_id, number = self._ids_of(skey & SEQ_MASK)  # key_seq, inlined
        assert number is not None
        return (key_time(skey) + _WINDOW_US, message_id, number)

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
            self._dedup.add(key, entry)
        for attempt_id, attempt in attempts:
            self._attempt_ids.add(attempt_id, attempt, attempt.expires)
