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

* Each message group is a chain in send order: the messages received at
  least once (each in flight or visible again) first, then the
  never-received ones. Receives always take a group's chain from its head,
  so received messages are always a prefix.
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

None of it is an object per group or per message the collector would walk
(``docs/architecture.md``, "What the collector sees"); everything is ints
and strings, found by sequence number:

* A chain is *links*: ``seq -> next seq`` of the same group, in blocks of
  sequence numbers (``seq >> BLOCK_BITS``), arrays of machine ints
  (:class:`Links`), which are not objects the collector tracks. A record
  is read from the lifecycle's ``_records`` by its seq; the chain never
  references one. A record that leaves from inside a chain (a
  delete out of order, a dead letter) leaves its seq as a *gap*: the head
  passes gaps when it moves on, and a receive that walks over one splices it
  out, so each gap is passed once.
* A group is two ints: the key it is indexed under in a heads' index (a
  record key, whose low bits are the head's seq) and its tail seq, in dicts
  of group id -> int split in 64 parts by the id's hash (so no single dict of
  100,000 groups copies itself in one call when it grows). A group whose
  chain empties is dropped.
* Each heads' index is an :class:`IntIndex`: one key per group, sorted, in
  tuples of up to 512 ints (chunks the collector untracks), not a list of
  100,000 references to ints.
* The ordering keeps the fresh records itself (``KEEPS_FRESH``): the
  lifecycle indexes none of them, and the number still in their delay
  (``delayed``) comes from counts of fresh records per block of sequence
  numbers.

A FIFO receive walks the groups whose head is receivable, oldest first, taking
each group's receivable prefix until it has ``max_messages``: O(log g + k) for
g groups (plus the gaps it splices out, each once). A send appends to its
group's chain in O(1) (O(log g) for a new group); a delete or a receive
moves a group's head in O(log g), any other message in O(1).
"""

from __future__ import annotations

import heapq
import operator
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from itertools import chain, islice, takewhile

from sqsqueue._faults import REORDER_WINDOW
from sqsqueue._lifecycle import Lifecycle, Ordering
from sqsqueue._limits import US
from sqsqueue._message import (
    R_COUNT,
    R_GROUP,
    R_SKEY,
    R_VKEY,
    SEQ_MASK,
    _Record,
    key_at,
    key_time,
    last_key,
    receive_base_of,
    receive_count_of,
)
from sqsqueue._store import BLOCK_BITS, LOW, NO_BLOCK

#: Group state is split over this many dicts by the group id's hash: a dict
#: of 100,000 groups would copy itself whole when it grows (milliseconds,
#: in one call); each part grows in small steps.
_PARTS = 64
_PART_MASK = _PARTS - 1


class Links:
    """The chains' links: ``seq -> next seq`` of the same group, 0 for none
    (sequence numbers start at 1). Each block of ``1 << BLOCK_BITS`` sequence
    numbers is an ``array`` of machine ints, one slot a number, with a count
    of the links it holds: 8 bytes a message, and no object at all, where a
    dict of ints held two (the next number and its key) and a dict slot, some
    100 bytes. An array is never tracked by the collector. A block goes when
    its last link does. ``get``, ``set`` and ``pop`` are O(1); a new block
    costs O(BLOCK) once (8 KB of zeros)."""

    __slots__ = ("blocks", "counts")

    def __init__(self) -> None:
        self.blocks: dict[int, array[int]] = {}
        #: How many links each block holds.
        self.counts: dict[int, int] = {}

    def get(self, seq: int) -> int:
        """The seq after ``seq`` in its chain, 0 if ``seq`` is its tail."""
        block = self.blocks.get(seq >> BLOCK_BITS)
        return 0 if block is None else block[seq & LOW]

    def set(self, seq: int, nxt: int) -> None:
        """Link ``seq`` (a tail, or a link to replace) to ``nxt``."""
        k = seq >> BLOCK_BITS
        block = self.blocks.get(k)
        if block is None:
            block = self.blocks[k] = array("q", _ZEROS)
            self.counts[k] = 0
        if not block[seq & LOW]:
            self.counts[k] += 1
        block[seq & LOW] = nxt

    def pop(self, seq: int) -> int:
        """Unlink ``seq`` from the one after it: that one, or 0 (a tail)."""
        k = seq >> BLOCK_BITS
        block = self.blocks.get(k)
        if block is None:
            return 0
        nxt = block[seq & LOW]
        if nxt:
            block[seq & LOW] = 0
            left = self.counts[k] - 1
            if left:
                self.counts[k] = left
            else:
                del self.blocks[k], self.counts[k]
        return nxt

    def __len__(self) -> int:
        return sum(self.counts.values())

    def check(self) -> None:
        assert self.blocks.keys() == self.counts.keys()
        for k, block in self.blocks.items():
            assert self.counts[k] == len(block) - block.count(0) > 0, "counts; empty blocks go"


#: A new block of links: none.
_ZEROS = bytes(8 << BLOCK_BITS)
#: Sequence numbers are 20-digit decimals like AWS's (section 4). Their 17
#: data digits are ``1`` then the per-queue counter and 10 low bits that look random, so
#: they are strictly increasing and not consecutive; a marker digit is put
#: after every 5 data digits (positions 5, 11 and 17), see marker_digit.
_SEQUENCE_DATA_BASE = 10**16
_RANDOM_BITS = 10
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1
#: The "random" low bits are bits of the queue's message-id mixing of the
#: sequence number (``_lifecycle.id_source``): a function of the number, so
#: a message's sequence number is derived again whenever it is read (the
#: deduplication window keeps none), not drawn once and stored.
_MIX_SHIFT = 24


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


#: A heads' index chunk splits in two past this many keys.
_CHUNK_MAX = 512


class IntIndex:
    """A sorted set of ints (a FIFO heads' index: one key per message group)
    held where the collector does not look: *chunks*, tuples of sorted keys,
    which CPython untracks the first time a collection examines them (ints
    only), in a list, with a list of each chunk's largest key to find one by.
    A ``SortedList`` of 100,000 keys is lists of 100,000 references to ints
    spread over the heap, which a full collection visits one by one (about
    20 ms); here it visits a few hundred chunks and maxima.

    ``add`` and ``remove`` are O(log g + _CHUNK_MAX) (the chunk is rebuilt:
    a copy in C), the smallest key and ``len`` O(1), ``first_after``
    O(log g), ``upto`` yields the keys up to a bound in order, O(1) each. A
    chunk splits in two when it passes ``_CHUNK_MAX`` and goes when it is
    emptied."""

    __slots__ = ("chunks", "maxes", "size")

    def __init__(self) -> None:
        self.chunks: list[tuple[int, ...]] = []
        self.maxes: list[int] = []
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(self.chunks)

    def add(self, key: int) -> None:
        """Add ``key``, which is not in the index."""
        chunks, maxes = self.chunks, self.maxes
        self.size += 1
        if not chunks:
            chunks.append((key,))
            maxes.append(key)
            return
        i = bisect_left(maxes, key)
        if i == len(maxes):  # past the last chunk's largest: it joins that chunk
            i -= 1
            chunk = chunks[i] + (key,)
            maxes[i] = key
        else:
            chunk = chunks[i]
            at = bisect_left(chunk, key)
            chunk = (*chunk[:at], key, *chunk[at:])
        if len(chunk) > _CHUNK_MAX:
            half = len(chunk) >> 1
            chunks[i : i + 1] = chunk[:half], chunk[half:]
            maxes[i : i + 1] = chunk[half - 1], chunk[-1]
        else:
            chunks[i] = chunk

    def remove(self, key: int) -> None:
        """Remove ``key``, which is in the index."""
        chunks, maxes = self.chunks, self.maxes
        i = bisect_left(maxes, key)
        chunk = chunks[i]
        at = bisect_left(chunk, key)
        assert chunk[at] == key
        self.size -= 1
        if len(chunk) == 1:
            del chunks[i], maxes[i]
            return
        chunk = chunks[i] = (*chunk[:at], *chunk[at + 1 :])
        maxes[i] = chunk[-1]

    def first_after(self, bound: int) -> int | None:
        """The smallest key greater than ``bound``, or None."""
        i = bisect_right(self.maxes, bound)
        if i == len(self.maxes):
            return None
        chunk = self.chunks[i]
        return chunk[bisect_right(chunk, bound)]

    def upto(self, bound: int) -> Iterator[int]:
        """The keys up to ``bound``, in order (the index unchanged meanwhile)."""
        return takewhile(bound.__ge__, chain.from_iterable(self.chunks))

    def check(self) -> None:
        keys = list(self)
        assert all(map(operator.lt, keys, keys[1:])) and len(keys) == self.size
        assert all(self.chunks) and self.maxes == [c[-1] for c in self.chunks]
        assert all(type(c) is tuple and len(c) <= _CHUNK_MAX for c in self.chunks)


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


def markers(marker: str) -> int:
    """The marker digit at positions 5, 11 and 17 of a 20-digit number."""
    return int(marker) * (10**14 + 10**8 + 10**2)


def sequence_number(seq: int, low: int, markers: int) -> int:
    """The sequence number of message ``seq`` with ``low`` (10 bits) as its low
    data bits and ``markers`` (:func:`markers`) for its marker digits: 17
    data digits, ``1`` then ``seq << 10 | low``, with the marker after every
    5 of them. The counter (< 2**40) shifted past the low bits stays below
    10**16, so every number has 20 digits, with its markers in the same
    places, and the numbers order as their data do. In arithmetic, not text:
    a FIFO receive derives one a message (``_message``, "the stored record").
    O(1)."""
    head, last = divmod(_SEQUENCE_DATA_BASE + ((seq << _RANDOM_BITS) | low), 100)
    head, third = divmod(head, 100_000)
    first, second = divmod(head, 100_000)
    return first * 10**15 + second * 10**9 + third * 1000 + last + markers


class FifoOrdering(Ordering):
    """Per-group chains and the group lock (see the module docstring)."""

    TRACKS = True
    LATEST_RECEIPT_ONLY = True
    KEEPS_ENQUEUE_TIME = False  # the enqueue timestamp resets on a move to a DLQ (§9)
    KEEPS_FRESH = True  # the chains hold them: the lifecycle indexes no fresh record

    def __init__(self, life: Lifecycle) -> None:
        super().__init__(life)
        self._marker = marker_digit(life._account_id)
        #: The marker digit at positions 5, 11 and 17 of a sequence number.
        self._markers = markers(self._marker)
        self.reset()

    def reset(self) -> None:
        #: Per part (``hash(group id) & _PART_MASK``): group id -> the key the
        #: group is in a heads' index under (its low bits are the head's seq).
        self._heads: list[dict[str, int]] = [{} for _ in range(_PARTS)]
        #: Per part: group id -> the last sequence number of its chain.
        self._tails: list[dict[str, int]] = [{} for _ in range(_PARTS)]
        #: The chains' links (:class:`Links`): seq -> the next seq of its group.
        self._links = Links()
        #: Never-received records per block of sequence numbers (``delayed``).
        self._fresh_counts: dict[int, int] = {}
        #: Heads received at least once, by visibility deadline (their vkey);
        #: never-received heads by enqueue time (their vkey, the queue delay
        #: not added). One int per group.
        self._heads_visibility = IntIndex()
        self._heads_enqueue = IntIndex()

    def _delay_us(self) -> int:
        return self.life._delay_s * US

    def fresh_bound(self, now: int) -> int:
        # A fresh FIFO record's vkey is its enqueue time; the queue delay is
        # applied here, so a DelaySeconds change is retroactive (section 9).
        return last_key(now - self._delay_us())

    def sequence_number(self, seq: int) -> int:
        # The low bits: of the id mixing (_MIX_SHIFT), a function of ``seq``.
        life = self.life
        low = ((seq * life._id_mult + life._id_offset) >> _MIX_SHIFT) & _RANDOM_MASK
        return sequence_number(seq, low, self._markers)

    def group_name(self, gid: str) -> str:
        """The string object the stored records of group ``gid`` hold (its
        head's), or ``gid`` for a group with none: a send stores that one, so
        a group's messages share one string, not one each from their callers.
        O(1)."""
        key = self._heads[hash(gid) & _PART_MASK].get(gid)
        if key is None:
            return gid
        seq = key & SEQ_MASK  # key_seq, inlined
        name: str = self.life._records.blocks[seq >> BLOCK_BITS][seq & LOW][R_GROUP]
        return name

    # -- notifications: keep the chains -------------------------------------------

    def _fresh_left(self, seq: int) -> None:
        """Record ``seq`` is no longer fresh (received or gone): its block's
        count goes down, and goes when it reaches 0. O(1)."""
        counts = self._fresh_counts
        k = seq >> BLOCK_BITS
        left = counts[k] - 1
        if left:
            counts[k] = left
        else:
            del counts[k]

    def linked(self, rec: _Record) -> None:
        """``rec`` joins the end of its group's chain, never received (a record
        restored as received is then ``moved``). O(1), O(log g) for a new group."""
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        gid = rec[R_GROUP]
        k = seq >> BLOCK_BITS
        counts = self._fresh_counts
        counts[k] = counts.get(k, 0) + 1
        part = hash(gid) & _PART_MASK
        tails = self._tails[part]
        tail = tails.get(gid)
        tails[gid] = seq
        if tail is None:  # a new group: ``rec`` is its head
            key = rec[R_SKEY]  # a fresh FIFO record's vkey: its enqueue key
            self._heads[part][gid] = key
            self._heads_enqueue.add(key)
            return
        self._links.set(tail, seq)

    def unlinked(self, rec: _Record) -> None:
        """``rec`` left the queue (its record is gone from ``life._records``).
        The head: the chain's next live record becomes the head (passing the
        records that left before it, each once), O(log g). Any other: it stays
        in the chain as a gap until the head or a receive passes it, O(1)."""
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        if not rec[R_COUNT]:
            self._fresh_left(seq)
        gid = rec[R_GROUP]
        part = hash(gid) & _PART_MASK
        heads = self._heads[part]
        key = heads[gid]
        if key & SEQ_MASK != seq:
            return  # not the head
        if rec[R_COUNT]:
            self._heads_visibility.remove(key)
        else:
            self._heads_enqueue.remove(key)
        blocks = self.life._records.blocks
        pop = self._links.pop
        nxt = pop(seq)
        while nxt:
            head = blocks.get(nxt >> BLOCK_BITS, NO_BLOCK).get(nxt & LOW)  # records.get
            if head is not None:
                key = head[R_VKEY]
                heads[gid] = key
                if head[R_COUNT]:
                    self._heads_visibility.add(key)
                else:
                    self._heads_enqueue.add(key)
                return
            nxt = pop(nxt)  # a gap: gone before the head
        del heads[gid]  # the group is empty
        del self._tails[part][gid]

    def moved(self, rec: _Record, was_fresh: bool) -> None:
        """``rec`` (the record as it is now) was received or re-hidden: a head
        moves to the visibility index under its new deadline. O(log g) for a
        head, O(1) for any other."""
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        if was_fresh:
            self._fresh_left(seq)
        gid = rec[R_GROUP]
        heads = self._heads[hash(gid) & _PART_MASK]
        key = heads[gid]
        if key & SEQ_MASK != seq:
            return  # not the head: the chain finds its record by seq
        if was_fresh:
            self._heads_enqueue.remove(key)
        else:
            self._heads_visibility.remove(key)
        key = heads[gid] = rec[R_VKEY]
        self._heads_visibility.add(key)

    # -- consulted by the lifecycle -----------------------------------------------

    def select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        vis_bound = last_key(now)
        fresh_bound = self.fresh_bound(now)
        visibility, enqueue = self._heads_visibility, self._heads_enqueue
        # The smallest keys, read from the first chunks.
        vis_due = visibility.chunks and visibility.chunks[0][0] <= vis_bound
        fresh_due = enqueue.chunks and enqueue.chunks[0][0] <= fresh_bound
        heads: Iterable[int]
        if vis_due and fresh_due:
            # A fresh head's key, as a due time: the queue delay added (its low
            # bits, the head's seq, unchanged).
            shift = key_at(self._delay_us(), 0)
            fresh_heads = enqueue.upto(fresh_bound)
            heads = heapq.merge(
                visibility.upto(vis_bound),
                map(shift.__add__, fresh_heads) if shift else fresh_heads,
            )
        elif vis_due:
            heads = visibility.upto(vis_bound)
        elif fresh_due:
            heads = enqueue.upto(fresh_bound)
        else:
            return [], []
        blocks = self.life._records.blocks
        links = self._links
        link_blocks = links.blocks
        deliver: list[_Record] = []
        dead: list[_Record] = []
        for key in heads:
            # "Amazon SQS first attempts to return as many messages with the same
            # message group ID as possible" (section 9): the group's chain from
            # its head (live), up to the first message in flight (the group
            # lock) or not due yet.
            seq = key & SEQ_MASK  # key_seq, inlined
            rec: _Record | None = blocks[seq >> BLOCK_BITS][seq & LOW]
            prev = seq
            while True:
                if rec is None:
                    pass  # a gap: spliced out below
                elif rec[R_COUNT]:
                    if rec[R_VKEY] > vis_bound:
                        break  # in flight: the rest of the group waits
                    if threshold and receive_base_of(rec) + rec[R_COUNT] >= threshold:
                        dead.append(rec)  # moved; the group goes on (section 9)
                    else:
                        deliver.append(rec)
                        if len(deliver) == limit:
                            return deliver, dead
                else:
                    if rec[R_VKEY] > fresh_bound:
                        break
                    if threshold and receive_base_of(rec) >= threshold:
                        dead.append(rec)  # arrived dead-lettered with its count spent
                    else:
                        deliver.append(rec)
                        if len(deliver) == limit:
                            return deliver, dead
                link = link_blocks.get(seq >> BLOCK_BITS)  # links.get, inlined
                nxt = 0 if link is None else link[seq & LOW]
                if not nxt:
                    break  # the group's tail
                if rec is None:
                    # Splice the gap out (each once): ``prev`` links past it.
                    links.pop(seq)
                    links.set(prev, nxt)
                else:
                    prev = seq
                seq = nxt
                rec = blocks.get(seq >> BLOCK_BITS, NO_BLOCK).get(seq & LOW)  # records.get
        return deliver, dead

    def next_due(self, now: int) -> int | None:
        due = None
        key = self._heads_visibility.first_after(last_key(now))
        if key is not None:
            due = key_time(key)
        key = self._heads_enqueue.first_after(self.fresh_bound(now))
        if key is not None:
            t = key_time(key) + self._delay_us()
            due = t if due is None else min(due, t)
        oldest = self.life._oldest()
        if oldest is not None:
            # A group's head leaving by retention unlocks the group: a long poll
            # must wake then too (section 12).
            t = key_time(oldest[R_SKEY]) + self.life._retention_us
            due = t if due is None else min(due, t)
        return due

    def delayed(self, now: int) -> int:
        """Never-received records still in the queue delay: those enqueued after
        ``fresh_bound(now)``. FIFO records arrive in sequence order at their
        enqueue time, so they are the never-received ones of the newest
        records: whole blocks by their count, then the one block the bound
        falls in, from its end. O(1) when the newest arrival is due (no queue
        delay, or none sent in it); else O(d / BLOCK + BLOCK) for d records
        sent within the delay."""
        bound = self.fresh_bound(now)
        life = self.life
        if life._last_skey <= bound:
            return 0
        blocks = life._records.blocks
        counts = self._fresh_counts
        total = 0
        for k in reversed(blocks):
            block = blocks[k]
            if not block:
                continue
            if next(iter(block.values()))[R_SKEY] > bound:
                total += counts.get(k, 0)
                continue
            for rec in reversed(block.values()):
                if rec[R_SKEY] <= bound:
                    break
                if not rec[R_COUNT]:
                    total += 1
            break
        return total

    def fresh_records(self) -> Iterator[_Record]:
        # Every stored record is in its group's chain (check() asserts it):
        # the fresh ones are the stored ones never received.
        return (rec for rec in self.life._records.values() if not rec[R_COUNT])

    def check(self) -> None:
        """The chains, the heads' indexes and the counts, against the records.
        O(n + g log g), each chain walked once with the lookups in locals."""
        life = self.life
        records = life._records
        blocks = records.blocks
        all_links = self._links
        mask = SEQ_MASK
        visibility, enqueue = self._heads_visibility, self._heads_enqueue
        visibility.check()
        enqueue.check()
        assert not life._out_of_order, "FIFO records arrive in sequence order"
        total = links = 0
        vis_keys: list[int] = []
        enq_keys: list[int] = []
        fresh_counts: dict[int, int] = {}
        for part, (heads, tails) in enumerate(zip(self._heads, self._tails, strict=True)):
            assert heads.keys() == tails.keys()
            for gid, key in heads.items():
                assert hash(gid) & _PART_MASK == part
                seq = key & mask
                head = blocks.get(seq >> BLOCK_BITS, NO_BLOCK).get(seq & LOW)
                assert head is not None, "a chain's head is live"
                assert head[R_VKEY] == key
                (vis_keys if head[R_COUNT] else enq_keys).append(key)
                prev = -1
                fresh = False
                while True:
                    assert seq > prev, "a group's chain is in send order"
                    rec = blocks.get(seq >> BLOCK_BITS, NO_BLOCK).get(seq & LOW)
                    if rec is not None:  # else a gap
                        assert rec[R_SKEY] & mask == seq and rec[R_GROUP] == gid
                        if rec[R_COUNT]:
                            assert not fresh, "received messages are a prefix of their chain"
                        else:
                            fresh = True
                            assert rec[R_VKEY] == rec[R_SKEY], "a fresh vkey: its enqueue"
                            k = seq >> BLOCK_BITS
                            fresh_counts[k] = fresh_counts.get(k, 0) + 1
                        total += 1
                    prev = seq
                    nxt = all_links.get(seq)
                    if not nxt:
                        break
                    links += 1
                    seq = nxt
                assert prev == tails[gid], "a chain ends at its group's tail"
        assert total == len(records), "every record is in its group's chain"
        all_links.check()
        assert links == len(all_links), "no link outside a chain"
        assert self._fresh_counts == fresh_counts
        assert sorted(vis_keys) == list(visibility) and sorted(enq_keys) == list(enqueue)
