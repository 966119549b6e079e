"""Small helpers shared by the test modules."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import FifoQueue, Queue, errors


def new_queue_attributes(arn: str) -> dict[str, str]:
    """GetQueueAttributes(All) of the standard queue ``arn`` just created at
    1,700,000,000 (section 2.1, AWS-observed)."""
    return {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesDelayed": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
        "CreatedTimestamp": "1700000000",
        "DelaySeconds": "0",
        "LastModifiedTimestamp": "1700000000",
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "345600",
        "QueueArn": arn,
        "ReceiveMessageWaitTimeSeconds": "0",
        "SqsManagedSseEnabled": "true",
        "VisibilityTimeout": "30",
    }


def counts(q: Queue | FifoQueue) -> tuple[int, int, int]:
    """(visible, in flight, delayed) as GetQueueAttributes reports them."""
    a = q.get_attributes(
        [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ]
    )
    return (
        int(a["ApproximateNumberOfMessages"]),
        int(a["ApproximateNumberOfMessagesNotVisible"]),
        int(a["ApproximateNumberOfMessagesDelayed"]),
    )


def snapshot(q: Queue) -> tuple[int, dict[str, str]]:
    """Everything observable about a queue's state, without changing it."""
    return len(q), q.get_attributes(["All"])


def refused(
    q: Queue, exc: type[errors.SQSError], call: Callable[[], object], message: str | None = None
) -> errors.SQSError:
    """Assert ``call`` raises ``exc`` (with ``message``) and changes nothing."""
    before = snapshot(q)
    with pytest.raises(exc) as info:
        call()
    if message is not None:
        assert info.value.message == message
    assert snapshot(q) == before
    q._check()
    return info.value


#: What the hermetic AWS tests (tests/aws, tests/moto) remove from the
#: environment: credentials, profiles, endpoint overrides, the container and
#: web-identity credential sources, retry settings, and moto's account.
AWS_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_SQS",
    "AWS_ENDPOINT_URL_S3",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "MOTO_ACCOUNT_ID",
)


def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials anywhere for this test: the :data:`AWS_ENV` variables
    gone, config files pointing nowhere, instance metadata disabled (so
    botocore never probes 169.254.169.254)."""
    for var in AWS_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "missing-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "missing-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def run_python(script: str, timeout: float = 120) -> str:
    """Run ``script`` in a fresh interpreter (this environment); assert it
    exits 0 (else show its stderr) and return its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stderr_once_stopped(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    return proc.communicate(timeout=30)[1]


@contextlib.contextmanager
def sqsqueue_serve(*flags: str, env: dict[str, str], expect: str) -> Iterator[tuple[str, str]]:
    """``python -m sqsqueue serve --port 0 *flags`` in a subprocess with
    ``env``, stopped (SIGTERM) on exit: yields (its URL, its first line), once
    that line is asserted to contain ``expect`` (else the assertion shows the
    line and the server's stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert expect in line, (line, _stderr_once_stopped(proc))
        yield line.split(" at ")[1].split()[0], line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def failing_db(real: sqlite3.Connection) -> Any:
    """``real`` (a durable broker's store connection) whose writes
    (``executemany``) fail as a full or broken disk does; everything else
    passes through. Assign it to ``store.db`` and put ``real`` back after."""

    class Failing:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def executemany(self, *args: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

    return Failing()


def sqs_as(url: str, key: str = "test", region: str = "us-east-1", secret: str = "any") -> Any:
    """A boto3 SQS client of ``url`` signing with access key ``key`` in
    ``region``: on ``sqsqueue serve`` a 12-digit key is the caller's account,
    the region the request's (docs/serving.md, "Accounts and regions")."""
    import boto3

    return boto3.client(
        "sqs",
        endpoint_url=url,
        region_name=region,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
    )
