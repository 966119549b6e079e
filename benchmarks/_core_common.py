"""What bench_core.py's sections share: their sizes, message bodies and peers.

``bench_core.py`` runs the sections; ``_core_throughput.py``,
``_core_latency.py`` and ``_core_memory.py`` hold them. This module holds what
more than one of them needs: ``Sizes`` (``FULL`` and ``--quick``), the
100-byte ``BODY``, the ``queue.Queue`` and ``deque`` peers the throughput ratios
are measured against, and ``fill``, which stores numbered messages.
"""

from __future__ import annotations

import queue
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from sqsqueue import Queue, SendEntry

START = 1_700_000_000.0
BODY = "x" * 100  # a 100-byte message body
KIB = 1024


@dataclass(frozen=True)
class Sizes:
    """How much work each section does."""

    throughput_messages: int  # messages per throughput repeat
    repeats: int  # throughput repeats; the best is reported
    fifo_backlog: int  # messages stored while FIFO throughput is measured
    fifo_groups: tuple[int, ...]
    fifo_latency_iterations: int
    depths: tuple[int, ...]  # queue depths for the latency section
    latency_iterations: int  # receive(10) calls timed at each depth
    inflight_depths: tuple[int, ...]  # messages in flight for the in-flight section
    inflight_backlog: int  # visible messages kept stored alongside them
    memory_messages: int  # 100-byte bodies
    memory_big_messages: int  # 10 KiB bodies, if they fit in memory ...
    memory_big_fallback: int  # ... else this many
    longpoll_trials: int


FULL = Sizes(
    throughput_messages=50_000,
    repeats=5,
    fifo_backlog=100_000,
    fifo_groups=(1, 100, 100_000),
    fifo_latency_iterations=2_000,
    depths=(1_000, 10_000, 100_000, 1_000_000),
    latency_iterations=2_000,
    inflight_depths=(1_000, 10_000, 100_000, 120_000),
    inflight_backlog=1_000,
    memory_messages=1_000_000,
    memory_big_messages=1_000_000,
    memory_big_fallback=200_000,
    longpoll_trials=1_000,
)
QUICK = Sizes(
    throughput_messages=5_000,
    repeats=2,
    fifo_backlog=10_000,
    fifo_groups=(1, 100, 10_000),
    fifo_latency_iterations=200,
    depths=(1_000, 20_000),
    latency_iterations=200,
    inflight_depths=(1_000, 20_000),
    inflight_backlog=1_000,
    memory_messages=50_000,
    memory_big_messages=5_000,
    memory_big_fallback=2_000,
    longpoll_trials=50,
)


def queue_queue(n: int) -> None:
    """The peer: ``n`` times queue.Queue put + get in one thread."""
    q: queue.Queue[str] = queue.Queue()
    put, get = q.put, q.get
    for _ in range(n):
        put(BODY)
        get()


def a_deque(n: int) -> None:
    """The floor under the floor: ``n`` times deque append + popleft."""
    d: deque[str] = deque()
    append, popleft = d.append, d.popleft
    for _ in range(n):
        append(BODY)
        popleft()


def body_of(i: int, size: int = 100) -> str:
    """A distinct ``size``-character (ASCII, so ``size``-byte) body."""
    return f"{i:010d}{'x' * (size - 10)}"


def fill(
    q: Queue,
    start: int,
    stop: int,
    size: int = 100,
    ticker: Callable[[int], None] | None = None,
) -> None:
    """Store messages ``start..stop`` with distinct ``size``-byte bodies."""
    pad = "x" * (size - 10)
    for base in range(start, stop, 10):
        q.send_batch(
            [SendEntry(str(j), f"{base + j:010d}{pad}") for j in range(min(10, stop - base))]
        )
        if ticker is not None and base % 10_000 == 0:
            ticker(base - start)
