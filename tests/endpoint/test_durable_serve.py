"""``sqsqueue serve --data-dir DIR`` (issue 16): the endpoint keeps what it
acknowledged across a crash of its process, and one server at a time owns DIR."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from tests._helpers import failing_db


def start(data_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqsqueue",
            "serve",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            *list(extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "serving SQS at " in line, (line, proc.stderr.read() if proc.stderr else "")
    assert f"kept in {data_dir}" in line
    return proc, line.split("serving SQS at ")[1].split()[0]


def client(url: str, config: Config | None = None) -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",
        config=config,
    )


def test_acknowledged_messages_survive_sigkill_of_the_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    proc, url = start(data_dir)
    try:
        sqs = client(url)
        queue = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        sent = sqs.send_message(QueueUrl=queue, MessageBody="kept")["MessageId"]
        sqs.send_message_batch(
            QueueUrl=queue,
            Entries=[{"Id": str(i), "MessageBody": f"b{i}"} for i in range(3)],
        )
        [gone] = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1)["Messages"]
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=gone["ReceiptHandle"])
        # A second server cannot take the directory while this one has it.
        second = subprocess.run(
            [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 2 and "in use by another broker" in second.stderr
        assert "StorageError" in second.stderr and "InternalError" not in second.stderr
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    proc, url = start(data_dir, "--durability", "machine")
    try:
        sqs = client(url)
        queue = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
        assert len(got) == 3
        assert gone["MessageId"] not in {m["MessageId"] for m in got}
        assert sent in {m["MessageId"] for m in got} or gone["MessageId"] == sent
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_a_storage_error_is_answered_as_storage_error(tmp_path: Path) -> None:
    """The README's promise holds over HTTP: a durable broker whose write fails
    answers HTTP 500 with the code StorageError (and the file's message), not
    a bare InternalError; every later call too (fail-stop)."""
    from botocore.exceptions import ClientError

    from sqsqueue import Broker

    broker = Broker(data_dir=tmp_path / "data")
    broker.create_queue("jobs")
    store = broker._store
    assert store is not None
    real = store.db
    with broker.serve() as endpoint:
        sqs = client(endpoint.endpoint_url, Config(retries={"total_max_attempts": 1}))
        url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
        store.db = failing_db(real)
        for _ in range(2):
            try:
                sqs.send_message(QueueUrl=url, MessageBody="x")
            except ClientError as exc:
                error = exc.response
            else:
                raise AssertionError("the failed write was acknowledged")
            assert error["ResponseMetadata"]["HTTPStatusCode"] == 500
            assert error["Error"]["Code"] == "StorageError"
            assert "sqsqueue.sqlite3" in error["Error"]["Message"]
        store.db = real
    broker.close()
