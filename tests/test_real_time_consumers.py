"""Threaded and asyncio consumers under the default (frozen) ManualClock behave
as they would in real time (issue 12 section 1).

Each scenario is one a user hit with the old autojump default: virtual time
jumped whenever one poll found nothing, so a background consumer aged messages
into retention, an idle consumer pushed a busy one past its visibility timeout,
and an asyncio poll returned before a coroutine's send. Every test is bounded in
wall time (``pytest-timeout`` and explicit ``join`` timeouts).
"""

from __future__ import annotations

import asyncio
import collections
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from sqsqueue import Broker, ManualClock, Message, Queue

START = 1_700_000_000.0


def _consume(queue: Queue, stop: threading.Event, handle: Any) -> threading.Thread:
    """A typical worker: long polls of 20 s in a loop until told to stop."""

    def run() -> None:
        while not stop.is_set():
            for message in queue.receive(10, wait_time_seconds=20):
                handle(message)
                queue.delete(message.receipt_handle)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_background_consumer_does_not_move_time() -> None:
    """A consumer polling in the background for half a second of wall time
    leaves virtual time where it was; messages the test sends meanwhile are
    delivered, none ages into retention (it was 3,000 s to 240,000 s per run)."""
    clock = ManualClock(start=START)
    q = Queue("jobs", clock=clock, message_retention_period=60)
    got: list[str] = []
    stop = threading.Event()
    worker = _consume(q, stop, lambda m: got.append(m.body))
    deadline = time.monotonic() + 10
    for i in range(5):
        q.send(f"m{i}")
        time.sleep(0.1)
    while len(got) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    q.close()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert sorted(got) == [f"m{i}" for i in range(5)]
    assert clock.now() == START


def test_an_idle_consumer_does_not_push_a_busy_one_past_its_visibility() -> None:
    """Two consumers, one busy for 0.4 s of wall time per message (visibility
    30 s), one idle: every message is handled exactly once, as in real time
    (the idle one's polls used to jump the clock past the busy one's timeout)."""
    clock = ManualClock(start=START)
    q = Queue("jobs", clock=clock, visibility_timeout=30)
    handled: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()

    def slow(message: Message) -> None:
        with lock:
            handled[message.message_id] += 1
        time.sleep(0.4)

    stop = threading.Event()
    ids = [q.send(f"m{i}").message_id for i in range(3)]
    workers = [_consume(q, stop, slow) for _ in range(2)]
    deadline = time.monotonic() + 15
    while (
        q.get_attributes(["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
        != {
            "ApproximateNumberOfMessages": "0",
            "ApproximateNumberOfMessagesNotVisible": "0",
        }
        and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    stop.set()
    q.close()
    for w in workers:
        w.join(timeout=5)
        assert not w.is_alive()
    assert handled == dict.fromkeys(ids, 1)
    assert clock.now() == START


def test_a_send_from_another_thread_reaches_the_waiting_poll() -> None:
    """A message sent by another thread during a long poll is delivered to that
    poll at once, not at the poll's deadline and not to a later poll."""
    clock = ManualClock(start=START)
    q = Queue("jobs", clock=clock)
    timer = threading.Timer(0.05, q.send, args=("late",))
    started = time.monotonic()
    timer.start()
    got = q.receive(wait_time_seconds=20)
    elapsed = time.monotonic() - started
    timer.join()
    assert [m.body for m in got] == ["late"]
    assert elapsed < 0.9
    assert clock.now() == START


def test_a_single_threaded_long_poll_returns_promptly() -> None:
    """In a single-threaded program, a 20 s long poll on an empty queue returns
    [] at once (well under a second of wall time) and moves no time. Run in a
    fresh interpreter: this test process may hold other tests' threads."""
    code = textwrap.dedent(
        """
        import asyncio, threading, time
        from sqsqueue import ManualClock, Queue
        clock = ManualClock(start=1_700_000_000.0)
        q = Queue("jobs", clock=clock)
        assert threading.active_count() == 1
        started = time.monotonic()
        assert q.receive(wait_time_seconds=20) == []
        assert asyncio.run(q.receive_async(wait_time_seconds=20)) == []
        elapsed = time.monotonic() - started
        assert elapsed < 0.5, elapsed
        assert clock.now() == 1_700_000_000.0
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_a_callback_the_loop_will_run_is_someone_who_can_act() -> None:
    """A coroutine alone on its loop, with a send scheduled by ``call_later``:
    the poll waits for it (a scheduled callback can act, like a task), and the
    next poll, with nothing scheduled, returns at once. A fresh interpreter, so
    that no other thread makes the poll wait anyway."""
    code = textwrap.dedent(
        """
        import asyncio, threading, time
        from sqsqueue import ManualClock, Queue

        async def main():
            q = Queue("jobs", clock=ManualClock(start=1_700_000_000.0))
            asyncio.get_running_loop().call_later(0.01, q.send, "late")
            got = await q.receive_async(wait_time_seconds=20)
            assert [m.body for m in got] == ["late"], got
            started = time.monotonic()
            assert await q.receive_async(wait_time_seconds=20) == []
            assert time.monotonic() - started < 0.1

        assert threading.active_count() == 1
        asyncio.run(main())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_a_delayed_message_waits_for_the_test_to_move_time() -> None:
    """Frozen time: a delay ends when the test advances the clock, and a poll
    waiting in another thread is woken by that advance."""
    clock = ManualClock(start=START)
    q = Queue("jobs", clock=clock)
    q.send("later", delay_seconds=5)
    result: list[list[Message]] = []
    poll = threading.Thread(target=lambda: result.append(q.receive(wait_time_seconds=20)))
    poll.start()
    while not q._waiters and poll.is_alive():
        time.sleep(0.001)
    clock.advance(5)
    poll.join(timeout=5)
    assert not poll.is_alive()
    assert [m.body for m in result[0]] == ["later"]


def test_a_stopped_consumer_exits_without_close() -> None:
    """Without close(), a consumer told to stop leaves its blocked poll after
    at most max_wall_wait of wall time (it used to block forever and hang the
    interpreter at exit)."""
    clock = ManualClock(start=START, max_wall_wait=0.2)
    q = Queue("jobs", clock=clock)
    stop = threading.Event()
    worker = _consume(q, stop, lambda m: None)
    time.sleep(0.05)
    stop.set()
    worker.join(timeout=2)
    assert not worker.is_alive()


class TestAsyncio:
    """The same rules for coroutines sharing one event loop."""

    @pytest.mark.parametrize("pause", [0.0, 0.01])
    def test_a_send_from_another_coroutine_reaches_the_waiting_poll(self, pause: float) -> None:
        """A coroutine that sends 10 ms later (or after a bare ``sleep(0)``)
        reaches a 20 s long poll that is already waiting (it used to get [] at
        once)."""
        clock = ManualClock(start=START)
        q = Queue("jobs", clock=clock)

        async def producer() -> None:
            await asyncio.sleep(pause)
            q.send("hello")

        async def main() -> list[Message]:
            task = asyncio.create_task(producer())
            got = await asyncio.wait_for(q.receive_async(wait_time_seconds=20), timeout=5)
            await task
            return got

        assert [m.body for m in asyncio.run(main())] == ["hello"]
        assert clock.now() == START

    def test_busy_and_idle_coroutines_handle_each_message_once(self) -> None:
        """An idle consumer task does not move time past a busy task's
        visibility timeout."""
        clock = ManualClock(start=START)
        q = Queue("jobs", clock=clock, visibility_timeout=30)
        handled: collections.Counter[str] = collections.Counter()

        async def consumer(stop: asyncio.Event) -> None:
            while not stop.is_set():
                for m in await q.receive_async(wait_time_seconds=20):
                    handled[m.body] += 1
                    await asyncio.sleep(0.2)  # busy, in wall time
                    q.delete(m.receipt_handle)

        async def main() -> None:
            stop = asyncio.Event()
            tasks = [asyncio.create_task(consumer(stop)) for _ in range(2)]
            for i in range(3):
                q.send(f"m{i}")
            deadline = time.monotonic() + 10
            while len(q) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            stop.set()
            q.close()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=5)

        asyncio.run(main())
        assert handled == {"m0": 1, "m1": 1, "m2": 1}
        assert clock.now() == START

    def test_a_background_consumer_task_does_not_move_time(self) -> None:
        """Scenario 1 with a task: a consumer polling in the background while
        the test sends, 100 ms of wall time apart, moves no virtual time, and
        nothing ages into its 60 s retention."""
        clock = ManualClock(start=START)
        q = Queue("jobs", clock=clock, message_retention_period=60)
        got: list[str] = []

        async def consumer(stop: asyncio.Event) -> None:
            while not stop.is_set():
                for m in await q.receive_async(10, wait_time_seconds=20):
                    got.append(m.body)
                    q.delete(m.receipt_handle)

        async def main() -> None:
            stop = asyncio.Event()
            task = asyncio.create_task(consumer(stop))
            for i in range(5):
                q.send(f"m{i}")
                await asyncio.sleep(0.1)
            deadline = time.monotonic() + 10
            while len(got) < 5 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            stop.set()
            await asyncio.wait_for(task, timeout=5)

        asyncio.run(main())
        assert sorted(got) == [f"m{i}" for i in range(5)]
        assert clock.now() == START

    def test_a_stopped_consumer_task_exits_without_close(self) -> None:
        """Scenario 4 with a task: told to stop, without close(), it leaves its
        blocked poll within max_wall_wait of wall time."""
        clock = ManualClock(start=START, max_wall_wait=0.2)
        q = Queue("jobs", clock=clock)

        async def consumer(stop: asyncio.Event) -> None:
            while not stop.is_set():
                await q.receive_async(10, wait_time_seconds=20)

        async def main() -> float:
            stop = asyncio.Event()
            task = asyncio.create_task(consumer(stop))
            await asyncio.sleep(0.05)
            stop.set()
            started = time.monotonic()
            await asyncio.wait_for(task, timeout=2)
            return time.monotonic() - started

        assert asyncio.run(main()) < 1
        assert clock.now() == START


def test_boto3_consumer_thread_under_the_fixture_clock(
    sqsqueue_client: Any, sqsqueue_broker: Broker[ManualClock]
) -> None:
    """The pytest fixtures follow the same rule: a boto3 consumer in a thread
    gets what the test sends, and the fixture clock stays where the test put it."""
    url = sqsqueue_client.create_queue(QueueName="jobs")["QueueUrl"]
    got: list[str] = []

    def consume() -> None:
        while not got:
            for m in sqsqueue_client.receive_message(QueueUrl=url, WaitTimeSeconds=20).get(
                "Messages", []
            ):
                got.append(m["Body"])

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    time.sleep(0.05)
    sqsqueue_client.send_message(QueueUrl=url, MessageBody="hi")
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert got == ["hi"]
    assert sqsqueue_broker.clock.now() == START
