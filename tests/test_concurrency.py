"""Thread-safety of a standard queue: concurrent producers and consumers (docs/design.md)."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter

from sqsqueue import ManualClock, Queue
from sqsqueue.errors import InvalidParameterValue

START = 1_700_000_000.0
JOIN = 60.0  # seconds: only reached when something is broken
PRODUCERS = 4
CONSUMERS = 4
PER_PRODUCER = 300


def _run(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=JOIN)
        assert not t.is_alive(), "a worker thread hung"


class TestConcurrentUse:
    """Several threads sending, receiving and deleting at once lose and duplicate nothing."""

    def test_every_message_delivered_once(self) -> None:
        """Section 8: with time frozen, each message is received exactly once and deleted;
        concurrent sends, receives, deletes and attribute reads keep the queue consistent."""
        clock = ManualClock(start=START)
        q = Queue("busy", clock=clock)
        total = PRODUCERS * PER_PRODUCER
        received: list[str] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        done = threading.Event()

        def produce(p: int) -> None:
            try:
                for i in range(0, PER_PRODUCER, 3):
                    q.send(f"{p}-{i}")
                    q.send_batch([f"{p}-{i + 1}", f"{p}-{i + 2}"])
            except BaseException as exc:
                errors.append(exc)

        def consume() -> None:
            try:
                for _ in range(1_000_000):
                    if done.is_set():
                        return
                    msgs = q.receive(10)
                    if msgs:
                        q.delete_batch([m.receipt_handle for m in msgs])
                    with lock:
                        received.extend(m.body for m in msgs)
                        if len(received) >= total:
                            done.set()
                    q.get_attributes(["ApproximateNumberOfMessages"])
            except BaseException as exc:
                errors.append(exc)
                done.set()

        threads = [threading.Thread(target=produce, args=(p,)) for p in range(PRODUCERS)]
        threads += [threading.Thread(target=consume) for _ in range(CONSUMERS)]
        _run(threads)
        assert errors == []
        expected = {f"{p}-{i}" for p in range(PRODUCERS) for i in range(PER_PRODUCER)}
        counts = Counter(received)
        assert set(counts) == expected
        assert max(counts.values()) == 1
        assert len(q) == 0
        q._check()

    def test_at_least_once_with_moving_time(self) -> None:
        """Section 10: while other threads move time (visibility timeouts expire and
        messages are redelivered), every message is still delivered at least once and the
        queue ends empty and consistent."""
        clock = ManualClock(start=START)
        q = Queue("busy", clock=clock, visibility_timeout=1, message_retention_period=1_209_600)
        total = PRODUCERS * PER_PRODUCER
        deleted: set[str] = set()
        deliveries: Counter[str] = Counter()
        errors: list[BaseException] = []
        lock = threading.Lock()
        done = threading.Event()

        def produce(p: int) -> None:
            try:
                for i in range(PER_PRODUCER):
                    q.send(f"{p}-{i}")
            except BaseException as exc:
                errors.append(exc)

        def consume(n: int) -> None:
            try:
                for k in range(1_000_000):
                    if done.is_set():
                        return
                    clock.advance(0.25)  # time moves under the other threads' feet
                    for m in q.receive(10):
                        with lock:
                            deliveries[m.body] += 1
                        if (k + n) % 3 == 0:
                            # Slow consumer: let the timeout lapse, someone else retries.
                            # Fails if redelivered and deleted meanwhile (section 8).
                            with contextlib.suppress(InvalidParameterValue):
                                q.change_visibility(m.receipt_handle, 1)
                            continue
                        q.delete(m.receipt_handle)
                        with lock:
                            deleted.add(m.body)
                            if len(deleted) >= total:
                                done.set()
            except BaseException as exc:
                errors.append(exc)
                done.set()

        threads = [threading.Thread(target=produce, args=(p,)) for p in range(PRODUCERS)]
        threads += [threading.Thread(target=consume, args=(n,)) for n in range(CONSUMERS)]
        _run(threads)
        assert errors == []
        expected = {f"{p}-{i}" for p in range(PRODUCERS) for i in range(PER_PRODUCER)}
        assert deleted == expected
        assert set(deliveries) == expected
        assert sum(deliveries.values()) > total  # some really were redelivered
        assert len(q) == 0
        q._check()

    def test_concurrent_long_polls_share_messages(self) -> None:
        """Section 12: many blocked long polls and one producer: each message goes to exactly
        one poll and every poll returns."""
        clock = ManualClock(start=START, autojump_threshold=None)
        q = Queue("lp", clock=clock)
        got: list[str] = []
        lock = threading.Lock()

        def poll() -> None:
            msgs = q.receive(wait_time_seconds=20)
            with lock:
                got.extend(m.body for m in msgs)

        pollers = [threading.Thread(target=poll) for _ in range(6)]
        for t in pollers:
            t.start()
        for _ in range(30_000):
            if len(clock._waiters) >= 6:
                break
            pollers[0].join(timeout=0.001)
        for i in range(4):
            q.send(str(i))
        for _ in range(30_000):
            with lock:
                if len(got) == 4:
                    break
            pollers[0].join(timeout=0.001)
        clock.advance(20)  # release the pollers that got nothing
        for t in pollers:
            t.join(timeout=JOIN)
            assert not t.is_alive()
        assert sorted(got) == ["0", "1", "2", "3"]
        assert int(q.get_attributes(["All"])["ApproximateNumberOfMessagesNotVisible"]) == 4
        q._check()
