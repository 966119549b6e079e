"""FIFO queues through real boto3 (docs/aws-behaviour.md §§2.1, 5, 8, 9)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsqueue import ManualClock
from tests.aws._helpers import arn_of, assert_aws_error, url_of

NO_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)


def _bodies(sqs: Any, url: str, **kwargs: Any) -> list[str]:
    kwargs.setdefault("MaxNumberOfMessages", 10)
    response = sqs.receive_message(QueueUrl=url, **kwargs)
    return [m["Body"] for m in response.get("Messages", [])]


def test_fifo_queue_default_attributes(sqs: Any, fifo_url: str) -> None:
    """Section 2.1/5: a FIFO queue adds FifoQueue, ContentBasedDeduplication,
    DeduplicationScope and FifoThroughputLimit to the standard defaults."""
    assert fifo_url == url_of("orders.fifo")
    attrs = sqs.get_queue_attributes(QueueUrl=fifo_url, AttributeNames=["All"])["Attributes"]
    assert attrs["FifoQueue"] == "true"
    assert attrs["ContentBasedDeduplication"] == "false"
    assert attrs["DeduplicationScope"] == "queue"
    assert attrs["FifoThroughputLimit"] == "perQueue"
    assert attrs["QueueArn"] == arn_of("orders.fifo")
    assert attrs["VisibilityTimeout"] == "30"


@pytest.mark.parametrize(
    ("name", "attributes"),
    [("orders", {"FifoQueue": "true"}), ("orders.fifo", {})],
    ids=["fifo-without-suffix", "suffix-without-fifo"],
)
def test_fifo_name_and_flag_must_agree(sqs: Any, name: str, attributes: dict[str, str]) -> None:
    """Section 2.1: FifoQueue=true needs the .fifo suffix and a .fifo name needs
    FifoQueue=true: InvalidParameterValue (AWS-obs code)."""
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name, Attributes=attributes)
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_fifo_only_attributes_on_standard_queue(sqs: Any) -> None:
    """Section 2.1: DeduplicationScope / FifoThroughputLimit on a standard queue
    (AWS-obs texts)."""
    with pytest.raises(sqs.exceptions.InvalidAttributeName) as exc:
        sqs.create_queue(QueueName="std", Attributes={"DeduplicationScope": "queue"})
    assert exc.value.response["Error"]["Message"] == (
        "You can specify the DeduplicationScope only when FifoQueue is set to true."
    )
    with pytest.raises(sqs.exceptions.InvalidAttributeName) as exc:
        sqs.create_queue(QueueName="std", Attributes={"FifoThroughputLimit": "perQueue"})
    assert exc.value.response["Error"]["Message"] == (
        "You can specify the FifoThroughputLimit only when FifoQueue is set to true."
    )


def test_send_returns_increasing_sequence_numbers(sqs: Any, fifo_url: str) -> None:
    """Section 2.1/4: SequenceNumber on FIFO only, a decimal string increasing
    within a group."""
    numbers = []
    for i in range(3):
        response = sqs.send_message(
            QueueUrl=fifo_url,
            MessageBody=f"m{i}",
            MessageGroupId="g",
            MessageDeduplicationId=f"d{i}",
        )
        assert set(response) == {
            "MD5OfMessageBody",
            "MessageId",
            "SequenceNumber",
            "ResponseMetadata",
        }
        assert response["SequenceNumber"].isdigit()
        numbers.append(int(response["SequenceNumber"]))
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == 3


def test_missing_message_group_id(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: FIFO without MessageGroupId: MissingParameter (AWS-obs)."""
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=fifo_url, MessageBody="x", MessageDeduplicationId="d")
    assert_aws_error(
        exc.value,
        code="MissingParameter",
        query_code="MissingRequiredParameterException",
        message="The request must contain the parameter MessageGroupId.",
    )


def test_missing_deduplication_id(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: no dedup id and no ContentBasedDeduplication (AWS-obs)."""
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=fifo_url, MessageBody="x", MessageGroupId="g")
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message=NO_DEDUP,
    )


def test_per_message_delay_rejected_zero_accepted(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: DelaySeconds>0 on FIFO is InvalidParameterValue with AWS's
    text; DelaySeconds=0 is accepted."""
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=fifo_url,
            MessageBody="x",
            MessageGroupId="g",
            MessageDeduplicationId="d",
            DelaySeconds=2,
        )
    assert exc.value.response["Error"]["Message"] == (
        "Value 2 for parameter DelaySeconds is invalid. Reason: The request include "
        "parameter that is not valid for this queue type."
    )
    sqs.send_message(
        QueueUrl=fifo_url,
        MessageBody="x",
        MessageGroupId="g",
        MessageDeduplicationId="d",
        DelaySeconds=0,
    )
    assert _bodies(sqs, fifo_url) == ["x"]


@pytest.mark.parametrize("param", ["MessageGroupId", "MessageDeduplicationId"])
def test_invalid_fifo_ids(sqs: Any, fifo_url: str, param: str) -> None:
    """Section 2.1: ids with a space or over 128 characters (AWS-obs text)."""
    for bad in ("has space", "x" * 129):
        params = {"MessageGroupId": "g", "MessageDeduplicationId": "d", param: bad}
        with pytest.raises(ClientError) as exc:
            sqs.send_message(QueueUrl=fifo_url, MessageBody="x", **params)
        assert exc.value.response["Error"]["Message"] == (
            f"Value {bad} for parameter {param} is invalid. Reason: {param} can only include "
            "alphanumeric and punctuation characters. 1 to 128 in length."
        )


def test_deduplication_within_five_minutes(sqs: Any, fifo_url: str, clock: ManualClock) -> None:
    """Section 9: a duplicate within 5 minutes is accepted but not delivered, even
    after the original was deleted; after the window it is a new message."""
    first = sqs.send_message(
        QueueUrl=fifo_url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d"
    )
    dup = sqs.send_message(
        QueueUrl=fifo_url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d"
    )
    assert dup["MessageId"] == first["MessageId"]  # emulator choice (UNCONFIRMED)
    received = sqs.receive_message(QueueUrl=fifo_url, MaxNumberOfMessages=10)["Messages"]
    assert len(received) == 1
    sqs.delete_message(QueueUrl=fifo_url, ReceiptHandle=received[0]["ReceiptHandle"])
    sqs.send_message(
        QueueUrl=fifo_url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d"
    )
    assert _bodies(sqs, fifo_url) == []
    clock.advance(300)
    again = sqs.send_message(
        QueueUrl=fifo_url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d"
    )
    assert again["MessageId"] != first["MessageId"]
    assert _bodies(sqs, fifo_url) == ["x"]


def test_content_based_deduplication(sqs: Any) -> None:
    """Section 6/9: ContentBasedDeduplication dedups on the SHA-256 of the body;
    the receive attributes show group, dedup id and sequence number."""
    url = sqs.create_queue(
        QueueName="cbd.fifo",
        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"},
    )["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    sqs.send_message(QueueUrl=url, MessageBody="other", MessageGroupId="g")
    messages = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    )["Messages"]
    assert [m["Body"] for m in messages] == ["same", "other"]
    attributes = messages[0]["Attributes"]
    assert attributes["MessageGroupId"] == "g"
    assert attributes["SequenceNumber"] == sent["SequenceNumber"]
    assert attributes["MessageDeduplicationId"] == hashlib.sha256(b"same").hexdigest()
    assert set(attributes) == {
        "SenderId",
        "SentTimestamp",
        "ApproximateReceiveCount",
        "ApproximateFirstReceiveTimestamp",
        "SequenceNumber",
        "MessageDeduplicationId",
        "MessageGroupId",
    }


def _send(sqs: Any, url: str, body: str, group: str) -> None:
    sqs.send_message(
        QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=body
    )


def test_group_ordering_and_locking(sqs: Any, fifo_url: str) -> None:
    """Section 9 (AWS-obs): g1-m1, g2-m1, g1-m2, g1-m3 received with Max=10 comes
    back as g1-m1, g1-m2, g1-m3, g2-m1; while in flight, nothing more."""
    for body, group in (("g1-m1", "g1"), ("g2-m1", "g2"), ("g1-m2", "g1"), ("g1-m3", "g1")):
        _send(sqs, fifo_url, body, group)
    assert _bodies(sqs, fifo_url) == ["g1-m1", "g1-m2", "g1-m3", "g2-m1"]
    assert _bodies(sqs, fifo_url) == []


def test_locked_group_is_skipped(sqs: Any, fifo_url: str) -> None:
    """Section 9 (AWS-obs): receive(2) takes g1-m1,g1-m2 and locks g1; the next
    receive(1) returns g2-m1; deleting all of g1's in-flight unlocks it."""
    for body, group in (("g1-m1", "g1"), ("g1-m2", "g1"), ("g1-m3", "g1"), ("g2-m1", "g2")):
        _send(sqs, fifo_url, body, group)
    first = sqs.receive_message(QueueUrl=fifo_url, MaxNumberOfMessages=2)["Messages"]
    assert [m["Body"] for m in first] == ["g1-m1", "g1-m2"]
    assert _bodies(sqs, fifo_url, MaxNumberOfMessages=1) == ["g2-m1"]
    assert _bodies(sqs, fifo_url) == []
    for m in first:
        sqs.delete_message(QueueUrl=fifo_url, ReceiptHandle=m["ReceiptHandle"])
    assert _bodies(sqs, fifo_url) == ["g1-m3"]


def test_receive_request_attempt_id_replays(sqs: Any, fifo_url: str, clock: ManualClock) -> None:
    """Section 9: a retry with the same ReceiveRequestAttemptId returns the same
    messages and receipt handles although they are in flight."""
    _send(sqs, fifo_url, "a", "g")
    _send(sqs, fifo_url, "b", "g")
    first = sqs.receive_message(
        QueueUrl=fifo_url, MaxNumberOfMessages=10, ReceiveRequestAttemptId="attempt-1"
    )["Messages"]
    clock.advance(5)
    retry = sqs.receive_message(
        QueueUrl=fifo_url, MaxNumberOfMessages=10, ReceiveRequestAttemptId="attempt-1"
    )["Messages"]
    assert [(m["Body"], m["ReceiptHandle"]) for m in retry] == [
        (m["Body"], m["ReceiptHandle"]) for m in first
    ]
    assert "Messages" not in sqs.receive_message(
        QueueUrl=fifo_url, ReceiveRequestAttemptId="attempt-2"
    )


def test_fifo_delete_with_expired_handle(sqs: Any, fifo_url: str, clock: ManualClock) -> None:
    """Section 8 (AWS-obs): on FIFO, DeleteMessage after the visibility timeout
    fails with "The receipt handle has expired."; inside the window it works."""
    _send(sqs, fifo_url, "a", "g")
    handle = sqs.receive_message(QueueUrl=fifo_url, VisibilityTimeout=5)["Messages"][0][
        "ReceiptHandle"
    ]
    clock.advance(5)
    with pytest.raises(ClientError) as exc:
        sqs.delete_message(QueueUrl=fifo_url, ReceiptHandle=handle)
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message=f"Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt "
        "handle has expired.",
        operation="DeleteMessage",
    )
    fresh = sqs.receive_message(QueueUrl=fifo_url)["Messages"][0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=fifo_url, ReceiptHandle=fresh)
    assert _bodies(sqs, fifo_url) == []


def test_fifo_batch_keeps_order_and_sequence_numbers(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: FIFO batch entries are enqueued in batch order, each with a
    SequenceNumber."""
    response = sqs.send_message_batch(
        QueueUrl=fifo_url,
        Entries=[
            {
                "Id": f"e{i}",
                "MessageBody": f"m{i}",
                "MessageGroupId": "g",
                "MessageDeduplicationId": f"d{i}",
            }
            for i in range(5)
        ],
    )
    assert "Failed" not in response
    numbers = [int(s["SequenceNumber"]) for s in response["Successful"]]
    assert numbers == sorted(numbers)
    assert _bodies(sqs, fifo_url) == [f"m{i}" for i in range(5)]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"MessageDeduplicationId": "d"}, "The request must contain the parameter MessageGroupId."),
        ({"MessageGroupId": "g"}, NO_DEDUP),
    ],
    ids=["no-group", "no-dedup"],
)
def test_fifo_batch_entry_missing_ids_fails_whole_request(
    sqs: Any, fifo_url: str, entry: dict[str, str], message: str
) -> None:
    """Section 2.1: a FIFO batch entry without group or dedup id fails the whole
    request with InvalidParameterValue; nothing is sent."""
    good = {
        "Id": "good",
        "MessageBody": "ok",
        "MessageGroupId": "g",
        "MessageDeduplicationId": "ok",
    }
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(
            QueueUrl=fifo_url, Entries=[good, {"Id": "bad", "MessageBody": "x", **entry}]
        )
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message=message,
        operation="SendMessageBatch",
    )
    assert _bodies(sqs, fifo_url) == []


def test_fifo_queue_delay_is_retroactive(sqs: Any, fifo_url: str, clock: ManualClock) -> None:
    """Section 9: changing a FIFO queue's DelaySeconds applies to messages
    already in the queue."""
    _send(sqs, fifo_url, "a", "g")
    sqs.set_queue_attributes(QueueUrl=fifo_url, Attributes={"DelaySeconds": "10"})
    assert _bodies(sqs, fifo_url) == []
    clock.advance(10)
    assert _bodies(sqs, fifo_url) == ["a"]
