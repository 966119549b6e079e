"""``sqsqueue serve`` holds every account and region (issue 31 §2), as
LocalStack's one port does: a 12-digit access key id is the request's account,
its signature's credential scope its region (docs/serving.md, "Accounts and
regions"). Each (account, region) has its own queues; queue URLs of other
regions than the default say theirs; a call on another account's queue is
decided by that queue's policy (docs/aws-behaviour.md, "Permissions").

Driven as users drive it: boto3 clients with their own keys and regions
against the command in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker
from tests._helpers import sqs_as, sqsqueue_serve

ENV = {k: v for k, v in os.environ.items() if not k.startswith("SQSQUEUE_")}
A, B = "111111111111", "222222222222"
DEFAULT = "000000000000"


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with sqsqueue_serve(env=ENV, expect="serving SQS at") as (url, _line):
        yield url


def code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def test_each_account_and_region_has_its_own_queues(served: str) -> None:
    clients = {
        (A, "us-east-1"): sqs_as(served, A, "us-east-1"),
        (B, "eu-west-1"): sqs_as(served, B, "eu-west-1"),
        (DEFAULT, "us-east-1"): sqs_as(served, "test", "us-east-1"),
        (DEFAULT, "ap-south-1"): sqs_as(served, "test", "ap-south-1"),
    }
    urls = {k: c.create_queue(QueueName="isolated")["QueueUrl"] for k, c in clients.items()}
    assert urls[(A, "us-east-1")] == f"{served}/{A}/isolated"
    assert urls[(DEFAULT, "us-east-1")] == f"{served}/{DEFAULT}/isolated"
    assert urls[(B, "eu-west-1")] == f"{served}/queue/eu-west-1/{B}/isolated"
    assert urls[(DEFAULT, "ap-south-1")] == f"{served}/queue/ap-south-1/{DEFAULT}/isolated"
    for (account, region), client in clients.items():
        url = urls[(account, region)]
        arn = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        assert arn["Attributes"]["QueueArn"] == f"arn:aws:sqs:{region}:{account}:isolated"
        client.send_message(QueueUrl=url, MessageBody=f"{account}/{region}")
        listed = client.list_queues(QueueNamePrefix="isolated")["QueueUrls"]
        assert listed == [url]
        assert client.get_queue_url(QueueName="isolated")["QueueUrl"] == url
    for (account, region), client in clients.items():
        [message] = client.receive_message(QueueUrl=urls[(account, region)])["Messages"]
        assert message["Body"] == f"{account}/{region}"


def test_a_region_without_queues_lists_none_and_finds_none(served: str) -> None:
    client = sqs_as(served, "test", "sa-east-1")
    assert "QueueUrls" not in client.list_queues()
    with pytest.raises(ClientError) as exc:
        client.get_queue_url(QueueName="isolated")
    assert code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    with pytest.raises(ClientError) as exc:
        client.send_message(QueueUrl=f"{served}/queue/sa-east-1/{A}/nothing", MessageBody="x")
    assert code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


def test_every_url_form_reaches_the_same_queue(served: str) -> None:
    """The URL handed out, an AWS-style URL of the same queue, and a query
    request POSTed to the queue URL itself (some SDKs send calls there) all
    reach one queue, whatever region the calling client is configured for."""
    owner = sqs_as(served, B, "eu-west-2")
    url = owner.create_queue(QueueName="forms")["QueueUrl"]
    assert url == f"{served}/queue/eu-west-2/{B}/forms"
    owner.send_message(QueueUrl=f"https://sqs.eu-west-2.amazonaws.com/{B}/forms", MessageBody="1")
    # The same account, its client configured for another region: the URL decides.
    sqs_as(served, B, "us-east-1").send_message(QueueUrl=url, MessageBody="2")
    form = b"Action=SendMessage&MessageBody=3&Version=2012-11-05"
    request = urllib.request.Request(
        url,
        data=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            # The key's account acts; the scope's region is not the URL's.
            "Authorization": f"AWS4-HMAC-SHA256 Credential={B}/20260101/us-east-1/sqs/"
            "aws4_request, SignedHeaders=host, Signature=" + "0" * 64,
        },
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 200 and b"<MD5OfMessageBody>" in reply.read()
    bodies = set()
    for _ in range(3):
        for m in owner.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            bodies.add(m["Body"])
            owner.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert bodies == {"1", "2", "3"}


def test_another_accounts_queue_needs_its_policy(served: str) -> None:
    owner, other = sqs_as(served, A, "us-east-1"), sqs_as(served, B, "us-east-1")
    url = owner.create_queue(QueueName="guarded")["QueueUrl"]
    for call in (
        lambda: other.send_message(QueueUrl=url, MessageBody="x"),
        lambda: other.receive_message(QueueUrl=url),
        lambda: other.get_queue_url(QueueName="guarded", QueueOwnerAWSAccountId=A),
        lambda: other.purge_queue(QueueUrl=url),
        lambda: other.delete_queue(QueueUrl=url),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        assert code(exc) == "AccessDenied"
    # Account-level actions act in the caller's own account.
    assert "QueueUrls" not in other.list_queues(QueueNamePrefix="guarded")
    owner.add_permission(
        QueueUrl=url, Label="b-sends", AWSAccountIds=[B], Actions=["SendMessage", "GetQueueUrl"]
    )
    other.send_message(QueueUrl=url, MessageBody="from b")
    assert other.get_queue_url(QueueName="guarded", QueueOwnerAWSAccountId=A)["QueueUrl"] == url
    with pytest.raises(ClientError) as exc:
        other.receive_message(QueueUrl=url)
    assert code(exc) == "AccessDenied"
    [message] = owner.receive_message(QueueUrl=url)["Messages"]
    assert message["Body"] == "from b"
    owner.change_message_visibility(
        QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    # The SenderId names the sending account.
    [again] = owner.receive_message(QueueUrl=url, MessageSystemAttributeNames=["SenderId"])[
        "Messages"
    ]
    assert again["Attributes"]["SenderId"] == B
    # A policy document set as an attribute grants as AddPermission does.
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{B}:root"},
                "Action": "sqs:ReceiveMessage",
                "Resource": f"arn:aws:sqs:us-east-1:{A}:guarded",
            }
        ],
    }
    owner.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    other.receive_message(QueueUrl=url)
    with pytest.raises(ClientError) as exc:
        other.send_message(QueueUrl=url, MessageBody="no longer")
    assert code(exc) == "AccessDenied"


def test_a_dead_letter_queue_of_another_account_is_refused(served: str) -> None:
    """AWS requires a queue's dead-letter queue in its own account and region."""
    dlq = sqs_as(served, B, "us-east-1").create_queue(QueueName="foreign-dlq")["QueueUrl"]
    assert dlq.endswith(f"/{B}/foreign-dlq")
    with pytest.raises(ClientError) as exc:
        sqs_as(served, A, "us-east-1").create_queue(
            QueueName="with-foreign-dlq",
            Attributes={
                "RedrivePolicy": json.dumps(
                    {
                        "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:{B}:foreign-dlq",
                        "maxReceiveCount": 3,
                    }
                )
            },
        )
    assert code(exc) == "InvalidParameterValue"
    assert "QueueUrls" not in sqs_as(served, A, "us-east-1").list_queues(
        QueueNamePrefix="with-foreign-dlq"
    )


def test_credentials_name_accounts_and_any_region_is_served(tmp_path: Path) -> None:
    """A key the file gives an account acts as it; a 12-digit key with a bare
    secret is its own account; a signature scoped to any region is accepted
    and that region is the request's; a wrong secret is still refused."""
    credentials = tmp_path / "keys.json"
    credentials.write_text(
        json.dumps(
            {
                "ops": {"secret": "s1", "account_id": A},
                B: "s2",
                "plain": "s3",
            }
        )
    )
    with sqsqueue_serve(
        "--credentials", str(credentials), env=ENV, expect="Signature V4 required"
    ) as (url, _line):
        ops = sqs_as(url, "ops", "eu-central-1", "s1")
        queue = ops.create_queue(QueueName="signed")["QueueUrl"]
        assert queue == f"{url}/queue/eu-central-1/{A}/signed"
        b_url = sqs_as(url, B, "us-east-1", "s2").create_queue(QueueName="signed")["QueueUrl"]
        assert b_url == f"{url}/{B}/signed"
        plain = sqs_as(url, "plain", "us-east-1", "s3")
        assert plain.create_queue(QueueName="signed")["QueueUrl"] == f"{url}/{DEFAULT}/signed"
        with pytest.raises(ClientError) as exc:
            plain.send_message(QueueUrl=b_url, MessageBody="x")
        assert code(exc) == "AccessDenied"
        with pytest.raises(ClientError) as exc:
            sqs_as(url, "ops", "eu-central-1", "wrong").list_queues()
        assert code(exc) == "SignatureDoesNotMatch"


def test_durable_server_keeps_every_account_and_region(tmp_path: Path) -> None:
    """A directory written by a single-account server opens unchanged; queues
    of other accounts and regions are kept beside it and come back."""
    data = tmp_path / "data"
    with Broker(data_dir=data, account_id=DEFAULT) as old:
        old.create_queue("from-before").send("kept")
    flags = ("--data-dir", str(data))
    with sqsqueue_serve(*flags, env=ENV, expect=f"kept in {data}") as (url, _line):
        assert sqs_as(url, "test", "us-east-1").list_queues()["QueueUrls"] == [
            f"{url}/{DEFAULT}/from-before"
        ]
        far = sqs_as(url, A, "eu-west-1")
        far_url = far.create_queue(QueueName="far")["QueueUrl"]
        far.send_message(QueueUrl=far_url, MessageBody="far away")
    assert (data / "accounts" / A / "eu-west-1").is_dir()
    with sqsqueue_serve(*flags, env=ENV, expect=f"kept in {data}") as (url, _line):
        [m] = sqs_as(url, A, "eu-west-1").receive_message(QueueUrl=far_url)["Messages"]
        assert m["Body"] == "far away"
        [m] = sqs_as(url, "test", "us-east-1").receive_message(
            QueueUrl=f"{url}/{DEFAULT}/from-before"
        )["Messages"]
        assert m["Body"] == "kept"


def test_config_tables_name_their_account_and_region(tmp_path: Path) -> None:
    config = tmp_path / "queues.toml"
    config.write_text(
        "[[queue]]\nname = 'orders'\n\n"
        f"[[queue]]\nname = 'orders'\naccount_id = '{A}'\nregion = 'eu-west-1'\n"
        "redrive_policy = { dead_letter_queue = 'orders-dlq', max_receive_count = 2 }\n\n"
        f"[[queue]]\nname = 'orders-dlq'\naccount_id = '{A}'\nregion = 'eu-west-1'\n"
    )
    with sqsqueue_serve("--config", str(config), env=ENV, expect="serving SQS at") as (url, _):
        assert sqs_as(url, "test", "us-east-1").list_queues()["QueueUrls"] == [
            f"{url}/{DEFAULT}/orders"
        ]
        client = sqs_as(url, A, "eu-west-1")
        assert client.list_queues()["QueueUrls"] == [
            f"{url}/queue/eu-west-1/{A}/orders",
            f"{url}/queue/eu-west-1/{A}/orders-dlq",
        ]
        policy = client.get_queue_attributes(
            QueueUrl=f"{url}/queue/eu-west-1/{A}/orders", AttributeNames=["RedrivePolicy"]
        )["Attributes"]["RedrivePolicy"]
        assert json.loads(policy)["deadLetterTargetArn"] == f"arn:aws:sqs:eu-west-1:{A}:orders-dlq"
    # A dead-letter queue in another account is refused before anything starts.
    config.write_text(
        f"[[queue]]\nname = 'dlq'\naccount_id = '{B}'\n\n"
        f"[[queue]]\nname = 'src'\naccount_id = '{A}'\n"
        "redrive_policy = { dead_letter_queue = 'dlq' }\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--config", str(config)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "dead-letter queue 'dlq' is not declared" in done.stderr
    assert "Traceback" not in done.stderr
