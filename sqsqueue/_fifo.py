"""The FIFO queue: message groups, strict per-group order, deduplication.

Structure (``docs/aws-behaviour.md`` §9):

* Each message group is a chain in send order, split in two: ``received``,
  the prefix of messages received at least once (each in flight or visible
  again), in an ``OrderedDict`` so a delete anywhere is O(1); and ``fresh``, the
  never-received suffix, in a ``deque``. Receives always take a group's chain
  from its head, so received messages are always a prefix.
* A group's *receivable prefix* is the leading run of received messages that
  are visible again, followed (only if every received message is visible) by
  the fresh messages whose queue delay has ended. The first in-flight message
  stops it: that is the group lock, and it reproduces every case AWS was
  observed to show (section 9): a group with a received message in flight
  returns nothing; extending the visibility of the message at position p keeps
  p and everything after it hidden while earlier ones return; terminating the
  head's visibility returns it at once; deleting every received message
  unlocks the group; sending to a locked group does not unlock it.
* Two sorted indexes of groups by the time their head becomes receivable: one
  for groups whose head was received (keyed by its visibility deadline), one
  for groups whose head is fresh (keyed by its enqueue time: the queue delay is
  added when comparing, so changing DelaySeconds applies to stored messages at
  once, as AWS does for FIFO queues).

A receive walks the groups whose head is receivable, oldest first, taking each
group's receivable prefix until it has ``max_messages``: O(log g + k) for g
groups. Delete and change visibility are O(log n).
"""

from __future__ import annotations

import hashlib
import heapq
import random as _random
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from sortedcontainers import SortedKeyList

from sqsqueue import _limits as L
from sqsqueue import _validate
from sqsqueue._clock import Clock
from sqsqueue._faults import Faults
from sqsqueue._lifecycle import FailsWholeBatch, _BaseQueue
from sqsqueue._message import SEQ_BITS, SEQ_MASK, Message, SendResult, _Record
from sqsqueue._standard import system_attributes_md5
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue, MissingParameter

__all__ = ["FifoQueue"]

_KEY = attrgetter("key")
_NOWHERE, _BY_VISIBILITY, _BY_ENQUEUE = 0, 1, 2

_MISSING_GROUP = "The request must contain the parameter MessageGroupId."
_MISSING_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)
#: Sequence numbers are 20-digit decimals like AWS's (section 4). Their 17
#: data digits are ``1`` then the per-queue counter and 10 random low bits, so
#: they are strictly increasing and not consecutive; a marker digit is put
#: after every 5 data digits (positions 5, 11 and 17), see _marker_digit.
_SEQUENCE_DATA_BASE = 10**16
_RANDOM_BITS = 10


def _marker_digit(account_id: str) -> str:
    """The digit that keeps the account id out of this queue's sequence numbers.

    Snapshot tools mask the 12-digit account id wherever it appears, and a
    sequence number that contains it by chance gets corrupted (a run of twelve
    zeros appeared inside one, issue 12 §6). The marker sits at every 6th
    position, so any 12 consecutive digits of a sequence number hold it at
    two offsets i and i + 6 (i in 0..5); the marker is chosen so that no such
    pair of the account id's digits equals it. At most 6 digits are excluded,
    so one of 1..9 always remains.
    """
    excluded = {account_id[i] for i in range(6) if account_id[i] == account_id[i + 6]}
    return next(d for d in "123456789" if d not in excluded)


class _Group:
    """One message group's chain (see the module docstring)."""

    __slots__ = ("fresh", "id", "key", "received", "where")

    def __init__(self, group_id: str) -> None:
        self.id = group_id
        self.received: OrderedDict[int, _Record] = OrderedDict()
        self.fresh: deque[_Record] = deque()
        self.key = 0
        self.where = _NOWHERE

    def __repr__(self) -> str:
        return f"_Group({self.id!r}, received={len(self.received)}, fresh={len(self.fresh)})"


class _Attempt:
    """A remembered ReceiveRequestAttemptId (section 9)."""

    __slots__ = ("expires", "handles", "items")

    def __init__(self, expires: int, items: list[tuple[int, int, int]], handles: list[str]) -> None:
        self.expires = expires
        self.items = items  # (seq, receipt number, rehides) per message
        self.handles = handles


class _DedupEntry:
    __slots__ = ("expires", "message_id", "sequence_number")

    def __init__(self, expires: int, message_id: str, sequence_number: int) -> None:
        self.expires = expires
        self.message_id = message_id
        self.sequence_number = sequence_number


class FifoQueue(_BaseQueue):
    """An Amazon SQS FIFO queue, in process.

    >>> from sqsqueue import ManualClock
    >>> q = FifoQueue("orders.fifo", clock=ManualClock(), content_based_deduplication=True)
    >>> _ = q.send("a", group_id="g1"); _ = q.send("b", group_id="g1")
    >>> [m.body for m in q.receive(10)]
    ['a', 'b']

    Same operations as :class:`Queue`; ``send`` takes ``group_id`` (required)
    and ``deduplication_id``; ``receive`` takes ``receive_request_attempt_id``.
    """

    FIFO = True

    def __init__(
        self,
        name: str,
        *,
        clock: Clock | None = None,
        content_based_deduplication: bool | None = None,
        deduplication_scope: str | None = None,
        fifo_throughput_limit: str | None = None,
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
            content_based_deduplication=content_based_deduplication,
            deduplication_scope=deduplication_scope,
            fifo_throughput_limit=fifo_throughput_limit,
            visibility_timeout=visibility_timeout,
            delay_seconds=delay_seconds,
            message_retention_period=message_retention_period,
            maximum_message_size=maximum_message_size,
            receive_message_wait_time_seconds=receive_message_wait_time_seconds,
            **kwargs,
        )
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
        #: per-group deduplication after a switch back: issue 12 §6, and
        #: LocalStack's AWS-validated test_fifo_change_to_high_throughput_after_creation
        #: / test_fifo_change_to_regular_throughput_after_creation (2025-08-19).
        #: So a later change is stored and reported by GetQueueAttributes but does
        #: not change which sends are duplicates; that is what was observed, not a
        #: documented rule (it may be AWS's attribute propagation taking longer).
        self._dedup_by_group = self._values["DeduplicationScope"] == "messageGroup"
        self._marker = _marker_digit(self._account_id)

    # -- structures -------------------------------------------------------------

    def _reset_policy(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._heads_visibility: SortedKeyList = SortedKeyList(key=_KEY)
        self._heads_enqueue: SortedKeyList = SortedKeyList(key=_KEY)
        # Deduplication window: entries in insertion order = expiry order.
        self._dedup: dict[object, _DedupEntry] = {}
        self._dedup_order: deque[tuple[object, _DedupEntry]] = deque()
        self._attempts: dict[str, _Attempt] = {}
        self._attempt_order: deque[tuple[str, _Attempt]] = deque()

    def _delay_us(self) -> int:
        return self._delay_s * L.US

    def _fresh_bound(self, now: int) -> int:
        # A fresh FIFO record's vkey is its enqueue time; the queue delay is
        # applied here, so a DelaySeconds change is retroactive (section 9).
        return ((now - self._delay_us()) << SEQ_BITS) | SEQ_MASK

    def _reindex(self, group: _Group) -> None:
        """Keep ``group`` in the right head index under the right key. O(log g)."""
        if group.received:
            where, key = _BY_VISIBILITY, next(iter(group.received.values())).vkey
        elif group.fresh:
            where, key = _BY_ENQUEUE, group.fresh[0].vkey
        else:
            where, key = _NOWHERE, 0
        if where == group.where and key == group.key:
            return
        if group.where == _BY_VISIBILITY:
            self._heads_visibility.remove(group)
        elif group.where == _BY_ENQUEUE:
            self._heads_enqueue.remove(group)
        group.where, group.key = where, key
        if where == _BY_VISIBILITY:
            self._heads_visibility.add(group)
        elif where == _BY_ENQUEUE:
            self._heads_enqueue.add(group)
        else:
            del self._groups[group.id]

    # The lifecycle's transitions, extended with the group chains. (The base
    # transitions call no policy hooks, which keeps the standard queue's hot
    # path free of no-op calls; it keeps its ready deque through _add_fresh and
    # _remove_fresh.)

    def _enqueue(self, rec: _Record, event: str = "sent", at: int | None = None) -> None:
        super()._enqueue(rec, event, at)
        self._link(rec)

    def _deliver(self, rec: _Record, now: int, visibility_us: int) -> str:
        was_fresh = rec.receive_count == 0
        handle = super()._deliver(rec, now, visibility_us)
        self._moved(rec, was_fresh)
        return handle

    def _rehide(self, rec: _Record, due: int, now: int) -> None:
        super()._rehide(rec, due, now)
        self._moved(rec, False)

    def _drop(
        self, rec: _Record, reason: str = "deleted", now: int | None = None, **detail: object
    ) -> None:
        super()._drop(rec, reason, now, **detail)
        self._unlink(rec)

    def _link(self, rec: _Record) -> None:
        """A new record was stored: append it to its group's chain."""
        gid = rec.group_id
        assert gid is not None
        group = self._groups.get(gid)
        if group is None:
            group = self._groups[gid] = _Group(gid)
        rec.group = group
        group.fresh.append(rec)
        if group.where == _NOWHERE:
            self._reindex(group)

    def _unlink(self, rec: _Record) -> None:
        """A record left the queue: take it out of its group's chain."""
        group = rec.group
        assert group is not None
        if rec.receive_count == 0:
            if group.fresh[0] is rec:
                group.fresh.popleft()
            else:  # pragma: no cover - expiry removes the oldest, which is a head
                group.fresh.remove(rec)
        else:
            del group.received[rec.skey & SEQ_MASK]
        self._reindex(group)

    def _moved(self, rec: _Record, was_fresh: bool) -> None:
        """A record's ``vkey`` changed (received, re-hidden or made visible)."""
        group = rec.group
        assert group is not None
        if was_fresh:
            assert group.fresh[0] is rec
            group.fresh.popleft()
            group.received[rec.skey & SEQ_MASK] = rec
        self._reindex(group)

    # -- selection ----------------------------------------------------------------

    def _select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        vis_bound = (now << SEQ_BITS) | SEQ_MASK
        fresh_bound = self._fresh_bound(now)
        shift = self._delay_us() << SEQ_BITS
        groups = heapq.merge(
            self._heads_visibility.irange_key(max_key=vis_bound),
            self._heads_enqueue.irange_key(max_key=fresh_bound),
            key=lambda g: g.key if g.where == _BY_VISIBILITY else g.key + shift,
        )
        deliver: list[_Record] = []
        dead: list[_Record] = []
        for group in groups:
            # "Amazon SQS first attempts to return as many messages with the same
            # message group ID as possible" (section 9).
            locked = False
            for rec in group.received.values():
                if rec.vkey > vis_bound:
                    locked = True  # in flight: the rest of the group waits
                    break
                if threshold and rec.receive_base + rec.receive_count >= threshold:
                    dead.append(rec)  # moved; the group goes on (section 9)
                    continue
                deliver.append(rec)
                if len(deliver) == limit:
                    return deliver, dead
            if locked:
                continue
            for rec in group.fresh:
                if rec.vkey > fresh_bound:
                    break
                if threshold and rec.receive_base >= threshold:
                    dead.append(rec)  # arrived dead-lettered with its count spent
                    continue
                deliver.append(rec)
                if len(deliver) == limit:
                    return deliver, dead
        return deliver, dead

    def _next_due(self, now: int) -> int | None:
        due = None
        vis_bound = (now << SEQ_BITS) | SEQ_MASK
        index = self._heads_visibility
        i = index.bisect_key_right(vis_bound)
        if i < len(index):
            due = index[i].key >> SEQ_BITS
        index = self._heads_enqueue
        i = index.bisect_key_right(self._fresh_bound(now))
        if i < len(index):
            t = (index[i].key >> SEQ_BITS) + self._delay_us()
            due = t if due is None else min(due, t)
        oldest = self._oldest()
        if oldest is not None:
            # A group's head leaving by retention unlocks the group: a long poll
            # must wake then too (section 12).
            t = (oldest.skey >> SEQ_BITS) + self._retention_us
            due = t if due is None else min(due, t)
        return due

    def _at_in_flight_limit(self, long_poll: bool) -> list[Message]:
        # FIFO: no error at the in-flight limit (section 4).
        return []

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

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        # ``delay`` is None or 0: a FIFO message takes the queue's delay only
        # (_check_ids refuses any other DelaySeconds).
        dedup_id = rec.dedup_id
        if dedup_id is None:
            # Content-based deduplication: SHA-256 of the body (section 6, 9).
            dedup_id = hashlib.sha256(rec.body.encode("utf-8")).hexdigest()
        key: object = dedup_id
        if self._dedup_by_group:  # the scope at creation (see __init__)
            key = (rec.group_id, dedup_id)
        system_md5 = system_attributes_md5(rec.trace_header)
        entry = self._dedup.get(key)
        if entry is not None and entry.expires > now:
            # A duplicate is "accepted successfully but not delivered"; we answer
            # with the original message's id and sequence number (UNCONFIRMED
            # for AWS; what LocalStack and other emulators do).
            return SendResult(
                entry.message_id,
                rec.body,
                rec.attributes_md5,
                system_md5,
                str(entry.sequence_number),
            )
        self._sequence(rec, now, now, sender_id)
        rec.dedup_id = dedup_id
        rec.sequence_number = self._next_sequence_number(rec)
        self._enqueue(rec)
        entry = _DedupEntry(now + L.DEDUP_WINDOW * L.US, rec.message_id, rec.sequence_number)
        self._dedup[key] = entry
        self._dedup_order.append((key, entry))
        return SendResult(
            rec.message_id, rec.body, rec.attributes_md5, system_md5, str(rec.sequence_number)
        )

    def _dead_letter_enqueue_time(self, rec: _Record, now: int) -> int:
        # FIFO: the enqueue timestamp resets on a move to the DLQ (section 9).
        return now

    def _adopt_dead_letter(self, rec: _Record, now: int) -> None:
        # "the dedup id is replaced with the original MessageId" (section 9).
        rec.dedup_id = rec.message_id
        rec.sequence_number = self._next_sequence_number(rec)

    def _next_sequence_number(self, rec: _Record) -> int:
        # 17 data digits: the counter (< 2**40) shifted past the random bits
        # stays below 10**16. Same length and markers in the same places, so
        # the numbers order as their data do.
        data = str(
            _SEQUENCE_DATA_BASE
            + (((rec.skey & SEQ_MASK) << _RANDOM_BITS) | self._rng.getrandbits(_RANDOM_BITS))
        )
        m = self._marker
        return int(f"{data[:5]}{m}{data[5:10]}{m}{data[10:15]}{m}{data[15:]}")

    def _advance(self, now: int) -> None:
        """Retention, then the deduplication window and receive attempts that ended."""
        super()._advance(now)
        order = self._dedup_order
        while order and order[0][1].expires <= now:
            key, entry = order.popleft()
            if self._dedup.get(key) is entry:
                del self._dedup[key]
        attempts = self._attempt_order
        while attempts and attempts[0][1].expires <= now:
            attempt_id, attempt = attempts.popleft()
            if self._attempts.get(attempt_id) is attempt:
                del self._attempts[attempt_id]

    # -- receipts -----------------------------------------------------------------

    def _may_act(self, rec: _Record, receipt_no: int, now: int) -> bool:
        # FIFO: only the latest receipt, and only while it is in flight: "DeleteMessage
        # operations will fail if the request is received outside of the visibility
        # timeout window" (section 8).
        return receipt_no == rec.receipt_no and (rec.vkey >> SEQ_BITS) > now

    def _check_attempt_id(self, value: object) -> str | None:
        if value is None:
            return None
        return _validate.fifo_id("ReceiveRequestAttemptId", value)

    def _remember_attempt(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None:
        if not records:
            return  # nothing to replay: a retry is simply a new receive
        attempt = _Attempt(
            now + L.DEDUP_WINDOW * L.US,
            [(r.skey & SEQ_MASK, r.receipt_no, r.rehides) for r in records],
            handles,
        )
        self._attempts[attempt_id] = attempt
        self._attempt_order.append((attempt_id, attempt))

    def _replay_attempt(
        self,
        attempt_id: str,
        now: int,
        visibility_us: int,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[Message] | None:
        """Section 9: a retry within 5 minutes returns the same messages and
        receipt handles, provided none was deleted or had its visibility
        changed, and resets their visibility timeout. Otherwise the retry is a
        new receive (UNCONFIRMED, the most plausible reading)."""
        attempt = self._attempts.get(attempt_id)
        if attempt is None or attempt.expires <= now:
            return None
        records = []
        for seq, receipt_no, rehides in attempt.items:
            rec = self._records.get(seq)
            # Any ChangeMessageVisibility counts, even one that set the same deadline.
            if rec is None or rec.receipt_no != receipt_no or rec.rehides != rehides:
                del self._attempts[attempt_id]
                return None
            records.append(rec)
        items = []
        for rec in records:
            self._rehide(rec, min(now + visibility_us, rec.receive_cap), now)
            items.append((rec.skey & SEQ_MASK, rec.receipt_no, rec.rehides))
        attempt.items = items
        return [
            self._view(rec, handle, attribute_names, message_attribute_names)
            for rec, handle in zip(records, attempt.handles, strict=True)
        ]

    # -- invariants ---------------------------------------------------------------

    def _check_policy(self) -> None:
        self._heads_visibility._check()
        self._heads_enqueue._check()
        total = 0
        for gid, group in self._groups.items():
            assert group.id == gid
            assert group.received or group.fresh, "empty groups are dropped"
            chain = [*group.received.values(), *group.fresh]
            total += len(chain)
            seqs = [r.skey & SEQ_MASK for r in chain]
            assert seqs == sorted(seqs), "a group's chain is in send order"
            for seq, rec in group.received.items():
                assert rec.skey & SEQ_MASK == seq and rec.receive_count > 0
                assert rec.group is group and self._records[seq] is rec
            for rec in group.fresh:
                assert rec.receive_count == 0 and rec.group is group
                assert self._records[rec.skey & SEQ_MASK] is rec
            if group.received:
                assert group.where == _BY_VISIBILITY and group in self._heads_visibility
                assert group.key == next(iter(group.received.values())).vkey
            else:
                assert group.where == _BY_ENQUEUE and group in self._heads_enqueue
                assert group.key == group.fresh[0].vkey
        assert total == len(self._records)
        assert len(self._heads_visibility) + len(self._heads_enqueue) == len(self._groups)
        in_order = set(self._dedup_order)  # a set: deque membership would be O(n^2)
        for key, entry in self._dedup.items():
            assert (key, entry) in in_order
