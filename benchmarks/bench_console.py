"""The console at scale (issue 25): 1,000 queues and 100,000 messages.

Run through ``python3 benchmarks`` (``--only console`` alone) or
``.venv/bin/python benchmarks/bench_console.py [--quick]``.

A broker on a ``ManualClock`` holds 1,000 queues; one of them holds 100,000
messages (100-byte bodies, a tenth in flight). Served on 127.0.0.1, it is
measured from outside, as the page and a scraper see it:

* **Requests** (http.client on one kept-alive connection, median and p99 of
  many): a page of 50 queues with their live counts (what the console polls
  every second), the big queue's detail, a page of 50 of its messages at its
  start and near its end (``after`` a deep position), LocalStack's peek with
  its full page of 1,000, ``/metrics`` for all 1,000 queues, and the health
  check. Each with the bytes it ships: every answer is a page, never the
  queue.
* **The page in Chromium** (when ``/usr/bin/chromium`` and Playwright are
  there): load until the first 50 queues are drawn, and update latency, from
  a send through the engine to the new count on screen (the page polls once
  a second, so this is at most a second plus one poll's work).

Writes this script's section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import http.client
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    command,
    loadavg,
    machine,
    pct,
    progress,
    publish,
    section_args,
)

from sqsqueue import Broker, ManualClock, SendEntry  # noqa: E402

SECTION = "Console: page load and update latency with 1,000 queues and 100,000 messages"
perf = time.perf_counter
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def build(queues: int, messages: int) -> Broker[ManualClock]:
    broker = Broker(clock=ManualClock(start=1_700_000_000.0))
    for i in range(queues - 1):
        broker.create_queue(f"queue-{i:04d}").send("hello")
    big = broker.create_queue("big")
    entries = [SendEntry(str(i), "x" * 100) for i in range(10)]
    for _ in range(messages // 10):
        big.send_batch(entries)
    for _ in range(messages // 100):  # a tenth in flight
        big.receive(max_messages=10, visibility_timeout=600)
    return broker


def timed(conn: http.client.HTTPConnection, path: str, rounds: int) -> tuple[list[float], int]:
    times = []
    size = 0
    for _ in range(rounds):
        t0 = perf()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        times.append(perf() - t0)
        assert response.status == 200, (path, response.status, body[:200])
        size = len(body)
    return times, size


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def browser_figures(url: str, broker: Broker[ManualClock], rounds: int) -> dict[str, Any]:
    from playwright.sync_api import expect, sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = chromium.new_page(viewport={"width": 1440, "height": 900})
        rows = page.locator("#queues tr[data-queue]")
        loads = []
        for _ in range(rounds):
            t0 = perf()
            page.goto(url)
            expect(rows).to_have_count(50, timeout=30_000)
            loads.append(perf() - t0)
        out["load"] = loads
        queue = broker.get_queue("queue-0000")
        cell = page.locator("#queues tr[data-queue='queue-0000'] td").nth(1)
        updates = []
        for _ in range(rounds):
            before = int(cell.text_content() or "0")
            t0 = perf()
            queue.send("one more")
            expect(cell).to_have_text(str(before + 1), timeout=10_000)
            updates.append(perf() - t0)
        out["update"] = updates
        chromium.close()
    return out


def main(argv: list[str] | None = None) -> int:
    args = section_args("bench_console.py", argv, "(no profiles here; ignored)")
    n_queues = 100 if args.quick else 1_000
    n_messages = 10_000 if args.quick else 100_000
    rounds = 20 if args.quick else 200
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = perf()
    t0 = perf()
    broker = build(n_queues, n_messages)
    progress("console", f"built {n_queues:,} queues, {n_messages:,} messages", ms(perf() - t0))
    big = broker.get_queue("big")
    deep = n_messages - 100
    requests = [
        (
            "a page of 50 queues with live counts (polled each second)",
            "/_sqsqueue/api/queues?limit=50",
        ),
        ("the big queue's detail (polled while selected)", "/_sqsqueue/api/queues/big"),
        ("50 messages of the big queue, first page", "/_sqsqueue/api/queues/big/messages?limit=50"),
        (
            f"50 messages of the big queue after position {deep:,}",
            f"/_sqsqueue/api/queues/big/messages?limit=50&after={deep}",
        ),
        (
            "LocalStack's peek, one page (1,000 messages, all states)",
            f"/_aws/sqs/messages?QueueUrl={big.url}&ShowInvisible=true",
        ),
        (f"/metrics ({n_queues:,} queues)", "/metrics"),
        ("health", "/_sqsqueue/health"),
    ]
    rows = []
    browser: dict[str, Any] = {}
    with broker.serve() as endpoint:
        host, port = "127.0.0.1", endpoint.port
        conn = http.client.HTTPConnection(host, port, timeout=60)
        for label, path in requests:
            times, size = timed(conn, path, 3)  # warm
            times, size = timed(conn, path, rounds if "peek" not in label else max(rounds // 10, 5))
            median = statistics.median(times)
            rows.append([label, ms(median), ms(pct(times, 0.99)), f"{size / 1024:.1f} KiB"])
            progress("console", label, f"median {ms(median)}, {size / 1024:.1f} KiB")
        conn.close()
        if shutil.which(CHROMIUM):
            try:
                browser = browser_figures(endpoint.console_url, broker, 5 if args.quick else 10)
            except ImportError:
                browser = {}
    broker.close()
    table = Table(
        "Requests the console and a scraper make",
        f"{n_queues:,} queues; `big` holds {n_messages:,} messages of 100 bytes, a tenth in "
        f"flight. Served on 127.0.0.1, timed from a client on one kept-alive connection "
        f"(request to last byte), {rounds} rounds after 3 warm-up rounds (a tenth of them "
        "for the peek).",
        ("request", "median", "p99", "answer"),
        rows=rows,
    )
    parts = [table.markdown(level=3)]
    if browser:
        page = Table(
            "The page in Chromium",
            "Headless Chromium (Debian's, through Playwright). Load: navigation until the "
            "first page of 50 queues is drawn. Update: a message sent through the engine "
            "until its queue's new count is on screen; the page polls once a second, so "
            "the figure is the wait for the next poll plus the poll itself.",
            ("what", "median", "max", "rounds"),
            rows=[
                [
                    "page load to 50 queues drawn",
                    ms(statistics.median(browser["load"])),
                    ms(max(browser["load"])),
                    str(len(browser["load"])),
                ],
                [
                    "update: send to new count on screen",
                    ms(statistics.median(browser["update"])),
                    ms(max(browser["update"])),
                    str(len(browser["update"])),
                ],
            ],
        )
        parts.append(page.markdown(level=3))
    else:
        parts.append("(Chromium or Playwright missing: no browser figures in this run.)\n")
    elapsed = perf() - t_all
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_console.py', args.quick)}` in "
            f"{elapsed:.0f} s (`benchmarks/bench_console.py`). Load average at the start: "
            f"{load_start}; at the end: {loadavg()}.",
            "",
            *parts,
        ]
    )
    publish(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
