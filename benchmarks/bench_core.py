"""Core benchmarks: throughput, latency against queue depth, memory, long-poll wake-up.

Run through ``python3 benchmarks`` (see ``benchmarks/__main__.py``) or directly
with the venv's python: ``.venv/bin/python benchmarks/bench_core.py --quick``.

Every figure is measured in one run, side by side with its in-process peers
(``queue.Queue``, ``collections.deque``, ``asyncio.Queue``), and reported as a
ratio against the target it answers to. Sections (``--only NAME``):

* ``floor``: ``queue.Queue`` put+get and ``deque`` append+popleft per item.
  ``standard`` and ``fifo`` measure ``queue.Queue`` again, taking turns with
  their own workloads, so that their ratios compare like with like.
* ``standard``: ``Queue`` send + receive(10) + delete of 100-byte messages,
  one call per message and batched, as messages/s and as a share of
  ``queue.Queue`` throughput. When a throughput target is missed, a
  pyinstrument profile of the loops (if pyinstrument is installed) breaks the
  cost per message down by call and by function.
* ``fifo``: ``FifoQueue`` throughput and receive latency with 1, 100 and
  100,000 message groups.
* ``latency``: receive(10), change_visibility, delete and send latency as the
  queue grows from 1,000 to 1,000,000 stored messages (plotted).
* ``inflight``: receive(10), delete and change_visibility latency as the
  messages in flight grow from 1,000 to 120,000 (SQS's limit) over a constant
  visible backlog (plotted).
* ``memory``: resident memory per stored message at 1,000,000 messages, with
  100-byte and 10 KiB bodies, and the overhead beyond the body string (each
  measured in a fresh child process).
* ``longpoll``: wall-clock time from a send to the return of a long poll that
  was blocked in another thread (``receive``) or in an asyncio task on an event
  loop in another thread (``receive_async``), against ``queue.Queue.get`` and
  ``asyncio.Queue.get``.

Queues run on a ``ManualClock`` (no time passes, so only the engine's work is
timed), except the long poll, which is about wall-clock waiting and uses
``SystemClock``. Throughput is the best of several repeats (as ``timeit``
advises: slower repeats measure other processes, not the code). The cyclic GC
stays enabled, as in an application. Targets are reported, never asserted.

This script runs the sections; they live in ``_core_throughput.py`` (floor,
standard, fifo and ``--profile``), ``_core_latency.py`` (latency, inflight,
longpoll) and ``_core_memory.py`` (memory), sharing ``_core_common.py``. Tables,
plots, the machine's description and the writing of RESULTS.md are in
``_harness.py``, which the other ``bench_*.py`` scripts import too.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from _core_common import FULL, QUICK, Sizes
from _core_latency import bench_inflight, bench_latency, bench_longpoll
from _core_memory import bench_memory, memory_child
from _core_throughput import bench_fifo, bench_floor, bench_standard, profile
from _harness import (
    HERE,
    Report,
    Table,
    command,
    draw_plots,
    foreign_sections,
    foreign_targets,
    machine,
    perf,
    render,
    status,
)

SECTIONS = ("floor", "standard", "fifo", "latency", "inflight", "memory", "longpoll")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument(
        "--only", choices=SECTIONS, action="append", help="run only this section (repeatable)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="where to write the results (default: benchmarks/RESULTS.md on a "
        "full run; nothing with --quick or --only)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print pyinstrument profiles of the throughput loops"
    )
    parser.add_argument(
        "--memory-child", nargs=3, metavar=("KIND", "N", "SIZE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.memory_child:
        kind, n, size = args.memory_child
        print(json.dumps(memory_child(kind, int(n), int(size))))
        return 0

    sizes = QUICK if args.quick else FULL
    wanted = set(args.only or SECTIONS)
    output = args.output
    if output is None and not args.quick and not args.only:
        output = HERE / "RESULTS.md"

    header = machine()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    report: Report[Sizes] = Report(sizes)
    benches: dict[str, Callable[[Report[Sizes]], None]] = {
        "floor": bench_floor,
        "standard": bench_standard,
        "fifo": bench_fifo,
        "latency": bench_latency,
        "inflight": bench_inflight,
        "memory": bench_memory,
        "longpoll": bench_longpoll,
    }
    t0 = perf()
    failed: list[str] = []
    for name in SECTIONS:
        if name not in wanted:
            continue
        try:
            benches[name](report)
        except Exception:  # report the others; a failed section fails the run
            traceback.print_exc()
            failed.append(name)
            report.tables.append(
                Table(f"{name}: FAILED", "This section raised; see the run's output.", ("",))
            )
        gc.collect()
    elapsed = perf() - t0

    if args.profile:
        profile(sizes)
    print("\n[bench] targets:")
    for v in report.verdicts:
        print(f"[bench]   {status(v.met):<6} {v.target} ({v.source}): {v.figure}")
    if output is not None:
        pngs = draw_plots(report.tables, output.parent)
        started = command("benchmarks/bench_core.py", args.quick)
        text = render(report, header, started, elapsed, foreign_targets(output))
        output.write_text(text + foreign_sections(output, text))
        print(f"[bench] wrote {output}" + "".join(f", {p}" for p in pngs))
    if failed:
        print(f"[bench] FAILED sections: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
