"""All 23 operations of the botocore SQS model succeed through real boto3, each
answered HTTP 200 with AWS's output shape (docs/aws-behaviour.md §§1.1, 1.3, 2)."""

from __future__ import annotations

import base64
import json
from typing import Any

from sqsqueue import ManualClock
from sqsqueue.aws._client import OPERATIONS
from tests.aws._helpers import arn_of, url_of


def test_the_model_has_exactly_the_23_operations(sqs: Any) -> None:
    """Section 1.1/2: botocore's SQS model (awsJson1_0, awsQueryCompatible) has
    the same 23 operations the facade serves."""
    model = sqs.meta.service_model
    assert model.protocol == "json"
    assert model.metadata["targetPrefix"] == "AmazonSQS"
    assert "awsQueryCompatible" in model.metadata
    assert sorted(model.operation_names) == sorted(OPERATIONS)
    assert len(OPERATIONS) == 23


def test_every_operation_succeeds_with_aws_shapes(sqs: Any, clock: ManualClock) -> None:
    """Section 2: one scenario calls every operation once or more; each answers
    HTTP 200 with exactly the output members AWS sends (empty outputs are
    empty, optional empty collections omitted, required ones present)."""
    seen: list[str] = []
    statuses: list[int] = []

    def record(http_response: Any, model: Any, **_: Any) -> None:
        seen.append(model.name)
        statuses.append(http_response.status_code)

    sqs.meta.events.register("after-call.sqs", record)

    def keys(response: dict[str, Any]) -> set[str]:
        return set(response) - {"ResponseMetadata"}

    # queues
    url = sqs.create_queue(QueueName="main", tags={"t": "1"})["QueueUrl"]
    dlq = sqs.create_queue(QueueName="main-dlq")["QueueUrl"]
    assert (url, dlq) == (url_of("main"), url_of("main-dlq"))
    assert sqs.get_queue_url(QueueName="main")["QueueUrl"] == url
    assert sqs.list_queues()["QueueUrls"] == [url, dlq]
    assert (
        keys(
            sqs.set_queue_attributes(
                QueueUrl=url,
                Attributes={
                    "RedrivePolicy": json.dumps(
                        {"deadLetterTargetArn": arn_of("main-dlq"), "maxReceiveCount": 1}
                    )
                },
            )
        )
        == set()
    )
    assert keys(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])) == {
        "Attributes"
    }
    sources = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    assert keys(sources) == {"queueUrls"}
    assert sources["queueUrls"] == [url]

    # tags and permissions
    assert keys(sqs.tag_queue(QueueUrl=url, Tags={"u": "2"})) == set()
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"t": "1", "u": "2"}
    assert keys(sqs.untag_queue(QueueUrl=url, TagKeys=["u"])) == set()
    assert (
        keys(
            sqs.add_permission(
                QueueUrl=url, Label="p", AWSAccountIds=["111122223333"], Actions=["SendMessage"]
            )
        )
        == set()
    )
    assert keys(sqs.remove_permission(QueueUrl=url, Label="p")) == set()

    # messages
    sent = sqs.send_message(QueueUrl=url, MessageBody="one")
    assert keys(sent) == {"MD5OfMessageBody", "MessageId"}
    batch = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "a", "MessageBody": "two"}, {"Id": "b", "MessageBody": "three"}],
    )
    # No entry failed: AWS leaves Failed out (issue 12 §6).
    assert keys(batch) == {"Successful"}
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    assert keys(received) == {"Messages"}
    handles = {m["Body"]: m["ReceiptHandle"] for m in received["Messages"]}
    assert sorted(handles) == ["one", "three", "two"]
    assert (
        keys(
            sqs.change_message_visibility(
                QueueUrl=url, ReceiptHandle=handles["one"], VisibilityTimeout=60
            )
        )
        == set()
    )
    cmv = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[{"Id": "x", "ReceiptHandle": handles["two"], "VisibilityTimeout": 60}],
    )
    assert keys(cmv) == {"Successful"}
    assert cmv["Successful"] == [{"Id": "x"}]
    assert keys(sqs.delete_message(QueueUrl=url, ReceiptHandle=handles["one"])) == set()
    deleted = sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": "y", "ReceiptHandle": handles["two"]}]
    )
    assert keys(deleted) == {"Successful"}
    assert deleted["Successful"] == [{"Id": "y"}]

    # dead-lettering "three" (maxReceiveCount 1), then moving it back
    clock.advance(30)
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    task = sqs.start_message_move_task(SourceArn=arn_of("main-dlq"), MaxNumberOfMessagesPerSecond=1)
    assert keys(task) == {"TaskHandle"}
    assert json.loads(base64.b64decode(task["TaskHandle"]))["sourceArn"] == arn_of("main-dlq")
    listed = sqs.list_message_move_tasks(SourceArn=arn_of("main-dlq"), MaxResults=10)
    assert keys(listed) == {"Results"}
    assert listed["Results"][0]["Status"] == "RUNNING"
    cancelled = sqs.cancel_message_move_task(TaskHandle=task["TaskHandle"])
    assert cancelled["ApproximateNumberOfMessagesMoved"] == 0
    assert keys(cancelled) == {"ApproximateNumberOfMessagesMoved"}

    # cleanup operations
    assert keys(sqs.purge_queue(QueueUrl=dlq)) == set()
    assert keys(sqs.delete_queue(QueueUrl=dlq)) == set()
    assert sqs.list_queues()["QueueUrls"] == [url]

    assert sorted(set(seen)) == sorted(OPERATIONS)
    assert set(statuses) == {200}
