"""A moto test module, moved to sqsqueue by changing one line: its import.

Before::

    from moto import mock_aws

After (below)::

    from sqsqueue.testing import mock_aws

Nothing else changes: the decorators, the unittest class, the SNS topic
fanning out to queues, the dead-letter queue named by a hand-written ARN in
moto's account. SNS stays moto's; every SQS call, and SNS's deliveries, are
now sqsqueue's, with SQS's rules (docs/moto.md lists where AWS is stricter
than moto). Run it with ``pytest examples/moto_migration``.
"""

import json
import unittest

import boto3
import pytest

from sqsqueue.testing import mock_aws

REGION = "us-east-1"
DLQ_ARN = "arn:aws:sqs:us-east-1:123456789012:orders-dlq"  # moto's default account


def place_order(sns, topic_arn, order_id):
    """The code under test: announce an order on the orders topic."""
    sns.publish(
        TopicArn=topic_arn,
        Message=json.dumps({"order": order_id}),
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "placed"}},
    )


def make_queues(sqs):
    sqs.create_queue(QueueName="orders-dlq")
    return sqs.create_queue(
        QueueName="orders",
        Attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": "1"})
        },
    )["QueueUrl"]


def subscribe(sns, sqs, url):
    topic = sns.create_topic(Name="orders")["TopicArn"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    sns.subscribe(
        TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"}
    )
    return topic


@mock_aws
@pytest.mark.parametrize("order_id", ["o-1", "o-2"])
def test_an_order_reaches_the_queue(order_id):
    sqs = boto3.client("sqs", region_name=REGION)
    sns = boto3.client("sns", region_name=REGION)
    url = make_queues(sqs)
    topic = subscribe(sns, sqs, url)
    place_order(sns, topic, order_id)
    messages = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert [json.loads(m["Body"]) for m in messages] == [{"order": order_id}]
    assert messages[0]["MessageAttributes"]["kind"]["StringValue"] == "placed"
    # Each decorated call starts from nothing: one queue pair per call.
    assert len(sqs.list_queues()["QueueUrls"]) == 2


@mock_aws
class TestDeadLetters(unittest.TestCase):
    def setUp(self):
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.url = make_queues(self.sqs)

    def test_a_message_received_too_often_moves_to_the_dlq(self):
        self.sqs.send_message(QueueUrl=self.url, MessageBody="poison")
        [first] = self.sqs.receive_message(QueueUrl=self.url, VisibilityTimeout=0)["Messages"]
        assert first["Body"] == "poison"
        # maxReceiveCount 1: the next receive moves it instead of returning it.
        assert "Messages" not in self.sqs.receive_message(QueueUrl=self.url)
        dlq = self.sqs.get_queue_url(QueueName="orders-dlq")["QueueUrl"]
        moved = self.sqs.receive_message(QueueUrl=dlq)["Messages"]
        assert [m["Body"] for m in moved] == ["poison"]
