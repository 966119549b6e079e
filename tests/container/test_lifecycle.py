"""PID 1 behaves (issue 31, part 1): ``docker stop`` (SIGTERM) ends the server
within 5 s with exit code 0, a long poll open at that moment answered
(empty) rather than cut; SIGINT the same; and a durable broker on a fresh
named volume at /data keeps its queues and messages across containers."""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

import pytest

from tests.container import _docker
from tests.container.conftest import record
from tests.container.test_image import client

# The first test of a run waits for both images to build (about 100 s on an idle
# machine, longer on a busy one): more than the suite's 300 s per test is allowed.
pytestmark = [pytest.mark.container, pytest.mark.timeout(1800)]

STOP_S = 5.0


def _long_poll(sqs: Any, url: str, out: dict[str, Any]) -> None:
    try:
        out["reply"] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
    except Exception as exc:  # the test asserts there was none
        out["error"] = exc
    out["at"] = time.perf_counter()


def test_docker_stop_answers_the_open_long_poll_and_exits_0(sqs_image: str) -> None:
    with _docker.running(sqs_image, name="stop") as c:
        _docker.wait_health(c)
        sqs = client(c.url)
        url = sqs.create_queue(QueueName="polled")["QueueUrl"]
        out: dict[str, Any] = {}
        poller = threading.Thread(target=_long_poll, args=(sqs, url, out), daemon=True)
        poller.start()
        time.sleep(1.0)  # the poll is waiting on the server
        assert poller.is_alive()
        started = time.perf_counter()
        _docker.docker("stop", "--time", "10", c.name, timeout=30)
        took = time.perf_counter() - started
        poller.join(10)
        state = c.state()
        logs = c.logs()
    print(f"docker stop: {took:.2f} s, exit code {state['ExitCode']}")
    record("docker stop with a long poll open", took, "s", STOP_S)
    assert took < STOP_S, (took, logs)
    assert state["ExitCode"] == 0, logs
    assert "error" not in out, (out, logs)
    assert out["reply"]["ResponseMetadata"]["HTTPStatusCode"] == 200, out
    assert not out["reply"].get("Messages"), out
    assert out["at"] - started < STOP_S
    assert "Traceback" not in logs, logs


def test_sigint_stops_it_the_same_way(sqs_image: str) -> None:
    with _docker.running(sqs_image, name="sigint") as c:
        _docker.wait_health(c)
        started = time.perf_counter()
        _docker.docker("kill", "--signal", "INT", c.name)
        code = int(_docker.docker("wait", c.name, timeout=30).strip())
        took = time.perf_counter() - started
        logs = c.logs()
    assert took < STOP_S, (took, logs)
    assert code == 0, logs
    assert "Traceback" not in logs, logs


def test_a_durable_broker_on_a_named_volume_survives_a_new_container(sqs_image: str) -> None:
    """SQSQUEUE_DATA_DIR=/data on a fresh named volume (writable by the
    image's user, uid 10001): messages sent, the container stopped, a new
    container on the same volume serves the same queue and messages."""
    volume = _docker.new_name("vol")
    _docker.docker("volume", "create", volume)
    try:
        env = {"SQSQUEUE_DATA_DIR": "/data"}
        port = _docker.free_port()
        with _docker.running(
            sqs_image, env=env, volumes=[f"{volume}:/data"], port=port, name="durable1"
        ) as first:
            _docker.wait_health(first)
            sqs = client(first.url)
            url = sqs.create_queue(QueueName="kept.fifo", Attributes={"FifoQueue": "true"})[
                "QueueUrl"
            ]
            for i in range(3):
                sqs.send_message(
                    QueueUrl=url,
                    MessageBody=f"kept {i}",
                    MessageGroupId="g",
                    MessageDeduplicationId=str(i),
                )
            _docker.docker("stop", first.name, timeout=30)
            assert first.state()["ExitCode"] == 0, first.logs()
            assert "kept in /data" in first.logs(), first.logs()
        with _docker.running(
            sqs_image, env=env, volumes=[f"{volume}:/data"], port=port, name="durable2"
        ) as second:
            _docker.wait_health(second)
            sqs = client(second.url)
            assert sqs.get_queue_url(QueueName="kept.fifo")["QueueUrl"] == url
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
            assert [m["Body"] for m in got] == ["kept 0", "kept 1", "kept 2"]
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True, check=False)
