"""Fault emulation (``sqsqueue.Faults``): the legal non-determinism of standard
queues, seeded and reproducible (docs/aws-behaviour.md §§10, 12 and 13).

Section 13 lists what an emulator may do on standard queues as optional
"realism" switches: short-poll partial/empty results for small queues, rare
duplicate deliveries (a delete that a copy survives, section 10) and
reordering. FIFO queues stay exact (section 9). Statistical assertions use a
4-standard-deviation binomial tolerance on seeded runs, so they are both
meaningful and deterministic.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from sqsqueue import Broker, DeleteEntry, Faults, FifoQueue, ManualClock, Queue, SendEntry
from sqsqueue.errors import InvalidParameterValue

START = 1_700_000_000.0
VT = 30


def make_queue(faults: Faults | None, *, clock: ManualClock | None = None, **kw: object) -> Queue:
    return Queue(
        "jobs",
        clock=clock if clock is not None else ManualClock(start=START),
        visibility_timeout=VT,
        faults=faults,
        **kw,  # type: ignore[arg-type]
    )


def fill(q: Queue, n: int, prefix: str = "m") -> list[str]:
    """Send ``n`` messages with bodies ``prefix0..`` (in batches of 10)."""
    bodies = [f"{prefix}{i}" for i in range(n)]
    for start in range(0, n, 10):
        chunk = bodies[start : start + 10]
        result = q.send_batch([SendEntry(str(j), b) for j, b in enumerate(chunk)])
        assert result.ok
    return bodies


def within(observed: float, n: int, p: float, sds: float = 4.0) -> bool:
    """``observed`` successes out of ``n`` is within ``sds`` standard deviations of ``n p``."""
    return abs(observed - n * p) <= sds * math.sqrt(n * p * (1 - p))


def scripted_run(faults: Faults, seed_ids: int | None = None) -> list[object]:
    """A fixed script of sends, short polls, deletes and clock jumps; returns
    everything observable (bodies in delivery order, counts)."""
    clock = ManualClock(start=START)
    q = make_queue(
        faults, clock=clock, random=None if seed_ids is None else random.Random(seed_ids)
    )
    trace: list[object] = []
    fill(q, 120)
    for step in range(80):
        got = q.receive(10)
        trace.append([m.body for m in got])
        for m in got[: len(got) // 2 + 1]:
            q.delete(m.receipt_handle)
        if step % 7 == 6:
            clock.advance(VT)
        trace.append(len(q))
    return trace


class TestDeterminism:
    """Section 13: non-determinism is optional and seeded, so a failing run can be replayed."""

    FAULTS = Faults(seed=42, duplicate_rate=0.3, partial_short_polls=True, reorder=True)

    def test_same_seed_same_run(self) -> None:
        """Section 13: two runs with the same Faults seed are identical, step by step."""
        assert scripted_run(self.FAULTS) == scripted_run(self.FAULTS)

    def test_independent_of_message_id_randomness(self) -> None:
        """Section 13: the fault stream has its own seed; ids drawn from another
        random source (here os.urandom vs a seeded Random) do not change it."""
        assert scripted_run(self.FAULTS) == scripted_run(self.FAULTS, seed_ids=5)

    def test_different_seed_different_run(self) -> None:
        """Section 13: the seed matters: another seed gives another (legal) run."""
        other = Faults(seed=43, duplicate_rate=0.3, partial_short_polls=True, reorder=True)
        assert scripted_run(self.FAULTS) != scripted_run(other)

    def test_resetting_faults_restarts_the_stream(self) -> None:
        """Section 13: assigning ``queue.faults`` reseeds, so the same queue can replay."""
        faults = Faults(seed=3, partial_short_polls=True)
        q = make_queue(faults)
        fill(q, 50)
        first = [len(q.receive(10, visibility_timeout=0)) for _ in range(30)]
        q.faults = faults
        again = [len(q.receive(10, visibility_timeout=0)) for _ in range(30)]
        assert first == again


class TestDuplicateRate:
    """Section 10: "a copy on an unavailable server may survive a delete and be delivered again"."""

    N = 2000
    RATE = 0.3

    def test_lost_fraction_is_binomial(self) -> None:
        """Section 10: with duplicate_rate 0.3, each of 2,000 acknowledged deletes
        is lost with probability 0.3: the lost count is within 4 standard
        deviations of 600."""
        q = make_queue(Faults(seed=11, duplicate_rate=self.RATE))
        fill(q, self.N)
        deletes = 0
        while True:
            got = q.receive(10)
            if not got:
                break
            for m in got:
                q.delete(m.receipt_handle)  # acknowledged: no error
                deletes += 1
        assert deletes == self.N
        lost = len(q)
        assert within(lost, self.N, self.RATE), (lost, self.N * self.RATE)
        q._check()

    def test_every_lost_delete_is_redelivered(self) -> None:
        """Section 10: a message whose delete was lost stays in flight until its
        visibility timeout ends, then is delivered again (receive count 2), and
        repeated deletes eventually remove everything."""
        clock = ManualClock(start=START)
        q = make_queue(Faults(seed=12, duplicate_rate=self.RATE), clock=clock)
        fill(q, self.N)
        deleted_once: set[str] = set()
        while got := q.receive(10):
            for m in got:
                q.delete(m.receipt_handle)
                deleted_once.add(m.message_id)
        assert len(deleted_once) == self.N
        survivors = {info.message_id: info for info in q.inspect()}
        assert survivors, "a 0.3 rate over 2,000 deletes lost none"
        assert all(info.state == "in_flight" for info in survivors.values())
        assert all(info.receive_count == 1 for info in survivors.values())
        assert q.receive(10) == []  # still hidden: the delete was acknowledged
        clock.advance(VT - 1)
        assert q.receive(10) == []
        clock.advance(1)
        redelivered: dict[str, str] = {}
        rounds = 0
        while len(q):
            rounds += 1
            assert rounds < 50, "deletes never took effect"
            while got := q.receive(10, attribute_names=["ApproximateReceiveCount"]):
                for m in got:
                    redelivered.setdefault(m.message_id, m.attributes["ApproximateReceiveCount"])
                    q.delete(m.receipt_handle)
            clock.advance(VT)
        assert set(redelivered) == set(survivors)
        assert set(redelivered.values()) == {"2"}
        q._check()

    def test_delete_batch_reports_lost_deletes_as_successful(self) -> None:
        """Section 10: a lost delete is still acknowledged: DeleteMessageBatch
        lists every entry as successful, while some messages survive."""
        q = make_queue(Faults(seed=13, duplicate_rate=0.5))
        fill(q, 200)
        while got := q.receive(10):
            result = q.delete_batch(
                [DeleteEntry(str(i), m.receipt_handle) for i, m in enumerate(got)]
            )
            assert result.ok and set(result.successful) == {str(i) for i in range(len(got))}
        survived = len(q)
        assert 0 < survived < 200
        assert within(survived, 200, 0.5)

    def test_rate_one_loses_every_delete_and_zero_none(self) -> None:
        """Section 13: the rate is a probability: 1 loses every delete, 0 none."""
        always = make_queue(Faults(seed=1, duplicate_rate=1.0))
        fill(always, 30)
        while got := always.receive(10):
            for m in got:
                always.delete(m.receipt_handle)
        assert len(always) == 30
        never = make_queue(Faults(seed=1, duplicate_rate=0.0, reorder=True))
        fill(never, 30)
        while got := never.receive(10):
            for m in got:
                never.delete(m.receipt_handle)
        assert len(never) == 0

    def test_lost_delete_leaves_history_without_deleted_event(self) -> None:
        """Section 10: the message history shows the redelivery, and a single
        ``deleted`` event for the delete that finally took effect."""
        clock = ManualClock(start=START)
        q = make_queue(Faults(seed=1, duplicate_rate=1.0), clock=clock)
        q.keep_history = True
        q.send("x")
        [m] = q.receive()
        q.delete(m.receipt_handle)
        clock.advance(VT)
        [again] = q.receive()
        assert again.message_id == m.message_id
        q.faults = None
        q.delete(again.receipt_handle)
        events = [e.event for e in q.history(m.message_id)]
        assert events == ["sent", "received", "received", "deleted"]


class TestPartialShortPolls:
    """Section 10/12: short polls of a queue with fewer than 1,000 messages sample servers."""

    def test_counts_are_uniform(self) -> None:
        """Section 10: "you most likely get fewer messages than you requested ...
        you might not receive any": each count 0..10 appears with frequency 1/11
        (binomial 4-sd tolerance over 5,500 polls), and only the returned
        messages go in flight."""
        q = make_queue(Faults(seed=21, partial_short_polls=True))
        fill(q, 50)
        polls = 5500
        counts: Counter[int] = Counter()
        for _ in range(polls):
            got = q.receive(10, visibility_timeout=0)
            counts[len(got)] += 1
        assert set(counts) == set(range(11))
        for k in range(11):
            assert within(counts[k], polls, 1 / 11), (k, counts)
        assert len(q) == 50
        q._check()

    def test_counts_bounded_by_what_is_receivable(self) -> None:
        """Section 10: the sample is of what could have been returned: with 3
        messages, receive(10) returns 0..3 of them, each count seen."""
        q = make_queue(Faults(seed=22, partial_short_polls=True))
        fill(q, 3)
        seen = Counter(len(q.receive(10, visibility_timeout=0)) for _ in range(400))
        assert set(seen) == {0, 1, 2, 3}

    def test_unreturned_messages_stay_visible(self) -> None:
        """Section 12: a short poll that returns k messages hides exactly those k."""
        q = make_queue(Faults(seed=23, partial_short_polls=True))
        fill(q, 40)
        in_flight = 0
        for _ in range(5):
            got = q.receive(10)
            in_flight += len(got)
            attrs = q.get_attributes(
                ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            )
            assert int(attrs["ApproximateNumberOfMessagesNotVisible"]) == in_flight
            assert int(attrs["ApproximateNumberOfMessages"]) == 40 - in_flight

    def test_no_message_is_lost(self) -> None:
        """Section 10: "If this happens, repeat the request": repeated short polls
        eventually return every message exactly once (deleted on receipt)."""
        q = make_queue(Faults(seed=24, partial_short_polls=True))
        bodies = fill(q, 300)
        received: list[str] = []
        empties = 0
        for _ in range(10_000):
            if not len(q):
                break
            got = q.receive(10)
            empties += not got
            for m in got:
                received.append(m.body)
                q.delete(m.receipt_handle)
        assert len(q) == 0
        assert sorted(received) == sorted(bodies)
        assert len(received) == len(set(received))
        assert empties > 0  # empty responses with messages present did happen

    def test_long_polls_are_unaffected(self) -> None:
        """Section 12: a long poll (wait > 0, given or the queue's
        ReceiveMessageWaitTimeSeconds) returns all it can at once."""
        q = make_queue(Faults(seed=25, partial_short_polls=True))
        fill(q, 50)
        for _ in range(200):
            assert len(q.receive(10, visibility_timeout=0, wait_time_seconds=1)) == 10
        q.set_attributes(receive_message_wait_time_seconds=5)
        for _ in range(200):
            assert len(q.receive(10, visibility_timeout=0)) == 10

    def test_explicit_zero_wait_overrides_queue_long_poll(self) -> None:
        """Section 12: effective wait = the request's WaitTimeSeconds if present,
        so WaitTimeSeconds=0 on a long-polling queue is a (sampled) short poll."""
        q = make_queue(Faults(seed=26, partial_short_polls=True))
        q.set_attributes(receive_message_wait_time_seconds=5)
        fill(q, 50)
        seen = {len(q.receive(10, visibility_timeout=0, wait_time_seconds=0)) for _ in range(300)}
        assert seen == set(range(11))

    @pytest.mark.parametrize(("depth", "sampled"), [(999, True), (1000, False), (1500, False)])
    def test_threshold_is_1000_messages(self, depth: int, sampled: bool) -> None:
        """Section 10: only queues holding fewer than 1,000 messages are sampled."""
        q = make_queue(Faults(seed=27, partial_short_polls=True))
        fill(q, depth)
        seen = {len(q.receive(10, visibility_timeout=0)) for _ in range(300)}
        assert seen == (set(range(11)) if sampled else {10})


class TestReorder:
    """Section 10: best-effort ordering; "occasional out-of-order ... delivery"."""

    def drain(self, q: Queue) -> list[str]:
        out: list[str] = []
        while got := q.receive(10):
            for m in got:
                out.append(m.body)
                q.delete(m.receipt_handle)
        return out

    def test_order_differs_but_set_is_the_same(self) -> None:
        """Section 10: with reorder, delivery is not oldest-first, yet every
        message is delivered exactly once."""
        q = make_queue(Faults(seed=31, reorder=True))
        bodies = fill(q, 200)
        order = self.drain(q)
        assert order != bodies
        assert sorted(order) == sorted(bodies)
        assert len(order) == len(set(order))
        # Not merely the batches shuffled internally: messages cross batches.
        batches_in_order = [sorted(order[i : i + 10]) for i in range(0, 200, 10)]
        assert batches_in_order != [sorted(bodies[i : i + 10]) for i in range(0, 200, 10)]

    def test_single_batch_is_shuffled(self) -> None:
        """Section 10: even one receive(10) returns messages out of send order."""
        q = make_queue(Faults(seed=32, reorder=True))
        bodies = fill(q, 100)
        orders = []
        for _ in range(20):
            got = q.receive(10, visibility_timeout=0)
            orders.append([m.body for m in got])
        assert any(o != bodies[:10] for o in orders)
        assert all(len(o) == 10 and len(set(o)) == 10 for o in orders)

    def test_without_reorder_order_is_oldest_first(self) -> None:
        """Section 10 (exact by default): without faults a drain is oldest-first."""
        q = make_queue(None)
        bodies = fill(q, 200)
        assert self.drain(q) == bodies


class TestFifoStaysExact:
    """Section 9: FIFO order and exactly-once processing are guarantees, not best effort."""

    FAULTS = Faults(seed=41, duplicate_rate=1.0, partial_short_polls=True, reorder=True)

    def test_broker_faults_skip_fifo_queues(self) -> None:
        """Sections 9 and 13: a Broker's faults reach its standard queues only; its
        FIFO queues keep group order, never lose a delete and never sample."""
        clock = ManualClock(start=START)
        broker = Broker(clock=clock, faults=self.FAULTS)
        standard = broker.create_queue("std")
        fifo = broker.create_queue("f.fifo", attributes={"FifoQueue": "true"})
        assert isinstance(standard, Queue) and standard.faults == self.FAULTS
        assert isinstance(fifo, FifoQueue)
        sent: dict[str, list[str]] = {"a": [], "b": [], "c": []}
        for i in range(90):
            group = "abc"[i % 3]
            body = f"{group}{i}"
            fifo.send(body, group_id=group, deduplication_id=str(i))
            sent[group].append(body)
        got: dict[str, list[str]] = {"a": [], "b": [], "c": []}
        polls = 0
        while len(fifo):
            polls += 1
            assert polls <= 9, "a FIFO short poll returned fewer than it could"
            batch = fifo.receive(10, attribute_names=["MessageGroupId"])
            assert len(batch) == 10
            for m in batch:
                got[m.attributes["MessageGroupId"]].append(m.body)
                fifo.delete(m.receipt_handle)
        assert got == sent
        clock.advance(3600)
        assert fifo.receive(10) == []  # no delete was lost
        # The standard queue of the same broker does emulate the faults.
        standard.send("x")
        [m] = standard.receive()
        standard.delete(m.receipt_handle)
        assert len(standard) == 1

    def test_fifo_single_group_order_under_broker_faults(self) -> None:
        """Section 9: one group is delivered strictly in send order, batch after batch."""
        broker = Broker(clock=ManualClock(start=START), faults=self.FAULTS)
        fifo = broker.create_queue(
            "one.fifo", attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        )
        bodies = [f"m{i:03d}" for i in range(50)]
        for b in bodies:
            fifo.send(b, group_id="g")
        order: list[str] = []
        while got := fifo.receive(10):
            order.extend(m.body for m in got)
            fifo.delete_batch([DeleteEntry(str(i), m.receipt_handle) for i, m in enumerate(got)])
        assert order == bodies
        assert len(fifo) == 0


class TestValidationAndDefaults:
    """Faults parameters are validated like request parameters (section 3:
    InvalidParameterValue)."""

    @pytest.mark.parametrize(
        "rate", [-0.1, 1.0000001, 2, -1, math.nan, math.inf, True, "0.5", None]
    )
    def test_rate_outside_0_1_rejected(self, rate: object) -> None:
        """Section 3: a duplicate_rate that is not a probability raises InvalidParameterValue."""
        with pytest.raises(InvalidParameterValue, match="duplicate_rate"):
            Faults(duplicate_rate=rate)  # type: ignore[arg-type]

    @pytest.mark.parametrize("rate", [0, 0.0, 0.5, 1, 1.0])
    def test_rate_bounds_accepted(self, rate: float) -> None:
        """Section 13: 0 and 1 are valid probabilities."""
        assert Faults(duplicate_rate=rate).duplicate_rate == rate

    def test_queue_rejects_non_faults(self) -> None:
        """Section 3: ``faults`` must be a Faults (or None)."""
        with pytest.raises(InvalidParameterValue):
            make_queue({"duplicate_rate": 0.5})  # type: ignore[arg-type]
        q = make_queue(None)
        with pytest.raises(InvalidParameterValue):
            q.faults = 0.5  # type: ignore[assignment]
        assert q.faults is None

    def test_off_by_default(self) -> None:
        """Section 13 (exact unless asked): no faults on a Queue, a Broker or its
        queues, and an all-default Faults is inactive."""
        assert make_queue(None).faults is None
        assert Queue("plain").faults is None
        broker = Broker()
        assert broker.faults is None
        q = broker.create_queue("q")
        assert isinstance(q, Queue) and q.faults is None
        assert not Faults().active
        assert make_queue(Faults(seed=9)).faults is None

    def test_default_queue_is_exact(self) -> None:
        """Sections 10 and 13: by default deletes always take effect, short polls of
        small queues return all they can, and order is oldest-first."""
        clock = ManualClock(start=START)
        q = Queue("exact", clock=clock, visibility_timeout=VT)
        bodies = fill(q, 500)
        order: list[str] = []
        while got := q.receive(10):
            assert len(got) == 10
            order.extend(m.body for m in got)
            for m in got:
                q.delete(m.receipt_handle)
        assert order == bodies
        clock.advance(VT)
        assert q.receive(10) == [] and len(q) == 0
