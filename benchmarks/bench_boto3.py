"""Through boto3: sqsqueue's ``mock_sqs`` against moto's ``mock_aws``, in one run.

Run through ``python3 benchmarks`` (after ``bench_core.py``; ``--only boto3``
runs this alone) or directly with the venv's python:
``.venv/bin/python benchmarks/bench_boto3.py --quick``.

The same boto3 code runs against both mocks in this one process, so both
share the machine's state and botocore's own cost per call:

* cycles: ``send_message`` + ``receive_message(MaxNumberOfMessages=10)`` (gets
  the 1 message) + ``delete_message`` on an empty queue, as messages/s (best of
  several repeats); target: sqsqueue >= 3x moto.
* receive latency: median of ``receive_message(MaxNumberOfMessages=10)`` on a
  queue storing 10,000 messages (20 calls on moto, 2,000 on sqsqueue); target:
  sqsqueue >= 1000x faster.

moto runs on fake credentials from the environment (set here, so no real
credentials are ever read or sent). sqsqueue's broker runs on a ``ManualClock``
(as in ``bench_core.py``); moto uses the wall clock. The 10,000 messages are
stored untimed: through ``send_message_batch`` on sqsqueue, and straight into
moto's backend on moto, because moto's SendMessage scans the whole queue (it
computes the queue's attributes on every send) and filling it through boto3
takes many minutes.

A full run replaces this benchmark's section of ``benchmarks/RESULTS.md``
(``bench_core.py`` rewrites the rest of the file, so run it first); ``--quick``
writes nothing unless ``--output`` is given. Targets are reported, never
asserted. ``--profile`` prints pyinstrument profiles of both workloads on
sqsqueue (needs ``pip install pyinstrument``).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_core import Table, machine, pct, rate, status, us  # noqa: E402

#: Never real credentials: moto signs requests with these, sqsqueue sends unsigned.
FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
os.environ.update(FAKE_ENV)

import boto3  # noqa: E402

import sqsqueue  # noqa: E402
from sqsqueue import Broker, ManualClock  # noqa: E402
from sqsqueue.aws import mock_sqs  # noqa: E402

SECTION = "Through boto3: sqsqueue mock_sqs vs moto mock_aws"
REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account; the broker uses the same
START = 1_700_000_000.0
BODY = "x" * 100
VISIBILITY = 30
perf = time.perf_counter
CYCLE_TARGET = 3.0
RECEIVE_TARGET = 1000.0


@dataclass(frozen=True)
class Sizes:
    sqsqueue_cycles: int  # per repeat
    moto_cycles: int
    repeats: int
    depth: int
    sqsqueue_receives: int
    moto_receives: int


FULL = Sizes(3_000, 200, 3, 10_000, 2_000, 20)
QUICK = Sizes(300, 20, 2, 10_000, 200, 5)


def progress(what: str, figure: str) -> None:
    print(f"[bench] boto3    {what:<58} {figure}", flush=True)


def client() -> Any:
    """A boto3 SQS client, created inside the active mock (as a user would)."""
    return boto3.client("sqs", region_name=REGION)


# -- the workloads, identical for both mocks ------------------------------------------------


def cycle_rate(sqs: Any, name: str, cycles: int, repeats: int) -> float:
    """Messages/s of send + receive(10) + delete on an empty queue: best of ``repeats``."""
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    send, receive, delete = sqs.send_message, sqs.receive_message, sqs.delete_message
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        t0 = perf()
        for _ in range(cycles):
            send(QueueUrl=url, MessageBody=BODY)
            [m] = receive(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
            delete(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        best = min(best, perf() - t0)
    return cycles / best


def receive_latencies(
    sqs: Any, url: str, n: int, warmup: int, between: Callable[[int], None] | None = None
) -> list[float]:
    """Wall time of each receive_message(MaxNumberOfMessages=10) (10 returned)."""
    out: list[float] = []
    receive = sqs.receive_message
    gc.collect()
    for i in range(warmup + n):
        t0 = perf()
        got = receive(QueueUrl=url, MaxNumberOfMessages=10)
        t1 = perf()
        assert len(got["Messages"]) == 10, len(got.get("Messages", ()))
        if i >= warmup:
            out.append(t1 - t0)
        if between is not None:
            between(i)
    return out


def approximate_count(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(
        attrs["ApproximateNumberOfMessagesNotVisible"]
    )


@dataclass
class Side:
    cycles_per_s: float = 0.0
    receive: list[float] | None = None


# -- sqsqueue ---------------------------------------------------------------------------------


def run_sqsqueue(sizes: Sizes) -> Side:
    side = Side()
    clock = ManualClock(start=START)
    broker = Broker(clock=clock, account_id=ACCOUNT, region=REGION)
    with mock_sqs(broker):
        sqs = client()
        side.cycles_per_s = cycle_rate(sqs, "cycles", sizes.sqsqueue_cycles, sizes.repeats)
        assert len(broker.get_queue("cycles")) == 0  # the calls did reach the broker
        progress("sqsqueue send + receive(10) + delete", f"{rate(side.cycles_per_s)} msg/s")
        url = sqs.create_queue(QueueName="deep", Attributes={"VisibilityTimeout": str(VISIBILITY)})[
            "QueueUrl"
        ]
        for base in range(0, sizes.depth, 10):
            sqs.send_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(j), "MessageBody": f"{base + j:010d}{BODY[:90]}"} for j in range(10)
                ],
            )
        assert approximate_count(sqs, url) == sizes.depth

        def refill(i: int) -> None:
            # Every 500 receives (5,000 messages in flight), let the visibility
            # timeouts pass so the queue never runs dry. Untimed.
            if i % 500 == 499:
                clock.advance(VISIBILITY)

        side.receive = receive_latencies(sqs, url, sizes.sqsqueue_receives, 50, refill)
        assert len(broker.get_queue("deep")) == sizes.depth
    progress(
        f"sqsqueue receive(10) at {sizes.depth:,}: median / p99",
        f"{us(statistics.median(side.receive))} / {us(pct(side.receive, 0.99))}",
    )
    return side


# -- moto -------------------------------------------------------------------------------------


def moto_fill(url: str, n: int) -> None:
    """Store ``n`` messages in moto's backend directly (see the module docstring)."""
    from moto.sqs.models import Message, sqs_backends

    name = url.rsplit("/", 1)[-1]
    account = url.rsplit("/", 2)[-2]
    queue = sqs_backends[account][REGION].get_queue(name)
    for i in range(n):
        message = Message(f"fill-{i:08d}", f"{i:010d}{BODY[:90]}")
        message.mark_sent()
        queue.add_message(message)


def run_moto(sizes: Sizes) -> Side:
    from moto import mock_aws

    side = Side()
    with mock_aws():
        sqs = client()
        side.cycles_per_s = cycle_rate(sqs, "cycles", sizes.moto_cycles, sizes.repeats)
        progress("moto send + receive(10) + delete", f"{rate(side.cycles_per_s)} msg/s")
        url = sqs.create_queue(QueueName="deep", Attributes={"VisibilityTimeout": str(VISIBILITY)})[
            "QueueUrl"
        ]
        moto_fill(url, sizes.depth)
        assert approximate_count(sqs, url) == sizes.depth  # through boto3: it is moto's queue
        side.receive = receive_latencies(sqs, url, sizes.moto_receives, 1)
    progress(
        f"moto receive(10) at {sizes.depth:,}: median / p99",
        f"{us(statistics.median(side.receive))} / {us(pct(side.receive, 0.99))}",
    )
    return side


# -- profile (for a missed target) ----------------------------------------------------------


def profile_sqsqueue(sizes: Sizes) -> None:
    """pyinstrument profiles of the two workloads on sqsqueue: call tree and the
    functions with the most self time, printed."""
    from pyinstrument import Profiler

    def show(profiler: Profiler, title: str) -> None:
        print(f"\n[profile] {title}")
        print(profiler.output_text(unicode=False, color=False))
        flat = profiler.output_text(unicode=False, color=False, flat=True)
        print("\n".join(flat.splitlines()[:40]))

    broker = Broker(clock=ManualClock(start=START), account_id=ACCOUNT, region=REGION)
    with mock_sqs(broker):
        sqs = client()
        profiler = Profiler(interval=0.0002)
        profiler.start()
        cycle_rate(sqs, "profile-cycles", sizes.sqsqueue_cycles, 1)
        profiler.stop()
        show(profiler, "sqsqueue send + receive(10) + delete cycles")
        url = sqs.create_queue(QueueName="profile-deep")["QueueUrl"]
        for _ in range(0, sizes.depth, 10):
            sqs.send_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(j), "MessageBody": BODY} for j in range(10)],
            )
        profiler = Profiler(interval=0.0002)
        profiler.start()
        receive_latencies(sqs, url, min(sizes.sqsqueue_receives, 900), 0)
        profiler.stop()
        show(profiler, f"sqsqueue receive(10) at {sizes.depth:,} stored")


# -- report -----------------------------------------------------------------------------------


def section(
    sizes: Sizes, ours: Side, moto: Side, header: list[tuple[str, str]], elapsed: float, cmd: str
) -> str:
    assert ours.receive is not None and moto.receive is not None
    cycle_ratio = ours.cycles_per_s / moto.cycles_per_s
    ours_med, moto_med = statistics.median(ours.receive), statistics.median(moto.receive)
    receive_ratio = moto_med / ours_med
    cycle_met = cycle_ratio >= CYCLE_TARGET
    receive_met = receive_ratio >= RECEIVE_TARGET
    import moto as moto_module

    lines = [
        f"## {SECTION}",
        "",
        f"Generated by `{cmd}` in {elapsed:.0f} s (`benchmarks/bench_boto3.py`). The "
        "same boto3 code runs against sqsqueue's `mock_sqs` and moto's `mock_aws` in "
        "one process; both pay botocore's own cost per call (parameter validation, "
        "serialization, response parsing). moto signs each request with fake "
        "credentials (SigV4), sqsqueue's mock turns signing off.",
        "",
        "### Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in header),
        f"| boto3 / botocore | {boto3.__version__} / {_botocore_version()} |",
        f"| moto | {moto_module.__version__} |",
        f"| load average at end | {', '.join(f'{x:.2f}' for x in os.getloadavg())} |",
        "",
        "### Targets",
        "",
        "| target | this run | result |",
        "|---|---|---|",
        f"| send + receive(10) + delete messages/s, sqsqueue / moto >= 3x "
        f"| {cycle_ratio:.1f}x | {status(cycle_met)} |",
        f"| receive_message latency at {sizes.depth:,} stored, moto / sqsqueue >= 1000x "
        f"| {receive_ratio:,.0f}x | {status(receive_met)} |",
        "",
    ]
    t1 = Table(
        "1. send + receive + delete cycles on an empty queue",
        "Each cycle: `send_message` (100-byte body), `receive_message(MaxNumberOfMessages=10)` "
        "returning that one message, `delete_message`. Best of "
        f"{sizes.repeats} repeats of {sizes.sqsqueue_cycles:,} cycles (sqsqueue) and "
        f"{sizes.moto_cycles:,} cycles (moto).",
        ("mock", "messages/s", "ms/message (3 calls)", "ratio sqsqueue / moto", "target", "result"),
    )
    t1.rows.append(
        [
            "sqsqueue mock_sqs",
            rate(ours.cycles_per_s),
            f"{1e3 / ours.cycles_per_s:.2f}",
            f"{cycle_ratio:.1f}x",
            ">= 3x",
            status(cycle_met),
        ]
    )
    t1.rows.append(
        ["moto mock_aws", rate(moto.cycles_per_s), f"{1e3 / moto.cycles_per_s:.2f}", "1", "", ""]
    )
    t2 = Table(
        f"2. receive_message latency with {sizes.depth:,} stored messages",
        f"`receive_message(MaxNumberOfMessages=10)`, 10 returned each time, on a queue "
        f"storing {sizes.depth:,} 100-byte messages (VisibilityTimeout {VISIBILITY} s; "
        f"in-flight messages stay stored). {len(ours.receive):,} timed calls on sqsqueue "
        f"(after 50 warm-up calls; its ManualClock is advanced past the visibility "
        f"timeout every 500 calls, untimed) and {len(moto.receive):,} on moto (after 1).",
        (
            "mock",
            "median",
            "p99",
            "min",
            "max",
            "ratio moto / sqsqueue (median)",
            "target",
            "result",
        ),
    )
    t2.rows.append(
        [
            "sqsqueue mock_sqs",
            us(ours_med),
            us(pct(ours.receive, 0.99)),
            us(min(ours.receive)),
            us(max(ours.receive)),
            f"{receive_ratio:,.0f}x",
            ">= 1000x",
            status(receive_met),
        ]
    )
    t2.rows.append(
        [
            "moto mock_aws",
            us(moto_med),
            us(pct(moto.receive, 0.99)),
            us(min(moto.receive)),
            us(max(moto.receive)),
            "1",
            "",
            "",
        ]
    )
    t2.notes.append(
        "The stored messages are filled untimed: through `send_message_batch` on "
        "sqsqueue, directly into moto's backend on moto (moto's SendMessage computes "
        "the queue's attributes, scanning every stored message, on each send)."
    )
    t1.notes.append(
        "Most of each call's time is botocore's own client-side work (user-agent "
        "string, endpoint rules, serialization, parsing), which both mocks pay; "
        "`.venv/bin/python benchmarks/bench_boto3.py --profile` shows the split."
    )
    t2.notes.append(
        "moto's ReceiveMessage checks every message it returns against the retention "
        "period by computing the queue's attributes, whose approximate counts scan "
        "every stored message: its cost grows with the queue's depth. sqsqueue's "
        "receive is O(log n) in the depth (section 4 of this file)."
    )
    body = "\n".join(lines)
    for table in (t1, t2):
        body += "\n" + table.markdown().replace("## ", "### ", 1)
    return body


def _botocore_version() -> str:
    import botocore

    return str(botocore.__version__)


def write_section(path: Path, text: str) -> None:
    """Replace this benchmark's section of ``path`` (or append it)."""
    old = path.read_text() if path.exists() else ""
    heading = f"## {SECTION}\n"
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + ("\n\n" if old else "") + text
    else:
        end = old.find("\n## ", start + len(heading))
        rest = old[end + 1 :] if end >= 0 else ""
        new = old[:start] + text + ("\n" + rest if rest else "")
    path.write_text(new.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_boto3.py", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer calls: a smoke run")
    parser.add_argument(
        "--output",
        type=Path,
        help="results file whose section to replace (default: benchmarks/RESULTS.md on a "
        "full run; nothing with --quick)",
    )
    parser.add_argument("--profile", action="store_true", help="also profile sqsqueue")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    output = args.output
    if output is None and not args.quick:
        output = HERE / "RESULTS.md"

    header = machine()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    print(f"[bench] sqsqueue {sqsqueue.__version__}, boto3 {boto3.__version__}", flush=True)
    t0 = perf()
    moto = run_moto(sizes)
    gc.collect()
    ours = run_sqsqueue(sizes)
    elapsed = perf() - t0
    cmd = "python3 benchmarks --only boto3" + (" --quick" if args.quick else "")
    text = section(sizes, ours, moto, header, elapsed, cmd)
    print()
    print(text)
    if args.profile:
        profile_sqsqueue(sizes)
    if output is not None:
        write_section(output, text)
        print(f"[bench] wrote the section {SECTION!r} of {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
