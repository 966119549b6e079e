"""Batch operations through real boto3: SendMessageBatch, DeleteMessageBatch,
ChangeMessageVisibilityBatch, whole-request errors and per-entry failures
(docs/aws-behaviour.md §§2, 2.1, 3.1, 4)."""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import ManualClock
from tests.aws._helpers import assert_aws_error


def _receive_all(sqs: Any, url: str, **kwargs: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, **kwargs
    ).get("Messages", [])
    return messages


def test_send_message_batch_success_shape(sqs: Any, queue_url: str) -> None:
    """Section 2: Successful entries carry Id, MessageId, MD5OfMessageBody and
    MD5OfMessageAttributes only when attributes were sent; Failed is left out
    when no entry failed, as real AWS answers (issue 12 §6), although the
    model marks it required."""
    response = sqs.send_message_batch(
        QueueUrl=queue_url,
        Entries=[
            {"Id": "plain", "MessageBody": "test"},
            {
                "Id": "with_attrs",
                "MessageBody": "x",
                "MessageAttributes": {
                    "MyAttribute": {"DataType": "String", "StringValue": "foobar"}
                },
            },
        ],
    )
    assert "Failed" not in response
    plain, with_attrs = response["Successful"]
    assert set(plain) == {"Id", "MessageId", "MD5OfMessageBody"}
    assert plain["Id"] == "plain"
    assert plain["MD5OfMessageBody"] == "098f6bcd4621d373cade4e832627b4f6"
    assert with_attrs["MD5OfMessageAttributes"] == "adb59cd4678ea5a855436b949cd07ab6"
    assert "SequenceNumber" not in with_attrs
    bodies = sorted(m["Body"] for m in _receive_all(sqs, queue_url))
    assert bodies == ["test", "x"]


def test_send_message_batch_per_entry_failures_are_http_200(sqs: Any, queue_url: str) -> None:
    """Section 2.1: an oversize entry and an entry with invalid characters fail
    alone (Failed with SenderFault/Code/Message, HTTP 200); the others are sent."""
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"MaximumMessageSize": "1024"})
    response = sqs.send_message_batch(
        QueueUrl=queue_url,
        Entries=[
            {"Id": "ok", "MessageBody": "fine"},
            {"Id": "big", "MessageBody": "x" * 1025},
            {"Id": "bad_chars", "MessageBody": "nul\x00"},
        ],
    )
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert [s["Id"] for s in response["Successful"]] == ["ok"]
    failed = {f["Id"]: f for f in response["Failed"]}
    assert failed["big"] == {
        "Id": "big",
        "SenderFault": True,
        "Code": "InvalidParameterValue",
        "Message": "One or more parameters cannot be validated. Reason: Message must be "
        "shorter than 1024 bytes.",
    }
    assert failed["bad_chars"]["Code"] == "InvalidMessageContents"
    assert failed["bad_chars"]["SenderFault"] is True
    assert [m["Body"] for m in _receive_all(sqs, queue_url)] == ["fine"]


def test_send_message_batch_exactly_max_size_is_accepted(sqs: Any, queue_url: str) -> None:
    """Section 2.1: exactly MaximumMessageSize bytes is accepted."""
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"MaximumMessageSize": "1024"})
    response = sqs.send_message_batch(
        QueueUrl=queue_url, Entries=[{"Id": "edge", "MessageBody": "y" * 1024}]
    )
    assert [s["Id"] for s in response["Successful"]] == ["edge"]


@pytest.mark.parametrize(
    ("operation", "entry_name"),
    [
        ("send_message_batch", "SendMessageBatchRequestEntry"),
        ("delete_message_batch", "DeleteMessageBatchRequestEntry"),
        ("change_message_visibility_batch", "ChangeMessageVisibilityBatchRequestEntry"),
    ],
)
def test_empty_batch_request(sqs: Any, queue_url: str, operation: str, entry_name: str) -> None:
    """Section 2.1/3.1: zero entries is EmptyBatchRequest with AWS's text."""
    with pytest.raises(sqs.exceptions.EmptyBatchRequest) as exc:
        getattr(sqs, operation)(QueueUrl=queue_url, Entries=[])
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.EmptyBatchRequest",
        query_code="EmptyBatchRequest",
        message=f"There should be at least one {entry_name} in the request.",
    )


def _entries(operation: str, n: int, handle: str = "h") -> list[dict[str, Any]]:
    if operation == "send_message_batch":
        return [{"Id": f"e{i}", "MessageBody": "b"} for i in range(n)]
    if operation == "delete_message_batch":
        return [{"Id": f"e{i}", "ReceiptHandle": handle} for i in range(n)]
    return [{"Id": f"e{i}", "ReceiptHandle": handle, "VisibilityTimeout": 0} for i in range(n)]


BATCH_OPS = ["send_message_batch", "delete_message_batch", "change_message_visibility_batch"]


@pytest.mark.parametrize("operation", BATCH_OPS)
def test_too_many_entries(sqs: Any, queue_url: str, operation: str) -> None:
    """Section 2.1/3.1: more than 10 entries; nothing is done."""
    with pytest.raises(sqs.exceptions.TooManyEntriesInBatchRequest) as exc:
        getattr(sqs, operation)(QueueUrl=queue_url, Entries=_entries(operation, 11))
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        query_code="TooManyEntriesInBatchRequest",
        message="Maximum number of entries per request are 10. You have sent 11.",
    )
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


@pytest.mark.parametrize("operation", BATCH_OPS)
@pytest.mark.parametrize("bad_id", ["has space", "x" * 81, "dot.ted", ""])
def test_invalid_batch_entry_id(sqs: Any, queue_url: str, operation: str, bad_id: str) -> None:
    """Section 2.1/4: a batch Id outside [A-Za-z0-9_-]{1,80} fails the request."""
    entries = _entries(operation, 2)
    entries[1]["Id"] = bad_id
    with pytest.raises(sqs.exceptions.InvalidBatchEntryId) as exc:
        getattr(sqs, operation)(QueueUrl=queue_url, Entries=entries)
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.InvalidBatchEntryId",
        query_code="InvalidBatchEntryId",
        message="A batch entry id can only contain alphanumeric characters, hyphens and "
        "underscores. It can be at most 80 letters long.",
    )
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


@pytest.mark.parametrize("operation", BATCH_OPS)
def test_batch_entry_ids_not_distinct(sqs: Any, queue_url: str, operation: str) -> None:
    """Section 2.1/3.1: repeated Ids fail the request; only the first repeated
    Id is named."""
    entries = _entries(operation, 5)
    entries[2]["Id"] = "e1"
    entries[4]["Id"] = "e3"
    with pytest.raises(sqs.exceptions.BatchEntryIdsNotDistinct) as exc:
        getattr(sqs, operation)(QueueUrl=queue_url, Entries=entries)
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        query_code="BatchEntryIdsNotDistinct",
        message="Id e1 repeated.",
    )
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


def test_duplicate_id_delete_batch_deletes_nothing(
    sqs: Any, queue_url: str, clock: ManualClock
) -> None:
    """Section 2.1: a duplicate-Id DeleteMessageBatch deletes nothing (AWS-obs)."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="keep")
    handle = sqs.receive_message(QueueUrl=queue_url, VisibilityTimeout=1)["Messages"][0][
        "ReceiptHandle"
    ]
    with pytest.raises(sqs.exceptions.BatchEntryIdsNotDistinct):
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": "a", "ReceiptHandle": handle}, {"Id": "a", "ReceiptHandle": handle}],
        )
    clock.advance(1)
    assert sqs.receive_message(QueueUrl=queue_url)["Messages"][0]["Body"] == "keep"


def test_batch_request_too_long(sqs: Any, queue_url: str) -> None:
    """Section 2.1: entries adding up to more than 1,048,576 bytes fail the whole
    request with BatchRequestTooLong naming the total."""
    entries = [
        {"Id": "a", "MessageBody": "a" * 524_288},
        {"Id": "b", "MessageBody": "b" * 524_289},
    ]
    with pytest.raises(sqs.exceptions.BatchRequestTooLong) as exc:
        sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.BatchRequestTooLong",
        query_code="BatchRequestTooLong",
        message="Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.",
        operation="SendMessageBatch",
    )
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


def test_delete_message_batch_mixed(sqs: Any, queue_url: str) -> None:
    """Section 2.1: valid handles succeed, a garbage handle fails alone with
    ReceiptHandleIsInvalid (SenderFault true) in an HTTP 200 answer."""
    for body in ("a", "b"):
        sqs.send_message(QueueUrl=queue_url, MessageBody=body)
    handles = [m["ReceiptHandle"] for m in _receive_all(sqs, queue_url)]
    response = sqs.delete_message_batch(
        QueueUrl=queue_url,
        Entries=[
            {"Id": "one", "ReceiptHandle": handles[0]},
            {"Id": "bogus", "ReceiptHandle": "fake-receipt-handle-1"},
            {"Id": "two", "ReceiptHandle": handles[1]},
        ],
    )
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert response["Successful"] == [{"Id": "one"}, {"Id": "two"}]
    assert response["Failed"] == [
        {
            "Id": "bogus",
            "SenderFault": True,
            "Code": "ReceiptHandleIsInvalid",
            "Message": 'The input receipt handle "fake-receipt-handle-1" is not a valid '
            "receipt handle.",
        }
    ]
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_delete_batch_with_handle_of_another_queue(sqs: Any, queue_url: str) -> None:
    """Section 2.1: a well-formed handle from another queue fails its entry with
    "The receipt handle ... is not valid for this queue." (AWS-obs)."""
    other = sqs.create_queue(QueueName="other")["QueueUrl"]
    sqs.send_message(QueueUrl=other, MessageBody="x")
    handle = _receive_all(sqs, other)[0]["ReceiptHandle"]
    response = sqs.delete_message_batch(
        QueueUrl=queue_url, Entries=[{"Id": "foreign", "ReceiptHandle": handle}]
    )
    assert response["Successful"] == []
    assert response["Failed"] == [
        {
            "Id": "foreign",
            "SenderFault": True,
            "Code": "ReceiptHandleIsInvalid",
            "Message": f'The receipt handle "{handle}" is not valid for this queue.',
        }
    ]


def test_change_message_visibility_batch(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1/8: per-entry visibility changes; a bad handle fails alone."""
    for body in ("a", "b"):
        sqs.send_message(QueueUrl=queue_url, MessageBody=body)
    received = _receive_all(sqs, queue_url, VisibilityTimeout=30)
    by_body = {m["Body"]: m["ReceiptHandle"] for m in received}
    response = sqs.change_message_visibility_batch(
        QueueUrl=queue_url,
        Entries=[
            {"Id": "now", "ReceiptHandle": by_body["a"], "VisibilityTimeout": 0},
            {"Id": "later", "ReceiptHandle": by_body["b"], "VisibilityTimeout": 100},
            {"Id": "bad", "ReceiptHandle": "garbage", "VisibilityTimeout": 1},
        ],
    )
    assert response["Successful"] == [{"Id": "now"}, {"Id": "later"}]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in response["Failed"]] == [
        ("bad", "ReceiptHandleIsInvalid", True)
    ]
    assert [m["Body"] for m in _receive_all(sqs, queue_url, VisibilityTimeout=200)] == ["a"]
    clock.advance(99)
    assert _receive_all(sqs, queue_url) == []
    clock.advance(1)
    assert [m["Body"] for m in _receive_all(sqs, queue_url)] == ["b"]


def test_batch_on_unknown_queue(sqs: Any) -> None:
    """Section 3.1: QueueDoesNotExist is modeled for the batch operations."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message_batch(
            QueueUrl="https://sqs.us-east-1.amazonaws.com/123456789012/missing",
            Entries=[{"Id": "a", "MessageBody": "x"}],
        )
