"""Durable brokers (issue 16): what durability costs, and how long a restart takes.

Run through ``python3 benchmarks`` (``--only durable`` alone) or
``.venv/bin/python benchmarks/bench_durable.py [--quick]``.

* Throughput: send + receive + delete cycles (single calls, and batches of 10)
  on an in-memory broker, a durable one (``durability="process"``) and a
  durable one that fsyncs (``"machine"``), in one run, on the system clock.
  Peers: ``queue.Queue`` put + get (the in-process floor) and persist-queue's
  SQLite queue (``persistqueue.SQLiteAckQueue``, the persistent in-process
  queue users pick today), when it is installed.
* Recovery: a directory holding 1,000,000 messages (100-byte bodies) is opened
  by a fresh process: wall time to open, and the resident memory it takes.

Writes this script's section of ``benchmarks/RESULTS.md``. No targets.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import queue
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    command,
    dur,
    loadavg,
    machine,
    progress,
    rate,
    section_args,
    write_section,
)

from sqsqueue import Broker, SendEntry, SystemClock  # noqa: E402

SECTION = "Durable brokers: the cost of a data directory, and recovery"
perf = time.perf_counter
BODY = "x" * 100
_names = itertools.count()


def cycles_single(broker: Broker[SystemClock], n: int) -> None:
    """n messages: 10 single sends, receive(10), 10 single deletes, n/10 times."""
    q = broker.create_queue(f"single-{next(_names)}")
    for _ in range(n // 10):
        for _ in range(10):
            q.send(BODY)
        for m in q.receive(10):
            q.delete(m.receipt_handle)


ENTRIES = [SendEntry(str(i), BODY) for i in range(10)]


def cycles_batched(broker: Broker[SystemClock], n: int) -> None:
    q = broker.create_queue(f"batched-{next(_names)}")
    for _ in range(n // 10):
        q.send_batch(ENTRIES)
        q.delete_batch([m.receipt_handle for m in q.receive(10)])


def queue_floor(n: int) -> None:
    qq: queue.Queue[str] = queue.Queue()
    for _ in range(n):
        qq.put(BODY)
        qq.get()


def best_of(fn: Callable[[], None], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = perf()
        fn()
        best = min(best, perf() - t0)
    return best


RECOVER = r"""
import json, os, sys, time, psutil
from sqsqueue import Broker, SystemClock
proc = psutil.Process()
before = proc.memory_info().rss
t0 = time.perf_counter()
broker = Broker(clock=SystemClock(), data_dir=sys.argv[1])
took = time.perf_counter() - t0
q = broker.get_queue("big")
n = len(q)
after = proc.memory_info().rss
print(json.dumps({"seconds": took, "rss": after - before, "messages": n}))
broker.close()
"""


def fill(data_dir: Path, n: int) -> float:
    t0 = perf()
    broker = Broker(clock=SystemClock(), data_dir=data_dir)
    q = broker.create_queue("big")
    for _ in range(n // 10):
        q.send_batch(ENTRIES)
    broker.close()
    return perf() - t0


def main(argv: list[str] | None = None) -> int:
    args = section_args("bench_durable.py", argv, "(no profiles here; ignored)")
    n_cycle = 2_000 if args.quick else 20_000
    n_big = 20_000 if args.quick else 1_000_000
    repeats = 1 if args.quick else 3
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = perf()
    rows: list[list[str]] = []
    floor = best_of(lambda: queue_floor(n_cycle), repeats)
    rows.append(["queue.Queue put + get (the floor)", "-", rate(n_cycle / floor), "1"])
    progress("durable", "queue.Queue put + get", f"{rate(n_cycle / floor)} /s")
    with tempfile.TemporaryDirectory() as tmp:
        for mode, label in (
            (None, "in memory"),
            ("process", 'data_dir, durability="process"'),
            ("machine", 'data_dir, durability="machine" (fsync per call)'),
        ):
            count = n_cycle if mode != "machine" else max(n_cycle // 10, 200)
            data_dir = Path(tmp) / (mode or "memory")
            broker = Broker(
                clock=SystemClock(),
                data_dir=None if mode is None else data_dir,
                durability=mode or "process",
            )
            loops: tuple[tuple[str, Callable[[Broker[SystemClock], int], None]], ...] = (
                ("single calls", cycles_single),
                ("batches of 10", cycles_batched),
            )
            for name, fn in loops:
                took = best_of(partial(fn, broker, count), repeats)
                per = took / count
                rows.append(
                    [
                        f"sqsqueue {name}, {label}",
                        f"{count:,}",
                        rate(count / took),
                        f"1/{per / (floor / n_cycle):.1f}",
                    ]
                )
                progress("durable", f"{name}, {label}", f"{rate(count / took)} messages/s")
            broker.close()
        try:
            import persistqueue

            path = Path(tmp) / "persistqueue"

            def persist_cycles() -> None:
                pq = persistqueue.SQLiteAckQueue(str(path), multithreading=True, auto_commit=True)
                for _ in range(max(n_cycle // 10, 200)):
                    pq.put(BODY)
                    item = pq.get()
                    pq.ack(item)

            count = max(n_cycle // 10, 200)
            took = best_of(persist_cycles, repeats)
            rows.append(
                [
                    "persist-queue SQLiteAckQueue put + get + ack",
                    f"{count:,}",
                    rate(count / took),
                    f"1/{(took / count) / (floor / n_cycle):.1f}",
                ]
            )
            progress("durable", "persist-queue SQLiteAckQueue", f"{rate(count / took)} /s")
        except ImportError:
            progress("durable", "persist-queue", "not installed: no row")

        throughput = Table(
            "Throughput: send + receive + delete, in memory and durable",
            f"100-byte messages, one thread, `SystemClock`, best of {repeats}. A message counts "
            "once sent, received and deleted. Ratio: against `queue.Queue` put + get in this "
            "run. The durable rows write every call's changes in one SQLite transaction "
            "before it returns.",
            ("path", "messages", "messages/s", "ratio to queue.Queue"),
            rows=rows,
        )
        throughput.notes.append(
            '"process" writes the WAL without syncing (it survives SIGKILL); "machine" '
            "fsyncs each transaction, so its rate is the disk's sync rate, whatever the CPU."
        )

        big = Path(tmp) / "big"
        filled = fill(big, n_big)
        progress("durable", f"filled {n_big:,} messages", dur(filled))
        size = sum(f.stat().st_size for f in big.iterdir())
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        runs = []
        for _ in range(repeats):
            out = subprocess.run(
                [sys.executable, "-c", RECOVER, str(big)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout
            runs.append(json.loads(out))
        best = min(runs, key=lambda r: r["seconds"])
        assert best["messages"] == n_big, best
        progress(
            "durable",
            f"open {n_big:,} messages",
            f"{best['seconds']:.1f} s, {best['rss'] / n_big:.0f} B/message",
        )
        recovery = Table(
            f"Recovery: opening a directory with {n_big:,} messages",
            "A fresh process opens the directory (`Broker(data_dir=...)`): SQLite reads every "
            "message and the engine rebuilds its indexes. Best of the runs; resident memory "
            "is the growth of the process while opening.",
            (
                "messages",
                "file size",
                "filled in",
                "open time",
                "per message",
                "RSS growth",
                "RSS per message",
            ),
            rows=[
                [
                    f"{n_big:,}",
                    f"{size / 2**20:.0f} MiB",
                    dur(filled),
                    dur(best["seconds"]),
                    f"{best['seconds'] / n_big * 1e6:.1f} µs",
                    f"{best['rss'] / 2**20:.0f} MiB",
                    f"{best['rss'] / n_big:.0f} B",
                ]
            ],
        )
        recovery.notes.append(
            "Filling uses send_batch(10): one transaction per call, 10 rows each."
        )
    elapsed = perf() - t_all
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_durable.py', args.quick)}` in "
            f"{elapsed:.0f} s (`benchmarks/bench_durable.py`). Load average at the start: "
            f"{load_start}; at the end: {loadavg()}.",
            "",
            throughput.markdown(level=3),
            recovery.markdown(level=3),
        ]
    )
    print()
    print(text)
    if args.output is not None:
        write_section(args.output, SECTION, text)
        print(f"[bench] wrote the section {SECTION!r} of {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
