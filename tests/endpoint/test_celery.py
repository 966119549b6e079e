"""Celery's own worker, with kombu's SQS transport, against the endpoint (issue 13).

A real ``celery worker`` runs as a separate process, configured as a Celery
user configures SQS (``broker_url="sqs://key:secret@host:port"`` plus
``broker_transport_options``), and consumes through kombu's asynchronous SQS
client: kombu's own HTTP client on the worker's event loop, not botocore.
The task is sent from this process through kombu's producer (boto3), the
endpoint requires Signature V4 (so both paths sign as they would for AWS),
and the task leaves its result in a file. Every wait polls with a deadline.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from time import perf_counter  # the test's own wall-time deadlines
from typing import Any

import pytest

from sqsqueue import Broker, SystemClock
from sqsqueue.server import Endpoint
from tests.endpoint.conftest import ACCOUNT

KEY, SECRET = "AKIDCELERY", "celery-secret"
QUEUE = "celery-jobs"
#: kombu's pycurl client says so in every request (kombu/asynchronous/http/curl.py).
PYCURL_AGENT = "(compatible; pycurl)"

APP = '''
"""A Celery app on sqsqueue's endpoint, as a Celery user writes one."""
import json
import os
from pathlib import Path

from celery import Celery

app = Celery("sqsjobs", broker=os.environ["SQSQUEUE_CELERY_BROKER"])
app.conf.update(
    broker_transport_options={
        "region": "us-east-1",
        "is_secure": False,         # http://: the endpoint on 127.0.0.1
        "wait_time_seconds": 2,     # long polls, answered as soon as a task arrives
        "polling_interval": 0.2,
        "visibility_timeout": 120,
    },
    task_default_queue="celery-jobs",
    broker_connection_retry_on_startup=True,
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
)


@app.task(name="sqsjobs.add")
def add(x, y, out):
    from kombu.asynchronous.http import get_client

    Path(out).write_text(
        json.dumps({"sum": x + y, "pid": os.getpid(), "http_client": type(get_client()).__name__})
    )
'''


def _env(broker_url: str, path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "PYTHONPATH"}
    env.update(
        {
            "SQSQUEUE_CELERY_BROKER": broker_url,
            "PYTHONPATH": str(path),
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }
    )
    return env


def _load_app(path: Path, broker_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("SQSQUEUE_CELERY_BROKER", broker_url)
    spec = importlib.util.spec_from_file_location("sqsjobs", path / "sqsjobs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


def _in_queue(broker: Broker[Any]) -> int:
    if QUEUE not in broker:
        return -1
    attrs = broker.get_queue(QUEUE).get_attributes(
        ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )
    return int(attrs["ApproximateNumberOfMessages"]) + int(
        attrs["ApproximateNumberOfMessagesNotVisible"]
    )


@pytest.mark.timeout(240)
def test_celery_worker_executes_a_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task sent through kombu's SQS producer is executed by a real Celery
    worker process consuming through kombu's async SQS client, then deleted."""
    broker = Broker(clock=SystemClock(), account_id=ACCOUNT)
    seen: list[tuple[str, str]] = []  # (User-Agent, X-Amz-Target) of each request served
    answer = Endpoint._answer

    async def recording(self: Endpoint, scope: Any, headers: Any, *args: Any) -> Any:
        seen.append((headers.get("user-agent", ""), headers.get("x-amz-target", "")))
        return await answer(self, scope, headers, *args)

    monkeypatch.setattr(Endpoint, "_answer", recording)
    (tmp_path / "sqsjobs.py").write_text(APP)
    out = tmp_path / "result.json"
    log = tmp_path / "worker.log"
    with broker.serve(credentials={KEY: SECRET}) as endpoint:
        broker_url = f"sqs://{KEY}:{SECRET}@127.0.0.1:{endpoint.port}"
        with log.open("w") as log_file:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "sqsjobs",
                    "worker",
                    "--pool",
                    "solo",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-Q",
                    QUEUE,
                ],
                cwd=tmp_path,
                env=_env(broker_url, tmp_path),
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        try:
            app = _load_app(tmp_path, broker_url, monkeypatch)
            try:
                app.send_task("sqsjobs.add", args=(2, 3, str(out)))
            finally:
                app.close()
            assert QUEUE in broker  # kombu created the queue through the endpoint

            deadline = perf_counter() + 120
            while not out.exists():
                assert worker.poll() is None, f"the worker died:\n{log.read_text()}"
                assert perf_counter() < deadline, f"the task did not run:\n{log.read_text()}"
                worker_wait(worker, 0.1)
            # The file may be seen before it is fully written: read it once whole.
            while True:
                try:
                    result = json.loads(out.read_text())
                    break
                except ValueError:
                    assert perf_counter() < deadline
                    worker_wait(worker, 0.05)
            assert result["sum"] == 5
            assert result["pid"] == worker.pid  # executed by the worker process
            # The worker consumed through kombu's own asynchronous HTTP client:
            # pycurl, signing with botocore's signer (the endpoint checked it).
            assert result["http_client"] == "CurlClient", result
            assert any(
                PYCURL_AGENT in agent and target == "AmazonSQS.ReceiveMessage"
                for agent, target in seen
            ), seen
            # Acknowledged: kombu deleted the message through the endpoint.
            while _in_queue(broker) != 0:
                assert perf_counter() < deadline, f"never deleted:\n{log.read_text()}"
                worker_wait(worker, 0.1)
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert "sqsjobs.add" in text and "succeeded" in text, text


def worker_wait(worker: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait up to ``seconds`` for the worker to exit (it should not): a bounded
    pause between polls of the result that also notices a dead worker."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        worker.wait(timeout=seconds)
