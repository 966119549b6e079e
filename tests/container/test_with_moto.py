"""``docker build --target with-moto .`` (issue 31, part 1): the image also
serves every other AWS service through moto on the same port, and moto's SNS
delivers into sqsqueue's queue: a topic, a queue, a subscription, a publish,
and the SNS envelope received from the queue with boto3."""

from __future__ import annotations

import json

import boto3
import pytest

from tests.container import _docker
from tests.container.test_image import MB

# The first test of a run waits for both images to build (about 100 s on an idle
# machine, longer on a busy one): more than the suite's 300 s per test is allowed.
pytestmark = [pytest.mark.container, pytest.mark.timeout(1800)]


def test_sns_publishes_into_a_sqsqueue_queue(moto_image: str, base_image: str) -> None:
    keys = {
        "region_name": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
    }
    with _docker.running(moto_image, name="moto") as c:
        _docker.wait_health(c, within=60)
        sqs = boto3.client("sqs", endpoint_url=c.url, **keys)
        sns = boto3.client("sns", endpoint_url=c.url, **keys)
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        topic = sns.create_topic(Name="order-events")["TopicArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
        sns.publish(TopicArn=topic, Message="order 1 placed", Subject="orders")
        got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)["Messages"]
        logs = c.logs()
    [m] = got
    envelope = json.loads(m["Body"])
    assert envelope["Type"] == "Notification", envelope
    assert envelope["TopicArn"] == topic
    assert envelope["Message"] == "order 1 placed"
    assert "every other AWS service through moto" in logs, logs
    size = int(_docker.docker("image", "inspect", "--format", "{{.Size}}", moto_image))
    base = int(_docker.docker("image", "inspect", "--format", "{{.Size}}", base_image))
    print(f"with-moto image: {(size - base) / MB:.1f} MB above {base_image}")
