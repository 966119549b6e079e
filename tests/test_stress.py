"""Stress: many producer and consumer threads and asyncio tasks at once
(``docs/design.md``, thread-safety; ``docs/aws-behaviour.md`` §§8, 9, 10, 11, 12).

Every test lowers ``sys.setswitchinterval`` to 1 microsecond (restored
afterwards), so the interpreter switches threads in the middle of operations,
not only between them. Consumers long-poll (a ``SystemClock`` with 1-second
waits, or a ``ManualClock(autojump_threshold=None)`` moved by a ticker thread)
and short-poll. Assertions are about counts and order, never about timings:
thread joins have a generous timeout only so that a bug (a lost wake-up, a
deadlock) fails the test instead of hanging it.

What must hold, without faults, when consumers delete within the visibility
timeout: every message is delivered, none is lost, none is delivered twice, and
on a FIFO queue each group's messages are delivered in their send order
(SequenceNumber order) even though many consumers share the groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

import pytest

from sqsqueue import Broker, Faults, FifoQueue, ManualClock, Message, Queue, SystemClock

START = 1_700_000_000.0
JOIN = 120.0  # seconds: only reached when something is broken
PRODUCERS = 8
CONSUMERS = 8
PER_PRODUCER = 501  # a multiple of 3: produce_standard sends 1 + a batch of 2
TOTAL = PRODUCERS * PER_PRODUCER
GROUPS = 6
#: Far longer than any run: a message received is deleted before it could time out.
LONG_VISIBILITY = 43_200


@pytest.fixture(autouse=True)
def tiny_switch_interval() -> Iterator[None]:
    """Switch threads every microsecond, so races inside operations show up."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


class Workers:
    """Threads that record the first exception any of them raises."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []
        self.stop = threading.Event()

    def spawn(self, target: Callable[..., None], *args: object) -> None:
        def run() -> None:
            try:
                target(*args)
            except BaseException as exc:
                self.errors.append(exc)
                self.stop.set()

        self.threads.append(threading.Thread(target=run, daemon=True))

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def join(self) -> None:
        for t in self.threads:
            t.join(timeout=JOIN)
            assert not t.is_alive(), "a worker hung (lost wake-up or deadlock)"
        assert self.errors == [], self.errors

    def run(self) -> None:
        self.start()
        self.join()


@contextlib.contextmanager
def ticker(clock: ManualClock, step: float = 0.5) -> Iterator[None]:
    """A thread that keeps virtual time moving, waking every blocked long poll."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            clock.advance(step)
            stop.wait(0.001)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=JOIN)


#: The bodies produce_standard sends, PER_PRODUCER from each producer.
STANDARD_BODIES = {f"{p}-{i}" for p in range(PRODUCERS) for i in range(PER_PRODUCER)}


def produce_standard(q: Queue, p: int) -> None:
    """Singles and batches, so both send paths race."""
    for i in range(0, PER_PRODUCER, 3):
        q.send(f"{p}-{i}")
        q.send_batch([f"{p}-{i + 1}", f"{p}-{i + 2}"])


class Tally:
    """Deliveries seen by all consumers; thread-safe."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.lock = threading.Lock()
        self.seen: Counter[str] = Counter()
        self.deleted: set[str] = set()
        self.done = threading.Event()

    def delivered(self, messages: list[Message]) -> None:
        with self.lock:
            self.seen.update(m.body for m in messages)

    def finished(self, bodies: list[str]) -> None:
        with self.lock:
            self.deleted.update(bodies)
            if len(self.deleted) >= self.total:
                self.done.set()


def consume(q: Queue | FifoQueue, tally: Tally, workers: Workers, wait: int, n: int) -> None:
    """Receive (long polls, and short polls from every third consumer), record,
    then delete, until every message has been deleted by someone."""
    short = n % 3 == 0
    while not tally.done.is_set() and not workers.stop.is_set():
        messages = q.receive(10, wait_time_seconds=0 if short else wait)
        if not messages:
            continue
        tally.delivered(messages)
        if n % 2:
            q.delete_batch([m.receipt_handle for m in messages])
        else:
            for m in messages:
                q.delete(m.receipt_handle)
        tally.finished([m.body for m in messages])


def assert_exactly_once(tally: Tally, expected: set[str]) -> None:
    assert set(tally.seen) == expected, "messages were lost or invented"
    twice = {body: n for body, n in tally.seen.items() if n > 1}
    assert not twice, f"delivered more than once: {sorted(twice)[:10]}"
    assert tally.deleted == expected


def exchange_standard(q: Queue, wait: int, clock: ManualClock | None = None) -> None:
    """PRODUCERS threads send (produce_standard) while CONSUMERS threads receive
    with ``wait``-second long polls and delete (``clock``: ticked meanwhile);
    then every message was delivered exactly once and the queue is empty."""
    tally = Tally(TOTAL)
    workers = Workers()
    for p in range(PRODUCERS):
        workers.spawn(produce_standard, q, p)
    for n in range(CONSUMERS):
        workers.spawn(consume, q, tally, workers, wait, n)
    with ticker(clock) if clock is not None else contextlib.nullcontext():
        workers.run()
    assert_exactly_once(tally, STANDARD_BODIES)
    assert len(q) == 0
    q._check()


class TestStandardThreads:
    """8 producers and 8 consumers on one standard queue (sections 8, 10, 12)."""

    def test_long_polls_on_system_clock(self) -> None:
        """Sections 8 and 12: with 1-second long polls on the wall clock and every
        message deleted well within its 30 s visibility timeout, each message is
        delivered exactly once and the queue ends empty and consistent."""
        exchange_standard(Queue("stress", clock=SystemClock()), 1)

    def test_long_polls_on_ticking_manual_clock(self) -> None:
        """Sections 8 and 12: consumers block in 20 s long polls on a
        ManualClock that never jumps by itself; a ticker thread moves virtual
        time while producers send. No wake-up is lost, each message is
        delivered exactly once (the 12-hour visibility timeout never ends)."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = Queue("stress", clock=clock, visibility_timeout=LONG_VISIBILITY)
        exchange_standard(q, 20, clock)

    def test_at_least_once_with_faults_and_expiring_visibility(self) -> None:
        """Section 10: with deletes that may be lost (fault emulation) and
        visibility timeouts that end while consumers are busy, every message is
        still delivered at least once and finally deleted: none is lost."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = Queue(
            "stress",
            clock=clock,
            visibility_timeout=1,
            faults=Faults(seed=3, duplicate_rate=0.3, reorder=True),
        )
        expected = {f"{p}-{i}" for p in range(PRODUCERS) for i in range(PER_PRODUCER)}
        seen: Counter[str] = Counter()
        lock = threading.Lock()
        produced = threading.Event()
        workers = Workers()
        producers_left = itertools.count(PRODUCERS - 1, -1)

        def produce(p: int) -> None:
            produce_standard(q, p)
            if next(producers_left) == 0:
                produced.set()

        def drain(n: int) -> None:
            while not workers.stop.is_set():
                messages = q.receive(10, wait_time_seconds=20)
                with lock:
                    seen.update(m.body for m in messages)
                for k, m in enumerate(messages):
                    if (k + n) % 4 == 0:
                        continue  # a consumer that dies: redelivered after 1 s
                    q.delete(m.receipt_handle)
                if produced.is_set() and len(q) == 0:
                    return

        for p in range(PRODUCERS):
            workers.spawn(produce, p)
        for n in range(CONSUMERS):
            workers.spawn(drain, n)
        with ticker(clock, step=0.25):
            workers.run()
        assert set(seen) == expected
        assert sum(seen.values()) > len(expected)  # redeliveries really happened
        assert len(q) == 0
        q._check()


def produce_fifo(q: FifoQueue, p: int, sent: dict[str, list[int]], lock: threading.Lock) -> None:
    """Producers share the groups; the SequenceNumber says the send order."""
    for i in range(PER_PRODUCER):
        group = f"g{(p + i) % GROUPS}"
        result = q.send(f"{p}-{i}|{group}", group_id=group, deduplication_id=f"{p}-{i}")
        assert result.sequence_number is not None
        with lock:
            sent[group].append(int(result.sequence_number))


def check_fifo_order(
    delivered: dict[str, list[int]], sent: dict[str, list[int]], duplicates: Counter[str]
) -> None:
    """Section 9: each group's messages arrive in send (SequenceNumber) order,
    each exactly once, whichever consumer takes them."""
    assert not +duplicates, f"delivered more than once: {sorted(+duplicates)[:10]}"
    assert set(delivered) == set(sent)
    for group, numbers in delivered.items():
        assert numbers == sorted(sent[group]), f"group {group} out of order"


class TestFifoThreads:
    """8 producers and 8 consumers sharing 6 message groups (section 9)."""

    @pytest.mark.parametrize("clock_kind", ["system", "manual"])
    def test_group_order_across_consumers(self, clock_kind: str) -> None:
        """Section 9: while any received message of a group is in flight, no
        later message of the group is returned; so with consumers recording a
        message before deleting it, every group's deliveries, merged across all
        consumers, are in SequenceNumber order, each exactly once."""
        if clock_kind == "system":
            clock: SystemClock | ManualClock = SystemClock()
            wait = 1
        else:
            clock = ManualClock(start=START, autojump_threshold=None)
            wait = 20
        q = FifoQueue("stress.fifo", clock=clock, visibility_timeout=LONG_VISIBILITY)
        sent: dict[str, list[int]] = defaultdict(list)
        delivered: dict[str, list[int]] = defaultdict(list)
        duplicates: Counter[str] = Counter()
        seen: set[str] = set()
        lock = threading.Lock()
        tally = Tally(TOTAL)
        workers = Workers()

        def consume_fifo(n: int) -> None:
            while not tally.done.is_set() and not workers.stop.is_set():
                messages = q.receive(1 + n % 10, wait_time_seconds=wait if n % 3 else 0)
                with lock:
                    for m in messages:
                        group = m.attributes["MessageGroupId"]
                        delivered[group].append(int(m.attributes["SequenceNumber"]))
                        if m.body in seen:
                            duplicates[m.body] += 1
                        seen.add(m.body)
                for m in messages:  # delete only after recording: the group's next waits
                    q.delete(m.receipt_handle)
                tally.finished([m.body for m in messages])

        for p in range(PRODUCERS):
            workers.spawn(produce_fifo, q, p, sent, lock)
        for n in range(CONSUMERS):
            workers.spawn(consume_fifo, n)
        with ticker(clock) if isinstance(clock, ManualClock) else contextlib.nullcontext():
            workers.run()
        check_fifo_order(delivered, sent, duplicates)
        assert len(seen) == TOTAL
        assert len(q) == 0
        q._check()


class TestAsyncio:
    """asyncio consumer tasks, fed by producer threads and producer tasks (section 12)."""

    @pytest.mark.parametrize("clock_kind", ["system", "manual"])
    def test_standard_tasks(self, clock_kind: str) -> None:
        """Section 12: receive_async long polls suspend their task, never the
        loop: 8 consumer tasks and 4 producer tasks share one loop while 4
        producer threads send from outside it; every message is delivered
        exactly once."""
        clock: SystemClock | ManualClock
        if clock_kind == "system":
            clock, wait = SystemClock(), 1
        else:
            clock, wait = ManualClock(start=START, autojump_threshold=None), 20
        q = Queue("stress", clock=clock, visibility_timeout=LONG_VISIBILITY)
        tally = Tally(TOTAL)
        workers = Workers()
        for p in range(PRODUCERS // 2):
            workers.spawn(produce_standard, q, p)

        async def produce_task(p: int) -> None:
            for i in range(PER_PRODUCER):
                q.send(f"{p}-{i}")
                await asyncio.sleep(0)

        async def consume_task() -> None:
            while not tally.done.is_set():
                messages = await q.receive_async(10, wait_time_seconds=wait)
                tally.delivered(messages)
                if messages:
                    q.delete_batch([m.receipt_handle for m in messages])
                tally.finished([m.body for m in messages])

        async def main() -> None:
            tasks = [asyncio.create_task(consume_task()) for _ in range(CONSUMERS)]
            tasks += [
                asyncio.create_task(produce_task(p)) for p in range(PRODUCERS // 2, PRODUCERS)
            ]
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=JOIN)

        with ticker(clock) if isinstance(clock, ManualClock) else contextlib.nullcontext():
            workers.start()
            asyncio.run(main())
            workers.join()
        assert_exactly_once(tally, STANDARD_BODIES)
        assert len(q) == 0
        q._check()

    def test_fifo_tasks_and_threads(self) -> None:
        """Section 9: asyncio consumers and consumer threads share a FIFO queue's
        groups; per-group SequenceNumber order and exactly-once delivery hold
        across both kinds of consumer."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = FifoQueue("stress.fifo", clock=clock, visibility_timeout=LONG_VISIBILITY)
        sent: dict[str, list[int]] = defaultdict(list)
        delivered: dict[str, list[int]] = defaultdict(list)
        duplicates: Counter[str] = Counter()
        seen: set[str] = set()
        lock = threading.Lock()
        tally = Tally(TOTAL)
        workers = Workers()

        def record(messages: list[Message]) -> None:
            with lock:
                for m in messages:
                    delivered[m.attributes["MessageGroupId"]].append(
                        int(m.attributes["SequenceNumber"])
                    )
                    if m.body in seen:
                        duplicates[m.body] += 1
                    seen.add(m.body)

        def consume_thread() -> None:
            while not tally.done.is_set() and not workers.stop.is_set():
                messages = q.receive(3, wait_time_seconds=20)
                record(messages)
                for m in messages:
                    q.delete(m.receipt_handle)
                tally.finished([m.body for m in messages])

        async def consume_task() -> None:
            while not tally.done.is_set():
                messages = await q.receive_async(4, wait_time_seconds=20)
                record(messages)
                for m in messages:
                    q.delete(m.receipt_handle)
                tally.finished([m.body for m in messages])

        for p in range(PRODUCERS):
            workers.spawn(produce_fifo, q, p, sent, lock)
        for _ in range(CONSUMERS // 2):
            workers.spawn(consume_thread)

        async def main() -> None:
            tasks = [asyncio.create_task(consume_task()) for _ in range(CONSUMERS // 2)]
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=JOIN)

        with ticker(clock):
            workers.start()
            asyncio.run(main())
            workers.join()
        check_fifo_order(delivered, sent, duplicates)
        assert len(seen) == TOTAL
        assert len(q) == 0
        q._check()


class TestBrokerThreads:
    """Dead-letter moves under contention (sections 10, 11)."""

    def test_every_message_deleted_or_dead_lettered_once(self) -> None:
        """Section 11: consumers reject poison messages (visibility 0) and delete
        the rest; with maxReceiveCount 2 each poison message ends in the DLQ
        exactly once and every other message is deleted exactly once: nothing
        is lost, nothing is in two places."""
        clock = ManualClock(start=START, autojump_threshold=None)
        broker = Broker(clock=clock, account_id="123456789012")
        dlq = broker.create_queue("dlq")
        src = broker.create_queue(
            "src",
            attributes={
                "VisibilityTimeout": str(LONG_VISIBILITY),
                "RedrivePolicy": {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 2},
            },
        )
        bodies = {
            f"{p}-{i}{'p' if i % 5 == 0 else ''}"
            for p in range(PRODUCERS)
            for i in range(PER_PRODUCER)
        }
        poison = {b for b in bodies if b.endswith("p")}
        deleted: Counter[str] = Counter()
        lock = threading.Lock()
        workers = Workers()
        producers_left = itertools.count(PRODUCERS - 1, -1)
        produced = threading.Event()

        def produce(p: int) -> None:
            for body in sorted(b for b in bodies if b.startswith(f"{p}-")):
                src.send(body)
            if next(producers_left) == 0:
                produced.set()

        def work() -> None:
            while not workers.stop.is_set():
                for m in src.receive(10, wait_time_seconds=20):
                    if m.body.endswith("p"):
                        src.change_visibility(m.receipt_handle, 0)  # reject: back at once
                    else:
                        src.delete(m.receipt_handle)
                        with lock:
                            deleted[m.body] += 1
                if produced.is_set() and len(src) == 0:
                    return

        for p in range(PRODUCERS):
            workers.spawn(produce, p)
        for _ in range(CONSUMERS):
            workers.spawn(work)
        with ticker(clock):
            workers.run()
        in_dlq = Counter(info.body for info in dlq.inspect())
        assert set(deleted) == bodies - poison and max(deleted.values()) == 1
        assert set(in_dlq) == poison and max(in_dlq.values()) == 1
        assert len(src) == 0
        src._check()
        dlq._check()
