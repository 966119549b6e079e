"""Where a queue's records live: structures the cyclic collector does not walk.

A stored message is a tuple the collector untracks (``_message``, "the
stored record"). That alone does not keep a full collection short: a
*container* the collector tracks is walked reference by reference, and each
visit reads the object it points to, so a dict or deque holding a million
untracked records still costs tens of milliseconds a collection (one cache
miss per message, twice). So the two structures that hold every stored
message hold them where the collector does not look:

* :class:`Records`, the records by sequence number, is a dict of *blocks*:
  plain dicts of ``BLOCK`` consecutive sequence numbers each. CPython stops
  tracking a dict whose keys and values are all untracked when a full
  collection finds it so, and tracks it again only when something it may
  have to track is put in it (a record not yet untracked: every new one).
  So only the blocks written to since the last full collection are walked,
  and each is small. A block that new messages have filled is *settled*
  once, when sends open the block after next (by then its records have been
  through young collections and are untracked): it is copied by insertion,
  which makes a dict the collector never tracks, so even the first full
  collection after a queue grew does not walk what it stored (when no young
  collection has run since, the settle runs one: :meth:`Records.opened`).
* :class:`ReadyLane`, the never-received messages sent without delay, in key
  order, is a deque of *chunks*: tuples of 64 records, which the collector
  untracks as it does the records, so a deque of a million messages holds
  some 16,000 references, not a million.

In-flight messages (the lifecycle's lane and received index) and delayed
ones (its sorted index) are held by ordinary tracked containers: they are
walked by full collections, in proportion to how many there are.

Neither class reports or decides anything: the lifecycle (``_lifecycle.py``)
owns every change.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterator
from itertools import chain

from sqsqueue._message import R_SKEY, R_VKEY, SEQ_MASK, _Record

#: A block holds the records of ``1 << BLOCK_BITS`` consecutive sequence numbers.
#: 1,024: a receive writes its message's next record into the block, which the
#: collector then tracks (and walks, whole) until the next full collection
#: finds it clean. A standard queue's receives dirty the one or two blocks at
#: its head; a FIFO queue's take each group's messages in order, wherever they
#: are, and dirty a block at each place its groups' next messages are, so the
#: first full collection after a steady FIFO load walked some 50,000 records
#: in 4,096-record blocks and 17,000 in blocks of 1,024. Smaller still would
#: settle (and run the balanced load's young collection) more often for less.
BLOCK_BITS = 10
BLOCK = 1 << BLOCK_BITS
#: A block's dict is keyed by the low bits of the sequence number
#: (``seq & LOW``), and a record is put in under ``KEYS[seq & LOW]``: one
#: shared int object per place, made once here. Keyed by the sequence number
#: itself, each record would bring its own int key object (28 bytes above
#: 256), kept for as long as it is stored.
LOW = BLOCK - 1
KEYS: tuple[int, ...] = tuple(range(BLOCK))
#: The ready lane's records per chunk.
CHUNK = 64
#: The block a read finds where there is none (``blocks.get(k, NO_BLOCK).get(seq & LOW)``:
#: one lookup of a record without testing for a missing block). Never written to.
NO_BLOCK: dict[int, _Record] = {}


class Records:
    """The stored records of one queue by sequence number, in blocks (see the
    module docstring). A mapping's reads (``get``, ``[]``, ``in``, ``len``,
    iteration in sequence order, ``values``, ``items``); writes are
    ``records[seq] = rec`` (a new record, or the next state of a stored one)
    and ``del records[seq]``. Each is O(1); the hot paths of the lifecycle
    index ``blocks`` themselves, the same way (``blocks[seq >> BLOCK_BITS][seq
    & LOW]``, and a new record under ``KEYS[seq & LOW]``)."""

    __slots__ = ("blocks", "count", "settled")

    #: ``BLOCK_BITS``, for readers that may not import this module (``_receipts``).
    block_bits = BLOCK_BITS

    def __init__(self) -> None:
        self.blocks: dict[int, dict[int, _Record]] = {}
        #: How many records are stored.
        self.count = 0
        #: Blocks below this one were settled (or never needed it).
        self.settled = 0

    def get(self, seq: int) -> _Record | None:
        block = self.blocks.get(seq >> BLOCK_BITS)
        return None if block is None else block.get(seq & LOW)

    def __getitem__(self, seq: int) -> _Record:
        return self.blocks[seq >> BLOCK_BITS][seq & LOW]

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, int) and self.get(seq) is not None

    def __setitem__(self, seq: int, rec: _Record) -> None:
        k = seq >> BLOCK_BITS
        block = self.blocks.get(k)
        if block is None:
            block = self.blocks[k] = {}
            self.opened(k)
        if (seq & LOW) not in block:
            self.count += 1
        block[KEYS[seq & LOW]] = rec

    def __delitem__(self, seq: int) -> None:
        k = seq >> BLOCK_BITS
        block = self.blocks[k]
        del block[seq & LOW]
        self.count -= 1
        if not block and k != self.tail:
            del self.blocks[k]  # empty, and no new record will go there

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __iter__(self) -> Iterator[int]:
        """Sequence numbers, in order: blocks are made in order (sequence
        numbers only grow), and a block keeps its records' order."""
        for k, block in list(self.blocks.items()):
            at = k << BLOCK_BITS
            yield from [at | low for low in block]

    def values(self) -> Iterator[_Record]:
        for block in list(self.blocks.values()):
            yield from list(block.values())

    def items(self) -> Iterator[tuple[int, _Record]]:
        for k, block in list(self.blocks.items()):
            at = k << BLOCK_BITS
            yield from [(at | low, rec) for low, rec in block.items()]

    def first(self) -> int | None:
        """The lowest stored sequence number. O(1): only the last block may
        be empty."""
        for k, block in self.blocks.items():
            if block:
                return (k << BLOCK_BITS) | next(iter(block))
        return None

    @property
    def tail(self) -> int:
        """The block new records go to: the last one made (kept when empty,
        so that sending and deleting one message at a time does not make and
        drop a block each time)."""
        return next(reversed(self.blocks), -1)

    def opened(self, k: int) -> None:
        """Block ``k`` was just made: settle the blocks filled before the one
        below it (at most two a call, so a call costs O(BLOCK) at most, once
        per BLOCK messages). Settling copies a block that is still tracked by
        inserting its records into a new dict, which the collector does not
        track when every record is untracked by then. A record not untracked
        yet (no young collection has run since it was made) makes the copy
        tracked. That happens when the process allocates as many objects as it
        frees (a send / receive / delete loop does): CPython's young collections
        count allocations less frees, so none runs, and every record sent waits,
        tracked, in the young generation, for whichever collection comes next
        to walk them all at once (34 ms for 100,000). So the block's settle
        runs a young collection (``gc.collect(0)``), which walks what is young
        once, as CPython's own would have: a few thousand records, about a
        millisecond, at most once per ``BLOCK`` messages sent, and only in such
        a load. Nothing else: no threshold changes, and an application that
        disabled the collector gets no collection (the block is tried again).

        First, the block sends filled before ``k`` goes if it is empty: a
        delete keeps the block sends are filling when it empties it (sends
        would make it again at once), so a queue emptied while its newest
        block filled (a consumer that keeps up) leaves it empty, and only
        here, when sends move on, is it certainly done with."""
        blocks = self.blocks
        before = blocks.get(k - 1)
        if before is not None and not before:
            del blocks[k - 1]
        done = 0
        while self.settled < k - 1 and done < 2:
            old = blocks.get(self.settled)
            if old is not None and gc.is_tracked(old):
                done += 1
                new = dict(old.items())  # by insertion: see above
                if gc.is_tracked(new):
                    # No collection has seen its records: the process's
                    # allocations balance its frees (see above). A young
                    # collection walks them once, as any other load's would.
                    if not gc.isenabled():
                        return  # the application's choice: again later
                    gc.collect(0)
                    new = dict(old.items())
                    if gc.is_tracked(new):  # pragma: no cover - a record made in a callback
                        return
                blocks[self.settled] = new
            self.settled += 1


class ReadyLane:
    """The lifecycle's ready lane: the never-received messages sent without
    delay, in key order (see the module docstring), as full *chunks*, tuples
    of ``CHUNK`` records the collector untracks like the records in them, and
    a ``tail`` list that fills the next one. The lane's first record is
    ``head_at`` into the first chunk (or the tail).

    A record leaves the lane by being received or dropped, so its record
    changes or goes: one taken from the head moves ``head_at`` on; one taken
    from further in (a reordering fault's receives, a console delete,
    retention) stays where it is, counted in ``holes``, and is skipped when
    reads reach it (a lane record is live while it is its sequence number's
    stored record). Appending and taking from the head are O(1); reading k
    records is O(k) in slices while there are no holes, O(k + holes passed)
    else."""

    __slots__ = ("chunks", "head_at", "holes", "records", "size", "tail", "tail_vkey")

    def __init__(self, records: Records) -> None:
        self.records = records
        self.chunks: deque[tuple[_Record, ...]] = deque()
        self.tail: list[_Record] = []
        #: Where the lane's first record is in the first chunk (or the tail).
        self.head_at = 0
        #: How many records are in the lane.
        self.size = 0
        #: Records that left from further in than the head, still in place.
        self.holes = 0
        #: The key of the last record appended: a new one joins the lane only
        #: after it (the lane stays in key order).
        self.tail_vkey = -1

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def append(self, rec: _Record) -> None:
        tail = self.tail
        tail.append(rec)
        if len(tail) == CHUNK:
            self.chunks.append(tuple(tail))
            self.tail = []
        self.tail_vkey = rec[R_VKEY]
        self.size += 1

    def extend(self, recs: list[_Record]) -> None:
        """:meth:`append` of each of ``recs`` (in key order, after the lane's)."""
        tail = self.tail
        tail += recs
        if len(tail) >= CHUNK:
            chunks = self.chunks
            for i in range(0, len(tail) - CHUNK + 1, CHUNK):
                chunks.append(tuple(tail[i : i + CHUNK]))
            self.tail = tail[len(tail) - len(tail) % CHUNK :]
        self.tail_vkey = recs[-1][R_VKEY]
        self.size += len(recs)

    def _live(self, rec: _Record) -> bool:
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        block = self.records.blocks.get(seq >> BLOCK_BITS)
        return block is not None and block.get(seq & LOW) is rec

    def _step(self, n: int = 1) -> None:
        """Move the head past its record (past ``n``, all in its part)."""
        self.head_at += n
        chunks = self.chunks
        if chunks:
            if self.head_at == CHUNK:
                chunks.popleft()
                self.head_at = 0
        elif self.head_at == len(self.tail):
            self.tail.clear()
            self.head_at = 0

    def head(self) -> _Record | None:
        """The lane's first record, stepping past holes. Amortised O(1)."""
        while self.size:
            first = self.chunks[0] if self.chunks else self.tail
            rec = first[self.head_at]
            if not self.holes or self._live(rec):
                return rec
            self.holes -= 1
            self._step()
        return None

    def discard(self, rec: _Record) -> None:
        """``rec``, a lane record, leaves the lane (received or dropped: the
        caller changes or drops its record after). O(1)."""
        self.size -= 1
        if self.size == 0:
            self.chunks.clear()
            self.tail.clear()
            self.head_at = self.holes = 0
            return
        first = self.chunks[0] if self.chunks else self.tail
        if first[self.head_at] is rec:
            self._step()
        else:
            self.holes += 1

    def skip(self, n: int) -> None:
        """The lane's first ``n`` records leave it, all of them in the head's
        part (a chunk or the tail), none a hole: ``n`` :meth:`discard` calls
        at the head in one. O(1)."""
        self.size -= n
        self._step(n)

    def take(self, limit: int) -> list[_Record]:
        """The lane's first ``limit`` records, in order. O(limit) in slices
        without holes, O(limit + holes passed) with."""
        if self.holes:
            out = []
            for rec in self:
                out.append(rec)
                if len(out) == limit:
                    break
            return out
        at = self.head_at
        chunks = self.chunks
        if not chunks:
            return self.tail[at : at + limit]
        out = list(chunks[0][at : at + limit])
        i = 1
        while len(out) < limit and i < len(chunks):
            out += chunks[i][: limit - len(out)]
            i += 1
        if len(out) < limit:
            out += self.tail[: limit - len(out)]
        return out

    def __iter__(self) -> Iterator[_Record]:
        """The lane's records in order, from the head (skipping holes); stops
        early at no cost when the caller stops."""
        if self.size and self.holes:
            self.head()
        at = self.head_at
        holes = self.holes
        # Lazily, chunk by chunk: a reader takes a few (never copy the deque).
        for part in chain(self.chunks, (self.tail,)):
            for rec in part[at:] if at else part:
                if not holes or self._live(rec):
                    yield rec
            at = 0

    def clear(self) -> None:
        self.chunks.clear()
        self.tail = []
        self.head_at = self.size = self.holes = 0
        self.tail_vkey = -1
