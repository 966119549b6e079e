"""Run the benchmarks: ``python3 benchmarks`` from the repository root.

Creates ``.venv`` once (as ``python3 tests`` does), installs sqsqueue with its
``bench``, ``dev`` and ``spark`` extras, then runs ``benchmarks/bench_core.py``
and after it every other ``benchmarks/bench_*.py`` in the venv, with a progress
line per result and per script. Other arguments go to each of them:

* ``python3 benchmarks``               full run; writes ``benchmarks/RESULTS.md``
  and its PNG plots (about 10 minutes)
* ``python3 benchmarks --quick``       small sizes, a smoke run (writes nothing;
  skips ``bench_spark.py``, whose JVM start alone takes ~10 s)
* ``python3 benchmarks --only fifo``   one section of ``bench_core.py`` (its
  ``--help`` lists them), or ``--only boto3`` / ``--only endpoint`` /
  ``--only moto`` / ``--only spark`` / ``--only lambda`` / ``--only check`` for all of
  ``bench_boto3.py`` / ``bench_endpoint.py`` / ``bench_moto.py`` / ``bench_spark.py`` /
  ``bench_lambda.py`` / ``bench_check.py``; repeatable
* ``python3 benchmarks --profile``     also print pyinstrument profiles of the
  throughput loops (``bench_core.py``) and of the boto3 workloads

Benchmarks report; they never fail on a missed target.

Layout: each ``bench_*.py`` is a script this runner finds and runs;
``bench_core.py`` runs the core sections (RESULTS.md §1-7) and rewrites
RESULTS.md, the others replace their own section of it (and some merge their
rows into its Targets table). Modules whose names start with ``_`` are
imported, never run: ``_harness.py`` is what every script shares (tables,
plots, the machine's description, progress lines, writing RESULTS.md, the
command line), and ``_core_common.py``, ``_core_throughput.py`` (floor,
standard, fifo), ``_core_latency.py`` (latency, inflight, longpoll) and
``_core_memory.py`` (memory) hold ``bench_core.py``'s sections. A new script
imports from ``_harness``, not from another script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / ".ci"))
from bootstrap import ROOT, ensure_venv, run  # type: ignore[import-not-found]

HERE = ROOT / "benchmarks"
#: Scripts too slow to start for a --quick smoke run.
NOT_QUICK = {"bench_spark", "bench_datasource"}


def modules() -> list[str]:
    """``bench_core`` first (it rewrites RESULTS.md), then the others by name."""
    others = sorted(p.stem for p in HERE.glob("bench_*.py") if p.stem != "bench_core")
    return ["bench_core", *others]


def loadavg() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def note_end(results: Path, started: float) -> None:
    """Add the suite's end (load average, total time) to RESULTS.md's machine table."""
    if not results.exists():
        return
    text = results.read_text()
    anchor = "| load average at the end of bench_core.py |"
    start = text.find(anchor)
    if start < 0:
        return
    end = text.index("\n", start) + 1
    row = (
        f"| load average when `python3 benchmarks` ended | {loadavg()} "
        f"(the whole suite took {time.perf_counter() - started:.0f} s) |\n"
    )
    results.write_text(text[:end] + row + text[end:])


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--only", action="append", default=[])
    args, rest = parser.parse_known_args()
    quick = "--quick" in rest
    names = modules()
    whole = {name.removeprefix("bench_") for name in names}
    core_sections = [s for s in args.only if s not in whole]
    python = str(ensure_venv("bench,dev,spark"))
    os.environ["SQSQUEUE_BENCH_COMMAND"] = " ".join(["python3 benchmarks", *sys.argv[1:]])
    os.environ["SQSQUEUE_BENCH_SUITE_LOAD"] = loadavg()
    started = time.perf_counter()
    plan: list[tuple[str, list[str]]] = []
    for name in names:
        argv = rest
        if args.only and name.removeprefix("bench_") not in args.only:
            if name != "bench_core" or not core_sections:
                continue
            argv = [*rest, *(arg for s in core_sections for arg in ("--only", s))]
        elif quick and name in NOT_QUICK and not args.only:
            print(f"[run] skipping {name}.py in a --quick run (--only {name[6:]} runs it)")
            continue
        plan.append((name, argv))
    for i, (name, argv) in enumerate(plan, 1):
        print(
            f"[run] {i}/{len(plan)} {name}.py, {time.perf_counter() - started:.0f} s into the "
            f"run, load average {loadavg()}",
            flush=True,
        )
        code = int(run([python, str(HERE / f"{name}.py"), *argv]))
        if code:
            return code
    print(f"[run] done in {time.perf_counter() - started:.0f} s, load average {loadavg()}")
    if not args.only and not quick and "--output" not in rest:
        note_end(HERE / "RESULTS.md", started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
