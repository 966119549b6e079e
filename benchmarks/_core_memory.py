"""bench_core.py's memory section (RESULTS.md section 6).

Resident memory per stored message, each store measured in a fresh child
process: ``bench_core.py --memory-child KIND N SIZE`` runs ``memory_child`` and
prints its figures as JSON.
"""

from __future__ import annotations

import gc
import json
import random
import subprocess
import sys
from collections import deque

from _core_common import KIB, START, Sizes, body_of, fill
from _harness import HERE, Report, Table, perf

from sqsqueue import FifoQueue, ManualClock, Queue, SendEntry

# -- 6. memory ---------------------------------------------------------------------------


def memory_child(kind: str, n: int, size: int) -> dict[str, float]:
    """Runs in a fresh process: RSS growth while ``n`` distinct ``size``-byte
    messages are stored."""
    import psutil

    proc = psutil.Process()
    gc.collect()
    before = proc.memory_info().rss
    t0 = perf()
    holder: object
    if kind == "queue":
        q = Queue("memory", clock=ManualClock(start=START), random=random.Random(4))
        fill(q, 0, n, size)
        stored = len(q)
        holder = q
    elif kind == "fifo":
        f = FifoQueue("memory.fifo", clock=ManualClock(start=START), random=random.Random(4))
        for base in range(0, n, 10):
            f.send_batch(
                [
                    SendEntry(
                        str(j),
                        body_of(base + j, size),
                        group_id=f"g{(base + j) % 1000}",
                        deduplication_id=str(base + j),
                    )
                    for j in range(10)
                ]
            )
        stored = len(f)
        holder = f
    elif kind == "deque":
        d = deque(body_of(i, size) for i in range(n))
        stored = len(d)
        holder = d
    else:
        raise ValueError(kind)
    gc.collect()
    after = proc.memory_info().rss
    seconds = perf() - t0
    del holder
    return {
        "bytes": after - before,
        "stored": stored,
        "body_object": sys.getsizeof(body_of(0, size)),
        "seconds": seconds,
    }


def run_memory_child(kind: str, n: int, size: int) -> dict[str, float]:
    child = subprocess.run(
        [sys.executable, str(HERE / "bench_core.py"), "--memory-child", kind, str(n), str(size)],
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode:
        raise RuntimeError(f"the {kind} memory child failed:\n{child.stderr}")
    result: dict[str, float] = json.loads(child.stdout.strip().splitlines()[-1])
    return result


def big_body_count(sizes: Sizes, size: int) -> tuple[int, str]:
    """How many ``size``-byte messages to store: ``memory_big_messages`` if they fit
    in the memory available now with headroom, else ``memory_big_fallback``."""
    import psutil

    vm = psutil.virtual_memory()
    n = sizes.memory_big_messages
    need = n * (sys.getsizeof(body_of(0, size)) + 1024)  # bodies + a generous overhead
    headroom = max(4 * 2**30, vm.total // 5)
    if need + headroom <= vm.available:
        return n, (
            f"{n:,} messages of {size // KIB} KiB need about {need / 2**30:.1f} GiB; "
            f"{vm.available / 2**30:.1f} GiB of {vm.total / 2**30:.1f} GiB were available "
            f"(at least {headroom / 2**30:.1f} GiB of headroom asked for), so all were stored."
        )
    fallback = sizes.memory_big_fallback
    return fallback, (
        f"{n:,} messages of {size // KIB} KiB would need about {need / 2**30:.1f} GiB but "
        f"only {vm.available / 2**30:.1f} GiB of {vm.total / 2**30:.1f} GiB were available "
        f"(with {headroom / 2**30:.1f} GiB of headroom asked for), so {fallback:,} were "
        "stored instead."
    )


OVERHEAD_TARGET = 600  # bytes per stored message beyond the body string (issue 8)


def bench_memory(report: Report[Sizes]) -> None:
    sizes = report.sizes
    n = sizes.memory_messages
    big = 10 * KIB
    n_big, fit_note = big_body_count(sizes, big)
    table = Table(
        "6. Resident memory per stored message",
        "RSS growth of a fresh process (psutil, gc.collect() before and after) while it "
        "stores distinct bodies of the given size, divided by the number stored. "
        "Overhead beyond the body: RSS per message minus the size of the body's `str` "
        "object (`sys.getsizeof`, which includes CPython's string header). The deque of "
        "the bare body strings is the floor: what holding the bodies alone costs (its "
        "overhead is the deque's pointer plus the allocator's rounding).",
        (
            "store",
            "body",
            "messages",
            "RSS growth",
            "RSS bytes/message",
            "body str object",
            "overhead beyond the body",
            "ratio to bare bodies",
            "target",
            "result",
        ),
    )
    floor: dict[int, float] = {}
    runs = (
        ("deque", "deque of the bodies", n, 100),
        ("queue", "Queue", n, 100),
        ("fifo", "FifoQueue, 1,000 groups", n, 100),
        ("deque", "deque of the bodies", n_big, big),
        ("queue", "Queue", n_big, big),
    )
    for kind, label, count, size in runs:
        body = "100 B" if size == 100 else f"{size // KIB} KiB"
        report.progress("memory", f"{label}, {count:,} x {body}: in a child process", "...")
        r = run_memory_child(kind, count, size)
        assert r["stored"] == count, r
        per = r["bytes"] / count
        overhead = per - r["body_object"]
        if kind == "deque":
            floor[size] = per
        report.progress(
            "memory",
            f"{label}, {count:,} x {body}",
            f"{per:,.0f} B/message, {overhead:,.0f} B beyond the body ({r['seconds']:.0f} s)",
        )
        target = verdict = ""
        if kind == "queue":
            figure = f"{overhead:,.0f} B ({per:,.0f} B RSS - {r['body_object']:,.0f} B body str)"
            why = (
                f"RSS {per:,.0f} B/message - body str {r['body_object']:,.0f} B = "
                f"{overhead:,.0f} B, {overhead - OVERHEAD_TARGET:,.0f} B over; the bare "
                f"bodies in a deque cost {floor[size] - r['body_object']:,.0f} B beyond "
                "their strings"
            )
            target = f"overhead <= {OVERHEAD_TARGET} B (issue 8)"
            verdict = report.judge(
                f"Queue overhead per stored message beyond its body, {count:,} x {body} "
                f"bodies, <= {OVERHEAD_TARGET} B",
                "issue 8",
                figure,
                overhead <= OVERHEAD_TARGET,
                "§6",
                why,
            )
            if size == 100:
                target += "; RSS <= 1 KiB (issue 8)"
                verdict += "; " + report.judge(
                    f"Queue RSS per stored 100-byte message at {count:,} messages <= 1 KiB",
                    "issue 8",
                    f"{per:,.0f} B",
                    per <= 1024,
                    "§6",
                    f"{per:,.0f} B RSS per message",
                )
        elif kind == "fifo":
            target = "(information)"
        table.rows.append(
            [
                label,
                body,
                f"{count:,}",
                f"{r['bytes'] / 2**20:,.1f} MiB",
                f"{per:,.0f}",
                f"{r['body_object']:,.0f}",
                f"{overhead:,.0f}",
                f"{per / floor[size]:.2f}x",
                target,
                verdict,
            ]
        )
    table.notes.append(fit_note)
    table.notes.append(
        "The FifoQueue figure includes a deduplication-window entry per message: no "
        "virtual time passes, so none of them has expired."
    )
    report.tables.append(table)
