"""Real SQS clients against the endpoint, each as its users run it: the AWS CLI
and Node's AWS SDK v3 as separate processes, aiobotocore over HTTP, aioboto3
(on the aiobotocore 2.x it pins) in process and over HTTP.

``python3 tests`` installs them (the AWS CLI into ``.venv/awscli``, aioboto3
into ``.venv/aioboto3``, the npm package into ``.venv/node``); a missing client
fails these tests, it never skips them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from sqsqueue import Broker
from sqsqueue.server import EndpointHandle
from tests.endpoint.conftest import ACCOUNT

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
AWS = VENV / "awscli" / "bin" / "aws"
NODE_MODULES = VENV / "node" / "node_modules"
AIOBOTO3_PYTHON = VENV / "aioboto3" / "bin" / "python"
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "AKID",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def aws(endpoint: EndpointHandle, *args: str, check: bool = True) -> Any:
    assert AWS.exists(), f"the AWS CLI is not installed at {AWS} (python3 tests installs it)"
    done = subprocess.run(
        [str(AWS), "--endpoint-url", endpoint.endpoint_url, "--output", "json", "sqs", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}
    return done


def test_aws_cli(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """create-queue, send, receive, delete, and an error, from the AWS CLI."""
    url = aws(endpoint, "create-queue", "--queue-name", "cli")["QueueUrl"]
    assert url == f"{endpoint.endpoint_url}/{ACCOUNT}/cli"
    aws(endpoint, "send-message", "--queue-url", url, "--message-body", "from the cli")
    [message] = aws(endpoint, "receive-message", "--queue-url", url)["Messages"]
    assert message["Body"] == "from the cli"
    aws(
        endpoint, "delete-message", "--queue-url", url, "--receipt-handle", message["ReceiptHandle"]
    )
    assert (
        broker.get_queue("cli").get_attributes(["All"])["ApproximateNumberOfMessagesNotVisible"]
        == "0"
    )
    failed = aws(endpoint, "get-queue-url", "--queue-name", "missing", check=False)
    assert failed.returncode != 0
    assert "AWS.SimpleQueueService.NonExistentQueue" in failed.stderr
    assert "The specified queue does not exist." in failed.stderr


def test_javascript_sdk_v3(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """@aws-sdk/client-sqs on Node: send, receive with attributes, delete."""
    assert (NODE_MODULES / "@aws-sdk" / "client-sqs").exists(), (
        f"@aws-sdk/client-sqs is not installed in {NODE_MODULES} (python3 tests installs it)"
    )
    queue = broker.create_queue("js")
    done = subprocess.run(
        [
            "node",
            str(Path(__file__).parent / "clients" / "sqs_v3.cjs"),
            str(NODE_MODULES),
            endpoint.endpoint_url,
            f"{endpoint.endpoint_url}/{ACCOUNT}/js",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["body"] == "from node" and out["kind"] == "js" and out["count"] == "1"
    assert out["sentId"] == out["id"]
    assert out["error"] == "QueueDoesNotExist"
    assert queue.get_attributes(["All"])["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_aiobotocore_over_http() -> None:
    """aiobotocore with endpoint_url: a long poll answered by a later send. On
    the wall clock: a frozen ManualClock gives an unanswered poll up after
    0.25 s of wall time, before the send (issue 12's frozen-clock rule)."""
    from aiobotocore.session import get_session

    wall: Broker[Any] = Broker(account_id=ACCOUNT)

    async def run(endpoint: EndpointHandle) -> list[str]:
        session = get_session()
        async with session.create_client(
            "sqs",
            endpoint_url=endpoint.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="AKID",
            aws_secret_access_key="secret",
        ) as sqs:
            url = (await sqs.create_queue(QueueName="aio"))["QueueUrl"]
            poll = asyncio.ensure_future(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10))
            await asyncio.sleep(0.3)
            await sqs.send_message(QueueUrl=url, MessageBody="async")
            response = await poll
            return [m["Body"] for m in response["Messages"]]

    with wall.serve() as endpoint:
        assert asyncio.run(run(endpoint)) == ["async"]


def test_aioboto3_in_process_and_over_http(endpoint: EndpointHandle) -> None:
    """aioboto3 pins aiobotocore 2.x (botocore 1.40, whose prepared requests
    carry no context): ``mock_sqs`` still serves its clients in process,
    awaiting a long poll without blocking the loop (the poll answered by a
    later send, the loop ticking meanwhile), its resource API included; and
    it reaches the endpoint over HTTP. aiobotocore 3.x is the dev venv's
    (tests/aws/test_aiobotocore_mock.py)."""
    assert AIOBOTO3_PYTHON.exists(), (
        f"aioboto3 is not installed at {AIOBOTO3_PYTHON} (python3 tests installs it)"
    )
    done = subprocess.run(
        [
            str(AIOBOTO3_PYTHON),
            str(Path(__file__).parent / "clients" / "aioboto3_client.py"),
            endpoint.endpoint_url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**ENV, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["versions"]["aiobotocore"].startswith("2."), out["versions"]
    assert out["url"] == f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/a3"
    assert out["polled"] == ["awaited"]
    assert out["ticks_during_poll"] >= 20
    assert out["error"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert out["resource"] == ["via resource"]
    assert out["native"] == {"ApproximateNumberOfMessages": "0"}
    assert out["http"] == ["over http"]
