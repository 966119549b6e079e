"""Lambda event source mappings (sqsqueue.awslambda): records/s and retry time.

Run through ``python3 benchmarks`` (``--only lambda`` alone) or
``.venv/bin/python benchmarks/bench_lambda.py [--quick]``.

* Records a second through a no-op handler, batch sizes 1, 10 and 100 (window
  1 s for 100): in process (``run_until_idle`` on a ManualClock) and over HTTP
  (a served broker on the system clock, the mapping in URL mode through
  boto3). Floors measured in the same run: the same messages received and
  deleted with ``receive(10)`` + ``delete_batch`` (in process), and with
  boto3's ``receive_message`` + ``delete_message_batch`` (over HTTP), no
  mapping in between.
* Retry time: a batch of 10 with one item reported failed: how long until the
  failed one is invoked again, on the virtual clock (virtual seconds, and the
  wall time that took) and on real time (a worker, visibility timeout 1 s).

Writes this script's section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import loadavg, progress, section_args, write_section  # noqa: E402

from sqsqueue import Broker, DeleteEntry, ManualClock, Queue, SendEntry, SystemClock  # noqa: E402
from sqsqueue.awslambda import EventSourceMapping  # noqa: E402

SECTION = "Lambda event source mappings (sqsqueue.awslambda)"
perf = time.perf_counter
START = 1_700_000_000.0


def noop(event: dict[str, Any], context: Any) -> None:
    return None


def fill(send_batch: Any, n: int) -> None:
    for i in range(0, n, 10):
        send_batch([SendEntry(id=str(j), body=f"message {j:06d}") for j in range(i, i + 10)])


def settings_for(size: int) -> dict[str, Any]:
    return {"batch_size": size} | ({"maximum_batching_window_in_seconds": 1} if size > 10 else {})


def in_process(size: int, n: int) -> float:
    q = Queue("jobs", clock=ManualClock(start=START))
    fill(q.send_batch, n)
    mapping = EventSourceMapping(q, noop, keep_invocations=0, **settings_for(size))
    t = perf()
    mapping.run_until_idle()
    elapsed = perf() - t
    assert len(q) == 0
    return n / elapsed


def in_process_floor(n: int) -> float:
    q = Queue("jobs", clock=ManualClock(start=START))
    fill(q.send_batch, n)
    t = perf()
    while msgs := q.receive(10, attribute_names=("All",), message_attribute_names=("All",)):
        q.delete_batch(
            [DeleteEntry(id=str(i), receipt_handle=m.receipt_handle) for i, m in enumerate(msgs)]
        )
    elapsed = perf() - t
    return n / elapsed


def client(endpoint_url: str) -> Any:
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    return boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        config=Config(signature_version=UNSIGNED),
    )


def over_http(endpoint_url: str, size: int, n: int) -> float:
    sqs = client(endpoint_url)
    url = sqs.create_queue(QueueName=f"jobs-{size}")["QueueUrl"]
    fill(
        lambda entries: sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": e.id, "MessageBody": e.body} for e in entries]
        ),
        n,
    )
    mapping = EventSourceMapping(url, noop, client=sqs, keep_invocations=0, **settings_for(size))
    t = perf()
    mapping.run_until_idle()
    return n / (perf() - t)


def over_http_floor(endpoint_url: str, n: int) -> float:
    sqs = client(endpoint_url)
    url = sqs.create_queue(QueueName="jobs-floor")["QueueUrl"]
    fill(
        lambda entries: sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": e.id, "MessageBody": e.body} for e in entries]
        ),
        n,
    )
    t = perf()
    while msgs := sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        MessageSystemAttributeNames=["All"],
        MessageAttributeNames=["All"],
    ).get("Messages"):
        sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)
            ],
        )
    return n / (perf() - t)


def fail_one(event: dict[str, Any], context: Any) -> dict[str, Any]:
    first = event["Records"][0]
    if first["attributes"]["ApproximateReceiveCount"] == "1" and len(event["Records"]) == 10:
        return {"batchItemFailures": [{"itemIdentifier": first["messageId"]}]}
    return {}


def retry_virtual() -> tuple[float, float]:
    clock = ManualClock(start=START)
    q = Queue("jobs", clock=clock)  # visibility timeout 30 s
    fill(q.send_batch, 10)
    t = perf()
    first, second = EventSourceMapping(
        q, fail_one, function_response_types=["ReportBatchItemFailures"]
    ).run_until_idle()
    wall = perf() - t
    return second.started_at - first.ended_at, wall


def retry_real() -> float:
    q = Queue("jobs", clock=SystemClock(), visibility_timeout=1)
    fill(q.send_batch, 10)
    again = threading.Event()
    mapping = EventSourceMapping(
        q, fail_one, function_response_types=["ReportBatchItemFailures"], function_timeout=1
    )
    with mapping:
        while len(mapping.invocations) < 2:
            again.wait(0.001)
    first, second = mapping.invocations[:2]
    return second.started_at - first.ended_at


def main(argv: list[str] | None = None) -> None:
    args = section_args("bench_lambda.py", argv, "(no profiles)")
    n = 1_000 if args.quick else 10_000
    n_http = 500 if args.quick else 3_000
    load = loadavg()
    rows = []
    floor = in_process_floor(n)
    progress("lambda", "in process floor: receive(10) + delete_batch", f"{floor:,.0f} msg/s")
    for size in (1, 10, 100):
        r = in_process(size, n)
        progress("lambda", f"in process, batch {size}", f"{r:,.0f} records/s")
        rows.append(("in process (ManualClock)", size, r, floor))
    broker = Broker(clock=SystemClock())
    with broker.serve() as endpoint:
        floor_http = over_http_floor(endpoint.endpoint_url, n_http)
        progress(
            "lambda", "HTTP floor: boto3 receive + delete_message_batch", f"{floor_http:,.0f} msg/s"
        )
        for size in (1, 10, 100):
            r = over_http(endpoint.endpoint_url, size, n_http)
            progress("lambda", f"over HTTP, batch {size}", f"{r:,.0f} records/s")
            rows.append(("over HTTP (boto3, served broker)", size, r, floor_http))
    virtual, wall = retry_virtual()
    progress(
        "lambda",
        "retry of one failed item, virtual clock",
        f"{virtual:g} s virtual, {wall * 1e3:.2f} ms wall",
    )
    real = retry_real()
    progress("lambda", "retry of one failed item, real time (VT 1 s)", f"{real:.3f} s")
    lines = [
        f"## {SECTION}",
        "",
        f"`python3 benchmarks --only lambda` ({n:,} messages in process, {n_http:,} over HTTP; "
        f"load average at the start {load}).",
        "",
        "### Records a second through a no-op handler",
        "",
        "| where | batch size | records/s | floor (no mapping) | share of the floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for where, size, r, fl in rows:
        label = f"{size} (window 1 s)" if size > 10 else str(size)
        lines.append(f"| {where} | {label} | {r:,.0f} | {fl:,.0f} | {r / fl:.2f} |")
    lines += [
        "",
        "### A batch of 10 with one failed item: time until it is retried",
        "",
        "| clock | until the retry | wall time of the whole run |",
        "|---|---:|---:|",
        f"| virtual (ManualClock, visibility timeout 30 s) | {virtual:g} s (virtual) "
        f"| {wall * 1e3:.2f} ms |",
        f"| real (SystemClock, visibility timeout 1 s, worker) | {real:.3f} s | {real:.3f} s |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.output is not None:
        write_section(args.output, SECTION, text)


if __name__ == "__main__":
    main()
