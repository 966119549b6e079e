"""Run real consumer libraries through ``sqsqueue check``'s faults and print
what each did, as a Markdown table (the table of docs/check.md).

    python examples/check/real_consumers.py [--only CONSUMER] [--messages 60]

* ``node``: bbc/sqs-consumer (``examples/check/node-sqs-consumer``; run
  ``npm install`` there first, or give ``--node-dir`` a directory that has
  its ``node_modules``).
* ``node-batch``: the same with ``handleMessageBatch`` handling a batch in
  order (``HANDLE_BATCH=1``), as sqs-consumer's README asks of FIFO consumers.
* ``powertools``: aws-lambda-powertools' ``BatchProcessor`` (on FIFO,
  ``SqsFifoPartialProcessor``) behind ``sqsqueue lambda``
  (``examples/check/powertools``; needs ``aws-lambda-powertools`` and boto3).
* ``celery``: a Celery worker consuming the queue through kombu's SQS
  transport with a consumer bootstep (``examples/check/celery``; needs
  ``celery``, ``kombu`` and ``pycurl``).

Every scenario is one seeded run (``--seed``, default 1) of ``--messages``
messages with a 2-second visibility timeout; a failure is shrunk (at most 4
more runs) and its reproducing command printed. Costs a few minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from sqsqueue.check import check, explain  # noqa: E402

SCENARIOS: list[tuple[str, dict[str, object]]] = [
    ("no faults", {}),
    ("duplicate=0.3", {"faults": "duplicate=0.3"}),
    ("duplicate=0.3, exactly-once", {"faults": "duplicate=0.3", "expect": "exactly-once"}),
    ("reorder,partial", {"faults": "reorder,partial"}),
    ("kill=3", {"faults": "kill=3"}),
    ("kill=3, exactly-once", {"faults": "kill=3", "expect": "exactly-once"}),
    ("slow=100", {"faults": "slow=100"}),
    ("throttle=0.3", {"faults": "throttle=0.3"}),
    (
        "FIFO, 3 groups, fifo-order",
        {"fifo": True, "groups": 3, "expect": ["fifo-order", "at-least-once"]},
    ),
    (
        "FIFO, 3 groups, kill=2, fifo-order",
        {"fifo": True, "groups": 3, "faults": "kill=2", "expect": ["fifo-order", "at-least-once"]},
    ),
]


def consumers(node_dir: Path) -> dict[str, tuple[list[str], Path, dict[str, str]]]:
    """name -> (command, working directory, extra environment)."""
    lam = shutil.which("sqsqueue") or f"{sys.executable} -m sqsqueue"
    return {
        "node": (["node", "consumer.mjs"], node_dir, {}),
        "node-batch": (["node", "consumer.mjs"], node_dir, {"HANDLE_BATCH": "1"}),
        "powertools": (
            [
                "sh",
                "-c",
                f'exec {lam} lambda handler:handler --queue-url "$SQSQUEUE_QUEUE_URL" '
                "--report-batch-item-failures --function-timeout 2",
            ],
            HERE / "powertools",
            {},
        ),
        "celery": (
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "worker",
                "worker",
                "--pool",
                "solo",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-Q",
                "unused",
                "--loglevel",
                "WARNING",
            ],
            HERE / "celery",
            {},
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", action="append", choices=["node", "node-batch", "powertools", "celery"]
    )
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--node-dir", type=Path, default=HERE / "node-sqs-consumer")
    parser.add_argument("--scenario", action="append", help="only scenarios whose name has this")
    args = parser.parse_args()
    table = ["| consumer | scenario | verdict | run |", "|---|---|---|---|"]
    details: list[str] = []
    for name, (command, cwd, extra) in consumers(args.node_dir).items():
        if args.only and name not in args.only:
            continue
        for scenario, options in SCENARIOS:
            if args.scenario and not any(s in scenario for s in args.scenario):
                continue
            env = dict(os.environ, **extra)
            if options.get("fifo"):
                env["FIFO"] = "1"
            result = check(
                command,
                messages=args.messages,
                seed=args.seed,
                cwd=str(cwd),
                env=env,
                output=subprocess.DEVNULL,
                shrink_runs=4,
                **options,  # type: ignore[arg-type]
            )
            run = result.runs[-1]
            verdict = (
                "pass"
                if result.ok
                else "**violation**: "
                + ", ".join(sorted({v.expectation for v in result.violations}))
            )
            line = f"| {name} | {scenario} | {verdict} | {run.summary()} |"
            print(line, flush=True)
            table.append(line)
            if not result.ok:
                details.append(f"### {name}, {scenario}\n\n```\n{explain(result)}\n```\n")
    print("\n".join(["", *table, "", *details]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
