"""Errors as boto3 users see them from AWS: exception class, Error dict
(legacy query code, QueryErrorCode, Type), HTTP status, request id, str(e)
(docs/aws-behaviour.md §§1.4, 2.1, 3, 8)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsqueue import ManualClock, _limits
from sqsqueue.errors import OverLimit
from tests.aws._helpers import arn_of, assert_aws_error, url_of

MISSING_URL = url_of("missing")
NON_EXISTENT = {
    "code": "AWS.SimpleQueueService.NonExistentQueue",
    "query_code": "QueueDoesNotExist",
    "message": "The specified queue does not exist.",
}


def test_queue_does_not_exist_exactly_as_aws(sqs: Any) -> None:
    """Section 1.4: the canonical AWS error: QueueDoesNotExist class, Error dict
    with the legacy code, HTTP 400, the x-amzn-query-error header and
    str(e) in botocore's format; also catchable as ClientError."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as exc:
        sqs.get_queue_url(QueueName="missing")
    err = exc.value
    assert isinstance(err, ClientError)
    assert type(err).__name__ == "QueueDoesNotExist"
    assert str(err) == (
        "An error occurred (AWS.SimpleQueueService.NonExistentQueue) when calling the "
        "GetQueueUrl operation: The specified queue does not exist."
    )
    assert_aws_error(err, **NON_EXISTENT, operation="GetQueueUrl")
    assert err.response["ResponseMetadata"]["HTTPHeaders"]["content-type"] == (
        "application/x-amz-json-1.0"
    )


QUEUE_URL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add_permission", {"Label": "l", "AWSAccountIds": ["111122223333"], "Actions": ["*"]}),
    ("change_message_visibility", {"ReceiptHandle": "h", "VisibilityTimeout": 1}),
    (
        "change_message_visibility_batch",
        {"Entries": [{"Id": "a", "ReceiptHandle": "h", "VisibilityTimeout": 1}]},
    ),
    ("delete_message", {"ReceiptHandle": "h"}),
    ("delete_message_batch", {"Entries": [{"Id": "a", "ReceiptHandle": "h"}]}),
    ("delete_queue", {}),
    ("get_queue_attributes", {"AttributeNames": ["All"]}),
    ("list_dead_letter_source_queues", {}),
    ("list_queue_tags", {}),
    ("purge_queue", {}),
    ("receive_message", {}),
    ("remove_permission", {"Label": "l"}),
    ("send_message", {"MessageBody": "x"}),
    ("send_message_batch", {"Entries": [{"Id": "a", "MessageBody": "x"}]}),
    ("set_queue_attributes", {"Attributes": {"DelaySeconds": "1"}}),
    ("tag_queue", {"Tags": {"k": "v"}}),
    ("untag_queue", {"TagKeys": ["k"]}),
]


@pytest.mark.parametrize(("method", "params"), QUEUE_URL_CALLS, ids=[c[0] for c in QUEUE_URL_CALLS])
def test_every_queue_url_operation_on_unknown_queue(
    sqs: Any, method: str, params: dict[str, Any]
) -> None:
    """Section 2/3.1: every operation taking a QueueUrl answers an unknown queue
    with QueueDoesNotExist, checked before any other parameter (a bad receipt
    handle on an unknown queue is NonExistentQueue, section 8)."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as exc:
        getattr(sqs, method)(QueueUrl=MISSING_URL, **params)
    assert_aws_error(exc.value, **NON_EXISTENT)


def test_queue_url_of_another_account_does_not_exist(sqs: Any, queue_url: str) -> None:
    """Section 1.4: a URL naming another account's queue is not found here."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(
            QueueUrl="https://sqs.us-east-1.amazonaws.com/210987654321/jobs", MessageBody="x"
        )


def test_deleted_queue_url_does_not_exist(sqs: Any, queue_url: str) -> None:
    """Section 2.1: after DeleteQueue the URL is unknown."""
    sqs.delete_queue(QueueUrl=queue_url)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=queue_url, MessageBody="x")


@pytest.mark.parametrize("operation", ["delete_message", "change_message_visibility"])
def test_receipt_handle_is_invalid_is_404(sqs: Any, queue_url: str, operation: str) -> None:
    """Section 3.1/8: a garbage handle is ReceiptHandleIsInvalid, HTTP 404, with
    AWS's observed message."""
    kwargs: dict[str, Any] = {"QueueUrl": queue_url, "ReceiptHandle": "garbage"}
    if operation == "change_message_visibility":
        kwargs["VisibilityTimeout"] = 10
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid) as exc:
        getattr(sqs, operation)(**kwargs)
    assert_aws_error(
        exc.value,
        code="ReceiptHandleIsInvalid",
        query_code="ReceiptHandleIsInvalid",
        message='The input receipt handle "garbage" is not a valid receipt handle.',
        status=404,
    )


def test_forged_receipt_handle_is_invalid(sqs: Any, queue_url: str) -> None:
    """Section 8: a mutated (never issued) handle is ReceiptHandleIsInvalid,
    whatever its shape."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = sqs.receive_message(QueueUrl=queue_url)["Messages"][0]["ReceiptHandle"]
    forged = handle[:-2] + ("AA" if handle[-2:] != "AA" else "BB")
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=forged)
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)


def test_unknown_queue_and_bad_handle_reports_the_queue(sqs: Any) -> None:
    """Section 8: queue existence is checked first (AWS-obs)."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.delete_message(QueueUrl=MISSING_URL, ReceiptHandle="garbage")


def test_purge_queue_in_progress_is_403(sqs: Any, queue_url: str) -> None:
    """Section 1.4/3.1: a second purge within 60 s: PurgeQueueInProgress,
    HTTP 403, AWS's text naming the queue."""
    sqs.purge_queue(QueueUrl=queue_url)
    with pytest.raises(sqs.exceptions.PurgeQueueInProgress) as exc:
        sqs.purge_queue(QueueUrl=queue_url)
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.PurgeQueueInProgress",
        query_code="PurgeQueueInProgress",
        message="Only one PurgeQueue operation on jobs is allowed every 60 seconds.",
        status=403,
        operation="PurgeQueue",
    )


def test_queue_deleted_recently(sqs: Any, queue_url: str) -> None:
    """Section 2.1: re-creating within 60 s of DeleteQueue."""
    sqs.delete_queue(QueueUrl=queue_url)
    with pytest.raises(sqs.exceptions.QueueDeletedRecently) as exc:
        sqs.create_queue(QueueName="jobs")
    assert_aws_error(
        exc.value,
        code="AWS.SimpleQueueService.QueueDeletedRecently",
        query_code="QueueDeletedRecently",
        message="You must wait 60 seconds after deleting a queue before you can create "
        "another with the same name.",
        operation="CreateQueue",
    )


def test_queue_name_exists(sqs: Any, queue_url: str) -> None:
    """Section 2.1: a name in use with a different attribute value."""
    with pytest.raises(sqs.exceptions.QueueNameExists) as exc:
        sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "31"})
    assert_aws_error(
        exc.value,
        code="QueueAlreadyExists",
        query_code="QueueNameExists",
        message="A queue already exists with the same name and a different value for "
        "attribute VisibilityTimeout",
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda sqs, url: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Bogus"]),
            "Unknown Attribute Bogus.",
        ),
        (
            lambda sqs, url: sqs.set_queue_attributes(
                QueueUrl=url, Attributes={"QueueArn": arn_of("x")}
            ),
            "Unknown Attribute QueueArn.",
        ),
        (
            lambda sqs, url: sqs.create_queue(QueueName="std", Attributes={"FifoQueue": "false"}),
            "Unknown Attribute FifoQueue.",
        ),
        (
            lambda sqs, url: sqs.create_queue(
                QueueName="std", Attributes={"ContentBasedDeduplication": "true"}
            ),
            "Unknown Attribute ContentBasedDeduplication.",
        ),
        (
            lambda sqs, url: sqs.set_queue_attributes(
                QueueUrl=url, Attributes={"FifoQueue": "true"}
            ),
            "Unknown Attribute FifoQueue.",
        ),
    ],
    ids=["get-bogus", "set-read-only", "create-fifoqueue-false", "create-cbd", "set-fifoqueue"],
)
def test_invalid_attribute_name(sqs: Any, queue_url: str, call: Any, message: str) -> None:
    """Section 2.1/3.1: unknown or inapplicable queue attribute names."""
    with pytest.raises(sqs.exceptions.InvalidAttributeName) as exc:
        call(sqs, queue_url)
    assert_aws_error(
        exc.value, code="InvalidAttributeName", query_code="InvalidAttributeName", message=message
    )


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"VisibilityTimeout": "43201"}, "Invalid value for the parameter VisibilityTimeout."),
        ({"DelaySeconds": "901"}, "Invalid value for the parameter DelaySeconds."),
        (
            {"MessageRetentionPeriod": "59"},
            "Invalid value for the parameter MessageRetentionPeriod.",
        ),
        ({"MaximumMessageSize": "1023"}, "Invalid value for the parameter MaximumMessageSize."),
        (
            {"ReceiveMessageWaitTimeSeconds": "21"},
            "Invalid value for the parameter ReceiveMessageWaitTimeSeconds.",
        ),
        ({"VisibilityTimeout": "ten"}, "Invalid value for the parameter VisibilityTimeout."),
    ],
)
def test_invalid_attribute_value(
    sqs: Any, queue_url: str, attributes: dict[str, str], message: str
) -> None:
    """Section 2.1/3.1/4: out-of-range values; nothing changes."""
    with pytest.raises(sqs.exceptions.InvalidAttributeValue) as exc:
        sqs.set_queue_attributes(QueueUrl=queue_url, Attributes=attributes)
    assert_aws_error(
        exc.value,
        code="InvalidAttributeValue",
        query_code="InvalidAttributeValue",
        message=message,
        operation="SetQueueAttributes",
    )
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs["VisibilityTimeout"] == "30"
    assert attrs["DelaySeconds"] == "0"


def test_fifo_queue_type_cannot_change(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: FifoQueue=false on a FIFO queue (AWS-obs text); FifoQueue=true
    is a no-op."""
    sqs.set_queue_attributes(QueueUrl=fifo_url, Attributes={"FifoQueue": "true"})
    with pytest.raises(sqs.exceptions.InvalidAttributeValue) as exc:
        sqs.set_queue_attributes(QueueUrl=fifo_url, Attributes={"FifoQueue": "false"})
    assert exc.value.response["Error"]["Message"] == (
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."
    )


def test_invalid_message_contents(sqs: Any, queue_url: str) -> None:
    """Section 2.1: characters outside the allowed set are rejected (AWS-obs
    body) and nothing is stored."""
    with pytest.raises(sqs.exceptions.InvalidMessageContents) as exc:
        sqs.send_message(QueueUrl=queue_url, MessageBody="Invalid-\x00-\x08-\x13-\uffff")
    err = exc.value.response["Error"]
    assert err["Code"] == "InvalidMessageContents"
    assert err["QueryErrorCode"] == "InvalidMessageContents"
    assert err["Type"] == "Sender"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


INVALID_PARAMETER_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "receive_message",
        {"MaxNumberOfMessages": 11},
        "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 "
        "and 10, if provided.",
    ),
    (
        "receive_message",
        {"MaxNumberOfMessages": 0},
        "Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 "
        "and 10, if provided.",
    ),
    (
        "receive_message",
        {"WaitTimeSeconds": 21},
        "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, "
        "if provided.",
    ),
    (
        "send_message",
        {"MessageBody": "x" * 1_048_577},
        "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.",
    ),
    (
        "send_message",
        {
            "MessageBody": "x",
            "MessageAttributes": {"a": {"DataType": "String", "StringValue": ""}},
        },
        "Message (user) attribute 'a' must contain a non-empty value of type 'String'.",
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "message"),
    INVALID_PARAMETER_CASES,
    ids=["max-11", "max-0", "wait-21", "too-big", "empty-string-attribute"],
)
def test_invalid_parameter_value_is_plain_client_error(
    sqs: Any, queue_url: str, method: str, params: dict[str, Any], message: str
) -> None:
    """Section 1.4/3.2: the unmodeled InvalidParameterValue is a plain ClientError
    (no modeled class), QueryErrorCode InvalidParameterValueException, HTTP 400,
    with AWS's observed texts."""
    with pytest.raises(ClientError) as exc:
        getattr(sqs, method)(QueueUrl=queue_url, **params)
    assert type(exc.value) is ClientError
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message=message,
    )


def test_message_size_counts_attributes_against_queue_maximum(sqs: Any, queue_url: str) -> None:
    """Section 2.1: size = body + attribute names, types and values; exactly
    MaximumMessageSize is accepted, one more byte is not."""
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"MaximumMessageSize": "1024"})
    attrs = {"name": {"DataType": "String", "StringValue": "value"}}  # 4 + 6 + 5 = 15
    sqs.send_message(QueueUrl=queue_url, MessageBody="x" * 1009, MessageAttributes=attrs)
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=queue_url, MessageBody="x" * 1010, MessageAttributes=attrs)
    assert exc.value.response["Error"]["Message"] == (
        "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."
    )


def test_invalid_queue_name(sqs: Any) -> None:
    """Section 2.1: invalid names are InvalidParameterValue (code AWS-obs)."""
    for name in ("has space", "x" * 81, "bad.name", "standard.fifo"):
        with pytest.raises(ClientError) as exc:
            sqs.create_queue(QueueName=name)
        assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
        assert exc.value.response["Error"]["QueryErrorCode"] == "InvalidParameterValueException"
    assert "QueueUrls" not in sqs.list_queues()


def test_missing_parameter_empty_body(sqs: Any, queue_url: str) -> None:
    """Section 2.1/3.2: an empty MessageBody is MissingParameter (AWS-obs), a
    plain ClientError with QueryErrorCode MissingRequiredParameterException."""
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=queue_url, MessageBody="")
    assert type(exc.value) is ClientError
    assert_aws_error(
        exc.value,
        code="MissingParameter",
        query_code="MissingRequiredParameterException",
        message="The request must contain the parameter MessageBody.",
        operation="SendMessage",
    )


def test_over_limit_on_short_poll_is_403(
    sqs: Any, queue_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Section 4/3.1: at the standard in-flight limit a short poll raises
    OverLimit (HTTP 403); a long poll just returns nothing."""
    monkeypatch.setattr(_limits, "IN_FLIGHT_MAX", 2)
    for i in range(3):
        sqs.send_message(QueueUrl=queue_url, MessageBody=str(i))
    got = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    assert len(got) == 2
    with pytest.raises(sqs.exceptions.OverLimit) as exc:
        sqs.receive_message(QueueUrl=queue_url)
    assert exc.value.response["Error"]["Code"] == OverLimit.query_code == "OverLimit"
    assert exc.value.response["Error"]["QueryErrorCode"] == "OverLimit"
    assert exc.value.response["Error"]["Type"] == "Sender"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=1)
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=got[0]["ReceiptHandle"])
    assert len(sqs.receive_message(QueueUrl=queue_url)["Messages"]) == 1


def test_resource_not_found_is_404(sqs: Any) -> None:
    """Section 11/3.1: a move task from an unknown source: ResourceNotFoundException,
    HTTP 404, AWS's text."""
    with pytest.raises(sqs.exceptions.ResourceNotFoundException) as exc:
        sqs.start_message_move_task(SourceArn=arn_of("missing"))
    assert_aws_error(
        exc.value,
        code="ResourceNotFoundException",
        query_code="ResourceNotFoundException",
        message="The resource that you specified for the SourceArn parameter doesn't exist.",
        status=404,
        operation="StartMessageMoveTask",
    )


def test_errors_are_not_retried(sqs: Any, queue_url: str) -> None:
    """Section 1.4: client errors are final: botocore makes one attempt."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as exc:
        sqs.get_queue_url(QueueName="missing")
    assert exc.value.response["ResponseMetadata"]["RetryAttempts"] == 0


def test_both_sse_types_is_invalid_attribute_name(sqs: Any, queue_url: str) -> None:
    """Section 2.1 (AWS-obs): enabling SSE-KMS and SSE-SQS together."""
    with pytest.raises(sqs.exceptions.InvalidAttributeName) as exc:
        sqs.set_queue_attributes(
            QueueUrl=queue_url,
            Attributes={"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "true"},
        )
    assert exc.value.response["Error"]["Message"] == (
        "You can use one type of server-side encryption (SSE) at one time. You can either "
        "enable KMS SSE or SQS SSE."
    )


def test_over_limit_for_too_many_actions_in_a_permission(sqs: Any, queue_url: str) -> None:
    """Section 2.1/3.1/4: at most 7 actions per statement; OverLimit is 403."""
    actions = [
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "ChangeMessageVisibility",
        "GetQueueAttributes",
        "GetQueueUrl",
        "PurgeQueue",
        "ListDeadLetterSourceQueues",
    ]
    with pytest.raises(sqs.exceptions.OverLimit) as exc:
        sqs.add_permission(
            QueueUrl=queue_url, Label="many", AWSAccountIds=["111122223333"], Actions=actions
        )
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "Attributes" not in sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["Policy"]
    )
    sqs.add_permission(
        QueueUrl=queue_url, Label="seven", AWSAccountIds=["111122223333"], Actions=actions[:7]
    )


def test_message_not_inflight_is_never_raised(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 3.1/8 (AWS-obs): on a standard queue, ChangeMessageVisibility with
    the handle of a message whose visibility expired is a 200 and re-hides it."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = sqs.receive_message(QueueUrl=queue_url, VisibilityTimeout=5)["Messages"][0][
        "ReceiptHandle"
    ]
    clock.advance(10)
    sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=100)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


def test_visibility_beyond_twelve_hour_budget(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 4/8: the 12-hour maximum counts from the ReceiveMessage; 43,200
    100 s after receiving is refused (InvalidParameterValue, no clamping),
    43,100 is accepted; out-of-range values are refused too."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = sqs.receive_message(QueueUrl=queue_url)["Messages"][0]["ReceiptHandle"]
    clock.advance(100)
    with pytest.raises(ClientError) as exc:
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=43_200
        )
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    sqs.change_message_visibility(
        QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=43_100
    )
    with pytest.raises(ClientError) as exc:
        sqs.receive_message(QueueUrl=queue_url, VisibilityTimeout=43_201)
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_fifo_flag_mismatch_on_existing_name(sqs: Any, fifo_url: str) -> None:
    """Section 2.1: re-creating an existing FIFO queue with FifoQueue given
    again is idempotent."""
    again = sqs.create_queue(QueueName="orders.fifo", Attributes={"FifoQueue": "true"})
    assert again["QueueUrl"] == fifo_url
