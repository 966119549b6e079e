"""Stored messages cost the cyclic garbage collector nothing (issue 35).

A stored message is a tuple CPython untracks, held in blocks that are plain
dicts of untracked tuples, which CPython untracks too; the ready lane holds
tuples of records (``sqsqueue/_store.py``,
``docs/architecture.md``, "What the collector sees"). These tests hold the
representation to that: after a collection no record and no settled block
is tracked, and the number of objects the collector tracks does not grow
with the number of messages stored, for standard and FIFO queues, in memory
and in a durable broker (``docs/design.md`` principle 5: what a full
collection walks is part of an operation's cost). They assert what is
tracked, never how long anything takes: that is ``benchmarks/``'.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, SendEntry
from sqsqueue._fifo import DEDUP_BLOCK
from sqsqueue._message import R_COUNT, R_SKEY, group_id_of
from sqsqueue._store import BLOCK, CHUNK, KEYS

START = 1_800_000_000


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=START)


def fill_standard(q: Queue | FifoQueue, start: int, n: int) -> None:
    for base in range(start, start + n, 10):
        q.send_batch([f"message {i}" for i in range(base, base + 10)])


def fill_fifo(q: Queue | FifoQueue, start: int, n: int, groups: int = 50) -> None:
    for base in range(start, start + n, 10):
        q.send_batch(
            [
                SendEntry(str(i), f"m{i}", group_id=f"g{i % groups}", deduplication_id=str(i))
                for i in range(base, base + 10)
            ]
        )


def tracked() -> int:
    """How many objects the collector tracks, after a full collection."""
    gc.collect()
    return len(gc.get_objects())


def assert_untracked(q: Queue | FifoQueue) -> None:
    """After collections, no stored record and no block of them is tracked.

    Two collections: a record with extra fields (attributes, FIFO ids)
    holds them in a tuple of its own, which a collection that sees both
    finds only after the record (it reaches it through the record), so that
    collection untracks the inner tuple and the next one the record, still
    young. A full collection untracks the blocks written to since the last one."""
    gc.collect()
    gc.collect()
    assert q._records.count > 0
    assert not any(map(gc.is_tracked, q._records.values())), "a stored record is tracked"
    assert not any(map(gc.is_tracked, q._records.blocks.values())), "a block is tracked"
    # A block is keyed by the shared int objects of _store.KEYS: a stored
    # message brings no int key of its own.
    assert all(key is KEYS[key] for block in q._records.blocks.values() for key in block)
    assert list(q._records) == sorted(q._records) and len(list(q._records)) == len(q)


Filler = Callable[[Queue | FifoQueue, int, int], None]


def grows_flat(q: Queue | FifoQueue, fill: Filler) -> None:
    """Storing 10 times more messages adds (next to) no tracked object: the
    old representation, a tracked object per message, added 20,000."""
    fill(q, 0, 2_000)
    before = tracked()
    fill(q, 2_000, 20_000)
    after = tracked()
    assert len(q) == 22_000
    assert after - before < 200, f"{after - before} more tracked objects for 20,000 messages"


class TestStandard:
    def test_stored_messages_are_untracked(self, clock: ManualClock) -> None:
        q = Queue("gc", clock=clock)
        fill_standard(q, 0, 3 * BLOCK)
        received = q.receive(10)
        q.change_visibility(received[0].receipt_handle, 30)
        assert_untracked(q)
        assert all(q._records.get(i) is not None for i in range(1, 10))

    def test_tracked_objects_do_not_grow_with_depth(self, clock: ManualClock) -> None:
        grows_flat(Queue("gc", clock=clock), fill_standard)

    def test_the_ready_lane_holds_chunks_the_collector_untracks(self, clock: ManualClock) -> None:
        """The ready lane holds its records in tuples of CHUNK (untracked once
        their records are), and a list of fewer: a tracked deque of a few
        references, not one per message."""
        q = Queue("gc", clock=clock)
        fill_standard(q, 0, 5_000)
        q.receive(10)
        gc.collect()
        gc.collect()
        ready = q._ready
        assert len(ready) == 4_990 and len(ready.chunks) == 5_000 // CHUNK
        assert len(ready.tail) == 5_000 % CHUNK
        assert not any(map(gc.is_tracked, ready.chunks))

    def test_filled_blocks_are_settled_without_a_full_collection(self, clock: ManualClock) -> None:
        """A block sends have filled is copied into an untracked dict once its
        records were untracked by young collections: even the first full
        collection after a queue grew does not walk what it stored."""
        q = Queue("gc", clock=clock)
        fill_standard(q, 0, 2 * BLOCK)
        gc.collect(1)  # a young collection: it untracks the records it sees
        fill_standard(q, 2 * BLOCK, 2 * BLOCK)
        assert not gc.is_tracked(q._records.blocks[0])
        assert not any(gc.is_tracked(r) for r in q._records.blocks[0].values())

    def test_a_balanced_load_does_not_pile_up_records_no_collection_saw(
        self, clock: ManualClock
    ) -> None:
        """A send / receive / delete loop allocates as many objects as it frees,
        so CPython's own young collections never run during it: without the
        store's help, every record it sends would wait, tracked, in the young
        generation, and the next collection of any kind would walk them all (34
        ms for 100,000 on the machine that found it). A filled block whose
        records no collection saw gets a young collection, so no more than a
        few blocks' records are ever unseen."""
        q = Queue("gc", clock=clock)
        fill_standard(q, 0, 20_000)
        gc.collect()
        for base in range(20_000, 60_000, 10):
            q.send_batch([f"message {i}" for i in range(base, base + 10)])
            q.delete_batch([m.receipt_handle for m in q.receive(10)])
        assert len(q) == 20_000
        unseen = sum(map(gc.is_tracked, q._records.values()))
        assert unseen <= 3 * BLOCK, f"{unseen} records no collection has seen"

    def test_received_and_delayed_records_are_untracked_too(self, clock: ManualClock) -> None:
        q = Queue("gc", clock=clock)
        q.send_batch([SendEntry(str(i), f"d{i}", delay_seconds=60) for i in range(10)])
        fill_standard(q, 0, 1_000)
        for m in q.receive(10, visibility_timeout=5):
            q.change_visibility(m.receipt_handle, 10)
        received = [r for r in q._records.values() if r[R_COUNT]]
        assert len(received) == 10
        assert_untracked(q)


@pytest.mark.parametrize("how", ["one at a time", "batches", "fifo"])
def test_a_block_emptied_while_sends_fill_it_goes_when_they_move_on(
    clock: ManualClock, how: str
) -> None:
    """A consumer that keeps up empties each block while sends are still
    filling it; the delete keeps that block (sends would make it again at once),
    and it goes when sends open the next: no empty block stays behind the
    tail (the stress suite found them with blocks of 1,024)."""
    q: Queue | FifoQueue
    if how == "fifo":
        q = FifoQueue("q.fifo", clock=clock, content_based_deduplication=True)
    else:
        q = Queue("q", clock=clock)
    if how == "batches":
        # Sequence numbers start at 1: seven messages, then batches of 8 end
        # where blocks end (8 divides BLOCK), so a batch's delete empties one.
        q.send_batch([f"m{k}" for k in range(7)])
        handles: list[str] = []
        while len(handles) < 7:
            handles += [m.receipt_handle for m in q.receive(10)]
        q.delete_batch(handles)
        for i in range(2 * BLOCK // 8 + 3):
            q.send_batch([f"m{i}-{k}" for k in range(8)])
            handles = []
            while len(handles) < 8:  # a short poll may answer with fewer
                handles += [m.receipt_handle for m in q.receive(10)]
            q.delete_batch(handles)
    else:
        for i in range(2 * BLOCK + 20):
            if isinstance(q, FifoQueue):
                q.send(f"m{i}", group_id="g")
            else:
                q.send(f"m{i}")
            [m] = q.receive()
            q.delete(m.receipt_handle)
    blocks = q._records.blocks
    assert list(blocks) == [q._records.tail] and not blocks[q._records.tail]
    q._check()


class TestFifo:
    def test_stored_messages_are_untracked(self, clock: ManualClock) -> None:
        q = FifoQueue("gc.fifo", clock=clock)
        fill_fifo(q, 0, 2 * BLOCK)
        q.receive(10)
        assert_untracked(q)

    def test_tracked_objects_do_not_grow_with_depth(self, clock: ManualClock) -> None:
        """With a fixed number of groups."""
        grows_flat(FifoQueue("gc.fifo", clock=clock), fill_fifo)

    def test_tracked_objects_do_not_grow_with_groups(self, clock: ManualClock) -> None:
        """2,000 messages in 2,000 groups, then 20,000 more in 20,000 other
        groups: a group is ints in dicts the collector never tracks and a key
        in a heads' index chunk it untracks, its chain links in int-only
        blocks. The old representation tracked three objects per group."""

        def fill_groups(q: Queue | FifoQueue, start: int, n: int) -> None:
            fill_fifo(q, start, n, groups=start + n)  # message i in group g<i>

        q = FifoQueue("gc.fifo", clock=clock)
        fill_groups(q, 0, 2_000)
        before = tracked()
        fill_groups(q, 2_000, 20_000)
        after = tracked()
        ordering = q._ordering
        assert sum(map(len, ordering._heads)) == 22_000 and len(q) == 22_000
        assert after - before < 200, f"{after - before} more tracked objects for 20,000 groups"
        assert not any(map(gc.is_tracked, ordering._heads + ordering._tails))
        assert not any(map(gc.is_tracked, ordering._links.blocks.values()))
        assert not any(map(gc.is_tracked, ordering._heads_enqueue.chunks))

    def test_the_deduplication_window_is_untracked(self, clock: ManualClock) -> None:
        """The deduplication keys are held, in add order, in chunks, and map to
        the records' send keys through dicts of key strings: after collections
        none of them is tracked, per-group keys included; and an entry holds
        its record's own send key, no object of its own."""
        for scope in ("queue", "messageGroup"):
            q = FifoQueue("gc.fifo", clock=clock, deduplication_scope=scope)
            fill_fifo(q, 0, 3 * DEDUP_BLOCK)
            gc.collect()
            gc.collect()
            window = q._dedup
            assert len(window.chunks) >= 3 and len(window.entries) == len(q)
            assert not any(map(gc.is_tracked, window.chunks)), "a chunk is tracked"
            assert not any(map(gc.is_tracked, window.where)), "a key index is tracked"
            held = {id(v) for part in window.where for v in part.values()}
            assert held == {id(rec[R_SKEY]) for rec in q._records.values()}

    def test_a_groups_messages_share_one_group_string(self, clock: ManualClock) -> None:
        """Each send's group id is the caller's own string; the queue stores the
        one its group's records hold, so a group costs one string, not one a
        message (and a caller's string is not kept alive by the queue)."""
        q = FifoQueue("names.fifo", clock=clock)
        names = ["".join(["g", str(n)]) for n in (1, 1, 1, 2)]  # four objects
        assert len({id(n) for n in names}) == 4
        for i, name in enumerate(names):
            q.send(f"m{i}", group_id=name, deduplication_id=f"d{i}")
        held = [group_id_of(rec) for rec in q._records.values()]
        assert held == ["g1", "g1", "g1", "g2"]
        assert held[0] is held[1] is held[2] is names[0] and held[3] is names[3]
        got = q.receive(10)
        q.delete_batch([m.receipt_handle for m in got if m.attributes["MessageGroupId"] == "g1"])
        assert len(q) == 1  # group g1 is gone: its next send holds its own string
        q.send("m4", group_id=names[1], deduplication_id="d4")
        assert [group_id_of(rec) for rec in q._records.values()][-1] is names[1]
        q._check()

    def test_records_are_untracked_by_their_first_collection(self, clock: ManualClock) -> None:
        """A FIFO record holds its extra fields in an inner tuple; the queue
        keeps the newest ones referenced from a long-lived list, so one young
        collection untracks both (else the record waits for a second one,
        or for the next full collection), and filled blocks settle."""
        q = FifoQueue("gc.fifo", clock=clock)
        gc.collect()  # the queue's own objects are old by now, as in an application
        fill_fifo(q, 0, 2 * BLOCK)
        gc.collect(1)  # one young collection
        assert not any(map(gc.is_tracked, q._records.values())), "a stored record is tracked"
        fill_fifo(q, 2 * BLOCK, 2 * BLOCK)
        assert not gc.is_tracked(q._records.blocks[0])


class TestDurable:
    @pytest.fixture
    def broker(self, tmp_path: Path, clock: ManualClock) -> Iterator[Broker]:
        with Broker(clock=clock, data_dir=tmp_path) as broker:
            yield broker

    def test_stored_messages_are_untracked(self, broker: Broker) -> None:
        q = broker.create_queue("jobs")
        fill_standard(q, 0, BLOCK)
        f = broker.create_queue("jobs.fifo", fifo_queue=True)
        fill_fifo(f, 0, 1_000)
        for queue in (q, f):
            queue.receive(10)
            assert_untracked(queue)

    def test_tracked_objects_do_not_grow_with_depth(self, broker: Broker) -> None:
        grows_flat(broker.create_queue("jobs"), fill_standard)

    def test_restored_messages_are_untracked(self, tmp_path: Path, clock: ManualClock) -> None:
        with Broker(clock=clock, data_dir=tmp_path) as broker:
            fill_standard(broker.create_queue("jobs"), 0, 2_000)
        with Broker(clock=clock, data_dir=tmp_path) as broker:
            q = broker.get_queue("jobs")
            assert len(q) == 2_000
            assert_untracked(q)


_LEAVES_ALONE = """
import gc, json, sys, tempfile, urllib.request
before = (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count())
import sqsqueue, sqsqueue.server, sqsqueue.aws, sqsqueue.testing
from sqsqueue import Broker, FifoQueue, Queue, SendEntry
q = Queue("q")
for _ in range(1_000):
    q.send_batch(["m"] * 10)
q.delete_batch([m.receipt_handle for m in q.receive(10)])
f = FifoQueue("f.fifo")
f.send_batch([SendEntry(str(i), "m", group_id=str(i), deduplication_id=str(i)) for i in range(10)])
with tempfile.TemporaryDirectory() as tmp:
    with Broker(data_dir=tmp) as broker:
        jobs = broker.create_queue("jobs")
        for _ in range(500):
            jobs.send_batch(["m"] * 10)
        with broker.serve() as served:
            urllib.request.urlopen(served.endpoint_url + "/_sqsqueue/health").read()
after = (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count())
print(json.dumps([before, after]))
"""


class TestSettings:
    """The library never changes the process's collector settings; only
    ``sqsqueue serve``, which owns its process, freezes what it made at
    startup (issue 35)."""

    def test_the_library_leaves_the_collector_alone(self) -> None:
        """Imported, used, durable and served from a thread, in a fresh
        interpreter: the thresholds, whether the collector runs and the
        frozen objects are what they were before the import."""
        import json
        import subprocess
        import sys

        out = subprocess.run(
            [sys.executable, "-c", _LEAVES_ALONE],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        before, after = json.loads(out)
        assert after == before
        assert before[1] is True and before[2] == 0

    def test_serve_freezes_what_it_made_at_startup(self) -> None:
        from sqsqueue.server._cli import freeze_startup

        assert gc.get_freeze_count() == 0
        try:
            freeze_startup()
            assert gc.get_freeze_count() > 10_000, "imports alone make tens of thousands"
        finally:
            gc.unfreeze()
