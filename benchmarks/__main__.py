"""Run the benchmarks: ``python3 benchmarks`` from the repository root.

Creates ``.venv`` once (as ``python3 tests`` does), installs sqsqueue with its
``bench`` and ``dev`` extras, then runs ``benchmarks/bench_core.py`` and after
it every other ``benchmarks/bench_*.py`` in the venv. Other arguments go to
each of them:

* ``python3 benchmarks``               full run; writes ``benchmarks/RESULTS.md``
* ``python3 benchmarks --quick``       small sizes, a smoke run (writes nothing)
* ``python3 benchmarks --only fifo``   one section of ``bench_core.py`` (its
  ``--help`` lists them), or ``--only boto3`` for all of ``bench_boto3.py``;
  repeatable

Benchmarks report; they never fail on a missed target.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / ".ci"))
from bootstrap import ROOT, ensure_venv, run

HERE = ROOT / "benchmarks"


def modules() -> list[str]:
    """``bench_core`` first (it rewrites RESULTS.md), then the others by name."""
    others = sorted(p.stem for p in HERE.glob("bench_*.py") if p.stem != "bench_core")
    return ["bench_core", *others]


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--only", action="append", default=[])
    args, rest = parser.parse_known_args()
    names = modules()
    whole = {name.removeprefix("bench_") for name in names}
    core_sections = [s for s in args.only if s not in whole]
    python = str(ensure_venv("bench,dev"))
    for name in names:
        argv = rest
        if args.only and name.removeprefix("bench_") not in args.only:
            if name != "bench_core" or not core_sections:
                continue
            argv = [*rest, *(arg for s in core_sections for arg in ("--only", s))]
        code = run([python, str(HERE / f"{name}.py"), *argv])
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
