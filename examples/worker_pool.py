"""A worker pool that survives crashing workers, on a virtual clock.

Run it with ``python3 examples`` from the repository root.

Jobs go into a standard :class:`sqsqueue.Queue` whose visibility timeout is 30
seconds. A pool of worker threads long-polls the queue. A worker deletes a
message only after finishing its job, so when a worker "crashes" mid-job the
message is never deleted: it stays in flight, invisible, until the visibility
timeout ends, and then the queue delivers it again (``ApproximateReceiveCount``
2).

The clock is a :class:`sqsqueue.ManualClock`: instead of waiting 30 real
seconds, the demo moves virtual time forward with ``clock.advance(...)``. With
the default (frozen) clock a long poll never moves time by itself: a worker
waits until a message arrives or the demo advances the clock.

At-least-once delivery plus delete-after-work means every job gets done; here
each is done exactly once because a crashed attempt finishes nothing.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqsqueue import ManualClock, Message, Queue, SendEntry

VISIBILITY_TIMEOUT = 30  # seconds of virtual time
START = 1_700_000_000.0  # where the virtual clock starts (epoch seconds)
STOP = "STOP"  # a message that tells one worker to exit


@dataclass
class Job:
    """What happened to one job."""

    name: str
    crashes_first: bool  # whoever gets this job first crashes
    deliveries: int = 0
    completions: int = 0
    done_by: str = ""


@dataclass
class Summary:
    """What :func:`main` returns: the facts the demo prints at the end."""

    jobs: dict[str, Job]
    crashes: int
    redeliveries: int
    virtual_seconds: float
    wall_seconds: float
    log: list[str] = field(default_factory=list)

    @property
    def processed_exactly_once(self) -> bool:
        return all(job.completions == 1 for job in self.jobs.values())


def do_the_work(job: str) -> bytes:
    """Stand-in for real work. Like I/O it releases the GIL, so workers overlap."""
    return hashlib.pbkdf2_hmac("sha256", job.encode(), b"sqsqueue", 10_000)


class Pool:
    """The worker threads, and a shared record of what they did."""

    def __init__(
        self, queue: Queue, clock: ManualClock, jobs: dict[str, Job], out: Callable[[str], None]
    ) -> None:
        self.queue = queue
        self.clock = clock
        self.jobs = jobs
        self.out = out
        self.lines: list[str] = []
        self.crashes = 0
        self.changed = threading.Condition()  # guards the fields above and the jobs

    def worker(self) -> None:
        me = threading.current_thread().name
        while True:
            # A long poll: returns as soon as a message is receivable, or after
            # 20 s of virtual time (which pass only when the demo advances time).
            messages = self.queue.receive(
                max_messages=1, wait_time_seconds=20, attribute_names=["ApproximateReceiveCount"]
            )
            for message in messages:
                if message.body == STOP:
                    self.queue.delete(message.receipt_handle)
                    return
                self.handle(me, message)

    def handle(self, me: str, message: Message) -> None:
        job = self.jobs[message.body]
        attempt = int(message.attributes["ApproximateReceiveCount"])
        with self.changed:
            job.deliveries += 1
            if attempt == 1 and job.crashes_first:
                # The worker dies mid-job, before deleting the message. Nothing
                # is lost: the queue redelivers it when the visibility timeout ends.
                self.crashes += 1
                self.log(
                    f"{me}  {job.name}  attempt {attempt}  CRASH: not deleted, stays in flight"
                )
                return
        do_the_work(job.name)
        self.queue.delete(message.receipt_handle)  # delete only once the work is done
        with self.changed:
            job.completions += 1
            job.done_by = me
            self.log(f"{me}  {job.name}  attempt {attempt}  done, deleted")

    def log(self, line: str) -> None:
        with self.changed:
            line = f"[t={self.clock.now() - START:>3.0f}s] {line}"
            self.lines.append(line)
            self.out(line)
            self.changed.notify_all()

    def wait_until(self, what: str, condition: Callable[[], bool]) -> None:
        """Wait for the workers to catch up (on the wall clock, but only as long as
        the threads need to run: no time is simulated by sleeping)."""
        with self.changed:
            if not self.changed.wait_for(condition, timeout=30):
                raise RuntimeError(f"the demo stalled waiting for {what}")

    def finished(self) -> int:
        """How many jobs are done."""
        return sum(1 for job in self.jobs.values() if job.completions)

    def queue_state(self) -> str:
        counts = self.queue.get_attributes(
            ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )
        return (
            f"{counts['ApproximateNumberOfMessages']} visible, "
            f"{counts['ApproximateNumberOfMessagesNotVisible']} in flight"
        )


def main(
    jobs: int = 12,
    workers: int = 4,
    crash_rate: float = 0.3,
    seed: int = 2,
    out: Callable[[str], None] = print,
) -> Summary:
    """Run the demo and return its :class:`Summary`; ``out`` receives each line."""
    if not 1 <= workers <= 10:
        raise ValueError("workers must be 1..10 (one STOP message each, sent in one batch)")
    wall_start = time.perf_counter()
    clock = ManualClock(start=START, autojump_threshold=None)
    queue = Queue(
        "jobs", clock=clock, visibility_timeout=VISIBILITY_TIMEOUT, random=random.Random(seed)
    )

    # Which jobs crash their first worker: random, but seeded, so every run agrees.
    rng = random.Random(seed)
    names = [f"job-{i:02d}" for i in range(1, jobs + 1)]
    ledger = {name: Job(name, crashes_first=rng.random() < crash_rate) for name in names}
    pool = Pool(queue, clock, ledger, out)

    threads = [
        threading.Thread(target=pool.worker, name=f"worker-{i}") for i in range(1, workers + 1)
    ]
    for thread in threads:
        thread.start()
    pool.log(f"started {workers} workers (each long-polls the queue); sending {jobs} jobs")
    for i in range(0, jobs, 10):  # send_batch takes up to 10 messages
        queue.send_batch([SendEntry(f"e{k}", name) for k, name in enumerate(names[i : i + 10])])

    # 1. Every job is delivered once: done, or lost in a crash and still in flight.
    pool.wait_until("first attempts", lambda: pool.finished() + pool.crashes == jobs)
    pool.log(f"every job delivered once; queue: {pool.queue_state()}")

    # 2. Just before the visibility timeout ends, the crashed jobs are still hidden.
    clock.advance(VISIBILITY_TIMEOUT - 1)
    pool.log(f"advanced the clock {VISIBILITY_TIMEOUT - 1} s; queue: {pool.queue_state()}")

    # 3. Past it, they are visible again and the waiting workers receive them.
    pool.log("advancing the clock 2 s more, past the end of the visibility timeout")
    clock.advance(2)
    pool.wait_until("retries", lambda: pool.finished() == jobs)
    pool.log(f"every job done; queue: {pool.queue_state()}")

    # 4. One STOP message per worker ends the pool.
    queue.send_batch([SendEntry(f"stop{i}", STOP) for i in range(workers)])
    for thread in threads:
        thread.join(timeout=30)
        if thread.is_alive():
            raise RuntimeError(f"{thread.name} did not stop")

    summary = Summary(
        jobs=ledger,
        crashes=pool.crashes,
        redeliveries=sum(j.deliveries - 1 for j in ledger.values()),
        virtual_seconds=clock.now() - START,
        wall_seconds=time.perf_counter() - wall_start,
        log=pool.lines,
    )
    print_summary(summary, out)
    return summary


def print_summary(summary: Summary, out: Callable[[str], None]) -> None:
    out("")
    out(f"{'job':<8} {'1st attempt':<12} {'deliveries':>10} {'completed':>9}  done by")
    for job in summary.jobs.values():
        first = "crashed" if job.crashes_first else "ok"
        out(f"{job.name:<8} {first:<12} {job.deliveries:>10} {job.completions:>9}  {job.done_by}")
    out("")
    out(
        f"{len(summary.jobs)} jobs, {summary.crashes} crashes, {summary.redeliveries} "
        f"redeliveries; every job processed exactly once: {summary.processed_exactly_once}"
    )
    out(
        f"virtual time {summary.virtual_seconds:.0f} s, wall time "
        f"{summary.wall_seconds:.2f} s (nothing slept)"
    )


if __name__ == "__main__":
    main()
