"""Message move tasks through real boto3: StartMessageMoveTask,
ListMessageMoveTasks, CancelMessageMoveTask (docs/aws-behaviour.md §§1.3, 2, 11)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsqueue import ManualClock
from tests.aws._helpers import arn_of, assert_aws_error


@pytest.fixture
def dead_letters(sqs: Any) -> tuple[str, str]:
    """A source queue whose 3 messages were dead-lettered into "dlq"."""
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    policy = json.dumps({"deadLetterTargetArn": arn_of("dlq"), "maxReceiveCount": 1})
    source = sqs.create_queue(QueueName="source", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=source, MessageBody=f"m{i}")
    sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10, VisibilityTimeout=0)
    assert "Messages" not in sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10)
    count = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])[
        "Attributes"
    ]["ApproximateNumberOfMessages"]
    assert count == "3"
    return source, dlq


def test_redrive_back_to_source(
    sqs: Any, dead_letters: tuple[str, str], clock: ManualClock
) -> None:
    """Section 11: without DestinationArn messages go back to their source as new
    messages (new MessageId); the TaskHandle is base64 of {"taskId", "sourceArn"}
    (AWS-obs); the finished task lists as COMPLETED with counts and a
    millisecond StartedTimestamp, without TaskHandle."""
    source, dlq = dead_letters
    response = sqs.start_message_move_task(SourceArn=arn_of("dlq"))
    decoded = json.loads(base64.b64decode(response["TaskHandle"]))
    assert set(decoded) == {"taskId", "sourceArn"}
    assert decoded["sourceArn"] == arn_of("dlq")
    back = sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10)["Messages"]
    assert sorted(m["Body"] for m in back) == ["m0", "m1", "m2"]
    assert "Messages" not in sqs.receive_message(QueueUrl=dlq)
    results = sqs.list_message_move_tasks(SourceArn=arn_of("dlq"))["Results"]
    assert results == [
        {
            "Status": "COMPLETED",
            "SourceArn": arn_of("dlq"),
            "ApproximateNumberOfMessagesMoved": 3,
            "ApproximateNumberOfMessagesToMove": 3,
            "StartedTimestamp": 1_700_000_000_000,
        }
    ]


def test_rate_limited_task_and_cancel(
    sqs: Any, dead_letters: tuple[str, str], clock: ManualClock
) -> None:
    """Section 11: MaxNumberOfMessagesPerSecond limits the move rate; a RUNNING
    task lists with its TaskHandle and rate; cancel returns the number moved,
    already-moved messages stay moved, the task lists as CANCELLED."""
    source, dlq = dead_letters
    handle = sqs.start_message_move_task(
        SourceArn=arn_of("dlq"), DestinationArn=arn_of("source"), MaxNumberOfMessagesPerSecond=1
    )["TaskHandle"]
    clock.advance(1)
    running = sqs.list_message_move_tasks(SourceArn=arn_of("dlq"), MaxResults=10)["Results"]
    assert len(running) == 1
    assert running[0]["Status"] == "RUNNING"
    assert running[0]["TaskHandle"] == handle
    assert running[0]["DestinationArn"] == arn_of("source")
    assert running[0]["MaxNumberOfMessagesPerSecond"] == 1
    assert running[0]["ApproximateNumberOfMessagesMoved"] == 1
    with pytest.raises(ClientError) as exc:
        sqs.start_message_move_task(SourceArn=arn_of("dlq"))
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message="There is already a task running. Only one active task is allowed for a "
        "source queue arn at a given time.",
    )
    cancelled = sqs.cancel_message_move_task(TaskHandle=handle)
    assert cancelled["ApproximateNumberOfMessagesMoved"] == 1
    clock.advance(10)
    assert len(sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10)["Messages"]) == 1
    assert len(sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10)["Messages"]) == 2
    listed = sqs.list_message_move_tasks(SourceArn=arn_of("dlq"))["Results"]
    assert listed[0]["Status"] == "CANCELLED"
    assert "TaskHandle" not in listed[0]


def test_list_message_move_tasks_for_queue_without_tasks(sqs: Any) -> None:
    """Section 2/11: a queue with no tasks lists an empty Results."""
    sqs.create_queue(QueueName="plain")
    assert sqs.list_message_move_tasks(SourceArn=arn_of("plain"))["Results"] == []


def test_source_must_be_a_dead_letter_queue(sqs: Any) -> None:
    """Section 11 (AWS-obs): a source nobody redrives to."""
    sqs.create_queue(QueueName="plain")
    with pytest.raises(ClientError) as exc:
        sqs.start_message_move_task(SourceArn=arn_of("plain"))
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message="Source queue must be configured as a Dead Letter Queue.",
        operation="StartMessageMoveTask",
    )


def test_missing_destination_is_resource_not_found(sqs: Any, dead_letters: tuple[str, str]) -> None:
    """Section 11 (AWS-obs): an unknown DestinationArn, HTTP 404."""
    with pytest.raises(sqs.exceptions.ResourceNotFoundException) as exc:
        sqs.start_message_move_task(SourceArn=arn_of("dlq"), DestinationArn=arn_of("nowhere"))
    assert_aws_error(
        exc.value,
        code="ResourceNotFoundException",
        query_code="ResourceNotFoundException",
        message="The resource that you specified for the DestinationArn parameter doesn't exist.",
        status=404,
    )


def test_cancel_errors(sqs: Any, dead_letters: tuple[str, str]) -> None:
    """Section 11 (AWS-obs): a garbage handle is InvalidParameterValue; a
    well-formed handle of an unknown source or unknown task is
    ResourceNotFoundException (404)."""
    with pytest.raises(ClientError) as exc:
        sqs.cancel_message_move_task(TaskHandle="garbage")
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert exc.value.response["Error"]["Message"] == "Value for parameter TaskHandle is invalid."

    def handle(task_id: str, source_arn: str) -> str:
        raw = json.dumps({"taskId": task_id, "sourceArn": source_arn})
        return base64.b64encode(raw.encode()).decode()

    with pytest.raises(sqs.exceptions.ResourceNotFoundException) as exc:
        sqs.cancel_message_move_task(TaskHandle=handle("t", arn_of("nowhere")))
    assert exc.value.response["Error"]["Message"] == (
        "The resource that you specified for the SourceArn parameter doesn't exist."
    )
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(sqs.exceptions.ResourceNotFoundException) as exc:
        sqs.cancel_message_move_task(TaskHandle=handle("no-such-task", arn_of("dlq")))
    assert exc.value.response["Error"]["Message"] == "Task does not exist."


def test_destination_deleted_mid_task_fails(
    sqs: Any, dead_letters: tuple[str, str], clock: ManualClock
) -> None:
    """Section 11 (AWS-obs): destination deleted mid-task: Status FAILED with
    FailureReason AWS.SimpleQueueService.NonExistentQueue."""
    sqs.create_queue(QueueName="elsewhere")
    sqs.start_message_move_task(
        SourceArn=arn_of("dlq"), DestinationArn=arn_of("elsewhere"), MaxNumberOfMessagesPerSecond=1
    )
    sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName="elsewhere")["QueueUrl"])
    clock.advance(5)
    task = sqs.list_message_move_tasks(SourceArn=arn_of("dlq"))["Results"][0]
    assert task["Status"] == "FAILED"
    assert task["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
