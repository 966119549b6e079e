"""Paired before/after runs of two trees: ``python3 benchmarks/paired.py OLD NEW``.

Not one of the suite's ``bench_*.py`` scripts (``python3 benchmarks`` does not
run it): a tool for the hand-written section "Paired before/after comparisons
of engine changes" of RESULTS.md. It runs itself in a fresh process per tree
and turn (``PYTHONPATH`` the tree), taking turns OLD, NEW, OLD, NEW..., and
reports each figure's median over the turns for each tree and their ratio.
Times are thread CPU time (``time.thread_time``), best of a few runs within a
turn, so other work on the machine counts less than in wall time.

Figures (µs a message unless said):

* ``single``: send x10 + receive(10) + delete x10 (bench_core's section 2 loop);
* ``batched``: send_batch(10) + receive(10) + delete_batch(10), ``SendEntry``
  objects and plain receipt handles;
* ``batched dicts``: the same with boto3-shaped dicts (``{"Id", "MessageBody"}``,
  ``{"Id", "ReceiptHandle"}``), the form code ported from boto3 writes;
* ``one``: send 1 + receive(10) -> 1 + delete 1;
* ``check <kind> <n>``: one ``_check()`` of a queue of n stored messages (ms),
  a quarter of them received and half of those visible again.

``--turns N`` (default 5), ``--messages N`` per loop run (default 20,000).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

CHECK_SIZES = (10_000, 40_000)


def measure(messages: int) -> dict[str, float]:
    """Every figure, for the sqsqueue this process imports."""
    from _core_common import BODY, START
    from _core_throughput import batched_cycles, one_by_one, single_cycles, standard_queue

    from sqsqueue import FifoQueue, ManualClock, Queue, SendEntry

    dict_entries = [{"Id": str(i), "MessageBody": BODY} for i in range(10)]
    cycles = messages // 10

    def batched_dicts() -> None:
        """bench_core's batched loop, its entries boto3-shaped dicts."""
        q = standard_queue("batched")
        for _ in range(cycles):
            q.send_batch(dict_entries)
            got = q.receive(max_messages=10)
            q.delete_batch(
                [{"Id": str(i), "ReceiptHandle": m.receipt_handle} for i, m in enumerate(got)]
            )

    def best(fn: Callable[[], None], runs: int = 3) -> float:
        times = []
        for _ in range(runs):
            t = time.thread_time()
            fn()
            times.append(time.thread_time() - t)
        return min(times)

    out: dict[str, float] = {}
    loops = {
        "single": lambda: single_cycles(cycles),
        "batched": lambda: batched_cycles(cycles),
        "batched dicts": batched_dicts,
        "one": lambda: one_by_one(messages),
    }
    for name, fn in loops.items():
        out[name] = best(fn) / messages * 1e6

    def filled(kind: str, n: int) -> Queue | FifoQueue:
        clock = ManualClock(start=START)
        q: Queue | FifoQueue
        if kind == "fifo":
            q = FifoQueue("paired.fifo", clock=clock, content_based_deduplication=True)
            for i in range(0, n, 10):
                q.send_batch(
                    [
                        SendEntry(str(j), f"m{i + j}", group_id=f"g{(i + j) % 100}")
                        for j in range(10)
                    ]
                )
        else:
            q = Queue("paired", clock=clock)
            for i in range(0, n, 10):
                q.send_batch([f"m{i + j}" for j in range(10)])
        for k in range(n // 40):
            q.receive(10, visibility_timeout=30 if k % 2 else 90)
        clock.advance(31)
        return q

    for kind in ("standard", "fifo"):
        queues = {n: filled(kind, n) for n in CHECK_SIZES}
        for n, q in queues.items():
            out[f"check {kind} {n}"] = best(q._check, 7) * 1e3
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", help="OLD and NEW: two source trees")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.messages)))
        return 0
    if len(args.trees) != 2:
        parser.error("name two trees: OLD NEW")
    trees = [str(Path(t).resolve()) for t in args.trees]
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    for turn in range(args.turns):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": tree}
            cmd = [sys.executable, __file__, "--measure", "--messages", str(args.messages)]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs[tree].append(json.loads(done.stdout))
            print(f"turn {turn + 1} {tree}: load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    old, new = trees
    print(f"| figure | {Path(old).name} | {Path(new).name} | new/old | turns' range, old; new |")
    print("|---|---|---|---|---|")
    for key in runs[old][0]:
        olds, news = [r[key] for r in runs[old]], [r[key] for r in runs[new]]
        a, b = statistics.median(olds), statistics.median(news)
        spread = f"{min(olds):.2f}-{max(olds):.2f}; {min(news):.2f}-{max(news):.2f}"
        print(f"| {key} | {a:.3f} | {b:.3f} | {b / a:.3f} | {spread} |")
    for tree in trees:
        for kind in ("standard", "fifo"):
            ratio = statistics.median(
                r[f"check {kind} {CHECK_SIZES[1]}"] / r[f"check {kind} {CHECK_SIZES[0]}"]
                for r in runs[tree]
            )
            print(f"{Path(tree).name}: check {kind} 40,000 / 10,000 = {ratio:.2f}")
        dicts = statistics.median(r["batched dicts"] / r["batched"] for r in runs[tree])
        print(f"{Path(tree).name}: batched dicts / batched = {dicts:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
