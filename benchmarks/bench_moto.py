"""moto's services with sqsqueue's SQS (``sqsqueue.moto``) against moto alone.

Run through ``python3 benchmarks`` (``--only moto`` runs this alone) or
directly with the venv's python: ``.venv/bin/python benchmarks/bench_moto.py
--quick``.

In one run, the same boto3 code under moto's ``mock_aws`` alone and under
``mock_aws`` with ``mock_sqs`` inside it (moto's SNS then delivers into
sqsqueue's queue):

* SNS fan-out: ``sns.publish`` to a topic with one SQS subscription, then
  ``receive_message`` + ``delete_message`` of the delivered message, as
  messages/s (best of several repeats), with raw delivery and with SNS's JSON
  envelope (which moto signs with a certificate it builds per publish, in
  both);
* a test module's wall time: ``tests/moto/test_bridge.py``, whose delivery
  tests run once per world (``-k "[moto]"`` and ``-k "[sqsqueue]"`` select
  the same tests under each), and the migration example
  (``examples/moto_migration/test_orders.py``) as written and with its import
  back to moto's; each in a fresh ``pytest`` process, best of 3, with pytest's
  own duration beside the process's (which includes starting Python and
  importing moto).

No target: issue 23 asks for the measurement. A full run replaces this
benchmark's section of ``benchmarks/RESULTS.md`` (``--output`` elsewhere);
``--quick`` writes nothing unless ``--output`` is given.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    best_of,
    command,
    fake_aws_credentials,
    loadavg,
    machine,
    progress,
    rate,
    section_args,
    write_section,
)

# Never real credentials: moto signs requests with fake ones.
fake_aws_credentials()

import boto3  # noqa: E402
import moto  # noqa: E402

from sqsqueue.testing import mock_sqs  # noqa: E402

SECTION = "moto's services with sqsqueue's SQS: sqsqueue.moto vs moto alone"
REGION = "us-east-1"
perf = time.perf_counter
EXAMPLE = ROOT / "examples" / "moto_migration" / "test_orders.py"


@contextmanager
def world(name: str) -> Iterator[None]:
    """moto alone, or moto with sqsqueue's SQS inside it."""
    with moto.mock_aws():
        if name == "moto":
            yield
        else:
            with mock_sqs():
                yield


def fan_out_rate(raw: bool, n: int, repeats: int) -> float:
    """Messages/s of publish + receive + delete through one SNS subscription."""
    sqs = boto3.client("sqs", region_name=REGION)
    sns = boto3.client("sns", region_name=REGION)
    url = sqs.create_queue(QueueName="fan-out")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    topic = sns.create_topic(Name="events")["TopicArn"]
    sns.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=arn,
        Attributes={"RawMessageDelivery": "true" if raw else "false"},
    )
    publish, receive, delete = sns.publish, sqs.receive_message, sqs.delete_message

    def run() -> None:
        for i in range(n):
            publish(TopicArn=topic, Message=f"event {i}")
            [m] = receive(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
            delete(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])

    return n / best_of(run, repeats)


_PASSED = re.compile(r"(\d+) passed[^\n]* in ([0-9.]+)s")


def module_time(args: list[str], repeats: int) -> tuple[float, float, int]:
    """(best process wall time, pytest's duration in that run, tests passed) of
    ``python -m pytest args`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best: tuple[float, float, int] = (math.inf, math.inf, 0)
    for _ in range(repeats):
        t0 = perf()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = perf() - t0
        found = _PASSED.search(done.stdout)
        assert done.returncode == 0 and found, done.stdout[-2000:]
        if wall < best[0]:
            best = (wall, float(found.group(2)), int(found.group(1)))
    return best


def main(argv: list[str] | None = None) -> int:
    args = section_args("bench_moto.py", argv, "(no profile)")
    n, repeats, runs = (50, 2, 1) if args.quick else (300, 3, 3)
    header = machine()
    load_start = loadavg()
    t_start = perf()
    fan = Table(
        "1. SNS publish to a subscribed queue, then receive + delete",
        f"boto3 in one process: `sns.publish` to a topic with one SQS subscription, then "
        f"`receive_message(MaxNumberOfMessages=10)` (the delivered message) and "
        f"`delete_message`; best of {repeats} repeats of {n:,} messages. moto's SNS "
        "computes each delivery in both worlds; the queue is moto's own, or sqsqueue's.",
        ("delivery", "moto alone, messages/s", "moto + sqsqueue, messages/s", "ratio"),
    )
    for raw in (True, False):
        rates = {}
        for name in ("moto", "sqsqueue"):
            with world(name):
                rates[name] = fan_out_rate(raw, n, repeats)
            label = "raw" if raw else "JSON envelope"
            progress("moto", f"SNS to SQS ({label}), {name}", f"{rate(rates[name])} msg/s")
        fan.rows.append(
            [
                "raw (RawMessageDelivery)" if raw else "SNS's JSON envelope (signed)",
                rate(rates["moto"]),
                rate(rates["sqsqueue"]),
                f"{rates['sqsqueue'] / rates['moto']:.2f}x",
            ]
        )
    fan.notes.append(
        "The envelope's cost is moto's SNS (it builds and signs a certificate per "
        "publish), paid the same in both worlds."
    )
    modules = Table(
        "2. The same test module's wall time",
        f"Each in a fresh `python -m pytest -q` process, best of {runs}: the process's wall "
        "time (starting Python and importing moto included) and pytest's own duration.",
        ("module", "tests", "moto alone: wall / pytest", "moto + sqsqueue: wall / pytest"),
    )
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "test_orders_moto.py"
        before.write_text(
            EXAMPLE.read_text().replace(
                "\nfrom sqsqueue.testing import mock_aws\n", "\nfrom moto import mock_aws\n"
            )
        )
        cases: list[tuple[str, list[str], list[str]]] = [
            (
                "tests/moto/test_bridge.py, delivery tests (one world each)",
                ["tests/moto/test_bridge.py", "-k", "moto]"],
                ["tests/moto/test_bridge.py", "-k", "sqsqueue]"],
            ),
            (
                "examples/moto_migration/test_orders.py (before / after its import)",
                [str(before), "--rootdir", tmp],
                [str(EXAMPLE)],
            ),
        ]
        for label, moto_args, ours_args in cases:
            timed: dict[str, tuple[float, float, int]] = {}
            for name, module_args in (("moto", moto_args), ("sqsqueue", ours_args)):
                timed[name] = module_time(module_args, runs)
                wall, inside, _ = timed[name]
                progress(
                    "moto", f"{label[:40]}, {name}", f"{wall:.2f} s ({inside:.2f} s in pytest)"
                )
            assert timed["moto"][2] == timed["sqsqueue"][2], timed
            modules.rows.append(
                [
                    label,
                    str(timed["moto"][2]),
                    f"{timed['moto'][0]:.2f} s / {timed['moto'][1]:.2f} s",
                    f"{timed['sqsqueue'][0]:.2f} s / {timed['sqsqueue'][1]:.2f} s",
                ]
            )
    elapsed = perf() - t_start
    lines = [
        f"## {SECTION}",
        "",
        f"Generated by `{command('benchmarks/bench_moto.py', args.quick)}` in {elapsed:.0f} s "
        "(`benchmarks/bench_moto.py`). The same boto3 code under moto's `mock_aws` alone and "
        "with `mock_sqs` inside it, where moto's SNS delivers into sqsqueue's queues "
        "(`sqsqueue.moto`). No target: the measurement issue 23 asks for.",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in header if not k.startswith("load average")),
        f"| moto / boto3 | {moto.__version__} / {boto3.__version__} |",
        f"| load average at the start / end | {load_start} / {loadavg()} |",
        "",
    ]
    text = "\n".join(lines) + "".join("\n" + t.markdown(level=3) for t in (fan, modules))
    if args.output is not None:
        write_section(args.output, SECTION, text)
        print(f"[bench] wrote the section {SECTION!r} of {args.output}")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
