"""No stalls at depth (issue 35): every call's latency while one queue grows to
1,000,000 messages and under steady load on top of them, the full collection's
time, the objects the collector tracks and the memory a message takes.

Run through ``python3 benchmarks --only depth`` or with the venv's python:
``.venv/bin/python benchmarks/bench_depth.py [--quick] [--before TREE]``.

Each workload runs in a fresh child process (``--child``), on the default
collector settings (this script changes none), with ``SystemClock`` as an
application's queue has:

* growing: one queue, empty to N messages of 100 bytes, by ``send_batch`` of
  10 (a standard queue with plain bodies; a FIFO queue with 100,000 message
  groups and a deduplication id each); every call timed;
* steady: then ``send_batch(10)`` + ``receive(10)`` + ``delete_batch`` cycles on
  top of the N, every call timed;
* then a full ``gc.collect()``: the first (what an application's next full
  collection would walk) and the best of three more; the objects the
  collector tracks (``len(gc.get_objects())``); resident memory per message
  beyond its body string (RSS growth over the growing phase, divided by N:
  every message's body is the same string object).

Four kinds: standard and FIFO queues, in memory and in a durable broker (a
data directory under the system's temporary directory). ``--before TREE`` runs
each kind on another checkout too (``PYTHONPATH`` that tree; the children are
this script), taking turns, and draws call latency against depth for both.

Writes this script's section of ``benchmarks/RESULTS.md`` and ``depth_stalls.png``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Plot,
    Table,
    command,
    draw,
    loadavg,
    machine,
    progress,
    publish,
    section_args,
)

SECTION = "No stalls at depth: call latency while a queue grows to 1,000,000 (issue 35)"
KINDS = ("standard", "fifo", "durable standard", "durable fifo", "endpoint")
GROUPS = 100_000
BUCKETS = 40  # depth buckets of the plot
STALL_MS = 20.0  # the target: no call over 20 ms
COLLECT_MS = 30.0  # the target: a full collection at 1,000,000 stored in at most 30 ms
BYTES_TARGET = 400  # the target: bytes per message beyond its body


def child(kind: str, n: int, steady: int) -> dict[str, object]:
    """One workload, in this (fresh) process: the figures as a dict."""
    import gc
    import random

    import psutil

    from sqsqueue import Broker, FifoQueue, Queue, SendEntry

    perf = time.perf_counter_ns
    cpu = time.thread_time_ns  # this thread's CPU time: not the machine's other work
    body = "x" * 100
    fifo = "fifo" in kind
    tmp = tempfile.TemporaryDirectory() if "durable" in kind else None
    broker = Broker(data_dir=tmp.name) if tmp is not None else None
    q: Queue | FifoQueue
    if broker is not None:
        q = (
            broker.create_queue("depth.fifo", fifo_queue=True)
            if fifo
            else broker.create_queue("depth")
        )
    elif fifo:
        q = FifoQueue("depth.fifo", random=random.Random(1))
    else:
        q = Queue("depth", random=random.Random(1))
    bodies = [body] * 10

    def send(i: int) -> None:
        if fifo:
            q.send_batch(
                [
                    SendEntry(
                        str(k), body, group_id=f"g{(i + k) % GROUPS}", deduplication_id=str(i + k)
                    )
                    for k in range(10)
                ]
            )
        else:
            q.send_batch(bodies)

    proc = psutil.Process()
    gc.collect()
    rss0 = proc.memory_info().rss
    calls = n // 10
    grow = array("d", bytes(8 * calls))
    grow_cpu = array("d", bytes(8 * calls))
    t_grow = perf()
    for c in range(calls):
        t = perf()
        u = cpu()
        send(c * 10)
        grow_cpu[c] = (cpu() - u) / 1e6
        grow[c] = (perf() - t) / 1e6
    t_grow = perf() - t_grow
    rss1 = proc.memory_info().rss
    stored = len(q)
    cycles = array("d", bytes(8 * 3 * steady))
    cycles_cpu = array("d", bytes(8 * 3 * steady))
    k = n
    for c in range(steady):
        t0, u0 = perf(), cpu()
        send(k)
        t1, u1 = perf(), cpu()
        got = q.receive(10)
        t2, u2 = perf(), cpu()
        q.delete_batch([m.receipt_handle for m in got])
        t3, u3 = perf(), cpu()
        cycles[3 * c] = (t1 - t0) / 1e6
        cycles[3 * c + 1] = (t2 - t1) / 1e6
        cycles[3 * c + 2] = (t3 - t2) / 1e6
        cycles_cpu[3 * c] = (u1 - u0) / 1e6
        cycles_cpu[3 * c + 1] = (u2 - u1) / 1e6
        cycles_cpu[3 * c + 2] = (u3 - u2) / 1e6
        k += 10
    u = cpu()
    gc.collect()
    first = (cpu() - u) / 1e6
    best = []
    for _ in range(3):
        u = cpu()
        gc.collect()
        best.append((cpu() - u) / 1e6)
    tracked = len(gc.get_objects())
    per_bucket = max(1, calls // BUCKETS)
    curve = {
        (b + 1) * per_bucket * 10: max(grow_cpu[b * per_bucket : (b + 1) * per_bucket])
        for b in range(calls // per_bucket)
    }
    if broker is not None:
        broker.close()
    if tmp is not None:
        tmp.cleanup()
    return {
        "kind": kind,
        "stored": stored,
        "grow_s": t_grow / 1e9,
        "grow": sorted(grow),
        "steady": sorted(cycles),
        "grow_cpu": sorted(grow_cpu),
        "steady_cpu": sorted(cycles_cpu),
        "curve": curve,
        "collect_first_ms": first,
        "collect_ms": min(best),
        "tracked": tracked,
        # Every message's body is the one string object: RSS growth is what the
        # queue adds beyond the bodies.
        "bytes": (rss1 - rss0) / n,
    }


WRK_LUA = """
local f = io.open(os.getenv("SQSQUEUE_WRK_REQUEST"), "rb")
local raw = f:read("*a")
f:close()
function request() return raw end
"""


def _post(url: str, target: str, payload: dict[str, object]) -> dict[str, object]:
    import urllib.request

    request = urllib.request.Request(
        url + "/",
        data=json.dumps(payload).encode(),
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"AmazonSQS.{target}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        result: dict[str, object] = json.loads(answer.read() or b"{}")
        return result


def endpoint(tree: Path | None, port: int, seconds: int, connections: int) -> dict[str, object]:
    """``sqsqueue serve`` (of ``tree``) in its own process, loaded by wrk with
    SendMessage for ``seconds``: wrk's latency distribution, and the depth reached."""
    import shutil
    import socket
    import threading

    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("wrk is not installed (apt-get install -y wrk)")
    root = str(tree or HERE.parent)
    env = {**os.environ, "PYTHONPATH": root}
    server = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", str(port), "--log-level", "ERROR"],
        env=env,
        # ``-m`` puts the working directory first on sys.path, before
        # PYTHONPATH: run from the tree's root, or a checkout's own sqsqueue
        # would be served whatever ``tree`` says.
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    pause = threading.Event()
    try:
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            pause.wait(0.05)  # the server is starting
        queue_url = str(_post(url, "CreateQueue", {"QueueName": "depth"})["QueueUrl"])
        body = json.dumps({"QueueUrl": queue_url, "MessageBody": "x" * 100}).encode()
        raw = (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-amz-json-1.0\r\n"
            b"X-Amz-Target: AmazonSQS.SendMessage\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "request.http").write_bytes(raw)
            (Path(tmp) / "static.lua").write_text(WRK_LUA)
            out = subprocess.run(
                [
                    wrk,
                    "-t1",
                    f"-c{connections}",
                    f"-d{seconds}s",
                    "--timeout",
                    "10s",
                    "--latency",
                    "-s",
                    str(Path(tmp) / "static.lua"),
                    url + "/",
                ],
                env={**os.environ, "SQSQUEUE_WRK_REQUEST": str(Path(tmp) / "request.http")},
                capture_output=True,
                text=True,
                check=False,
            ).stdout
        attrs = _post(
            url,
            "GetQueueAttributes",
            {"QueueUrl": queue_url, "AttributeNames": ["ApproximateNumberOfMessages"]},
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    import re

    def ms(text: str) -> float:
        number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
        return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]

    found = {q: ms(v) for q, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)$", out, re.M)}
    latency = re.search(r"^\s+Latency\s+(\S+)\s+(\S+)\s+(\S+)", out, re.M)
    count = re.search(r"(\d+) requests in", out)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if latency is None or count is None or errors is not None:
        raise RuntimeError(f"wrk said:\n{out}")
    stored = int(str(attrs["Attributes"]["ApproximateNumberOfMessages"]))  # type: ignore[index]
    return {
        "requests": int(count.group(1)),
        "stored": stored,
        "p50": found["50"],
        "p99": found["99"],
        "max": ms(latency.group(3)),
    }


def summary(samples: list[float]) -> tuple[float, float, float]:
    """(worst, p99.9, p99) in ms of sorted samples."""
    if not samples:
        return 0.0, 0.0, 0.0
    n = len(samples)
    return samples[-1], samples[min(n - 1, int(n * 0.999))], samples[min(n - 1, int(n * 0.99))]


def run_child(tree: Path | None, kind: str, n: int, steady: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree or HERE.parent)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n), str(steady)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"{kind} ({tree or 'this tree'}) failed:\n{out.stderr}")
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    result["curve"] = {int(k): v for k, v in result["curve"].items()}  # type: ignore[attr-defined]
    return result


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], int(argv[2]), int(argv[3]))))
        return 0
    before: Path | None = None
    if "--before" in argv:
        at = argv.index("--before")
        before = Path(argv[at + 1]).resolve()
        argv = argv[:at] + argv[at + 2 :]
    kinds = list(KINDS)
    if "--kinds" in argv:
        at = argv.index("--kinds")
        kinds = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2 :]
    args = section_args("bench_depth.py", argv, "(no profiles here; ignored)")
    n = 20_000 if args.quick else 1_000_000
    steady = 1_000 if args.quick else 10_000
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = time.perf_counter()
    trees: list[tuple[str, Path | None]] = [("after", None)]
    if before is not None:
        trees.insert(0, ("before", before))
    results: dict[tuple[str, str], dict[str, object]] = {}
    served: dict[str, dict[str, object]] = {}
    with_endpoint = "endpoint" in kinds
    if with_endpoint:
        kinds.remove("endpoint")
    for kind in kinds:
        for label, tree in trees:
            r = results[(kind, label)] = run_child(tree, kind, n, steady)
            worst = summary(r["grow"])[0]  # type: ignore[arg-type]
            progress(
                "depth",
                f"{kind} ({label})",
                f"worst call {worst:.1f} ms, full collection {r['collect_first_ms']:.1f} ms",
            )
    import shutil

    if with_endpoint and shutil.which("wrk") is None:
        print("[bench] no endpoint rows: wrk is not installed (apt-get install -y wrk)")
        with_endpoint = False
    if with_endpoint:
        seconds = 5 if args.quick else 150
        for i, (label, tree) in enumerate(trees):
            e = served[label] = endpoint(tree, 19_324 + i, seconds, 8)
            progress(
                "depth", f"endpoint ({label})", f"p99 {e['p99']:.2f} ms at {e['stored']:,} stored"
            )
    rows = []
    for kind in kinds:
        for label, _ in trees:
            r = results[(kind, label)]
            gw, g999, g99 = summary(r["grow_cpu"])  # type: ignore[arg-type]
            sw, s999, s99 = summary(r["steady_cpu"])  # type: ignore[arg-type]
            wall = max(summary(r["grow"])[0], summary(r["steady"])[0])  # type: ignore[arg-type]
            rows.append(
                [
                    kind,
                    label,
                    f"{r['stored']:,}",
                    f"{gw:.1f} / {g999:.2f} / {g99:.2f}",
                    f"{sw:.1f} / {s999:.2f} / {s99:.2f}",
                    f"{wall:.1f}",
                    f"{r['collect_first_ms']:.1f} / {r['collect_ms']:.1f}",
                    f"{r['tracked']:,}",
                    f"{r['bytes']:.0f}",
                    f"{r['grow_s']:.1f} s",
                ]
            )
    table = Table(
        "Growing to 1,000,000 and steady load on top: every call timed",
        f"One queue grown from empty to {n:,} messages of 100 bytes by `send_batch` of 10, "
        f"then {steady:,} cycles of `send_batch(10)` + `receive(10)` + `delete_batch` on top, "
        "each call timed, in a fresh process per row, default collector settings, "
        "`SystemClock`. FIFO: 100,000 message groups, a deduplication id per message. "
        "Durable: a broker with a data directory. Latencies in ms, the calling thread's "
        "CPU time (`time.thread_time`: a call's own work, the collections it triggers "
        "included, not the time other processes took the core; this machine is shared), "
        "worst / p99.9 / p99; and the worst call in wall-clock time. "
        "Full collection: CPU ms of the first `gc.collect()` after the steady load / the "
        "best of three more. Bytes: resident memory per message beyond its body string (RSS "
        "growth while growing; for durable brokers it includes SQLite's page cache).",
        (
            "queue",
            "tree",
            "stored",
            "growing: worst / p99.9 / p99",
            "steady: worst / p99.9 / p99",
            "worst, wall clock",
            "full collection (ms): first / best",
            "tracked objects",
            "bytes/message",
            "time to grow",
        ),
        rows=rows,
    )
    verdicts = []
    for kind in kinds:
        r = results[(kind, "after")]
        gw, _, _ = summary(r["grow_cpu"])  # type: ignore[arg-type]
        sw, _, _ = summary(r["steady_cpu"])  # type: ignore[arg-type]
        worst = max(gw, sw)
        wall = max(summary(r["grow"])[0], summary(r["steady"])[0])  # type: ignore[arg-type]
        collect = max(float(r["collect_first_ms"]), float(r["collect_ms"]))  # type: ignore[arg-type]
        verdicts.append(
            f"| {kind}: no call over {STALL_MS:.0f} ms while growing and under steady load "
            f"| {verdict(worst <= STALL_MS)} | worst {worst:.1f} ms CPU "
            f"({wall:.1f} ms wall clock, the machine's other work included) |"
        )
        verdicts.append(
            f"| {kind}: a full collection at {n:,} stored in at most {COLLECT_MS:.0f} ms "
            f"| {verdict(collect <= COLLECT_MS)} | first {r['collect_first_ms']:.1f} ms, "
            f"best {r['collect_ms']:.1f} ms |"
        )
        if "durable" not in kind:
            verdicts.append(
                f"| {kind}: at most {BYTES_TARGET} bytes a message beyond its body "
                f"| {verdict(float(r['bytes']) <= BYTES_TARGET)} | {r['bytes']:.0f} bytes |"  # type: ignore[arg-type]
            )
    endpoint_rows = [
        [
            label,
            f"{e['requests']:,}",
            f"{e['stored']:,}",
            f"{e['p50']:.2f}",
            f"{e['p99']:.2f}",
            f"{e['max']:.1f}",
        ]
        for label, e in served.items()
    ]
    endpoint_table = Table(
        "The endpoint: SendMessage under wrk while the queue grows past 1,000,000",
        "`sqsqueue serve` in its own process (its defaults: httptools, the wall clock; "
        "since issue 35 it freezes what it made at startup, `docs/serving.md`), one "
        "queue, wrk (one thread, 8 connections, "
        "`--latency`) sending the same 100-byte SendMessage (anonymous, AWS JSON 1.0) "
        "for the whole run. Latencies in ms, wrk's (corrected for coordinated omission).",
        ("tree", "requests", "stored at the end", "p50", "p99", "worst"),
        rows=endpoint_rows,
    )
    if "after" in served:
        e = served["after"]
        verdicts.append(
            f"| endpoint: SendMessage p99 under 2 ms while the queue grows past 1,000,000 "
            f"| {verdict(float(e['p99']) < 2 and int(e['stored']) > 1_000_000)} "  # type: ignore[arg-type]
            f"| p99 {e['p99']:.2f} ms, worst {e['max']:.1f} ms, {e['stored']:,} stored |"
        )
    plot_name = "depth_stalls.png"
    curves = {
        f"{kind} ({label})": {x: v / 1e3 for x, v in results[(kind, label)]["curve"].items()}  # type: ignore[attr-defined]
        for kind in kinds
        for label, _ in trees
    }
    plot = Plot(
        plot_name,
        "Slowest send_batch(10) per depth bucket while growing (thread CPU time)",
        "messages stored",
        curves,
        limit=(STALL_MS / 1e3, f"{STALL_MS:.0f} ms"),
        ylabel="slowest call in the bucket",
    )
    drawn = args.output is not None and draw(plot, args.output.parent / plot_name)
    elapsed = time.perf_counter() - t_all
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_depth.py', args.quick)}"
            f"{' --before ' + str(before) if before else ''}` in {elapsed:.0f} s "
            f"(`benchmarks/bench_depth.py`). Load average at the start: {load_start}; at "
            f"the end: {loadavg()}. Rows marked before ran on the tree named by "
            "`--before`; after, on this tree.",
            "",
            table.markdown(level=3),
            *([endpoint_table.markdown(level=3)] if served else []),
            "### Targets (issue 35)",
            "",
            "| target | verdict | figure |",
            "|---|---|---|",
            *verdicts,
            "",
            *([f"![{plot.title}]({plot_name})", ""] if drawn else []),
        ]
    )
    publish(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
