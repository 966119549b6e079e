"""No stalls at depth (issue 35): every call's latency while one queue grows to
1,000,000 messages and under steady load on top of them, the full collection's
time, the objects the collector tracks and the memory a message takes.

Run through ``python3 benchmarks --only depth`` or with the venv's python:
``.venv/bin/python benchmarks/bench_depth.py [--quick] [--before TREE]``.

Each workload runs in a fresh child process (``--child``), on the default
collector settings (this script changes none), with ``SystemClock`` as an
application's queue has:

* growing: one queue, empty to N messages of 100 bytes, by ``send_batch`` of
  10 (a standard queue with plain bodies; a FIFO queue with 100,000 message
  groups and a deduplication id each); every call timed;
* steady: then ``send_batch(10)`` + ``receive(10)`` + ``delete_batch`` cycles on
  top of the N, every call timed;
* then a full ``gc.collect()``: the first (what an application's next full
  collection would walk) and the best of three more; the objects the
  collector tracks (``len(gc.get_objects())``); resident memory per message
  beyond its body string (RSS growth over the growing phase, divided by N,
  less ``sys.getsizeof`` of a body).

Four kinds: standard and FIFO queues, in memory and in a durable broker (a
data directory under the system's temporary directory). ``--before TREE`` runs
each kind on another checkout too (``PYTHONPATH`` that tree; the children are
this script), taking turns, and draws call latency against depth for both.

Writes this script's section of ``benchmarks/RESULTS.md`` and ``depth_stalls.png``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Plot,
    Table,
    command,
    draw,
    loadavg,
    machine,
    progress,
    section_args,
    write_section,
)

SECTION = "No stalls at depth: call latency while a queue grows to 1,000,000 (issue 35)"
KINDS = ("standard", "fifo", "durable standard", "durable fifo")
GROUPS = 100_000
BUCKETS = 40  # depth buckets of the plot
STALL_MS = 20.0  # the target: no call over 20 ms
COLLECT_MS = 30.0  # the target: a full collection at 1,000,000 stored in at most 30 ms
BYTES_TARGET = 400  # the target: bytes per message beyond its body


def child(kind: str, n: int, steady: int) -> dict[str, object]:
    """One workload, in this (fresh) process: the figures as a dict."""
    import gc
    import random

    import psutil

    from sqsqueue import Broker, FifoQueue, Queue, SendEntry

    perf = time.perf_counter_ns
    body = "x" * 100
    fifo = "fifo" in kind
    tmp = tempfile.TemporaryDirectory() if "durable" in kind else None
    broker = Broker(data_dir=tmp.name) if tmp is not None else None
    q: Queue | FifoQueue
    if broker is not None:
        q = (
            broker.create_queue("depth.fifo", fifo_queue=True)
            if fifo
            else broker.create_queue("depth")
        )
    elif fifo:
        q = FifoQueue("depth.fifo", random=random.Random(1))
    else:
        q = Queue("depth", random=random.Random(1))
    bodies = [body] * 10

    def send(i: int) -> None:
        if fifo:
            q.send_batch(
                [
                    SendEntry(
                        str(k), body, group_id=f"g{(i + k) % GROUPS}", deduplication_id=str(i + k)
                    )
                    for k in range(10)
                ]
            )
        else:
            q.send_batch(bodies)

    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss
    calls = n // 10
    grow = array("d", bytes(8 * calls))
    t_grow = perf()
    for c in range(calls):
        t = perf()
        send(c * 10)
        grow[c] = (perf() - t) / 1e6
    t_grow = perf() - t_grow
    rss1 = proc.memory_info().rss
    stored = len(q)
    cycles = array("d", bytes(8 * 3 * steady))
    k = n
    for c in range(steady):
        t0 = perf()
        send(k)
        t1 = perf()
        got = q.receive(10)
        t2 = perf()
        q.delete_batch([m.receipt_handle for m in got])
        t3 = perf()
        cycles[3 * c] = (t1 - t0) / 1e6
        cycles[3 * c + 1] = (t2 - t1) / 1e6
        cycles[3 * c + 2] = (t3 - t2) / 1e6
        k += 10
    t = perf()
    gc.collect()
    first = (perf() - t) / 1e6
    best = []
    for _ in range(3):
        t = perf()
        gc.collect()
        best.append((perf() - t) / 1e6)
    tracked = len(gc.get_objects())
    per_bucket = max(1, calls // BUCKETS)
    curve = {
        (b + 1) * per_bucket * 10: max(grow[b * per_bucket : (b + 1) * per_bucket])
        for b in range(calls // per_bucket)
    }
    if broker is not None:
        broker.close()
    if tmp is not None:
        tmp.cleanup()
    return {
        "kind": kind,
        "stored": stored,
        "grow_s": t_grow / 1e9,
        "grow": sorted(grow),
        "steady": sorted(cycles),
        "curve": curve,
        "collect_first_ms": first,
        "collect_ms": min(best),
        "tracked": tracked,
        "bytes": (rss1 - rss0) / n - sys.getsizeof(body),
    }


def summary(samples: list[float]) -> tuple[float, float, float]:
    """(worst, p99.9, p99) in ms of sorted samples."""
    if not samples:
        return 0.0, 0.0, 0.0
    n = len(samples)
    return samples[-1], samples[min(n - 1, int(n * 0.999))], samples[min(n - 1, int(n * 0.99))]


def run_child(tree: Path | None, kind: str, n: int, steady: int) -> dict[str, object]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n), str(steady)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"{kind} ({tree or 'this tree'}) failed:\n{out.stderr}")
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    result["curve"] = {int(k): v for k, v in result["curve"].items()}  # type: ignore[attr-defined]
    return result


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], int(argv[2]), int(argv[3]))))
        return 0
    before: Path | None = None
    if "--before" in argv:
        at = argv.index("--before")
        before = Path(argv[at + 1]).resolve()
        argv = argv[:at] + argv[at + 2 :]
    kinds = list(KINDS)
    if "--kinds" in argv:
        at = argv.index("--kinds")
        kinds = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2 :]
    args = section_args("bench_depth.py", argv, "(no profiles here; ignored)")
    n = 20_000 if args.quick else 1_000_000
    steady = 1_000 if args.quick else 10_000
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = time.perf_counter()
    trees: list[tuple[str, Path | None]] = [("after", None)]
    if before is not None:
        trees.insert(0, ("before", before))
    results: dict[tuple[str, str], dict[str, object]] = {}
    for kind in kinds:
        for label, tree in trees:
            r = results[(kind, label)] = run_child(tree, kind, n, steady)
            worst = summary(r["grow"])[0]  # type: ignore[arg-type]
            progress(
                "depth",
                f"{kind} ({label})",
                f"worst call {worst:.1f} ms, full collection {r['collect_first_ms']:.1f} ms",
            )
    rows = []
    for kind in kinds:
        for label, _ in trees:
            r = results[(kind, label)]
            gw, g999, g99 = summary(r["grow"])  # type: ignore[arg-type]
            sw, s999, s99 = summary(r["steady"])  # type: ignore[arg-type]
            rows.append(
                [
                    kind,
                    label,
                    f"{r['stored']:,}",
                    f"{gw:.1f} / {g999:.2f} / {g99:.2f}",
                    f"{sw:.1f} / {s999:.2f} / {s99:.2f}",
                    f"{r['collect_first_ms']:.1f} / {r['collect_ms']:.1f}",
                    f"{r['tracked']:,}",
                    f"{r['bytes']:.0f}",
                    f"{r['grow_s']:.1f} s",
                ]
            )
    table = Table(
        "Growing to 1,000,000 and steady load on top: every call timed",
        f"One queue grown from empty to {n:,} messages of 100 bytes by `send_batch` of 10, "
        f"then {steady:,} cycles of `send_batch(10)` + `receive(10)` + `delete_batch` on top, "
        "each call timed, in a fresh process per row, default collector settings, "
        "`SystemClock`. FIFO: 100,000 message groups, a deduplication id per message. "
        "Durable: a broker with a data directory. Latencies in ms: worst / p99.9 / p99. "
        "Full collection: the first `gc.collect()` after the steady load / the best of "
        "three more. Bytes: resident memory per message beyond its body string (RSS "
        "growth while growing; for durable brokers it includes SQLite's page cache).",
        (
            "queue",
            "tree",
            "stored",
            "growing: worst / p99.9 / p99",
            "steady: worst / p99.9 / p99",
            "full collection (ms): first / best",
            "tracked objects",
            "bytes/message",
            "time to grow",
        ),
        rows=rows,
    )
    verdicts = []
    for kind in kinds:
        r = results[(kind, "after")]
        gw, _, _ = summary(r["grow"])  # type: ignore[arg-type]
        sw, _, _ = summary(r["steady"])  # type: ignore[arg-type]
        worst = max(gw, sw)
        collect = max(float(r["collect_first_ms"]), float(r["collect_ms"]))  # type: ignore[arg-type]
        verdicts.append(
            f"| {kind}: no call over {STALL_MS:.0f} ms while growing and under steady load "
            f"| {verdict(worst <= STALL_MS)} | worst {worst:.1f} ms |"
        )
        verdicts.append(
            f"| {kind}: a full collection at {n:,} stored in at most {COLLECT_MS:.0f} ms "
            f"| {verdict(collect <= COLLECT_MS)} | first {r['collect_first_ms']:.1f} ms, "
            f"best {r['collect_ms']:.1f} ms |"
        )
        if "durable" not in kind:
            verdicts.append(
                f"| {kind}: at most {BYTES_TARGET} bytes a message beyond its body "
                f"| {verdict(float(r['bytes']) <= BYTES_TARGET)} | {r['bytes']:.0f} bytes |"  # type: ignore[arg-type]
            )
    plot_name = "depth_stalls.png"
    curves = {
        f"{kind} ({label})": {x: v / 1e3 for x, v in results[(kind, label)]["curve"].items()}  # type: ignore[attr-defined]
        for kind in kinds
        for label, _ in trees
    }
    plot = Plot(
        plot_name,
        "Slowest send_batch(10) per depth bucket while growing",
        "messages stored",
        curves,
        limit=(STALL_MS / 1e3, f"{STALL_MS:.0f} ms"),
        ylabel="slowest call in the bucket",
    )
    drawn = args.output is not None and draw(plot, args.output.parent / plot_name)
    elapsed = time.perf_counter() - t_all
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_depth.py', args.quick)}"
            f"{' --before ' + str(before) if before else ''}` in {elapsed:.0f} s "
            f"(`benchmarks/bench_depth.py`). Load average at the start: {load_start}; at "
            f"the end: {loadavg()}. Rows marked before ran on the tree named by "
            "`--before`; after, on this tree.",
            "",
            table.markdown(level=3),
            "### Targets (issue 35)",
            "",
            "| target | verdict | figure |",
            "|---|---|---|",
            *verdicts,
            "",
            *([f"![{plot.title}]({plot_name})", ""] if drawn else []),
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
