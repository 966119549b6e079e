"""``sqsqueue check``: how long a run of 60 messages takes, with and without kills.

Run through ``python3 benchmarks`` (``--only check`` alone) or
``.venv/bin/python benchmarks/bench_check.py [--quick]``.

The consumer is ``tests/check/_consumers.py correct`` (boto3: long polls of
up to 10 messages, 10 ms of work a message, the effect, then the delete) and,
where ``examples/check/node-sqs-consumer`` has its ``node_modules``, bbc's
sqs-consumer on Node. Each row is the wall time of one whole check (serving,
sending, starting the consumer, the run, stopping it) over ``REPEATS`` seeds:
the median and the slowest. A kill costs a visibility timeout (2 s by
default): the messages the killed process held come back only then.

Writes this script's section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _harness import loadavg, progress, section_args, write_section  # noqa: E402

from sqsqueue.check import check  # noqa: E402

SECTION = "sqsqueue check: a consumer program under faults"
perf = time.perf_counter
CONSUMER = [sys.executable, str(HERE.parent / "tests" / "check" / "_consumers.py"), "correct"]
NODE = HERE.parent / "examples" / "check" / "node-sqs-consumer"
CASES: list[tuple[str, dict[str, object]]] = [
    ("no faults", {}),
    ("kill=3", {"faults": "kill=3"}),
    ("kill=3, duplicate=0.2", {"faults": "kill=3,duplicate=0.2"}),
    ("kill=3, visibility timeout 1 s", {"faults": "kill=3", "visibility_timeout": 1}),
]


def timed(
    command: list[str], cwd: Path | None, seed: int, options: dict[str, object]
) -> tuple[float, str]:
    started = perf()
    result = check(
        command,
        messages=60,
        seed=seed,
        output=subprocess.DEVNULL,
        cwd=None if cwd is None else str(cwd),
        **options,  # type: ignore[arg-type]
    )
    took = perf() - started
    return took, ("pass" if result.ok else "VIOLATION") + f": {result.runs[-1].summary()}"


def main(argv: list[str] | None = None) -> None:
    args = section_args("bench_check.py", argv, "(no profiles)")
    repeats = 1 if args.quick else 3
    load = loadavg()
    consumers: list[tuple[str, list[str], Path | None]] = [
        ("boto3 worker (Python)", CONSUMER, None)
    ]
    if (NODE / "node_modules").exists() and shutil.which("node"):
        consumers.append(("bbc/sqs-consumer (Node.js)", ["node", "consumer.mjs"], NODE))
    rows = []
    for name, command, cwd in consumers:
        for case, options in CASES:
            times = []
            last = ""
            for seed in range(1, repeats + 1):
                took, last = timed(command, cwd, seed, options)
                times.append(took)
            progress("check", f"{name}, {case}", f"median {statistics.median(times):.2f} s")
            rows.append((name, case, statistics.median(times), max(times), last))
    lines = [
        f"## {SECTION}",
        "",
        f"`python3 benchmarks --only check`: 60 messages, visibility timeout 2 s unless said, "
        f"{repeats} seeded run(s) each, wall time of the whole `check` call (load average at "
        f"the start {load}). A 60-message run with kills takes seconds: the kills' cost is "
        "the visibility timeout the killed process's messages wait out.",
        "",
        "| consumer | faults | median | slowest | last run |",
        "|---|---|---:|---:|---|",
    ]
    lines += [f"| {n} | {c} | {m:.2f} s | {w:.2f} s | {last} |" for n, c, m, w, last in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output is not None:
        write_section(args.output, SECTION, text)


if __name__ == "__main__":
    main()
