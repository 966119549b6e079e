"""moto's services deliver into sqsqueue's queues (``sqsqueue.moto``).

Every delivery test runs twice (the ``world`` fixture): under moto's
``mock_aws`` alone and with ``mock_sqs`` inside it, with the same assertions,
so what arrives in the queue under sqsqueue is what arrives under moto: the
SNS envelope byte for byte (its random fields read back and the JSON rebuilt
the way SNS writes it), raw bodies and attributes exactly, FIFO order and
deduplication, S3 and EventBridge events. Under sqsqueue each test also checks
that the message is in the sqsqueue broker and that moto's own SQS backend
never saw the queue. A few tests are sqsqueue-only, each saying why: what AWS
does and moto does not.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from typing import Any

import boto3
import moto
import pytest
from botocore.exceptions import ClientError
from moto.sqs.models import sqs_backends

from sqsqueue.testing import MockSQS, mock_sqs
from tests._helpers import run_python

REGION = "us-east-1"
ACCOUNT = "123456789012"
#: moto 5.0 (the oldest supported) has neither Textract notification channels
#: nor event source mappings in its docker-free Lambda (those tests need 5.1),
#: and its own SQS answers today's botocore no system attributes.
MOTO_5_0 = tuple(int(p) for p in moto.__version__.split(".")[:2]) < (5, 1)
needs_moto_5_1 = pytest.mark.skipif(MOTO_5_0, reason="moto 5.0 lacks the feature itself")


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)


def _queue(name: str, **attributes: str) -> tuple[str, str]:
    """(url, arn) of a new queue."""
    sqs = _client("sqs")
    url: str = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn: str = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return url, arn


def _receive(url: str, n: int = 10) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = (
        _client("sqs")
        .receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=n,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
        )
        .get("Messages", [])
    )
    return messages


def _in_sqsqueue(world: MockSQS | None, name: str) -> None:
    """Under sqsqueue: the queue is the broker's, and moto's own backend has none."""
    if world is None:
        return
    assert name in world.broker
    account = dict.get(sqs_backends, ACCOUNT)
    region = dict.get(account, REGION) if account is not None else None
    assert region is None or name not in region.queues


def _envelope(body: str, **expected: Any) -> None:
    """The SNS envelope is ``expected`` plus SNS's generated fields, written as
    SNS writes it (sorted keys, two-space indent): compared as bytes."""
    parsed = json.loads(body)
    generated = ("MessageId", "Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL")
    rebuilt = {**expected, **{k: parsed[k] for k in generated}}
    rebuilt.setdefault("SignatureVersion", parsed.get("SignatureVersion"))
    assert body == json.dumps(rebuilt, sort_keys=True, indent=2, separators=(",", ": "))


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


# -- SNS ----------------------------------------------------------------------------


def _topic(name: str = "events", **attributes: str) -> str:
    arn: str = _client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
    return arn


def _subscribe(topic: str, queue_arn: str, **attributes: str) -> str:
    arn: str = _client("sns").subscribe(
        TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes=attributes
    )["SubscriptionArn"]
    return arn


def test_sns_envelope(world: MockSQS | None) -> None:
    """A publish reaches the subscribed queue as SNS's JSON envelope: Type,
    TopicArn, Subject, Message and MessageAttributes as published."""
    url, arn = _queue("inbox")
    topic = _topic()
    _subscribe(topic, arn)
    _client("sns").publish(
        TopicArn=topic,
        Message="hello",
        Subject="greeting",
        MessageAttributes={
            "color": {"DataType": "String", "StringValue": "red"},
            "size": {"DataType": "Number", "StringValue": "3"},
        },
    )
    [message] = _receive(url)
    _envelope(
        message["Body"],
        Type="Notification",
        TopicArn=topic,
        Subject="greeting",
        Message="hello",
        MessageAttributes={
            "color": {"Type": "String", "Value": "red"},
            "size": {"Type": "Number", "Value": "3"},
        },
    )
    assert message["MD5OfBody"] == _md5(message["Body"])
    assert "MessageAttributes" not in message  # they travel inside the envelope
    _in_sqsqueue(world, "inbox")


def test_sns_raw_delivery(world: MockSQS | None) -> None:
    """RawMessageDelivery: the body is the message itself and the SNS message
    attributes become SQS message attributes (String, Number; Binary below)."""
    url, arn = _queue("raw")
    topic = _topic()
    _subscribe(topic, arn, RawMessageDelivery="true")
    _client("sns").publish(
        TopicArn=topic,
        Message="raw body",
        MessageAttributes={
            "color": {"DataType": "String", "StringValue": "red"},
            "size": {"DataType": "Number", "StringValue": "3"},
        },
    )
    [message] = _receive(url)
    assert message["Body"] == "raw body"
    assert message["MD5OfBody"] == _md5("raw body")
    assert message["MessageAttributes"] == {
        "color": {"StringValue": "red", "DataType": "String"},
        "size": {"StringValue": "3", "DataType": "Number"},
    }
    _in_sqsqueue(world, "raw")


def test_sns_filter_policy_on_attributes(world: MockSQS | None) -> None:
    """A subscription's filter policy on message attributes: only matches arrive."""
    url, arn = _queue("reds")
    topic = _topic()
    _subscribe(topic, arn, RawMessageDelivery="true", FilterPolicy=json.dumps({"color": ["red"]}))
    sns = _client("sns")
    for color in ("red", "blue", "red"):
        sns.publish(
            TopicArn=topic,
            Message=color,
            MessageAttributes={"color": {"DataType": "String", "StringValue": color}},
        )
    assert [m["Body"] for m in _receive(url)] == ["red", "red"]
    _in_sqsqueue(world, "reds")


def test_sns_filter_policy_on_the_body(world: MockSQS | None) -> None:
    """FilterPolicyScope MessageBody: the policy matches the JSON message."""
    url, arn = _queue("big-orders")
    topic = _topic()
    _subscribe(
        topic,
        arn,
        RawMessageDelivery="true",
        FilterPolicyScope="MessageBody",
        FilterPolicy=json.dumps({"amount": [{"numeric": [">", 100]}]}),
    )
    sns = _client("sns")
    for amount in (50, 150, 500):
        sns.publish(TopicArn=topic, Message=json.dumps({"amount": amount}))
    assert [json.loads(m["Body"])["amount"] for m in _receive(url)] == [150, 500]
    _in_sqsqueue(world, "big-orders")


def test_sns_fifo_topic_to_fifo_queue(world: MockSQS | None) -> None:
    """A FIFO topic delivers to a FIFO queue with the publish's group and
    deduplication ids: order within a group kept, a repeated id delivered once."""
    url, arn = _queue("orders.fifo", FifoQueue="true")
    topic = _topic("orders.fifo", FifoTopic="true")
    _subscribe(topic, arn, RawMessageDelivery="true")
    sns = _client("sns")
    for body, dedup in (("first", "d1"), ("second", "d2"), ("again", "d1"), ("third", "d3")):
        sns.publish(TopicArn=topic, Message=body, MessageGroupId="g", MessageDeduplicationId=dedup)
    received = _receive(url)
    assert [m["Body"] for m in received] == ["first", "second", "third"]
    if world is None and MOTO_5_0:
        return  # moto 5.0's own queue answers today's botocore no system attributes
    assert [m["Attributes"]["MessageGroupId"] for m in received] == ["g"] * 3
    assert [m["Attributes"]["MessageDeduplicationId"] for m in received] == ["d1", "d2", "d3"]
    _in_sqsqueue(world, "orders.fifo")


def test_sns_fifo_topic_to_standard_queue(world: MockSQS | None) -> None:
    """AWS: an SNS FIFO topic delivers to a standard queue, and passes it no
    group id ("Message group ID is not passed to Amazon SQS standard queues":
    SNS Developer Guide, fifo-message-grouping) nor deduplication id (a FIFO
    queue's); recorded: moto's aws_verified
    tests/test_sns/test_publishing.py::test_publish_from_sns_fifo_to_standard_sqs.
    With sqsqueue the publish failed: the bridge passed moto's deduplication
    id on, which SQS refuses on a standard queue."""
    if world is None and MOTO_5_0:
        pytest.skip("moto 5.0's own queue refuses the group id: the sqsqueue run still runs")
    url, arn = _queue("standard")
    topic = _topic("orders.fifo", FifoTopic="true", ContentBasedDeduplication="true")
    _subscribe(topic, arn)
    sns = _client("sns")
    sns.publish(TopicArn=topic, Message="message", MessageGroupId="message_group_id")
    sns.publish(TopicArn=topic, Message="second", MessageGroupId="g", MessageDeduplicationId="d1")
    received = _receive(url)
    assert [json.loads(m["Body"])["Message"] for m in received] == ["message", "second"]
    if world is not None:  # moto's own queue keeps the ids it is handed
        for m in received:
            assert "MessageGroupId" not in m["Attributes"]
            assert "MessageDeduplicationId" not in m["Attributes"]
    _in_sqsqueue(world, "standard")


def test_sns_publish_batch(world: MockSQS | None) -> None:
    """PublishBatch delivers each entry, with its attributes, in order."""
    url, arn = _queue("batch")
    topic = _topic()
    _subscribe(topic, arn, RawMessageDelivery="true")
    answer = _client("sns").publish_batch(
        TopicArn=topic,
        PublishBatchRequestEntries=[
            {
                "Id": f"e{i}",
                "Message": f"m{i}",
                "MessageAttributes": {"n": {"DataType": "Number", "StringValue": str(i)}},
            }
            for i in range(3)
        ],
    )
    assert len(answer["Successful"]) == 3
    received = _receive(url)
    assert [m["Body"] for m in received] == ["m0", "m1", "m2"]
    assert [m["MessageAttributes"]["n"]["StringValue"] for m in received] == ["0", "1", "2"]
    _in_sqsqueue(world, "batch")


def test_sns_to_a_missing_queue_fails_as_moto_does(world: MockSQS | None) -> None:
    """A publish whose subscribed queue does not exist fails the same way in
    both: moto's NonExistentQueue (never a silent success)."""
    _, arn = _queue("gone")
    topic = _topic()
    _subscribe(topic, arn)
    _client("sqs").delete_queue(QueueUrl=_client("sqs").get_queue_url(QueueName="gone")["QueueUrl"])
    with pytest.raises(ClientError) as exc:
        _client("sns").publish(TopicArn=topic, Message="lost?")
    assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


def test_ses_feedback_through_sns(world: MockSQS | None) -> None:
    """SES bounce notifications go through SNS to the subscribed queue."""
    url, arn = _queue("ses-feedback")
    topic = _topic("ses")
    _subscribe(topic, arn)
    ses = _client("ses")
    ses.verify_domain_identity(Domain="example.com")
    ses.set_identity_notification_topic(
        Identity="example.com", NotificationType="Bounce", SnsTopic=topic
    )
    ses.send_email(
        Source="me@example.com",
        Destination={"ToAddresses": ["bounce@simulator.amazonses.com"]},
        Message={"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}},
    )
    [message] = _receive(url)
    notification = json.loads(message["Body"])["Message"]  # moto writes it as an object
    assert "bounce" in notification  # moto's canned bounce notification
    assert notification["mail"]["sendingAccountId"] == ACCOUNT
    _in_sqsqueue(world, "ses-feedback")


@needs_moto_5_1
def test_textract_notification_channel(world: MockSQS | None) -> None:
    """Textract's job-completion notification reaches the queue through SNS."""
    url, arn = _queue("textract")
    topic = _topic("textract")
    _subscribe(topic, arn, RawMessageDelivery="true")
    job = _client("textract").start_document_text_detection(
        DocumentLocation={"S3Object": {"Bucket": "docs", "Name": "a.pdf"}},
        NotificationChannel={"SNSTopicArn": topic, "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/t"},
    )
    [message] = _receive(url)
    assert json.loads(message["Body"])["JobId"] == job["JobId"]
    _in_sqsqueue(world, "textract")


# -- S3 and EventBridge -------------------------------------------------------------


def test_s3_event_notification(world: MockSQS | None) -> None:
    """An S3 bucket notifies the queue: S3's test event when configured, then
    one ObjectCreated:Put record for the object."""
    url, arn = _queue("uploads")
    s3 = _client("s3")
    s3.create_bucket(Bucket="photos")
    s3.put_bucket_notification_configuration(
        Bucket="photos",
        NotificationConfiguration={
            "QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]
        },
    )
    s3.put_object(Bucket="photos", Key="cat.jpg", Body=b"meow")
    test_event, created = (json.loads(m["Body"]) for m in _receive(url))
    assert (test_event["Event"], test_event["Bucket"]) == ("s3:TestEvent", "photos")
    [record] = created["Records"]
    assert record["eventSource"] == "aws:s3"
    assert record["eventName"] == "ObjectCreated:Put"
    assert record["s3"]["bucket"]["name"] == "photos"
    assert record["s3"]["object"]["key"] == "cat.jpg"
    assert record["s3"]["object"]["size"] == 4
    _in_sqsqueue(world, "uploads")


def test_eventbridge_targets(world: MockSQS | None) -> None:
    """An EventBridge rule's SQS targets receive the event as EventBridge
    sends it; a FIFO target gets SqsParameters' MessageGroupId (the queue has
    content-based deduplication, which AWS requires of it)."""
    url, arn = _queue("events")
    fifo_url, fifo_arn = _queue("events.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    events = _client("events")
    events.put_rule(Name="orders", EventPattern=json.dumps({"source": ["shop"]}))
    events.put_targets(
        Rule="orders",
        Targets=[
            {"Id": "whole", "Arn": arn},
            {"Id": "fifo", "Arn": fifo_arn, "SqsParameters": {"MessageGroupId": "shop-group"}},
        ],
    )
    events.put_events(
        Entries=[{"Source": "shop", "DetailType": "order", "Detail": json.dumps({"id": "o-1"})}]
    )
    [whole] = (json.loads(m["Body"]) for m in _receive(url))
    assert (whole["source"], whole["detail-type"], whole["detail"]) == (
        "shop",
        "order",
        {"id": "o-1"},
    )
    assert (whole["region"], whole["version"]) == (REGION, "0")
    [fifo] = _receive(fifo_url)
    if world is not None or not MOTO_5_0:  # moto 5.0 alone answers no system attributes
        assert fifo["Attributes"]["MessageGroupId"] == "shop-group"
    assert json.loads(fifo["Body"]) == whole | {"id": json.loads(fifo["Body"])["id"]}
    _in_sqsqueue(world, "events")
    _in_sqsqueue(world, "events.fifo")


def test_eventbridge_input_input_path_and_transformer() -> None:
    """What AWS sends for a target's Input (the text verbatim), InputPath (the
    value at the path, as JSON) and InputTransformer (the template filled:
    raw text inside a string literal, JSON elsewhere). moto sends the whole
    event for Input and InputPath (and, before 5.1, for transformers), so this
    is sqsqueue only."""
    with moto.mock_aws(), mock_sqs():
        url, arn = _queue("shaped")
        events = _client("events")
        events.put_rule(Name="orders", EventPattern=json.dumps({"source": ["shop"]}))
        events.put_targets(
            Rule="orders",
            Targets=[
                {"Id": "constant", "Arn": arn, "Input": '{"fixed":true}'},
                {"Id": "path", "Arn": arn, "InputPath": "$.detail"},
                {"Id": "leaf", "Arn": arn, "InputPath": "$.detail.id"},
                {
                    "Id": "transformed",
                    "Arn": arn,
                    "InputTransformer": {
                        "InputPathsMap": {"id": "$.detail.id", "n": "$.detail.n"},
                        "InputTemplate": '{"order": <id>, "text": "order <id> of <n>", "n": <n>}',
                    },
                },
            ],
        )
        events.put_events(
            Entries=[
                {
                    "Source": "shop",
                    "DetailType": "order",
                    "Detail": json.dumps({"id": "o-1", "n": 2}),
                }
            ]
        )
        assert sorted(m["Body"] for m in _receive(url)) == sorted(
            [
                '{"fixed":true}',
                '{"id": "o-1", "n": 2}',
                '"o-1"',
                '{"order": "o-1", "text": "order o-1 of 2", "n": 2}',
            ]
        )


# -- Lambda, CloudFormation, tagging ------------------------------------------------


def _function() -> str:
    role = _client("iam").create_role(
        RoleName="runner",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "def handle(event, context):\n    return event\n")
    arn: str = _client("lambda").create_function(
        FunctionName="consumer",
        Runtime="python3.11",
        Role=role,
        Handler="handler.handle",
        Code={"ZipFile": code.getvalue()},
    )["FunctionArn"]
    return arn


@needs_moto_5_1
def test_lambda_event_source_mapping(world: MockSQS | None) -> None:
    """A Lambda event source mapping on a queue: moto runs the function (its
    docker-free backend here) after each send and deletes the batch it
    processed, so the queue is left empty."""
    url, arn = _queue("jobs")
    function = _function()
    mapping = _client("lambda").create_event_source_mapping(
        EventSourceArn=arn, FunctionName=function, BatchSize=5
    )
    assert mapping["EventSourceArn"] == arn
    sqs = _client("sqs")
    sqs.send_message(QueueUrl=url, MessageBody="work")
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
    assert _receive(url) == []
    _in_sqsqueue(world, "jobs")


def test_cloudformation_creates_the_queue(world: MockSQS | None) -> None:
    """A queue CloudFormation creates is reachable by the test's SQS client
    with the template's attributes and tags; Ref and GetAtt give its URL and
    ARN; deleting the stack deletes it."""
    template = {
        "Resources": {
            "Dlq": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cfn-dlq"}},
            "Work": {
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "QueueName": "cfn-work",
                    "VisibilityTimeout": 60,
                    "RedrivePolicy": {
                        "deadLetterTargetArn": {"Fn::GetAtt": ["Dlq", "Arn"]},
                        "maxReceiveCount": 3,
                    },
                    "Tags": [{"Key": "team", "Value": "shop"}],
                },
            },
        },
        "Outputs": {
            "Url": {"Value": {"Ref": "Work"}},
            "Arn": {"Value": {"Fn::GetAtt": ["Work", "Arn"]}},
        },
    }
    cfn = _client("cloudformation")
    cfn.create_stack(StackName="shop", TemplateBody=json.dumps(template))
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cfn.describe_stacks(StackName="shop")["Stacks"][0]["Outputs"]
    }
    url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/cfn-work"
    assert outputs == {"Url": url, "Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:cfn-work"}
    sqs = _client("sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "60"
    assert json.loads(attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:cfn-dlq",
        "maxReceiveCount": 3,
    }
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "shop"}
    _in_sqsqueue(world, "cfn-work")
    cfn.delete_stack(StackName="shop")
    assert sqs.list_queues().get("QueueUrls", []) == []


def test_resource_groups_tagging_api(world: MockSQS | None) -> None:
    """GetResources lists the tagged queues (an untagged one is left out)."""
    url, arn = _queue("tagged")
    _queue("untagged")
    _client("sqs").tag_queue(QueueUrl=url, Tags={"env": "test"})
    found = _client("resourcegroupstaggingapi").get_resources(ResourceTypeFilters=["sqs"])
    assert found["ResourceTagMappingList"] == [
        {"ResourceARN": arn, "Tags": [{"Key": "env", "Value": "test"}]}
    ]


# -- what AWS does and moto does not --------------------------------------------------


def test_content_based_fifo_topic_passes_its_deduplication_id() -> None:
    """A FIFO topic with content-based deduplication passes SNS's id (the
    SHA-256 of the message) to a FIFO queue without it, as AWS does; moto's own
    queue refuses the delivery for want of an id, so this is sqsqueue only."""
    with moto.mock_aws():
        topic = _topic("cbd.fifo", FifoTopic="true", ContentBasedDeduplication="true")
        _subscribe(topic, _queue("plain.fifo", FifoQueue="true")[1], RawMessageDelivery="true")
        with pytest.raises(ClientError):  # moto alone
            _client("sns").publish(TopicArn=topic, Message="once", MessageGroupId="g")
    with moto.mock_aws(), mock_sqs():
        url, arn = _queue("plain.fifo", FifoQueue="true")
        topic = _topic("cbd.fifo", FifoTopic="true", ContentBasedDeduplication="true")
        _subscribe(topic, arn, RawMessageDelivery="true")
        for _ in range(2):
            _client("sns").publish(TopicArn=topic, Message="once", MessageGroupId="g")
        [message] = _receive(url)
        digest = hashlib.sha256(b"once").hexdigest()
        assert message["Attributes"]["MessageDeduplicationId"] == digest


def test_sns_raw_delivery_of_a_binary_attribute() -> None:
    """A Binary message attribute of a raw delivery arrives as the SQS binary
    attribute, as AWS delivers it; moto's own queue fails on it (it hashes
    SNS's base64 text as bytes), so sqsqueue only."""
    with moto.mock_aws(), mock_sqs():
        url, arn = _queue("raw-binary")
        topic = _topic()
        _subscribe(topic, arn, RawMessageDelivery="true")
        _client("sns").publish(
            TopicArn=topic,
            Message="with a blob",
            MessageAttributes={"blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"}},
        )
        [message] = _receive(url)
        assert message["MessageAttributes"] == {
            "blob": {"BinaryValue": b"\x00\x01", "DataType": "Binary"}
        }


def test_subscription_dead_letter_queue() -> None:
    """A subscription whose queue is gone delivers to its dead-letter queue
    (AWS: a client-side error moves the message there, and the publish
    succeeds); moto has no subscription dead-letter queues, so sqsqueue only."""
    with moto.mock_aws(), mock_sqs() as mock:
        url, arn = _queue("consumer")
        dlq_url, dlq_arn = _queue("consumer-dlq")
        topic = _topic()
        _subscribe(
            topic,
            arn,
            RawMessageDelivery="true",
            RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}),
        )
        _client("sqs").delete_queue(QueueUrl=url)
        _client("sns").publish(TopicArn=topic, Message="undeliverable")
        assert [m["Body"] for m in _receive(dlq_url)] == ["undeliverable"]
        assert "consumer-dlq" in mock.broker


# -- nesting, order of imports, server of another region ------------------------------


def test_mock_sqs_outside_mock_aws() -> None:
    """The nesting order does not matter: mock_sqs outside mock_aws."""
    with mock_sqs() as mock, moto.mock_aws():
        _, arn = _queue("outer")
        topic = _topic()
        _subscribe(topic, arn, RawMessageDelivery="true")
        _client("sns").publish(TopicArn=topic, Message="x")
        assert [m.body for m in mock.broker.get_queue("outer").receive()] == ["x"]


def test_moto_serves_its_own_sqs_again_after_mock_sqs() -> None:
    """Once mock_sqs stops, SNS delivers to moto's own queues again."""
    with moto.mock_aws():
        with mock_sqs():
            pass
        url, arn = _queue("moto-own")
        topic = _topic()
        _subscribe(topic, arn, RawMessageDelivery="true")
        _client("sns").publish(TopicArn=topic, Message="y")
        assert [m["Body"] for m in _receive(url)] == ["y"]
        assert "moto-own" in sqs_backends[ACCOUNT][REGION].queues


def test_moto_imported_after_mock_sqs_started() -> None:
    """A mock started before moto was ever imported still receives SNS's
    deliveries: moto's modules are patched as they are imported (fresh
    interpreter)."""
    script = (
        "import sys, boto3\n"
        "from sqsqueue.testing import mock_sqs\n"
        "with mock_sqs() as mock:\n"
        "    assert 'moto' not in sys.modules\n"
        "    import moto\n"
        "    with moto.mock_aws():\n"
        "        sqs = boto3.client('sqs', region_name='us-east-1')\n"
        "        sns = boto3.client('sns', region_name='us-east-1')\n"
        "        url = sqs.create_queue(QueueName='late')['QueueUrl']\n"
        "        t = sns.create_topic(Name='t')['TopicArn']\n"
        "        sns.subscribe(TopicArn=t, Protocol='sqs',"
        " Endpoint='arn:aws:sqs:us-east-1:123456789012:late',"
        " Attributes={'RawMessageDelivery': 'true'})\n"
        "        sns.publish(TopicArn=t, Message='z')\n"
        "        print([m.body for m in mock.broker.get_queue('late').receive()])\n"
    )
    assert run_python(script).strip() == "['z']"


def test_binary_values_in_moto_formats() -> None:
    """The bridge reads moto's attribute formats of either era: moto 5.1 on
    (``DataType``/``BinaryValue`` as base64 text) and 5.0
    (``data_type``/``binary_value``)."""
    from sqsqueue.moto._backend import attributes_of

    assert attributes_of(
        {"b": {"DataType": "Binary", "BinaryValue": base64.b64encode(b"\x01").decode()}}
    ) == {"b": {"DataType": "Binary", "BinaryValue": b"\x01"}}
    assert attributes_of({"s": {"data_type": "String", "string_value": "v"}}) == {
        "s": {"DataType": "String", "StringValue": "v"}
    }


def test_sqsqueue_mock_aws_is_motos_with_sqsqueues_sqs() -> None:
    """``sqsqueue.testing.mock_aws``: moto's services and sqsqueue's SQS in one
    mock (a context manager here; decorators in the migration example), and
    neither afterwards."""
    from botocore.exceptions import NoCredentialsError

    from sqsqueue.testing import MockAWS, mock_aws

    with mock_aws() as mock:
        assert isinstance(mock, MockAWS)
        _, arn = _queue("both")
        topic = _topic()
        _subscribe(topic, arn, RawMessageDelivery="true")
        _client("sns").publish(TopicArn=topic, Message="one mock")
        assert [m.body for m in mock.broker.get_queue("both").receive()] == ["one mock"]
    with pytest.raises((NoCredentialsError, ClientError)):  # moto stopped too
        _client("sns").list_topics()


@pytest.mark.parametrize("how", ["sync", "async"])
def test_a_send_runs_the_queues_mappings_once(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's and aiobotocore's sends alike run the queue's event source
    mappings once (the async client's call goes through the sync one)."""
    import asyncio

    from sqsqueue import Broker
    from sqsqueue.moto import _lambda

    broker = Broker()
    url = broker.create_queue("jobs").url
    _lambda.mappings_of(broker, "jobs")["arn:aws:lambda:us-east-1:123456789012:function:f"] = {}
    runs: list[str] = []
    monkeypatch.setattr(_lambda, "run_mappings", lambda b, name: runs.append(name))
    client = _lambda.client(broker)
    for operation, params in (
        ("SendMessage", {"QueueUrl": url, "MessageBody": "x"}),
        ("SendMessageBatch", {"QueueUrl": url, "Entries": [{"Id": "1", "MessageBody": "y"}]}),
    ):
        if how == "sync":
            client.call(operation, params)
        else:
            asyncio.run(client.call_async(operation, params))
    assert runs == ["jobs", "jobs"]
    broker.close()
