"""Durable brokers (issue 16): what durability costs, and how long a restart takes.

Run through ``python3 benchmarks`` (``--only durable`` alone) or
``.venv/bin/python benchmarks/bench_durable.py [--quick]``.

* Throughput: send + receive + delete cycles (one message at a time, and batches of 10)
  on an in-memory broker, a durable one (``durability="process"``) and a
  durable one that fsyncs (``"machine"``), in one run, on the system clock.
  Peers: ``queue.Queue`` put + get (the in-process floor), and the persistent
  in-process queues users pick today, persist-queue's ``SQLiteAckQueue`` and
  litequeue's ``LiteQueue``, at the same two durability levels (all three are
  SQLite in WAL mode; the ``synchronous`` pragma sets the level).
* Recovery: a directory holding 1,000,000 messages (100-byte bodies) is opened
  by a fresh process: wall time to open, and the resident memory it takes.

Writes this script's section of ``benchmarks/RESULTS.md`` and merges issue 16's
targets into its Targets table.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import sqlite3
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
    Verdict,
    best_of,
    command,
    dur,
    loadavg,
    machine,
    merge_targets,
    progress,
    rate,
    section_args,
    share,
    status,
    write_section,
)

from sqsqueue import Broker, SendEntry, SystemClock  # noqa: E402

SECTION = "Durable brokers: the cost of a data directory, and recovery"
perf = time.perf_counter
BODY = "x" * 100
_names = itertools.count()


def cycles_single(broker: Broker[SystemClock], n: int) -> None:
    """n messages one at a time: send, receive(1), delete (three calls, three
    transactions when durable, as the peers' put, get and ack)."""
    q = broker.create_queue(f"single-{next(_names)}")
    for _ in range(n):
        q.send(BODY)
        [m] = q.receive(1)
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


#: The durability levels compared, and what each peer's equivalent setting is.
#: sqsqueue's "process" is WAL with ``synchronous=NORMAL`` (a returned call is in
#: the WAL file: it survives SIGKILL, not power loss); "machine" is WAL with
#: ``synchronous=FULL`` (the WAL is fsynced before a call returns). Both peers
#: are SQLite in WAL mode too, so the same two pragmas give them the same two
#: promises: persist-queue's default is FULL, litequeue's NORMAL; each runs at
#: both, its default marked.
LEVELS = ("process", "machine")
SYNC = {"process": "NORMAL", "machine": "FULL"}
LABEL = {
    "memory": "in memory",
    "process": 'durability="process" (survives SIGKILL)',
    "machine": 'durability="machine" (survives power loss: fsync per transaction)',
}
PEERS = {
    "persist-queue": "persist-queue `SQLiteAckQueue`: put, get, ack",
    "litequeue": "litequeue `LiteQueue`: put, pop, done",
}


def _set_sync(connections: list[sqlite3.Connection], level: str) -> None:
    """Apply ``level``'s synchronous pragma to a peer's connections, and check
    with SQLite that they run in WAL mode at that setting (so a table row never
    claims a promise the peer was not making)."""
    for conn in connections:
        conn.execute(f"PRAGMA synchronous={SYNC[level]}")
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
        if journal != "wal" or sync != {"NORMAL": 1, "FULL": 2}[SYNC[level]]:
            raise RuntimeError(f"peer runs journal_mode={journal}, synchronous={sync}")


def persist_queue_cycles(path: Path, n: int, level: str) -> None:
    """persist-queue's acknowledging SQLite queue: put, get, ack, one message at a
    time (it has no batch calls; its ack queue refuses ``auto_commit=False``)."""
    import persistqueue

    pq = persistqueue.SQLiteAckQueue(str(path), multithreading=True, auto_commit=True)
    _set_sync([c for c in (pq._conn, pq._putter) if c is not None], level)
    for _ in range(n):
        pq.put(BODY)
        pq.ack(pq.get())
    pq.close()


def litequeue_cycles(path: Path, n: int, level: str, batch: int) -> None:
    """litequeue: put, pop, done. With ``batch`` > 1, ``batch`` puts share one
    transaction (its ``transaction()``), and so do ``batch`` dones, as sqsqueue's
    batch calls take 10 in one; ``pop`` opens its own transaction, so pops stay
    one each."""
    import litequeue

    lq = litequeue.LiteQueue(str(path))
    _set_sync([lq.conn], level)
    for _ in range(n // batch):
        if batch == 1:
            lq.put(BODY)
            message = lq.pop()
            assert message is not None
            lq.done(message.message_id)
            continue
        with lq.transaction():
            for _ in range(batch):
                lq.put(BODY)
        popped = [lq.pop() for _ in range(batch)]
        ids = [m.message_id for m in popped if m is not None]
        assert len(ids) == batch
        with lq.transaction():
            for message_id in ids:
                lq.done(message_id)
    lq.conn.close()


def peers(tmp: Path, count: int, repeats: int) -> dict[tuple[str, str, str], float]:
    """The persistent in-process queues users pick today, at both durability
    levels, each repeat on a fresh file (both keep finished rows, so a reused file
    would grow). A peer that is not installed has no rows."""
    rates: dict[tuple[str, str, str], float] = {}
    fresh = itertools.count()
    runs: list[tuple[str, str, Callable[[Path, int, str], None]]] = [
        ("persist-queue", "single", persist_queue_cycles),
        ("litequeue", "single", partial(litequeue_cycles, batch=1)),
        ("litequeue", "batch", partial(litequeue_cycles, batch=10)),
    ]
    for peer, kind, fn in runs:
        try:
            __import__(peer.replace("-", ""))
        except ImportError:
            progress("durable", peer, "not installed: no row")
            continue
        for level in LEVELS:

            def run(fn: Callable[[Path, int, str], None] = fn, level: str = level) -> None:
                fn(tmp / f"run-{next(fresh)}", count, level)

            took = best_of(run, repeats)
            rates[peer, level, kind] = count / took
            progress("durable", f"{peer} {kind}, {level}", f"{rate(count / took)} messages/s")
    return rates


def throughput_table(
    rates: dict[tuple[str, str, str], float], floor_rate: float, repeats: int
) -> Table:
    memory = rates["sqsqueue", "memory", "single"]
    rows = [["queue.Queue put + get (the floor)", "", "", rate(floor_rate), "1", ""]]
    defaults = {("persist-queue", "machine"), ("litequeue", "process")}
    for (path, level, kind), value in sorted(
        rates.items(), key=lambda kv: (["memory", *LEVELS].index(kv[0][1]), kv[0][0] != "sqsqueue")
    ):
        what = "sqsqueue" if path == "sqsqueue" else PEERS[path]
        if (path, level) in defaults:
            what += " (its default setting)"
        rows.append(
            [
                what,
                LABEL[level],
                "one at a time" if kind == "single" else "batches of 10",
                rate(value),
                share(value / floor_rate),
                "1"
                if (path, level, kind) == ("sqsqueue", "memory", "single")
                else share(value / memory),
            ]
        )
    table = Table(
        "Throughput: send + receive + delete, in memory and durable",
        f"100-byte messages, one thread, `SystemClock`, best of {repeats}. A message counts "
        "once sent, received and deleted (the peers: put, taken, acknowledged). Each call "
        "is durable before it returns: sqsqueue writes a call's changes in one SQLite "
        "transaction, a batch call included; the peers commit each put, get and ack "
        "(litequeue's batch rows put 10 in one transaction and mark 10 done in one; its "
        "pop always commits alone). All three are SQLite "
        "in WAL mode, run here at both levels with the same `synchronous` pragma "
        '(NORMAL for "process", FULL for "machine"), so each row pair promises the same.',
        (
            "path",
            "durability",
            "calls",
            "messages/s",
            "ratio to queue.Queue",
            "ratio to sqsqueue in memory, one at a time",
        ),
        rows=rows,
    )
    table.notes.append(
        '"process" leaves each transaction in the WAL file without syncing (it survives '
        'SIGKILL, not power loss); "machine" fsyncs it, so its rate is the disk\'s sync '
        "rate, whatever the CPU. persist-queue has no batch calls and its ack queue refuses "
        "`auto_commit=False`, so it has single rows only."
    )
    return table


def judge(rates: dict[tuple[str, str, str], float]) -> list[Verdict]:
    """Issue 16's targets, against persist-queue at its power-loss-safe default."""
    if ("persist-queue", "machine", "single") not in rates:
        return []
    peer = rates["persist-queue", "machine", "single"]
    single = rates["sqsqueue", "machine", "single"]
    batch = rates["sqsqueue", "machine", "batch"]
    return [
        Verdict(
            'durable single-message cycles, durability="machine" >= persist-queue '
            "SQLiteAckQueue (fsync per commit)",
            "issue 16",
            f"{single / peer:.1f}x ({rate(single)} vs {rate(peer)} messages/s)",
            single >= peer,
            "durable",
        ),
        Verdict(
            'durable batches of 10, durability="machine" >= 5x persist-queue '
            "SQLiteAckQueue (fsync per commit)",
            "issue 16",
            f"{batch / peer:.1f}x ({rate(batch)} vs {rate(peer)} messages/s)",
            batch >= 5 * peer,
            "durable",
        ),
    ]


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
    floor = best_of(lambda: queue_floor(n_cycle), repeats)
    progress("durable", "queue.Queue put + get", f"{rate(n_cycle / floor)} /s")
    #: messages/s by (path, durability level, "single" or "batch")
    rates: dict[tuple[str, str, str], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("memory", "process", "machine"):
            count = n_cycle if mode != "machine" else max(n_cycle // 10, 200)
            broker = Broker(
                clock=SystemClock(),
                data_dir=None if mode == "memory" else Path(tmp) / mode,
                durability="process" if mode == "memory" else mode,
            )
            loops: tuple[tuple[str, Callable[[Broker[SystemClock], int], None]], ...] = (
                ("single", cycles_single),
                ("batch", cycles_batched),
            )
            for kind, fn in loops:
                took = best_of(partial(fn, broker, count), repeats)
                rates["sqsqueue", mode, kind] = count / took
                progress("durable", f"sqsqueue {kind}, {mode}", f"{rate(count / took)} messages/s")
            broker.close()
        rates.update(peers(Path(tmp), max(n_cycle // 10, 200), repeats))
        throughput = throughput_table(rates, n_cycle / floor, repeats)
        verdicts = judge(rates)

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
        merge_targets(args.output, verdicts)
        print(f"[bench] wrote the section {SECTION!r} of {args.output}")
    print("\n[bench] targets:")
    for v in verdicts:
        print(f"[bench]   {status(v.met):<6} {v.target}: {v.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
