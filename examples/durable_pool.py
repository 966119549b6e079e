"""A worker pool that survives ``kill -9``: a durable broker, killed and restarted.

Run it with ``python3 examples durable-pool`` from the repository root.

The jobs live in a broker with a data directory (``Broker(data_dir=...)``),
so they are on disk, not in the workers' memory. A worker process runs a pool
of threads that long-poll the ``jobs`` queue; each thread does a job, sends
its result to the FIFO queue ``results.fifo`` with the job's message id as the
deduplication id, and only then deletes the job.

This script (the parent) fills the queue, starts the worker process, and
kills it with SIGKILL at random moments, several times, restarting it after
each kill. Whatever the kill interrupted comes back on its own:

* a job a thread held when the process died was never deleted: it becomes
  visible again when its visibility timeout ends, in the next life;
* a job whose result was sent but whose delete never happened is done again,
  and its second result is dropped by the FIFO queue's deduplication (its
  window survives restarts too).

At the end the parent reopens the directory and checks: no job left, and
exactly one result for every job.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqsqueue import Broker, SendEntry, SystemClock
from sqsqueue.errors import ServiceUnavailable

VISIBILITY_TIMEOUT = 2  # real seconds: a killed worker's jobs come back after this
JOB_SECONDS = 0.005  # the "work" of one job


@dataclass
class Summary:
    """What :func:`main` returns: the facts the demo prints at the end."""

    jobs: int
    kills: int
    in_flight_at_kills: list[int]
    results: dict[str, int]  # job body -> results stored for it
    left_in_queue: int
    lives: int
    log: list[str] = field(default_factory=list)

    @property
    def every_job_done_once(self) -> bool:
        return (
            self.left_in_queue == 0
            and len(self.results) == self.jobs
            and all(n == 1 for n in self.results.values())
        )


def worker(data_dir: str, threads: int) -> int:
    """One life of the worker process: a pool of threads on the durable broker,
    until no job is left (visible or in flight)."""
    with Broker(clock=SystemClock(), data_dir=data_dir) as broker:
        jobs = broker.get_queue("jobs")
        results = broker.get_queue("results.fifo")
        idle = threading.Event()

        def work() -> None:
            while not idle.is_set():
                try:
                    batch = jobs.receive(10, wait_time_seconds=1)
                except ServiceUnavailable:
                    return
                for message in batch:
                    time.sleep(JOB_SECONDS)  # noqa: TID251 (the job's own work, in real time)
                    results.send(
                        f"done {message.body}",
                        group_id=message.body[-1],  # ten groups, by the job's last digit
                        deduplication_id=message.message_id,
                    )
                    jobs.delete(message.receipt_handle)
                if not batch and len(jobs) == 0:
                    idle.set()

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    return 0


def _spawn(data_dir: str, threads: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", data_dir, "--threads", str(threads)]
    )


def main(
    jobs: int = 1000,
    kills: int = 4,
    threads: int = 4,
    seed: int = 1,
    data_dir: str | None = None,
    out: Callable[[str], None] = print,
) -> Summary:
    rng = random.Random(seed)
    log: list[str] = []

    def say(line: str) -> None:
        log.append(line)
        out(line)

    with tempfile.TemporaryDirectory() as tmp:
        directory = data_dir or tmp
        with Broker(clock=SystemClock(), data_dir=directory) as broker:
            queue = broker.create_queue("jobs", visibility_timeout=VISIBILITY_TIMEOUT)
            broker.create_queue("results.fifo", fifo_queue=True)
            for start in range(0, jobs, 10):
                queue.send_batch(
                    [SendEntry(str(i), f"job-{i:04d}") for i in range(start, min(start + 10, jobs))]
                )
        say(f"{jobs} jobs stored in {directory}; {threads} worker threads per life")

        in_flight: list[int] = []
        lives = 0
        for kill in range(1, kills + 1):
            child = _spawn(directory, threads)
            lives += 1
            time.sleep(rng.uniform(0.4, 1.0))  # noqa: TID251 (the kill lands at a random moment)
            if child.poll() is not None:
                say(f"the worker finished before kill {kill}; no more kills")
                break
            child.send_signal(signal.SIGKILL)
            child.wait()
            with Broker(clock=SystemClock(), data_dir=directory) as broker:
                held = broker.get_queue("jobs").get_attributes(
                    ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
                )
                done = len(broker.get_queue("results.fifo"))
            in_flight.append(int(held["ApproximateNumberOfMessagesNotVisible"]))
            say(
                f"kill -9 #{kill}: {done} results stored, "
                f"{held['ApproximateNumberOfMessages']} jobs waiting, "
                f"{in_flight[-1]} held by the dead process (back in {VISIBILITY_TIMEOUT} s)"
            )
        child = _spawn(directory, threads)
        lives += 1
        if child.wait(timeout=120) != 0:
            raise RuntimeError(f"the last worker life exited with {child.returncode}")

        with Broker(clock=SystemClock(), data_dir=directory) as broker:
            left = len(broker.get_queue("jobs"))
            results: dict[str, int] = {}
            fifo = broker.get_queue("results.fifo")
            while batch := fifo.receive(10):
                for message in batch:
                    job = message.body.removeprefix("done ")
                    results[job] = results.get(job, 0) + 1
                fifo.delete_batch([m.receipt_handle for m in batch])
    summary = Summary(jobs, len(in_flight), in_flight, results, left, lives, log)
    say(
        f"after {summary.kills} kills and {lives} lives: {len(results)} of {jobs} jobs have a "
        f"result, {sum(results.values())} results in all, {left} jobs left"
    )
    say(
        "every job done exactly once: nothing acknowledged was lost"
        if summary.every_job_done_once
        else "SOMETHING WAS LOST OR DUPLICATED"
    )
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", metavar="DATA_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.worker:
        sys.exit(worker(args.worker, args.threads))
    sys.exit(0 if main(args.jobs, args.kills, args.threads, args.seed).every_job_done_once else 1)
