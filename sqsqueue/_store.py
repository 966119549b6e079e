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
  collection after a queue grew does not walk what it stored.
* :class:`ReadyLane`, the never-received messages sent without delay, in key
  order, is a deque of *runs* of sequence numbers ``(start, stop)``, not of
  records: a queue of messages sent one after another is one run, whatever
  its depth.

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

from sqsqueue._message import R_RX, R_SKEY, R_VKEY, SEQ_MASK, _Record

#: A block holds the records of ``1 << BLOCK_BITS`` consecutive sequence numbers.
BLOCK_BITS = 12
BLOCK = 1 << BLOCK_BITS


class Records:
    """The stored records of one queue by sequence number, in blocks (see the
    module docstring). A mapping's reads (``get``, ``[]``, ``in``, ``len``,
    iteration in sequence order, ``values``, ``items``); writes are
    ``records[seq] = rec`` (a new record, or the next state of a stored one)
    and ``del records[seq]``. Each is O(1); the hot paths of the lifecycle
    index ``blocks`` themselves, the same way (``seq >> BLOCK_BITS``)."""

    __slots__ = ("blocks", "count", "settled")

    def __init__(self) -> None:
        self.blocks: dict[int, dict[int, _Record]] = {}
        #: How many records are stored.
        self.count = 0
        #: Blocks below this one were settled (or never needed it).
        self.settled = 0

    def get(self, seq: int) -> _Record | None:
        block = self.blocks.get(seq >> BLOCK_BITS)
        return None if block is None else block.get(seq)

    def __getitem__(self, seq: int) -> _Record:
        return self.blocks[seq >> BLOCK_BITS][seq]

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, int) and self.get(seq) is not None

    def __setitem__(self, seq: int, rec: _Record) -> None:
        k = seq >> BLOCK_BITS
        block = self.blocks.get(k)
        if block is None:
            block = self.blocks[k] = {}
            self.opened(k)
        if seq not in block:
            self.count += 1
        block[seq] = rec

    def __delitem__(self, seq: int) -> None:
        k = seq >> BLOCK_BITS
        block = self.blocks[k]
        del block[seq]
        self.count -= 1
        if not block:
            del self.blocks[k]

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __iter__(self) -> Iterator[int]:
        """Sequence numbers, in order: blocks are made in order (sequence
        numbers only grow), and a block keeps its records' order."""
        for block in list(self.blocks.values()):
            yield from list(block)

    def values(self) -> Iterator[_Record]:
        for block in list(self.blocks.values()):
            yield from list(block.values())

    def items(self) -> Iterator[tuple[int, _Record]]:
        for block in list(self.blocks.values()):
            yield from list(block.items())

    def first(self) -> int | None:
        """The lowest stored sequence number. O(1)."""
        for block in self.blocks.values():
            return next(iter(block))
        return None

    def opened(self, k: int) -> None:
        """Block ``k`` was just made: settle the blocks filled before the one
        below it (at most two a call, so a call costs O(BLOCK) at most, once
        per BLOCK messages). Settling copies a block that is still tracked by
        inserting its records into a new dict, which the collector does not
        track when every record is untracked by then; a record still tracked
        makes the copy tracked, as the block was, until a full collection."""
        blocks = self.blocks
        done = 0
        while self.settled < k - 1 and done < 2:
            old = blocks.get(self.settled)
            if old is not None and gc.is_tracked(old):
                blocks[self.settled] = dict(old.items())  # by insertion: see above
                done += 1
            self.settled += 1


class ReadyLane:
    """The lifecycle's ready lane: the never-received messages sent without
    delay, in key order, as runs of sequence numbers (see the module
    docstring). A sequence number in a run is in the lane while its record is
    stored and never received: a record leaves the lane only by being
    received or dropped, so taking it out of the lane is counting it out
    (:meth:`discard`), and the runs skip it when next read. O(1) per append
    and per removal from the head; reading skips what left from further in
    (a reordering fault's receives, a console delete), each once from the head."""

    __slots__ = ("records", "runs", "size", "tail_vkey")

    def __init__(self, records: Records) -> None:
        self.records = records
        #: ``(start, stop)``: the sequence numbers start..stop-1, in order.
        self.runs: deque[tuple[int, int]] = deque()
        #: How many records are in the lane.
        self.size = 0
        #: The key of the last record appended: a new one joins the lane only
        #: after it (the lane stays in key order).
        self.tail_vkey = -1

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def append(self, rec: _Record) -> None:
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        runs = self.runs
        if runs and runs[-1][1] == seq:
            runs[-1] = (runs[-1][0], seq + 1)
        else:
            runs.append((seq, seq + 1))
        self.tail_vkey = rec[R_VKEY]
        self.size += 1

    def head(self) -> _Record | None:
        """The lane's first record (the runs' first live one). Amortised O(1)."""
        runs = self.runs
        blocks = self.records.blocks
        while runs:
            start, stop = runs[0]
            block = blocks.get(start >> BLOCK_BITS)
            rec = None if block is None else block.get(start)
            if rec is not None and rec[R_RX] is None:
                return rec
            if start + 1 < stop:
                runs[0] = (start + 1, stop)
            else:
                runs.popleft()
        return None

    def discard(self, rec: _Record) -> None:
        """``rec``, a lane record, leaves the lane (received or dropped: the
        caller changes or drops its record). O(1)."""
        self.size -= 1
        runs = self.runs
        if self.size == 0:
            runs.clear()
            return
        start, stop = runs[0]
        if start == rec[R_SKEY] & SEQ_MASK:  # the head: step past it
            if start + 1 < stop:
                runs[0] = (start + 1, stop)
            else:
                runs.popleft()

    def take(self, limit: int) -> list[_Record]:
        """The lane's first ``limit`` records, in order, stepping the head past
        what left the lane from the front. O(limit + what it skips)."""
        out: list[_Record] = []
        blocks = self.records.blocks
        runs = self.runs
        leading = True  # still at the head: skipped numbers leave the runs
        for start, stop in list(runs) if len(runs) > 1 else runs:
            for seq in range(start, stop):
                block = blocks.get(seq >> BLOCK_BITS)
                rec = None if block is None else block.get(seq)
                if rec is not None and rec[R_RX] is None:
                    leading = False
                    out.append(rec)
                    if len(out) == limit:
                        return out
                elif leading:
                    if seq + 1 < stop:
                        runs[0] = (seq + 1, stop)
                    else:
                        runs.popleft()
        return out

    def __iter__(self) -> Iterator[_Record]:
        """The lane's records in order; stops early at no cost when the
        caller stops (a receive takes up to 10)."""
        blocks = self.records.blocks
        for start, stop in list(self.runs):
            for seq in range(start, stop):
                block = blocks.get(seq >> BLOCK_BITS)
                rec = None if block is None else block.get(seq)
                if rec is not None and rec[R_RX] is None:
                    yield rec

    def clear(self) -> None:
        self.runs.clear()
        self.size = 0
        self.tail_vkey = -1
