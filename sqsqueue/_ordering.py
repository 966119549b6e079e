"""Ordering policies: which receivable messages a receive takes.

The lifecycle (``_lifecycle.py``) owns the records and every index; an
ordering reads them and answers two questions, ``select`` (up to k receivable
records, in delivery order, and the ones to dead-letter instead) and
``next_due`` (when a long poll should look again). It never changes a
message's state: the lifecycle's transitions do, notifying an ordering that
keeps structures of its own (``TRACKS``).

**Standard** (:class:`StandardOrdering`). AWS keeps a standard queue's send
order on a best-effort basis, and a message whose visibility timeout ended is
delivered before visible messages sent after it (observed on AWS,
``docs/aws-behaviour.md`` §10). So a receive returns the receivable messages
in this order: a never-received message by the moment it became receivable
(its send time plus delay), a received message that is visible again by its
send time, ties in send order. It merges three streams, each already in that order: the
lifecycle's ready lane of undelayed fresh messages, its sorted index of delayed
(or dead-letter) fresh messages by due time, and its index of received
messages visible again by send time (``_revisible``, filled by ``_revisit``
once per visibility timeout, O(log n) each). Taking k messages costs
O(log n + k log n); nothing scans the queue.

**FIFO** (:class:`FifoOrdering`), ``docs/aws-behaviour.md`` §9:

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

A FIFO receive walks the groups whose head is receivable, oldest first, taking
each group's receivable prefix until it has ``max_messages``: O(log g + k) for
g groups.
"""

from __future__ import annotations

import heapq
import operator
from collections import OrderedDict, deque
from collections.abc import Iterable
from itertools import islice
from operator import attrgetter

from sortedcontainers import SortedKeyList

from sqsqueue._faults import REORDER_WINDOW
from sqsqueue._lifecycle import Lifecycle, Ordering
from sqsqueue._limits import US
from sqsqueue._message import (
    R_COUNT,
    R_EXTRA,
    R_SKEY,
    R_VKEY,
    SEQ_MASK,
    X_BASE,
    X_GROUP,
    _Record,
    key_at,
    key_time,
    last_key,
    receive_base_of,
    receive_count_of,
)

_KEY = attrgetter("key")
_NOWHERE, _BY_VISIBILITY, _BY_ENQUEUE = 0, 1, 2
#: Sequence numbers are 20-digit decimals like AWS's (section 4). Their 17
#: data digits are ``1`` then the per-queue counter and 10 random low bits, so
#: they are strictly increasing and not consecutive; a marker digit is put
#: after every 5 data digits (positions 5, 11 and 17), see marker_digit.
_SEQUENCE_DATA_BASE = 10**16
_RANDOM_BITS = 10


def _order(rec: _Record) -> int:
    """A receivable record's place in the standard order (see the module
    docstring): due time for a fresh record, send time for a received one."""
    key: int = rec[R_SKEY] if rec[R_COUNT] else rec[R_VKEY]
    return key


class StandardOrdering(Ordering):
    """Oldest receivable first (see the module docstring); with the reorder
    fault (``Queue.faults``), a seeded shuffle of a few times the limit."""

    READY_LANE = True

    def select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        life = self.life
        bound = last_key(now)
        if life._lane_min <= bound:  # _settle's own test, inlined
            life._settle(now)  # records that became visible again leave the lane
        received = life._received
        # ``_len`` and ``_keys[0][0]``: a SortedKeyList's length and smallest key
        # without its Python-level __len__ and __getitem__ (sortedcontainers 2.x).
        if received._len and received._keys[0][0] <= bound:
            life._revisit(bound)  # from deadline order to send order, once each
        streams: list[Iterable[_Record]] = []
        ready = life._ready
        fresh = life._fresh
        revisible = life._revisible
        faults = life._faults
        fresh_due = fresh._len and fresh._keys[0][0] <= bound
        if ready.size and not fresh_due and not revisible._len and not threshold and faults is None:
            # The commonest case: the ready lane alone, nothing to dead-letter (in slices).
            return ready.take(limit), []
        if ready.size and ready.head() is not None:  # head(): skip what left the lane
            streams.append(ready)  # every ready-lane record is receivable
        if fresh_due:
            streams.append(fresh.irange_key(max_key=bound))
        if revisible._len:
            streams.append(revisible)  # every one is receivable
        if not streams:
            return [], []
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
            if threshold and receive_base_of(rec) + receive_count_of(rec) >= threshold:
                dead.append(rec)
                continue
            deliver.append(rec)
            if len(deliver) == window:
                break
        if window != limit:
            life._fault_rng.shuffle(deliver)
            del deliver[limit:]
        return deliver, dead

    def next_due(self, now: int) -> int | None:
        life = self.life
        life._settle(now)
        bound = last_key(now)
        due = None
        for index in (life._fresh, life._received):
            i = index.bisect_key_right(bound)
            if i < len(index):
                t = key_time(index[i][R_VKEY])
                due = t if due is None else min(due, t)
        if life._lane:
            t = key_time(next(iter(life._lane.values()))[R_VKEY])
            due = t if due is None else min(due, t)
        return due


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


def marker_digit(account_id: str) -> str:
    """The digit that keeps the account id out of a queue's sequence numbers.

    Snapshot tools mask the 12-digit account id wherever it appears, and a
    sequence number that contains it by chance gets corrupted (the account id
    ``000000000000`` is a run of twelve zeros; sqsqueue's own rule, not AWS's:
    ``docs/aws-behaviour.md`` §4, SequenceNumber). The marker sits at every 6th
    position, so any 12 consecutive digits of a sequence number hold it at
    two offsets i and i + 6 (i in 0..5); the marker is chosen so that no such
    pair of the account id's digits equals it. At most 6 digits are excluded,
    so one of 1..9 always remains.
    """
    excluded = {account_id[i] for i in range(6) if account_id[i] == account_id[i + 6]}
    return next(d for d in "123456789" if d not in excluded)


class FifoOrdering(Ordering):
    """Per-group chains and the group lock (see the module docstring)."""

    TRACKS = True
    LATEST_RECEIPT_ONLY = True
    KEEPS_ENQUEUE_TIME = False  # the enqueue timestamp resets on a move to a DLQ (§9)

    def __init__(self, life: Lifecycle) -> None:
        super().__init__(life)
        self._marker = marker_digit(life._account_id)
        self.reset()

    def reset(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._heads_visibility: SortedKeyList = SortedKeyList(key=_KEY)
        self._heads_enqueue: SortedKeyList = SortedKeyList(key=_KEY)

    def _delay_us(self) -> int:
        return self.life._delay_s * US

    def fresh_bound(self, now: int) -> int:
        # A fresh FIFO record's vkey is its enqueue time; the queue delay is
        # applied here, so a DelaySeconds change is retroactive (section 9).
        return last_key(now - self._delay_us())

    def sequence_number(self, seq: int) -> int:
        # 17 data digits: the counter (< 2**40) shifted past the random bits
        # stays below 10**16. Same length and markers in the same places, so
        # the numbers order as their data do.
        data = str(
            _SEQUENCE_DATA_BASE + ((seq << _RANDOM_BITS) | self.life._rng.getrandbits(_RANDOM_BITS))
        )
        m = self._marker
        return int(f"{data[:5]}{m}{data[5:10]}{m}{data[10:15]}{m}{data[15:]}")

    # -- notifications: keep the chains -------------------------------------------

    def _reindex(self, group: _Group) -> None:
        """Keep ``group`` in the right head index under the right key. O(log g)."""
        if group.received:
            where, key = _BY_VISIBILITY, next(iter(group.received.values()))[R_VKEY]
        elif group.fresh:
            where, key = _BY_ENQUEUE, group.fresh[0][R_VKEY]
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

    def linked(self, rec: _Record) -> None:
        gid = rec[R_EXTRA][X_GROUP]
        assert gid is not None
        group = self._groups.get(gid)
        if group is None:
            group = self._groups[gid] = _Group(gid)
        group.fresh.append(rec)
        if group.where == _NOWHERE:
            self._reindex(group)

    def unlinked(self, rec: _Record) -> None:
        group = self._groups[rec[R_EXTRA][X_GROUP]]
        if not rec[R_COUNT]:
            if group.fresh[0] is rec:
                group.fresh.popleft()
            else:  # pragma: no cover - expiry removes the oldest, which is a head
                group.fresh.remove(rec)
        else:
            del group.received[rec[R_SKEY] & SEQ_MASK]  # key_seq, inlined
        self._reindex(group)

    def moved(self, rec: _Record, was_fresh: bool) -> None:
        # ``rec`` is the record as it is now: it takes the place of the one
        # the chain held (same sequence number, so the same place).
        group = self._groups[rec[R_EXTRA][X_GROUP]]
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        if was_fresh:
            assert group.fresh[0][R_SKEY] == rec[R_SKEY]
            group.fresh.popleft()
        group.received[seq] = rec
        self._reindex(group)

    # -- consulted by the lifecycle -----------------------------------------------

    def select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        vis_bound = last_key(now)
        fresh_bound = self.fresh_bound(now)
        shift = key_at(self._delay_us(), 0)  # a fresh head's key, as a due time
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
                if rec[R_VKEY] > vis_bound:
                    locked = True  # in flight: the rest of the group waits
                    break
                if threshold and rec[R_EXTRA][X_BASE] + rec[R_COUNT] >= threshold:
                    dead.append(rec)  # moved; the group goes on (section 9)
                    continue
                deliver.append(rec)
                if len(deliver) == limit:
                    return deliver, dead
            if locked:
                continue
            for rec in group.fresh:
                if rec[R_VKEY] > fresh_bound:
                    break
                if threshold and rec[R_EXTRA][X_BASE] >= threshold:
                    dead.append(rec)  # arrived dead-lettered with its count spent
                    continue
                deliver.append(rec)
                if len(deliver) == limit:
                    return deliver, dead
        return deliver, dead

    def next_due(self, now: int) -> int | None:
        due = None
        index = self._heads_visibility
        i = index.bisect_key_right(last_key(now))
        if i < len(index):
            due = key_time(index[i].key)
        index = self._heads_enqueue
        i = index.bisect_key_right(self.fresh_bound(now))
        if i < len(index):
            t = key_time(index[i].key) + self._delay_us()
            due = t if due is None else min(due, t)
        oldest = self.life._oldest()
        if oldest is not None:
            # A group's head leaving by retention unlocks the group: a long poll
            # must wake then too (section 12).
            t = key_time(oldest[R_SKEY]) + self.life._retention_us
            due = t if due is None else min(due, t)
        return due

    def check(self) -> None:
        """The chains and the heads' indexes, against the records. O(n), in
        time too: records by sequence number, groups by id, orders in C."""
        records = self.life._records
        mask = SEQ_MASK
        groups = self._groups
        visibility, enqueue = self._heads_visibility, self._heads_enqueue
        visibility._check()
        enqueue._check()
        total = 0
        for gid, group in groups.items():
            assert group.id == gid
            assert group.received or group.fresh, "empty groups are dropped"
            for seq, rec in group.received.items():
                assert rec[R_SKEY] & mask == seq and rec[R_COUNT] > 0
                assert rec[R_EXTRA][X_GROUP] == gid and records[seq] is rec
            for rec in group.fresh:
                assert rec[R_COUNT] == 0 and rec[R_EXTRA][X_GROUP] == gid
                assert records[rec[R_SKEY] & mask] is rec
            seqs = [*group.received, *(r[R_SKEY] & mask for r in group.fresh)]
            assert all(map(operator.lt, seqs, seqs[1:])), "a group's chain is in send order"
            total += len(seqs)
            if group.received:
                assert group.where == _BY_VISIBILITY
                assert group.key == next(iter(group.received.values()))[R_VKEY]
            else:
                assert group.where == _BY_ENQUEUE
                assert group.key == group.fresh[0][R_VKEY]
        assert total == len(records)
        # Each group is in the heads' index its state names, and in no other.
        assert len(visibility) + len(enqueue) == len(groups)
        for index, where in ((visibility, _BY_VISIBILITY), (enqueue, _BY_ENQUEUE)):
            assert len({group.id for group in index}) == len(index)
            for group in index:
                assert groups.get(group.id) is group and group.where == where
