"""The mapping as a worker, on real time: start()/stop() and ``with``,
invocations in parallel up to MaximumConcurrency, a handler stopped waiting
for at its timeout, the same events through boto3 against a served broker
as in process, and the ``sqsqueue lambda`` command against ``sqsqueue serve``
in subprocesses, stopped by SIGTERM after its invocation in flight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config

from sqsqueue import Broker, ManualClock, Queue, SystemClock
from sqsqueue.awslambda import EventSourceMapping

ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def test_start_stop_processes_in_the_background() -> None:
    q = Queue("jobs", clock=SystemClock())
    done: list[str] = []
    with EventSourceMapping(q, lambda e, c: done.extend(r["body"] for r in e["Records"])) as m:
        assert m.running
        for i in range(25):
            q.send(f"m{i}")
        wait_for(lambda: len(done) == 25)
    assert not m.running
    assert sorted(done) == sorted(f"m{i}" for i in range(25)) and len(q) == 0


def test_the_worker_logs_each_batch_that_returns_messages(caplog: pytest.LogCaptureFixture) -> None:
    q = Queue("jobs", clock=SystemClock(), visibility_timeout=30)
    for body in ("ok", "bad", "ok too"):
        q.send(body)

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return {
            "batchItemFailures": [
                {"itemIdentifier": r["messageId"]} for r in event["Records"] if r["body"] == "bad"
            ]
        }

    caplog.set_level("WARNING", logger="sqsqueue.awslambda")
    with EventSourceMapping(
        q, handler, function_response_types=["ReportBatchItemFailures"], function_timeout=1
    ):
        wait_for(lambda: caplog.records)
    lines = [r.getMessage() for r in caplog.records]
    # A partial batch names no reason (its item failures are what it returned).
    assert any(line.endswith(": partial; returned 1 of 3 messages") for line in lines), lines


def test_invocations_run_in_parallel_up_to_maximum_concurrency() -> None:
    q = Queue("jobs", clock=SystemClock())
    lock = threading.Lock()
    active, peak = [0], [0]
    release = threading.Event()

    def handler(event: dict[str, Any], context: Any) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        release.wait(5)
        with lock:
            active[0] -= 1

    for i in range(6):
        q.send(f"m{i}")
    m = EventSourceMapping(q, handler, batch_size=1, scaling_config={"MaximumConcurrency": 3})
    m.start()
    try:
        wait_for(lambda: active[0] == 3)
        time.sleep(0.3)  # a fourth would have started by now
        assert peak[0] == 3
        release.set()
        wait_for(lambda: len(m.invocations) == 6)
    finally:
        release.set()
        m.stop()
    assert peak[0] == 3 and len(q) == 0


def test_a_handler_past_its_timeout_is_abandoned() -> None:
    q = Queue("jobs", clock=SystemClock(), visibility_timeout=2)
    q.send("slow")
    gate = threading.Event()
    calls = []

    def handler(event: dict[str, Any], context: Any) -> None:
        calls.append(event["Records"][0]["attributes"]["ApproximateReceiveCount"])
        if len(calls) == 1:
            gate.wait(10)  # far past the 1-second timeout

    m = EventSourceMapping(q, handler, function_timeout=1)
    m.start()
    try:
        wait_for(lambda: len(m.invocations) == 2)
    finally:
        gate.set()
        m.stop()
    first, second = m.invocations
    assert first.outcome == "timeout" and 0.9 < first.ended_at - first.started_at < 1.9
    assert second.outcome == "success" and calls == ["1", "2"]


def test_stop_waits_for_the_invocation_in_flight() -> None:
    q = Queue("jobs", clock=SystemClock())
    q.send("x")
    started, finished = threading.Event(), threading.Event()

    def handler(event: dict[str, Any], context: Any) -> None:
        started.set()
        time.sleep(0.5)
        finished.set()

    m = EventSourceMapping(q, handler)
    m.start()
    assert started.wait(10)
    m.stop()
    assert finished.is_set() and len(q) == 0
    m.start()
    with pytest.raises(RuntimeError, match="already running"):
        m.start()
    m.stop()


@pytest.fixture
def endpoint() -> Iterator[tuple[Broker[Any], str]]:
    broker = Broker(clock=SystemClock(), account_id="123456789012")
    with broker.serve() as handle:
        yield broker, handle.endpoint_url


def client(endpoint_url: str) -> Any:
    return boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        config=Config(signature_version=UNSIGNED),
    )


def test_the_same_event_through_boto3_as_in_process(endpoint: tuple[Broker[Any], str]) -> None:
    broker, url_base = endpoint
    sqs = client(url_base)
    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    attrs = {
        "k": {"DataType": "String", "StringValue": "v"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x01"},
    }
    sqs.send_message(QueueUrl=url, MessageBody="over http", MessageAttributes=attrs)
    over_http = EventSourceMapping(url, lambda e, c: None, client=sqs).run_until_idle()

    local = Queue("jobs", clock=ManualClock(start=1_700_000_000.0), account_id="123456789012")
    local.send("over http", message_attributes={"k": "v", "b": b"\x01"})
    in_process = EventSourceMapping(local, lambda e, c: None).run_until_idle()

    [a], [b] = over_http[0].event["Records"], in_process[0].event["Records"]
    assert list(a) == list(b)
    assert list(a["attributes"]) == list(b["attributes"])
    assert a["messageAttributes"] == b["messageAttributes"]
    for key in ("body", "md5OfBody", "md5OfMessageAttributes", "eventSource", "eventSourceARN"):
        assert a[key] == b[key], key
    assert len(broker.get_queue("jobs")) == 0


HANDLER = """
import json, pathlib, time
OUT = pathlib.Path(__file__).with_name("out.jsonl")

def handler(event, context):
    for r in event["Records"]:
        if r["body"] == "slow":
            OUT.with_name("slow-started").write_text("")
            time.sleep(1.0)
        left = context.get_remaining_time_in_millis()
        with OUT.open("a") as f:
            f.write(json.dumps({"body": r["body"], "left": left}) + "\\n")
    failed = [r["messageId"] for r in event["Records"] if r["body"] == "fail"]
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}
"""


def test_console_command_against_sqsqueue_serve(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    worker = None
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        endpoint_url = line.split("serving SQS at ")[1].split()[0]
        sqs = client(endpoint_url)
        url = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "5"})["QueueUrl"]
        for body in ["a", "b", "fail"]:
            sqs.send_message(QueueUrl=url, MessageBody=body)
        (tmp_path / "app.py").write_text(HANDLER)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sqsqueue",
                "lambda",
                "app:handler",
                "--queue-url",
                url,
                "--endpoint-url",
                endpoint_url,
                "--report-batch-item-failures",
                "--function-timeout",
                "5",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        out = tmp_path / "out.jsonl"
        wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 3)
        sqs.send_message(QueueUrl=url, MessageBody="slow")
        wait_for((tmp_path / "slow-started").exists)  # the slow invocation is in flight
        worker.send_signal(signal.SIGTERM)
        stdout, stderr = worker.communicate(timeout=30)
        assert worker.returncode == 0, stderr
        assert "stopped" in stdout
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        bodies = [x["body"] for x in lines]
        assert sorted(bodies[:3]) == ["a", "b", "fail"]
        assert "slow" in bodies  # finished before the command exited
        assert all(0 < x["left"] <= 5000 for x in lines)
        # "fail" was reported: it is back in the queue after its visibility timeout.
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert (
            int(attrs["ApproximateNumberOfMessagesNotVisible"])
            + int(attrs["ApproximateNumberOfMessages"])
            == 1
        )
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)


def test_console_command_refuses_bad_settings(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
    }
    broker = Broker(clock=SystemClock())
    with broker.serve() as handle:
        url = client(handle.endpoint_url).create_queue(QueueName="q")["QueueUrl"]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "sqsqueue",
                "lambda",
                "json:dumps",
                "--queue-url",
                url,
                "--endpoint-url",
                handle.endpoint_url,
                "--batch-size",
                "11",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2
    assert "Maximum batch window in seconds must be greater than 0" in result.stderr


def test_run_until_idle_on_real_time_waits_out_the_window() -> None:
    clock = SystemClock()
    q = Queue("jobs", clock=clock)
    for i in range(3):
        q.send(f"m{i}")
    sent = clock.now()
    [inv] = EventSourceMapping(
        q, lambda e, c: None, batch_size=20, maximum_batching_window_in_seconds=1
    ).run_until_idle()
    assert inv.bodies == ["m0", "m1", "m2"]
    assert 1.0 <= inv.started_at - sent < 3.0


def test_a_closed_queue_ends_the_worker() -> None:
    q = Queue("jobs", clock=SystemClock())
    m = EventSourceMapping(q, lambda e, c: None)
    m.start()
    q.close()
    wait_for(lambda: not m.running)
    m.stop()
