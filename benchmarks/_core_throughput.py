"""bench_core.py's throughput sections: floor, standard (with 2b and 2c), fifo.

* ``floor`` (RESULTS.md section 1): ``queue.Queue`` and ``deque`` alone.
* ``standard`` (section 2): ``Queue`` send + receive(10) + delete, one call per
  message and batched, against ``queue.Queue`` taking turns with it; when a
  target is missed, a pyinstrument profile of the loops (section 2b). Section 2c
  times the primitives every message pays for.
* ``fifo`` (section 3): ``FifoQueue`` throughput and receive latency against the
  number of message groups.
* ``profile``: ``--profile``'s pyinstrument call trees of these loops.
"""

from __future__ import annotations

import gc
import itertools
import os
import random
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from _core_common import BODY, START, Sizes, a_deque, queue_queue
from _harness import Report, Table, Workload, best_rates, pct, perf, rate, share, us

from sqsqueue import FifoQueue, ManualClock, Queue, SendEntry, SystemClock

# -- 1. the in-process floor --------------------------------------------------------


def bench_floor(report: Report[Sizes]) -> None:
    n = report.sizes.throughput_messages * 4
    qq, dq = best_rates(
        report,
        "floor",
        [
            Workload("queue.Queue put + get", n, lambda: queue_queue(n)),
            Workload("deque append + popleft", n, lambda: a_deque(n)),
        ],
        report.sizes.repeats,
    )
    report.figures["queue.Queue"] = qq
    report.figures["deque"] = dq
    table = Table(
        "1. In-process floor",
        "One thread puts an item and takes it back, per item. These are the peers "
        "the other sections' ratios are measured against.",
        ("operation", "items/s", "ns/item", "ratio to queue.Queue"),
    )
    table.rows.append(["queue.Queue put + get", rate(qq), f"{1e9 / qq:,.0f}", "1"])
    table.rows.append(
        ["collections.deque append + popleft", rate(dq), f"{1e9 / dq:,.0f}", f"{dq / qq:.1f}x"]
    )
    report.tables.append(table)


# -- 2. standard queue throughput -----------------------------------------------------


#: ``SQSQUEUE_BENCH_METRICS=off`` runs the queues without their CloudWatch
#: counters: the baseline of the paired run that prices them (RESULTS.md).
COUNT_METRICS = os.environ.get("SQSQUEUE_BENCH_METRICS", "on") != "off"


def standard_queue(name: str, system_clock: bool = False) -> Queue:
    """A queue on a ManualClock (frozen: every operation sees one time), or on
    the default SystemClock (the wall clock: read twice per message cycled)."""
    clock = SystemClock() if system_clock else ManualClock(start=START)
    q = Queue(name, clock=clock, random=random.Random(1))
    if not COUNT_METRICS:
        q._tally = None
    return q


ENTRIES = [SendEntry(str(i), BODY) for i in range(10)]


def single_cycles(cycles: int, system_clock: bool = False) -> None:
    """Send 10 messages one call each, receive(10), delete each: ``cycles`` times."""
    q = standard_queue("single", system_clock)
    send, receive, delete = q.send, q.receive, q.delete
    for _ in range(cycles):
        for _ in range(10):
            send(BODY)
        for m in receive(max_messages=10):
            delete(m.receipt_handle)


def batched_cycles(cycles: int, system_clock: bool = False) -> None:
    """send_batch(10), receive(10), delete_batch(10): ``cycles`` times."""
    q = standard_queue("batched", system_clock)
    for _ in range(cycles):
        q.send_batch(ENTRIES)
        q.delete_batch([m.receipt_handle for m in q.receive(max_messages=10)])


def one_by_one(messages: int) -> None:
    """Send 1, receive(10) (which finds that 1), delete it: ``messages`` times."""
    q = standard_queue("one")
    for _ in range(messages):
        q.send(BODY)
        for m in q.receive(max_messages=10):
            q.delete(m.receipt_handle)


def bench_standard(report: Report[Sizes]) -> None:
    n = report.sizes.throughput_messages
    cycles = n // 10

    def single() -> None:
        single_cycles(cycles)

    def batched() -> None:
        batched_cycles(cycles)

    def one() -> None:
        one_by_one(n)

    def single_system() -> None:
        single_cycles(cycles, system_clock=True)

    def batched_system() -> None:
        batched_cycles(cycles, system_clock=True)

    peer = 4 * n
    qq, single_rate, batch_rate, one_rate, single_sys, batch_sys = best_rates(
        report,
        "standard",
        [
            Workload(
                "queue.Queue put + get (the peer, taking turns)", peer, lambda: queue_queue(peer)
            ),
            Workload("Queue send x10 + receive(10) + delete x10", n, single),
            Workload("Queue send_batch(10) + receive(10) + delete_batch(10)", n, batched),
            Workload("Queue send 1 + receive(10) -> 1 + delete 1", n, one),
            Workload("Queue send x10 + receive(10) + delete x10, SystemClock", n, single_system),
            Workload("Queue send_batch + receive + delete_batch, SystemClock", n, batched_system),
        ],
        report.sizes.repeats,
    )
    report.figures["queue.Queue, section 2"] = qq
    table = Table(
        "2. Standard queue throughput",
        "100-byte messages on a `ManualClock` (and, in the last rows, the default "
        "`SystemClock`), one thread, a near-empty queue. A "
        "message is counted once it has been sent, received and deleted. Ratio: "
        "sqsqueue messages/s over `queue.Queue` put+get items/s, measured taking turns "
        f"with the sqsqueue workloads in each repeat ({rate(qq)} items/s here).",
        ("mode", "messages/s", "µs/message", "ratio to queue.Queue", "target", "result"),
    )
    s = single_rate / qq
    b = batch_rate / qq
    breakdowns: dict[str, Breakdown] = {}
    if s < 1 / 5 or b < 1 / 4:  # a missed target of issue 26 says what the profile shows
        for key, fn, us_per in (
            ("single", single_cycles, 1e6 / single_rate),
            ("batched", batched_cycles, 1e6 / batch_rate),
        ):
            found = cost_breakdown(key, fn, cycles, us_per)
            if found is not None:
                breakdowns[key] = found
                report.progress(
                    "standard", f"profile of the {key} loop", found.summary(compact=True)
                )

    primitives, primitives_ns = primitives_table(qq, 1e6 / batch_rate)

    def why(key: str, allowed_share: float) -> str:
        us_per = 1e6 / (single_rate if key == "single" else batch_rate)
        allowed = 1e6 / qq / allowed_share
        text = (
            f"{us_per:.1f} µs/message against the {allowed:.1f} µs allowed "
            f"({1 / allowed_share:.0f} x queue.Queue's {1e6 / qq:.2f} µs)"
        )
        if key in breakdowns:
            text += ": " + breakdowns[key].summary() + " (§2b)"
        if key == "batched":
            text += (
                f"; the id, receipt MAC, handle, record, attributes and body check every "
                f"message needs take {primitives_ns / 1e3:.1f} µs of the "
                f"{allowed:.1f} µs on their own (§2c)"
            )
        return text

    table.rows.append(
        [
            "single: send x10, receive(10), delete x10",
            rate(single_rate),
            f"{1e6 / single_rate:.1f}",
            share(s),
            ">= 1/10 (issue 2)",
            report.judge(
                ">= 1/10 of queue.Queue, single-message",
                "issue 2",
                share(s),
                s >= 1 / 10,
                "§2",
                why("single", 1 / 10),
            ),
        ]
    )
    table.rows.append(
        [
            "",
            "",
            "",
            "",
            ">= 1/8 (issue 8)",
            report.judge(
                "send+receive+delete cycle >= 1/8 of queue.Queue, single-message",
                "issue 8",
                share(s),
                s >= 1 / 8,
                "§2",
                why("single", 1 / 8),
            ),
        ]
    )
    table.rows.append(
        [
            "",
            "",
            "",
            "",
            ">= 1/5 (issue 26)",
            report.judge(
                "send+receive+delete cycle >= 1/5 of queue.Queue, single-message (ManualClock)",
                "issue 26",
                share(s),
                s >= 1 / 5,
                "§2",
                why("single", 1 / 5),
            ),
        ]
    )
    table.rows.append(
        [
            "batched: send_batch(10), receive(10), delete_batch(10)",
            rate(batch_rate),
            f"{1e6 / batch_rate:.1f}",
            share(b),
            ">= 1/4 (issue 8)",
            report.judge(
                "send+receive+delete cycle >= 1/4 of queue.Queue, batched",
                "issue 8",
                share(b),
                b >= 1 / 4,
                "§2",
                why("batched", 1 / 4),
            ),
        ]
    )
    table.rows.append(
        [
            "",
            "",
            "",
            "",
            ">= 1/4 (issue 26)",
            report.judge(
                "send_batch(10) + receive(10) + delete_batch(10) per message >= 1/4 of "
                "queue.Queue put+get",
                "issue 26",
                share(b),
                b >= 1 / 4,
                "§2",
                why("batched", 1 / 4),
            ),
        ]
    )
    for what, value in (
        ("single, SystemClock: send x10, receive(10), delete x10", single_sys),
        ("batched, SystemClock: send_batch(10), receive(10), delete_batch(10)", batch_sys),
    ):
        table.rows.append(
            [what, rate(value), f"{1e6 / value:.1f}", share(value / qq), "(information)", ""]
        )
    o = one_rate / qq
    table.rows.append(
        [
            "one at a time: send 1, receive(10) gets 1, delete 1",
            rate(one_rate),
            f"{1e6 / one_rate:.1f}",
            share(o),
            "(information)",
            "",
        ]
    )
    table.notes.append(
        "receive() asks for every system and user attribute (its default), so each "
        "message's attributes dict is built."
    )
    table.notes.append(
        "The SystemClock rows read the wall clock once per operation (about two "
        "`time.time()` calls a message, 45 ns each on this machine); that is the whole "
        "difference from the ManualClock rows (cProfile: identical call counts but for "
        "`time.time`). The slowdown of the single-message cycle reported in issue 26 "
        "(1/7.5-1/8.3 to 1/8.3-1/8.8 on the SystemClock) was on both clocks: a paired "
        "CPU-time bisection (`time.thread_time`, best of 7, taking turns with "
        "queue.Queue) put it at 255f67c (+0.5 µs a message: the hot copies of "
        "`_token`, `_unindex_received` and the system attributes replaced by calls, "
        "and `_check_ids` called on every standard send) and at the engine "
        "reshape 6c54b63 (+0.45 µs), partly won back since; the `_check_ids` "
        "shortcut is restored."
    )
    report.tables.append(table)
    if breakdowns:
        report.tables.append(breakdown_table(breakdowns, qq))
    report.tables.append(primitives)


# -- 2b. where the time goes ------------------------------------------------------------


HOT_SPOT = 0.15  # a function with this share of the self time or more is a hot spot


@dataclass
class Breakdown:
    """A throughput loop's cost per message, from a pyinstrument profile."""

    us_per_message: float  # measured without the profiler
    calls: dict[str, float]  # API call -> share of the loop's profiled time
    modules: dict[str, float]  # source file -> share of self time
    functions: list[tuple[str, float]]  # the top functions by self time, share
    python_calls: float  # Python function calls per message (cProfile's count)
    builtin_calls: float  # calls of built-in (C) functions per message

    def us(self, fraction: float) -> float:
        return fraction * self.us_per_message

    def summary(self, compact: bool = False) -> str:
        calls = " + ".join(
            f"{name} {self.us(x):.1f}" for name, x in self.calls.items() if x >= 0.02
        )
        if compact:
            return f"{calls} µs/message"
        top_name, top_share = self.functions[0]
        spot = (
            f"no single hot spot (the largest, {top_name}, is {top_share:.0%} of the time)"
            if top_share < HOT_SPOT
            else f"the largest hot spot is {top_name}, {top_share:.0%} of the time"
        )
        return (
            f"{calls} µs/message; {self.python_calls:.0f} Python function calls "
            f"(+ {self.builtin_calls:.0f} built-in) per message, about "
            f"{self.us_per_message / self.python_calls * 1e3:.0f} ns each all told; {spot}"
        )


def cost_breakdown(
    key: str, loop: Callable[[int], None], cycles: int, us_per_message: float
) -> Breakdown | None:
    """Profile ``loop(cycles)`` (``cycles * 10`` messages): pyinstrument for where
    the time goes, cProfile for how many calls a message costs. None without
    pyinstrument."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("[bench] the cost breakdown needs pyinstrument: pip install pyinstrument")
        return None
    profiler = Profiler(interval=0.0001)
    profiler.start()
    loop(cycles)
    profiler.stop()
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    assert root is not None, "pyinstrument recorded nothing"
    frames = [root]
    top = None
    while frames:  # find the loop's own frame
        frame = frames.pop()
        if frame.function == loop.__name__:
            top = frame
            break
        frames.extend(frame.children)
    assert top is not None, f"{loop.__name__} not in the profile"
    total = top.time
    calls: dict[str, float] = {}
    for child in top.children:
        name = child.function if child.function in QUEUE_CALLS else "the loop itself"
        calls[name] = calls.get(name, 0.0) + child.time / total
    calls["the loop itself"] = calls.get("the loop itself", 0.0) + top.total_self_time / total
    modules: dict[str, float] = {}
    functions: dict[str, float] = {}
    stack = [top]
    while stack:
        frame = stack.pop()
        stack.extend(frame.children)
        if frame.is_synthetic:
            continue
        path = frame.file_path_short or "?"
        module = path.rsplit("site-packages/", 1)[-1]
        modules[module] = modules.get(module, 0.0) + frame.total_self_time / total
        name = f"{Path(path).stem}.{frame.function}"
        functions[name] = functions.get(name, 0.0) + frame.total_self_time / total
    small = max(1, cycles // 10)
    python, builtin = call_counts(loop, small)
    return Breakdown(
        us_per_message,
        dict(sorted(calls.items(), key=lambda kv: -kv[1])),
        dict(sorted(modules.items(), key=lambda kv: -kv[1])),
        sorted(functions.items(), key=lambda kv: -kv[1])[:8],
        python / 10,
        builtin / 10,
    )


def call_counts(loop: Callable[[int], None], n: int) -> tuple[float, float]:
    """Python and built-in function calls per unit of ``loop(n)`` (cProfile)."""
    import cProfile
    import pstats

    counter = cProfile.Profile()
    counter.enable()
    loop(n)
    counter.disable()
    python = builtin = 0
    stats = pstats.Stats(counter).stats  # type: ignore[attr-defined]
    for (filename, _, _), (_, ncalls, *_rest) in stats.items():
        if filename == "~":
            builtin += ncalls
        else:
            python += ncalls
    return python / n, builtin / n


def share_of(key: str, qq: float, b: Breakdown) -> float:
    """The target's allowance as a fraction of the measured cost per message."""
    allowed = 8 if key == "single" else 4
    return 1e6 / qq * allowed / b.us_per_message


QUEUE_CALLS = ("send", "send_batch", "receive", "delete", "delete_batch")


def breakdown_table(breakdowns: dict[str, Breakdown], qq: float) -> Table:
    table = Table(
        "2b. Where the time goes (profile of the throughput loops)",
        "A pyinstrument profile (0.1 ms sampling) of each section 2 loop, scaled to the "
        "µs/message measured without the profiler (the profiler's own cost per call "
        "inflates every function alike, so shares are what it measures). Function calls "
        "per message are counted by cProfile. `queue.Queue` put+get costs "
        f"{1e6 / qq:.2f} µs per item here.",
        (
            "loop",
            "µs/message",
            "by queue call, µs/message",
            "self time by source file",
            "top functions by self time",
            "function calls per message",
        ),
    )
    for key, b in breakdowns.items():
        table.rows.append(
            [
                key,
                f"{b.us_per_message:.1f}",
                ", ".join(f"{name} {b.us(x):.2f}" for name, x in b.calls.items()),
                ", ".join(f"{m} {x:.0%}" for m, x in list(b.modules.items())[:5]),
                ", ".join(f"{f} {x:.1%}" for f, x in b.functions),
                f"{b.python_calls:.0f} Python + {b.builtin_calls:.0f} built-in",
            ]
        )
    peer_python, peer_builtin = call_counts(queue_queue, 10_000)
    budgets = [
        f"{key}: the target allows {b.us_per_message * share_of(key, qq, b):.1f} µs, about "
        f"{b.python_calls * share_of(key, qq, b):.0f} Python calls at this run's "
        f"{b.us_per_message / b.python_calls * 1e3:.0f} ns per call all told, against "
        f"{b.python_calls:.0f} made"
        for key, b in breakdowns.items()
    ]
    top = max(b.functions[0][1] for b in breakdowns.values())
    table.notes.append(
        ("The cost is spread thin" if top < HOT_SPOT else "One function stands out")
        + f": the largest takes {top:.0%} of the time; each "
        "message passes through dozens of small Python functions (validation, id and "
        "receipt-handle generation, the indexes, the attribute views). "
        f"`queue.Queue` put+get makes {peer_python:.0f} Python calls (+ {peer_builtin:.0f} "
        f"built-in) per item. {'; '.join(budgets)}: reaching the targets means fewer "
        "calls per message rather than one faster function. `python3 benchmarks --only "
        "standard --profile` prints the full call trees."
    )
    return table


# -- 2c. the primitives every message needs -------------------------------------------------


def primitives_table(qq: float, batched_us: float) -> tuple[Table, float]:
    """Time, in this run, the few operations SQS semantics make every message
    pay for, whatever the engine around them: a floor under the cycle's cost."""
    import binascii
    import timeit

    from sqsqueue import _lifecycle as lc
    from sqsqueue import _receipts as rc
    from sqsqueue import _validate

    q = standard_queue("primitives")
    rng = random.Random(1)
    packed = rc._HANDLE.pack(rc._HANDLE_VERSION, q._receipts._tag, 1, 1, q._receipts.token(1, 1))
    text = binascii.b2a_base64(packed, newline=False).decode("ascii")
    ids = lc.id_source(rng)
    steps: list[tuple[str, Callable[[], object]]] = [
        (
            "message id: the queue's random UUID prefix + 12 hex digits of its sequence number",
            lambda: lc.message_id(ids, 12_345),
        ),
        (
            "receipt token: a quarter of a keyed BLAKE2b-512 of (seq // 4, receipt)",
            lambda: q._receipts.token(1, 1),
        ),
        (
            "receipt handle: pack + base64, and back",
            lambda: (
                binascii.b2a_base64(packed, newline=False).decode("ascii"),
                rc._HANDLE.unpack(binascii.a2b_base64(text, strict_mode=True)),
            ),
        ),
        (
            "the stored record (a tuple of 13)",
            lambda: (rng.getrandbits(1), 0, "", BODY, 100, "", 0, 0, None, 0, 0, 0, None),
        ),
        (
            "the system attributes a receive returns (4 strings)",
            lambda: {
                "SenderId": "000000000000",
                "SentTimestamp": str(1_700_000_000_000),
                "ApproximateReceiveCount": str(1),
                "ApproximateFirstReceiveTimestamp": str(1_700_000_000_000),
            },
        ),
        (
            "body check (characters, size)",
            lambda: _validate.body(BODY),
        ),
    ]
    table = Table(
        "2c. What every message costs before any engine work",
        "The operations SQS's semantics require for each message, timed alone in this "
        "run (best of 5 x 100,000): any pure-Python engine pays them, plus the Python "
        "calls that carry a message through validation, the indexes and the batch "
        "result. The batched target allows "
        f"{4e6 / qq:.2f} µs a message (4 x queue.Queue's {1e6 / qq:.2f} µs).",
        ("operation", "ns/message", "share of the batched target"),
    )
    total = 0.0
    for label, fn in steps:
        ns = min(timeit.repeat(fn, number=100_000, repeat=5)) / 100_000 * 1e9
        if label.startswith("receipt token"):
            ns /= 4  # one MAC gives the tokens of four consecutive messages
        total += ns
        table.rows.append([label, f"{ns:,.0f}", f"{ns / (4e9 / qq):.0%}"])
    table.rows.append(["**sum**", f"**{total:,.0f}**", f"**{total / (4e9 / qq):.0%}**"])
    table.notes.append(
        f"The batched cycle measured {batched_us:.2f} µs a message in §2; these "
        f"primitives are {total / 1e3:.2f} µs of it. The rest is the Python calls that "
        "validate each entry, index the message in the ready deque and in-flight lane, "
        "and build each result, at about 50-100 ns a call."
    )
    return table, total


# -- 3. FIFO ---------------------------------------------------------------------------


class FifoFeed:
    """Send entries that spread messages round-robin over ``groups`` groups."""

    def __init__(self, groups: int) -> None:
        self.groups = groups
        self.counter = itertools.count()

    def batch(self) -> list[SendEntry]:
        out = []
        for i in range(10):
            n = next(self.counter)
            out.append(
                SendEntry(str(i), BODY, group_id=f"g{n % self.groups}", deduplication_id=str(n))
            )
        return out


def fifo_with_backlog(groups: int, backlog: int) -> tuple[FifoQueue, FifoFeed]:
    q = FifoQueue("bench.fifo", clock=ManualClock(start=START), random=random.Random(2))
    feed = FifoFeed(groups)
    for _ in range(backlog // 10):
        q.send_batch(feed.batch())
    return q, feed


def bench_fifo(report: Report[Sizes]) -> None:
    sizes = report.sizes
    n = sizes.throughput_messages
    backlog = sizes.fifo_backlog
    table = Table(
        "3. FIFO queue: throughput and receive latency against message groups",
        f"`FifoQueue` holding {backlog:,} messages spread round-robin over the groups; "
        "each cycle sends 10 (send_batch, explicit deduplication ids), receives 10 and "
        "deletes them (delete_batch), so the depth and the number of groups stay "
        "constant. Latency: receive(10) alone, the refill untimed.",
        (
            "groups",
            "messages/s",
            "ratio to queue.Queue",
            "receive(10) median",
            "receive(10) p99",
            "median vs 1 group",
        ),
    )
    medians: dict[int, float] = {}
    peer = 4 * n
    for groups in sizes.fifo_groups:
        q, feed = fifo_with_backlog(groups, backlog)
        batches = [feed.batch() for _ in range(n // 10 * sizes.repeats)]
        it = iter(batches)

        def cycles(q: FifoQueue = q, it: Iterator[list[SendEntry]] = it) -> None:
            for _ in range(n // 10):
                q.send_batch(next(it))
                q.delete_batch([m.receipt_handle for m in q.receive(max_messages=10)])

        label = f"FifoQueue, {groups:,} group{'s' if groups > 1 else ''}"
        what = f"{label}: send_batch + receive(10) + delete_batch"
        qq, fifo_rate = best_rates(
            report,
            "fifo",
            [
                Workload(
                    "queue.Queue put + get (the peer, taking turns)",
                    peer,
                    lambda: queue_queue(peer),
                ),
                Workload(what, n, cycles),
            ],
            sizes.repeats,
        )
        samples = []
        gc.collect()
        for i in range(sizes.fifo_latency_iterations + 100):
            t0 = perf()
            msgs = q.receive(max_messages=10)
            t1 = perf()
            if i >= 100:  # the first 100 are warm-up
                samples.append(t1 - t0)
            q.delete_batch([m.receipt_handle for m in msgs])
            q.send_batch(feed.batch())
        assert len(q) == backlog
        med, p99 = statistics.median(samples), pct(samples, 0.99)
        medians[groups] = med
        report.progress(
            "fifo",
            f"{label}: receive(10) median / p99",
            f"{us(med)} / {us(p99)}",
        )
        table.rows.append(
            [
                f"{groups:,}",
                rate(fifo_rate),
                share(fifo_rate / qq),
                us(med),
                us(p99),
                f"{med / medians[sizes.fifo_groups[0]]:.2f}x",
            ]
        )
        del q, feed, batches
    many = sizes.fifo_groups[-1]
    ratio = medians[many] / medians[1]
    table.notes.append(
        f"Target: receive latency with {many:,} groups within 2x of 1 group: "
        f"{ratio:.2f}x, "
        + report.judge(
            f"FIFO receive(10) median, {many:,} groups vs 1 group, within 2x",
            "issue 8",
            f"{ratio:.2f}x",
            ratio <= 2,
            "§3",
            f"median {us(medians[many])} with {many:,} groups, {us(medians[1])} with 1",
        )
        + "."
    )
    report.tables.append(table)


# -- profiles ---------------------------------------------------------------------------


def profile(sizes: Sizes) -> None:
    """Print pyinstrument profiles of the throughput workloads (``--profile``)."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("[bench] --profile needs pyinstrument: .venv/bin/pip install pyinstrument")
        return
    cycles = sizes.throughput_messages // 10
    q, feed = fifo_with_backlog(sizes.fifo_groups[-1], sizes.fifo_backlog)
    batches = [feed.batch() for _ in range(cycles)]

    def fifo() -> None:
        for batch in batches:
            q.send_batch(batch)
            q.delete_batch([m.receipt_handle for m in q.receive(max_messages=10)])

    workloads: list[tuple[str, Callable[[], None]]] = [
        ("Queue, single-message calls", lambda: single_cycles(cycles)),
        ("Queue, batched calls", lambda: batched_cycles(cycles)),
        (f"FifoQueue, {sizes.fifo_groups[-1]:,} groups, batched calls", fifo),
    ]
    for label, workload in workloads:
        profiler = Profiler(interval=0.0005)
        profiler.start()
        workload()
        profiler.stop()
        print(f"\n[bench] profile: {label}")
        print(profiler.output_text(unicode=False, color=False))
