"""A send wakes as many waiting long polls as it stored messages, not all of
them (issue 13: with 1,000 polls held, waking all for one message made every
send cost 1,000 looks). A poll woken for a message that leaves without looking
(its task cancelled) passes the wake-up on, so no message waits while a poll
sleeps."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from sqsqueue import Queue, SystemClock
from sqsqueue._clock import Waiter


def wait_for(predicate: Any, what: str) -> None:
    tick = threading.Event()
    for _ in range(2_000):
        if predicate():
            return
        tick.wait(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def test_one_send_wakes_one_of_many_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    q = Queue("herd", clock=SystemClock())
    got: list[list[Any]] = []
    threads = [
        threading.Thread(target=lambda: got.append(q.receive(wait_time_seconds=10)))
        for _ in range(20)
    ]
    for t in threads:
        t.start()
    wait_for(lambda: len(q._waiters) == 20, "20 polls waiting")
    wakes = []
    real_wake = Waiter.wake

    def counting(self: Waiter) -> None:
        wakes.append(self)
        real_wake(self)

    monkeypatch.setattr(Waiter, "wake", counting)
    q.send("only one")
    wait_for(lambda: len(got) == 1, "the message delivered")
    assert len(wakes) == 1
    assert [m.body for m in got[0]] == ["only one"]
    q.send_batch(["a", "b", "c"])
    wait_for(lambda: sum(len(r) for r in got) == 4, "the batch delivered")
    assert len(wakes) == 4  # three more polls woken for three messages
    q.close()  # the rest are woken at once, and return []
    for t in threads:
        t.join(5)
    assert sum(len(r) for r in got) == 4 and len(got) == 20


def test_a_cancelled_poll_passes_its_wake_up_on() -> None:
    q = Queue("baton", clock=SystemClock())

    async def main() -> list[Any]:
        first = asyncio.create_task(q.receive_async(wait_time_seconds=10))
        while len(q._waiters) < 1:
            await asyncio.sleep(0.001)
        second = asyncio.create_task(q.receive_async(wait_time_seconds=10))
        while len(q._waiters) < 2:
            await asyncio.sleep(0.001)
        q.send("for the first, taken by the second")  # wakes the first poll only
        first.cancel()  # ...which leaves before it can look
        with pytest.raises(asyncio.CancelledError):
            await first
        return await asyncio.wait_for(second, 2)

    got = asyncio.run(main())
    assert [m.body for m in got] == ["for the first, taken by the second"]
    q.close()
