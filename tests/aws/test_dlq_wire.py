"""Dead-letter queues through real boto3: RedrivePolicy, the move at receive
time, ListDeadLetterSourceQueues (docs/aws-behaviour.md §§2, 2.1, 5, 9, 10, 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsqueue import ManualClock
from tests.aws._helpers import arn_of, url_of


def _redrive(sqs: Any, source: str, dlq_name: str, max_receive_count: int = 1) -> None:
    policy = {"deadLetterTargetArn": arn_of(dlq_name), "maxReceiveCount": max_receive_count}
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": json.dumps(policy)})


def test_redrive_policy_reads_back_with_numeric_max_receive_count(sqs: Any) -> None:
    """Section 5: RedrivePolicy is returned as a JSON string whose
    maxReceiveCount is a number (AWS-obs), also when set with a string."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    assert dlq == url_of("dlq")
    source = sqs.create_queue(
        QueueName="source",
        Attributes={
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": arn_of("dlq"), "maxReceiveCount": "3"}
            )
        },
    )["QueueUrl"]
    raw = sqs.get_queue_attributes(QueueUrl=source, AttributeNames=["RedrivePolicy"])["Attributes"][
        "RedrivePolicy"
    ]
    assert json.loads(raw) == {"deadLetterTargetArn": arn_of("dlq"), "maxReceiveCount": 3}


def test_message_moves_to_dlq_on_the_receive_after_max_receive_count(
    sqs: Any, clock: ManualClock
) -> None:
    """Section 10/11 (AWS-obs): with maxReceiveCount=1 the first receive returns
    the message and the second moves it; in the DLQ it keeps MessageId, body,
    attributes and AWSTraceHeader, its receive count continues ("2") and it
    carries DeadLetterQueueSourceArn."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    source = sqs.create_queue(QueueName="source")["QueueUrl"]
    _redrive(sqs, source, "dlq")
    trace = "Root=1-5759e988-bd862e3fe1be46a994272793"
    sent = sqs.send_message(
        QueueUrl=source,
        MessageBody="poison",
        MessageAttributes={"Foo": {"DataType": "String", "StringValue": "Bar"}},
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": trace}},
    )
    first = sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)["Messages"]
    assert first[0]["MessageId"] == sent["MessageId"]
    assert "Messages" not in sqs.receive_message(QueueUrl=source)
    moved = sqs.receive_message(
        QueueUrl=dlq, MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    assert len(moved) == 1
    message = moved[0]
    assert message["MessageId"] == sent["MessageId"]
    assert message["Body"] == "poison"
    assert message["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    assert message["Attributes"]["DeadLetterQueueSourceArn"] == arn_of("source")
    assert message["Attributes"]["ApproximateReceiveCount"] == "2"
    assert message["Attributes"]["AWSTraceHeader"] == trace
    assert message["Attributes"]["SentTimestamp"] == "1700000000000"


def test_list_dead_letter_source_queues_lowercase_key(sqs: Any) -> None:
    """Section 1.2/2: the output key is "queueUrls" (lowercase); it is a required
    member, present (empty) for a queue nobody points at."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    empty = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    assert "QueueUrls" not in empty
    assert empty["queueUrls"] == []
    for name in ("b-source", "a-source"):
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        _redrive(sqs, url, "dlq", 5)
    sqs.create_queue(QueueName="unrelated")
    response = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    assert sorted(response["queueUrls"]) == [url_of("a-source"), url_of("b-source")]
    assert "NextToken" not in response


def test_list_dead_letter_source_queues_paginator(sqs: Any) -> None:
    """Section 2 (paginators-1.json): ListDeadLetterSourceQueues pages over
    "queueUrls" with NextToken/MaxResults."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    names = [f"src-{i}" for i in range(7)]
    for name in names:
        _redrive(sqs, sqs.create_queue(QueueName=name)["QueueUrl"], "dlq", 3)
    paginator = sqs.get_paginator("list_dead_letter_source_queues")
    pages = list(paginator.paginate(QueueUrl=dlq, PaginationConfig={"PageSize": 3}))
    assert [len(p["queueUrls"]) for p in pages] == [3, 3, 1]
    urls = [u for p in pages for u in p["queueUrls"]]
    assert sorted(urls) == [url_of(n) for n in names]


def test_empty_redrive_policy_removes_it(sqs: Any, clock: ManualClock) -> None:
    """Section 2.1: RedrivePolicy "" removes the policy (AWS-obs); the source no
    longer dead-letters and is no longer listed."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    source = sqs.create_queue(QueueName="source")["QueueUrl"]
    _redrive(sqs, source, "dlq")
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": ""})
    assert "Attributes" not in sqs.get_queue_attributes(
        QueueUrl=source, AttributeNames=["RedrivePolicy"]
    )
    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"] == []
    sqs.send_message(QueueUrl=source, MessageBody="x")
    for _ in range(3):
        assert sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)["Messages"]


def test_dlq_type_must_match(sqs: Any, fifo_url: str) -> None:
    """Section 5: a FIFO queue's DLQ must be FIFO (and vice versa)."""
    sqs.create_queue(QueueName="std-dlq")
    policy = json.dumps({"deadLetterTargetArn": arn_of("std-dlq"), "maxReceiveCount": 2})
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=fifo_url, Attributes={"RedrivePolicy": policy})
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_redrive_allow_policy_deny_all(sqs: Any) -> None:
    """Section 5: a DLQ whose RedriveAllowPolicy is denyAll refuses sources."""
    sqs.create_queue(
        QueueName="dlq",
        Attributes={"RedriveAllowPolicy": json.dumps({"redrivePermission": "denyAll"})},
    )
    source = sqs.create_queue(QueueName="source")["QueueUrl"]
    with pytest.raises(ClientError) as exc:
        _redrive(sqs, source, "dlq")
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_fifo_dead_letter_unblocks_the_group(sqs: Any, clock: ManualClock) -> None:
    """Section 9 (AWS-obs): maxReceiveCount=2: two receives, the third attempt
    moves the message to the FIFO DLQ and the group is receivable again."""
    dlq = sqs.create_queue(QueueName="dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    source = sqs.create_queue(
        QueueName="src.fifo",
        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"},
    )["QueueUrl"]
    _redrive(sqs, source, "dlq.fifo", 2)
    sent = sqs.send_message(QueueUrl=source, MessageBody="poison", MessageGroupId="g")
    for _ in range(2):
        assert sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)["Messages"]
    sqs.send_message(QueueUrl=source, MessageBody="next", MessageGroupId="g")
    after = sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in after] == ["next"]
    moved = sqs.receive_message(QueueUrl=dlq, MessageSystemAttributeNames=["All"])["Messages"]
    assert moved[0]["MessageId"] == sent["MessageId"]
    assert moved[0]["Attributes"]["MessageGroupId"] == "g"
    assert moved[0]["Attributes"]["MessageDeduplicationId"] == sent["MessageId"]
    assert moved[0]["Attributes"]["DeadLetterQueueSourceArn"] == arn_of("src.fifo")


def test_set_queue_attributes_accepts_the_queue_as_its_own_dlq(sqs: Any) -> None:
    """Issue 12 §6 (recorded against real AWS): SetQueueAttributes accepts a
    RedrivePolicy whose deadLetterTargetArn is the queue itself, and returns it."""
    url = sqs.create_queue(QueueName="selfish")["QueueUrl"]
    assert (
        sqs.set_queue_attributes(
            QueueUrl=url,
            Attributes={
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": arn_of("selfish"), "maxReceiveCount": 1}
                )
            },
        )["ResponseMetadata"]["HTTPStatusCode"]
        == 200
    )
    raw = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"][
        "RedrivePolicy"
    ]
    assert json.loads(raw) == {"deadLetterTargetArn": arn_of("selfish"), "maxReceiveCount": 1}
