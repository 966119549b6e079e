"""The boto3 resource API over the mock: Queue, Message, collections
(docs/aws-behaviour.md §1.5: botocore runs unchanged, so the resource layer
built on the client works too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsqueue import Broker
from sqsqueue.testing import mock_sqs
from tests.aws._helpers import arn_of, url_of


@pytest.fixture
def resource(broker: Broker) -> Iterator[Any]:
    """boto3.resource("sqs") served by the broker."""
    with mock_sqs(broker):
        yield boto3.resource("sqs", region_name="us-east-1")


def test_create_queue_send_receive_delete(resource: Any, broker: Broker) -> None:
    """Section 2: create_queue returns a Queue whose url is AWS's; send_message,
    receive_messages and Message.delete round-trip through the broker."""
    queue = resource.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "10"})
    assert queue.url == url_of("jobs")
    sent = queue.send_message(
        MessageBody="hello",
        MessageAttributes={"Foo": {"DataType": "String", "StringValue": "Bar"}},
    )
    assert sent["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    messages = queue.receive_messages(
        MaxNumberOfMessages=10, MessageAttributeNames=["All"], AttributeNames=["All"]
    )
    assert len(messages) == 1
    message = messages[0]
    assert message.body == "hello"
    assert message.message_id == sent["MessageId"]
    assert message.message_attributes == {"Foo": {"DataType": "String", "StringValue": "Bar"}}
    assert message.attributes["ApproximateReceiveCount"] == "1"
    assert message.queue_url == queue.url
    message.delete()
    assert len(broker.get_queue("jobs")) == 0


def test_queue_by_url_and_attributes(resource: Any) -> None:
    """Section 5: Queue(url).attributes loads GetQueueAttributes(All)."""
    resource.create_queue(QueueName="jobs")
    queue = resource.Queue(url_of("jobs"))
    assert queue.attributes["QueueArn"] == arn_of("jobs")
    assert queue.attributes["VisibilityTimeout"] == "30"
    queue.set_attributes(Attributes={"VisibilityTimeout": "45"})
    queue.reload()
    assert queue.attributes["VisibilityTimeout"] == "45"


def test_get_queue_by_name_and_missing(resource: Any) -> None:
    """Section 2.1: get_queue_by_name uses GetQueueUrl; unknown names raise the
    modeled QueueDoesNotExist."""
    resource.create_queue(QueueName="jobs")
    assert resource.get_queue_by_name(QueueName="jobs").url == url_of("jobs")
    with pytest.raises(resource.meta.client.exceptions.QueueDoesNotExist):
        resource.get_queue_by_name(QueueName="missing")


def test_queues_collection(resource: Any) -> None:
    """Section 2.1: queues.all() and queues.filter(QueueNamePrefix=...) use
    ListQueues."""
    assert list(resource.queues.all()) == []
    for name in ("alpha", "beta", "alpine"):
        resource.create_queue(QueueName=name)
    assert sorted(q.url for q in resource.queues.all()) == [
        url_of("alpha"),
        url_of("alpine"),
        url_of("beta"),
    ]
    assert sorted(q.url for q in resource.queues.filter(QueueNamePrefix="al")) == [
        url_of("alpha"),
        url_of("alpine"),
    ]


def test_batch_and_visibility_via_resource(resource: Any) -> None:
    """Section 2: send_messages / change_visibility / delete_messages."""
    queue = resource.create_queue(QueueName="jobs")
    result = queue.send_messages(Entries=[{"Id": str(i), "MessageBody": f"m{i}"} for i in range(3)])
    assert len(result["Successful"]) == 3
    messages = queue.receive_messages(MaxNumberOfMessages=10)
    assert sorted(m.body for m in messages) == ["m0", "m1", "m2"]
    messages[0].change_visibility(VisibilityTimeout=0)
    again = queue.receive_messages()
    assert [m.body for m in again] == [messages[0].body]
    deleted = queue.delete_messages(
        Entries=[{"Id": str(i), "ReceiptHandle": m.receipt_handle} for i, m in enumerate(messages)]
    )
    assert len(deleted["Successful"]) == 3
    assert "Failed" not in deleted
    queue.purge()
    queue.delete()
    assert list(resource.queues.all()) == []
