"""``sqsqueue serve --with-moto``: one local AWS endpoint, SQS answered by
sqsqueue and every other service by moto's server, moto's services delivering
into sqsqueue's queues.

Driven as users drive it: the AWS CLI (``.venv/awscli``, installed by
``python3 tests``; missing, these tests fail) against the ``sqsqueue serve``
command in a subprocess; routing checked in process with boto3, signed and
unsigned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from sqsqueue import Broker, ManualClock
from sqsqueue.server import EndpointHandle
from tests._helpers import sqsqueue_serve

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
AWS = VENV / "awscli" / "bin" / "aws"
ACCOUNT = "123456789012"
REGION = "us-east-1"
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "PYTHONPATH": str(ROOT),
}
ENV.pop("MOTO_ACCOUNT_ID", None)


@pytest.fixture
def served() -> Iterator[str]:
    """``sqsqueue serve --with-moto`` on a free port; its URL."""
    expect = "every other AWS service through moto, at "
    with sqsqueue_serve("--with-moto", env=ENV, expect=expect) as (url, line):
        assert f"account {ACCOUNT}" in line  # moto's account, which its ARNs name
        yield url


def aws(url: str, *args: str) -> Any:
    assert AWS.exists(), f"the AWS CLI is not installed at {AWS} (python3 tests installs it)"
    done = subprocess.run(
        [str(AWS), "--endpoint-url", url, "--output", "json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if not done.stdout.startswith("{"):
        return done.stdout  # aws s3 speaks text
    return json.loads(done.stdout)


def test_aws_cli_sns_to_sqs_through_one_endpoint(served: str) -> None:
    """The AWS CLI creates a topic (moto) and a queue (sqsqueue), subscribes
    the queue, publishes, and receives SNS's envelope from the sqsqueue queue;
    raw delivery gives the message itself."""
    url = served
    queue_url = aws(url, "sqs", "create-queue", "--queue-name", "orders")["QueueUrl"]
    assert queue_url == f"{url}/{ACCOUNT}/orders"
    queue_arn = aws(
        url,
        "sqs",
        "get-queue-attributes",
        "--queue-url",
        queue_url,
        "--attribute-names",
        "QueueArn",
    )["Attributes"]["QueueArn"]
    topic = aws(url, "sns", "create-topic", "--name", "order-events")["TopicArn"]
    assert topic == f"arn:aws:sns:{REGION}:{ACCOUNT}:order-events"
    aws(
        url,
        "sns",
        "subscribe",
        "--topic-arn",
        topic,
        "--protocol",
        "sqs",
        "--notification-endpoint",
        queue_arn,
    )
    aws(
        url,
        "sns",
        "publish",
        "--topic-arn",
        topic,
        "--message",
        "order 1 placed",
        "--subject",
        "order",
    )
    [message] = aws(url, "sqs", "receive-message", "--queue-url", queue_url)["Messages"]
    envelope = json.loads(message["Body"])
    assert (envelope["Type"], envelope["TopicArn"]) == ("Notification", topic)
    assert (envelope["Message"], envelope["Subject"]) == ("order 1 placed", "order")
    raw_url = aws(url, "sqs", "create-queue", "--queue-name", "raw")["QueueUrl"]
    aws(
        url,
        "sns",
        "subscribe",
        "--topic-arn",
        topic,
        "--protocol",
        "sqs",
        "--notification-endpoint",
        f"arn:aws:sqs:{REGION}:{ACCOUNT}:raw",
        "--attributes",
        "RawMessageDelivery=true",
    )
    aws(url, "sns", "publish", "--topic-arn", topic, "--message", "order 2 placed")
    [raw] = aws(url, "sqs", "receive-message", "--queue-url", raw_url)["Messages"]
    assert raw["Body"] == "order 2 placed"


def test_aws_cli_s3_notification(served: str, tmp_path: Path) -> None:
    """``aws s3`` with a bucket notification: the upload's event arrives in
    the sqsqueue queue."""
    url = served
    queue_url = aws(url, "sqs", "create-queue", "--queue-name", "uploads")["QueueUrl"]
    aws(url, "s3api", "create-bucket", "--bucket", "photos")
    config = {
        "QueueConfigurations": [
            {
                "QueueArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:uploads",
                "Events": ["s3:ObjectCreated:*"],
            }
        ]
    }
    aws(
        url,
        "s3api",
        "put-bucket-notification-configuration",
        "--bucket",
        "photos",
        "--notification-configuration",
        json.dumps(config),
    )
    upload = tmp_path / "cat.jpg"
    upload.write_bytes(b"meow")
    aws(url, "s3", "cp", str(upload), "s3://photos/cat.jpg")
    bodies = [
        json.loads(m["Body"])
        for m in aws(
            url,
            "sqs",
            "receive-message",
            "--queue-url",
            queue_url,
            "--max-number-of-messages",
            "10",
        )["Messages"]
    ]
    [record] = [r for b in bodies for r in b.get("Records", [])]
    assert (record["eventName"], record["s3"]["object"]["key"]) == ("ObjectCreated:Put", "cat.jpg")


# -- routing, in process ----------------------------------------------------------------


@pytest.fixture
def broker() -> Broker[ManualClock]:
    return Broker(clock=ManualClock(start=1_700_000_000.0), account_id=ACCOUNT)


@pytest.fixture
def with_moto(broker: Broker[Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[EndpointHandle]:
    for var in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "MOTO_ACCOUNT_ID"):
        monkeypatch.delenv(var, raising=False)
    with broker.serve(with_moto=True) as handle:
        yield handle  # type: ignore[misc]


def _client(service: str, url: str, signed: bool = True) -> Any:
    config = Config(retries={"total_max_attempts": 1})
    if not signed:
        config = config.merge(Config(signature_version=UNSIGNED))
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=config,
    )


def test_routing_by_scope_target_path_and_action(
    with_moto: EndpointHandle, broker: Broker[Any]
) -> None:
    """Signed requests go by their credential scope's service; unsigned JSON
    by its target prefix; an unsigned query request by its queue path or an
    SQS-only Action; everything else to moto."""
    url = with_moto.endpoint_url
    _client("sqs", url).create_queue(QueueName="signed")
    _client("sqs", url, signed=False).create_queue(QueueName="unsigned-json")
    assert {q.name for q in broker} == {"signed", "unsigned-json"}
    sns = _client("sns", url)
    sns.create_topic(Name="moto-topic")
    assert [t["TopicArn"] for t in sns.list_topics()["Topics"]] == [
        f"arn:aws:sns:{REGION}:{ACCOUNT}:moto-topic"
    ]
    # Unsigned query requests: an SQS-only action, a queue path; SNS's action.
    from tests.endpoint.conftest import raw

    form = {"Content-Type": "application/x-www-form-urlencoded"}
    created = raw(url, "POST", "/", b"Action=CreateQueue&QueueName=by-action", form)
    assert created.status == 200 and b"by-action" in created.body
    sent = raw(url, "POST", f"/{ACCOUNT}/signed", b"Action=SendMessage&MessageBody=x", form)
    assert sent.status == 200
    assert [m.body for m in broker.get_queue("signed").receive()] == ["x"]
    # Unsigned JSON of another service (one moto itself serves unsigned): its
    # target prefix sends it to moto.
    pools = raw(
        url,
        "POST",
        "/",
        b'{"MaxResults": 10}',
        {
            "Content-Type": "application/x-amz-json-1.1",
            "X-Amz-Target": "AWSCognitoIdentityProviderService.ListUserPools",
        },
    )
    assert (pools.status, json.loads(pools.body)) == (200, {"UserPools": []})


def test_moto_services_deliver_into_the_served_broker(
    with_moto: EndpointHandle, broker: Broker[Any]
) -> None:
    """SNS, through moto's server, delivers into the endpoint's own broker; a
    topic's subscription to a queue the broker lacks fails the publish as moto
    fails it."""
    url = with_moto.endpoint_url
    sqs = _client("sqs", url)
    sqs.create_queue(QueueName="inbox")
    sns = _client("sns", url)
    topic = sns.create_topic(Name="t")["TopicArn"]
    sns.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:inbox",
        Attributes={"RawMessageDelivery": "true"},
    )
    sns.publish(TopicArn=topic, Message="in the broker")
    assert [m.body for m in broker.get_queue("inbox").receive()] == ["in the broker"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:nope")
    with pytest.raises(ClientError) as exc:
        sns.publish(TopicArn=topic, Message="x")
    assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


def test_without_the_flag_nothing_changes(broker: Broker[Any]) -> None:
    """A plain endpoint answers an SNS request as an SQS endpoint always did
    (InvalidAction), and moto is not imported for it."""
    with broker.serve() as handle:
        from tests.endpoint.conftest import raw

        form = {"Content-Type": "application/x-www-form-urlencoded"}
        reply = raw(handle.endpoint_url, "POST", "/", b"Action=ListTopics", form)
        assert reply.status == 400 and b"InvalidAction" in reply.body
        assert handle.endpoint.__class__.__name__ == "Endpoint"


def test_with_moto_is_loopback_only_and_needs_moto(tmp_path: Path) -> None:
    """A non-loopback address is refused (moto checks no credentials), even
    with credentials; without moto's server the command names what to
    install; both exit 2 with no traceback."""
    refused = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve", "--with-moto", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert refused.returncode == 2 and "refusing to serve moto" in refused.stderr
    script = (
        "import sys; sys.modules['flask'] = None\n"
        "from sqsqueue.server import main\n"
        "sys.exit(main(['serve', '--with-moto', '--port', '0']))\n"
    )
    missing = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert missing.returncode == 2, missing.stderr
    assert "pip install 'sqsqueue[server,moto]' 'moto[server]'" in missing.stderr
    assert "Traceback" not in refused.stderr + missing.stderr


def test_moto_delivers_into_the_account_and_region_its_arn_names(served: str) -> None:
    """Issue 31 §2: with every account and region served, what moto's SNS
    delivers reaches the sqsqueue queue the subscription's ARN names: a topic
    in eu-west-1 into that region's queue, and a topic of moto's account into
    another account's queue once that queue's policy lets SNS send."""

    def client(service: str, region: str, key: str = "test") -> Any:
        return boto3.client(
            service,
            endpoint_url=served,
            region_name=region,
            aws_access_key_id=key,
            aws_secret_access_key="test",
        )

    sqs_eu = client("sqs", "eu-west-1")
    eu_url = sqs_eu.create_queue(QueueName="eu-orders")["QueueUrl"]
    assert eu_url == f"{served}/queue/eu-west-1/{ACCOUNT}/eu-orders"
    sns_eu = client("sns", "eu-west-1")
    topic = sns_eu.create_topic(Name="eu-events")["TopicArn"]
    assert topic == f"arn:aws:sns:eu-west-1:{ACCOUNT}:eu-events"
    sns_eu.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=f"arn:aws:sqs:eu-west-1:{ACCOUNT}:eu-orders",
        Attributes={"RawMessageDelivery": "true"},
    )
    sns_eu.publish(TopicArn=topic, Message="to europe")
    [message] = sqs_eu.receive_message(QueueUrl=eu_url)["Messages"]
    assert message["Body"] == "to europe"
    # The default region's queue of the same name stays empty.
    home = client("sqs", REGION)
    home_url = home.create_queue(QueueName="eu-orders")["QueueUrl"]
    assert "Messages" not in home.receive_message(QueueUrl=home_url)
    # Another account's queue, in the default region.
    other = client("sqs", REGION, key="111111111111")
    other_url = other.create_queue(QueueName="inbox")["QueueUrl"]
    assert other_url == f"{served}/111111111111/inbox"
    sns = client("sns", REGION)
    home_topic = sns.create_topic(Name="home-events")["TopicArn"]
    sns.subscribe(
        TopicArn=home_topic,
        Protocol="sqs",
        Endpoint=f"arn:aws:sqs:{REGION}:111111111111:inbox",
        Attributes={"RawMessageDelivery": "true"},
    )
    sns.publish(TopicArn=home_topic, Message="across accounts")
    [delivered] = other.receive_message(QueueUrl=other_url)["Messages"]
    assert delivered["Body"] == "across accounts"
    # EventBridge: a rule in eu-west-1 targeting that queue, in us-east-1 of another account.
    events = client("events", "eu-west-1")
    events.put_rule(Name="to-inbox", EventPattern=json.dumps({"source": ["shop"]}))
    events.put_targets(
        Rule="to-inbox",
        Targets=[{"Id": "inbox", "Arn": f"arn:aws:sqs:{REGION}:111111111111:inbox"}],
    )
    events.put_events(
        Entries=[{"Source": "shop", "DetailType": "order", "Detail": json.dumps({"id": 7})}]
    )
    [event] = other.receive_message(QueueUrl=other_url, WaitTimeSeconds=1)["Messages"]
    assert json.loads(event["Body"])["detail"] == {"id": 7}
    # S3: a bucket of moto's account notifying that queue.
    s3 = client("s3", REGION)
    s3.create_bucket(Bucket="shared-uploads")
    s3.put_bucket_notification_configuration(
        Bucket="shared-uploads",
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": f"arn:aws:sqs:{REGION}:111111111111:inbox",
                    "Events": ["s3:ObjectCreated:*"],
                }
            ]
        },
    )
    s3.put_object(Bucket="shared-uploads", Key="cat.jpg", Body=b"meow")
    bodies = [
        json.loads(m["Body"])
        for m in other.receive_message(QueueUrl=other_url, MaxNumberOfMessages=10)["Messages"]
    ]
    keys = [r["s3"]["object"]["key"] for b in bodies for r in b.get("Records", [])]
    assert keys == ["cat.jpg"]
