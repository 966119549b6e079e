"""What serving every account and region costs a request (issue 31): a paired run.

Run through ``python3 benchmarks`` (``--only accounts`` alone) or directly:
``.venv/bin/python benchmarks/bench_accounts.py [--quick]``.

One SendMessage and one ReceiveMessage (a short poll finding a message),
signed as boto3 signs them, answered in process by the Endpoint's
``answer_whole`` (what the httptools protocol calls for a whole request; no
socket): by an Endpoint serving one broker (``Broker.serve()``, the path
before issue 31), and by the Endpoint of ``sqsqueue serve`` (every account and
region, :mod:`sqsqueue.server._accounts`) holding one (account, region), then
four, with the request in the default account and in another. The variants
take turns many times in one process, the order rotated each round; each
round gives each variant's ratio to the single-broker Endpoint from runs a
fraction of a second apart, and the section reports the median of those
ratios with its interquartile range.

Writes this script's section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    command,
    fake_aws_credentials,
    loadavg,
    machine,
    progress,
    publish,
    section_args,
)

SECTION = "Accounts and regions: what routing costs a request (paired run)"
perf = time.perf_counter
DEFAULT, OTHER = "000000000000", "111111111111"
BODY = "x" * 100


def signed(
    url: str, key: str, target: str, payload: dict[str, Any]
) -> tuple[dict[str, Any], bytes]:
    """A scope and body as boto3 signs the request (key ``key``, us-east-1)."""
    import json

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = json.dumps(payload).encode()
    request = AWSRequest(
        method="POST",
        url=url + "/",
        data=body,
        headers={
            "X-Amz-Target": f"AmazonSQS.{target}",
            "Content-Type": "application/x-amz-json-1.0",
            "Host": url.split("//")[1],
        },
    )
    SigV4Auth(Credentials(key, "secret"), "sqs", "us-east-1").add_auth(request)
    headers = [(k.lower().encode(), str(v).encode()) for k, v in request.headers.items()]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "headers": headers,
    }
    return scope, body


def variant(name: str, accounts: int | None, key: str) -> Callable[[int], float]:
    """A loop of n SendMessage + ReceiveMessage pairs against a fresh
    endpoint; returns the pairs a second."""
    from sqsqueue import Broker
    from sqsqueue.server import Endpoint
    from sqsqueue.server._accounts import Accounts

    url = "http://127.0.0.1:9324"
    # Lenient on purges: each run empties its queue, more often than AWS's one a minute.
    broker: Broker[Any] = Broker(account_id=DEFAULT, region="us-east-1", lenient="purge-interval")
    served: Accounts | None = None
    if accounts is not None:
        served = Accounts(broker)
        for i in range(accounts - 1):
            served.broker_for(OTHER, "us-east-1" if i == 0 else f"eu-west-{i}").create_queue("q")
    endpoint = Endpoint(broker, accounts=served)
    owner = OTHER if key == OTHER else DEFAULT
    home = served.broker_for(owner, "us-east-1") if served is not None else broker
    home.create_queue("q")
    queue_url = f"{url}/{owner}/q"
    send = signed(url, key, "SendMessage", {"QueueUrl": queue_url, "MessageBody": BODY})
    receive = signed(url, key, "ReceiveMessage", {"QueueUrl": queue_url, "VisibilityTimeout": 0})

    def run(scope: dict[str, Any], body: bytes) -> None:
        """As the httptools protocol runs a whole request: eagerly, in the loop."""
        coro = endpoint.answer_whole(scope, body)
        assert coro is not None
        status = None
        try:
            coro.send(None)
        except StopIteration as done:
            status = done.value[0]
        if status != 200:
            raise RuntimeError(f"{name}: the request waited or failed ({status})")

    async def timed(n: int) -> float:
        t0 = perf()
        for _ in range(n):
            run(*send)
            run(*receive)
        return perf() - t0

    def loop(n: int) -> float:
        took = asyncio.run(timed(n))
        home.get_queue("q").purge()  # the next run starts from an empty queue
        return n / took

    return loop


def main(argv: list[str] | None = None) -> int:
    args = section_args("bench_accounts.py", argv, "(no profiles here; ignored)")
    fake_aws_credentials()
    n = 1_000 if args.quick else 5_000
    rounds = 5 if args.quick else 30
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = perf()
    variants = [
        ("one broker (Broker.serve(), before)", variant("single", None, "test")),
        ("sqsqueue serve, one (account, region)", variant("accounts-1", 1, "test")),
        ("sqsqueue serve, four; default account", variant("accounts-4", 4, "test")),
        ("sqsqueue serve, four; another account", variant("accounts-4-other", 4, OTHER)),
    ]
    for _name, loop in variants:
        loop(n // 5)  # warm
    rates: dict[str, list[float]] = {name: [] for name, _ in variants}
    ratios: dict[str, list[float]] = {name: [] for name, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants) :] + variants[: r % len(variants)]
        got = {name: loop(n) for name, loop in order}
        base = got[variants[0][0]]
        for name, _ in variants:
            rates[name].append(got[name])
            ratios[name].append(got[name] / base)
    rows = []
    base_us = 1e6 / max(rates[variants[0][0]])
    for name, _ in variants:
        rs = sorted(ratios[name])
        median = statistics.median(rs)
        low, high = rs[len(rs) // 4], rs[(3 * len(rs)) // 4]
        pair_us = 1e6 / max(rates[name])
        rows.append(
            [
                name,
                f"{max(rates[name]):,.0f} /s",
                f"{pair_us:.1f} µs",
                f"{(pair_us - base_us) / 2:+.1f} µs",
                f"{median:.3f} ({low:.3f}-{high:.3f})",
            ]
        )
        progress("accounts", name, f"ratio {median:.3f} ({low:.3f}-{high:.3f})")
    table = Table(
        "SendMessage + ReceiveMessage through Endpoint.answer_whole, taking turns",
        f"{rounds} rounds, {n:,} signed request pairs per run (JSON protocol, a 100-byte "
        "body, a short poll that finds the message), the variants in rotated order each "
        "round, in one process on the wall clock. The ratio is the variant's rate over the "
        "single-broker Endpoint's in the same round; its median and interquartile range. "
        "No credentials: the account comes from the access key id, as `sqsqueue serve` "
        "reads it. No socket: over HTTP a request also costs the protocol and the kernel "
        "(the `sqsqueue serve` rows under wrk, above), so the added µs weigh less there.",
        (
            "endpoint",
            "best rate (pairs)",
            "µs a pair",
            "added a request (best against best)",
            "ratio to one broker: median (IQR)",
        ),
        rows=rows,
    )
    elapsed = perf() - t_all
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_accounts.py', args.quick)}` in "
            f"{elapsed:.0f} s (`benchmarks/bench_accounts.py`). Load average at the start: "
            f"{load_start}; at the end: {loadavg()}.",
            "",
            table.markdown(level=3),
        ]
    )
    publish(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
