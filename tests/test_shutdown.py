"""close() on Queue, FifoQueue and Broker (issue 12 section 2).

Blocked long polls wake within a fraction of a second and return []; every
later call raises ServiceUnavailable instead of blocking. The polls here run on
the SystemClock with real 20-second waits, so nothing but close() can end them
in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, SystemClock
from sqsqueue.errors import ServiceUnavailable

START = 1_700_000_000.0


def _blocked_polls(queue: Queue | FifoQueue, n: int) -> tuple[list[threading.Thread], list[Any]]:
    results: list[Any] = []

    def poll() -> None:
        try:
            results.append(queue.receive(10, wait_time_seconds=20))
        except Exception as exc:
            results.append(exc)

    threads = [threading.Thread(target=poll, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while len(queue._waiters) < n and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(queue._waiters) == n
    return threads, results


@pytest.mark.parametrize(
    "make",
    [
        lambda: Queue("jobs", clock=SystemClock()),
        lambda: FifoQueue("jobs.fifo", clock=SystemClock()),
        lambda: Queue("jobs", clock=ManualClock(start=START, max_wall_wait=60)),
    ],
    ids=["standard", "fifo", "frozen-manual"],
)
def test_close_wakes_every_blocked_poll(make: Callable[[], Queue | FifoQueue]) -> None:
    """Every blocked 20 s poll returns [] within a fraction of a second."""
    queue = make()
    threads, results = _blocked_polls(queue, 4)
    started = time.monotonic()
    queue.close()
    for t in threads:
        t.join(timeout=2)
        assert not t.is_alive()
    assert time.monotonic() - started < 0.5
    assert results == [[]] * 4
    assert queue.closed


def test_later_calls_raise_instead_of_blocking() -> None:
    """After close, sends, receives (long polls included), deletes, attribute
    calls and inspection raise ServiceUnavailable at once."""
    queue = Queue("jobs", clock=SystemClock())
    queue.send("kept")
    [m] = queue.receive()
    queue.close()
    calls: list[Callable[[], object]] = [
        lambda: queue.send("x"),
        lambda: queue.send_batch([{"Id": "a", "MessageBody": "x"}]),
        lambda: queue.receive(wait_time_seconds=20),
        lambda: asyncio.run(queue.receive_async(wait_time_seconds=20)),
        lambda: queue.delete(m.receipt_handle),
        lambda: queue.change_visibility(m.receipt_handle, 0),
        queue.purge,
        queue.get_attributes,
        lambda: queue.set_attributes(visibility_timeout=5),
        lambda: queue.tag({"a": "b"}),
        queue.inspect,
    ]
    started = time.monotonic()
    for call in calls:
        with pytest.raises(ServiceUnavailable, match="closed"):
            call()
    assert time.monotonic() - started < 1
    queue.close()  # idempotent


@pytest.mark.parametrize("closing", ["queue", "broker"])
def test_close_wakes_an_asyncio_poll(closing: str) -> None:
    """An awaiting receive_async is woken by close() from another thread, of its
    queue or of the broker the queue belongs to."""
    broker = Broker()
    queue = broker.create_queue("jobs")
    close = queue.close if closing == "queue" else broker.close

    async def main() -> list[Any]:
        task = asyncio.create_task(queue.receive_async(wait_time_seconds=20))
        while not queue._waiters:
            await asyncio.sleep(0.001)
        threading.Timer(0.01, close).start()
        return await asyncio.wait_for(task, timeout=2)

    started = time.monotonic()
    assert asyncio.run(main()) == []
    assert time.monotonic() - started < 1


def test_a_closed_fifo_queue_refuses_later_calls() -> None:
    """FifoQueue.close(): a blocked poll returns [], later calls raise."""
    queue = FifoQueue("jobs.fifo", clock=SystemClock(), content_based_deduplication=True)
    result: list[Any] = []
    poll = threading.Thread(target=lambda: result.append(queue.receive(wait_time_seconds=20)))
    poll.start()
    while not queue._waiters:
        time.sleep(0.001)
    started = time.monotonic()
    queue.close()
    poll.join(timeout=2)
    assert result == [[]] and time.monotonic() - started < 0.5
    for call in (
        lambda: queue.send("x", group_id="g"),
        queue.receive,
        queue.get_attributes,
        queue.purge,
    ):
        with pytest.raises(ServiceUnavailable, match="closed"):
            call()


def test_a_worker_pool_shuts_down_in_well_under_a_second() -> None:
    """Broker.close() ends a pool of 16 workers blocked in 20 s long polls on
    three queues; the broker and its queues refuse later calls."""
    broker = Broker(account_id="123456789012")
    queues = [broker.create_queue(f"q{i}") for i in range(3)]
    stopped = threading.Event()
    exits: list[str] = []

    def worker(queue: Queue | FifoQueue) -> None:
        while True:
            try:
                for m in queue.receive(10, wait_time_seconds=20):
                    queue.delete(m.receipt_handle)
            except ServiceUnavailable:
                exits.append(queue.name)
                return

    threads = [
        threading.Thread(target=worker, args=(queues[i % 3],), daemon=True) for i in range(16)
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while sum(len(q._waiters) for q in queues) < 16 and time.monotonic() < deadline:
        time.sleep(0.001)
    started = time.monotonic()
    with broker:
        pass  # the context manager closes it
    for t in threads:
        t.join(timeout=2)
        assert not t.is_alive()
    assert time.monotonic() - started < 0.5
    assert len(exits) == 16
    stopped.set()
    assert broker.closed and all(q.closed for q in queues)
    for call in (
        lambda: broker.create_queue("new"),
        lambda: broker.get_queue("q0"),
        broker.list_queues,
        lambda: broker.get_queue_url("q0"),
        lambda: broker.list_message_move_tasks(queues[0].arn),
    ):
        with pytest.raises(ServiceUnavailable):
            call()
    with pytest.raises(ServiceUnavailable):
        broker.serve()  # no endpoint is started for a closed broker


def test_queue_as_a_context_manager() -> None:
    """``with Queue(...) as q:`` closes the queue on the way out."""
    with Queue("jobs", clock=ManualClock(start=START)) as q:
        q.send("x")
    assert q.closed
    with pytest.raises(ServiceUnavailable):
        q.receive()


@pytest.mark.parametrize("transport", ["mock_sqs", "http"])
def test_a_boto3_worker_pool_shuts_down_in_well_under_a_second(transport: str) -> None:
    """boto3 workers in 20 s long polls, served in process or over HTTP, stop at
    once when the broker closes: a closed broker answers with a 400 botocore
    does not retry (a 503 would be retried with backoff for up to 10 s)."""
    import boto3
    from botocore.exceptions import ClientError

    from sqsqueue.testing import mock_sqs

    broker = Broker(account_id="123456789012")
    with contextlib.ExitStack() as stack:
        options: dict[str, Any] = {"region_name": "us-east-1"}
        if transport == "http":
            endpoint = stack.enter_context(broker.serve())
            options["endpoint_url"] = endpoint.endpoint_url
        else:
            stack.enter_context(mock_sqs(broker))
        sqs = boto3.client("sqs", aws_access_key_id="x", aws_secret_access_key="x", **options)
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        codes: list[str] = []

        def worker() -> None:
            while True:
                try:
                    sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
                except ClientError as exc:
                    codes.append(exc.response["Error"]["Code"])
                    return

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        queue = broker.get_queue("jobs")
        deadline = time.monotonic() + 5
        while len(queue._waiters) < 4 and time.monotonic() < deadline:
            time.sleep(0.001)
        started = time.monotonic()
        broker.close()
        for t in threads:
            t.join(timeout=5)
            assert not t.is_alive()
        assert time.monotonic() - started < 1
        assert codes == ["ServiceClosed"] * 4


def test_closing_the_mocks_broker_closes_every_regions() -> None:
    """mock_sqs serves each region from a broker of its own; closing the broker
    given to mock_sqs closes them all (a poll in another region wakes, later
    calls there are refused)."""
    import boto3
    from botocore.exceptions import ClientError

    from sqsqueue.testing import mock_sqs

    broker = Broker(account_id="123456789012")
    with mock_sqs(broker):

        def client(region: str) -> Any:
            return boto3.client(
                "sqs", region_name=region, aws_access_key_id="x", aws_secret_access_key="x"
            )

        eu = client("eu-west-1")
        url = eu.create_queue(QueueName="jobs")["QueueUrl"]
        codes: list[str] = []

        def worker() -> None:
            while True:
                try:
                    eu.receive_message(QueueUrl=url, WaitTimeSeconds=20)
                except ClientError as exc:
                    codes.append(exc.response["Error"]["Code"])
                    return

        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        time.sleep(0.1)
        started = time.monotonic()
        broker.close()
        thread.join(timeout=5)
        assert not thread.is_alive() and time.monotonic() - started < 1
        assert codes == ["ServiceClosed"]
        for region in ("eu-west-1", "ap-south-1"):  # a region first seen after the close too
            with pytest.raises(ClientError, match="ServiceClosed"):
                client(region).list_queues()
