"""Messages through real boto3: SendMessage, ReceiveMessage, DeleteMessage,
ChangeMessageVisibility, response shapes and MD5s (docs/aws-behaviour.md sections
1.3, 2.1, 6, 7, 8)."""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import ManualClock
from tests.aws._helpers import assert_aws_error, reference_md5_of_attributes

TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
KENOBI = {
    "Help.Me": {"DataType": "String", "StringValue": "Me"},
    "Hello": {"DataType": "String", "StringValue": "There"},
    "General": {"DataType": "String", "StringValue": "Kenobi"},
}


def _receive_one(sqs: Any, url: str, **kwargs: Any) -> dict[str, Any]:
    messages = sqs.receive_message(QueueUrl=url, **kwargs)["Messages"]
    assert len(messages) == 1
    message: dict[str, Any] = messages[0]
    return message


# -- SendMessage response shape ----------------------------------------------------


def test_send_message_plain_response_shape(sqs: Any, queue_url: str) -> None:
    """Section 2.1: MD5OfMessageBody and MessageId only: no attribute MD5s
    without attributes, no SequenceNumber on a standard queue."""
    response = sqs.send_message(QueueUrl=queue_url, MessageBody="test")
    assert set(response) == {"MD5OfMessageBody", "MessageId", "ResponseMetadata"}
    assert response["MD5OfMessageBody"] == "098f6bcd4621d373cade4e832627b4f6"
    assert len(response["MessageId"]) <= 100


def test_send_message_md5_of_attributes_only_when_sent(sqs: Any, queue_url: str) -> None:
    """Section 7.2: MD5OfMessageAttributes present exactly when attributes were
    sent; worked example MyAttribute/String/foobar."""
    response = sqs.send_message(
        QueueUrl=queue_url,
        MessageBody="test",
        MessageAttributes={"MyAttribute": {"DataType": "String", "StringValue": "foobar"}},
    )
    assert response["MD5OfMessageAttributes"] == "adb59cd4678ea5a855436b949cd07ab6"
    assert "MD5OfMessageSystemAttributes" not in response
    assert "SequenceNumber" not in response


def test_send_message_md5_of_system_attributes_only_with_trace_header(
    sqs: Any, queue_url: str
) -> None:
    """Section 7.3: MD5OfMessageSystemAttributes only when AWSTraceHeader was
    sent (worked example 5ae4d5d7...), and it does not affect
    MD5OfMessageAttributes."""
    response = sqs.send_message(
        QueueUrl=queue_url,
        MessageBody="test",
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}},
    )
    assert response["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    assert "MD5OfMessageAttributes" not in response
    both = sqs.send_message(
        QueueUrl=queue_url,
        MessageBody="test",
        MessageAttributes={"Foo": {"DataType": "String", "StringValue": "Bar"}},
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}},
    )
    assert both["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    assert both["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"


@pytest.mark.parametrize(
    ("attributes", "md5"),
    [
        (
            {"MyAttribute": {"DataType": "String", "StringValue": "foobar"}},
            "adb59cd4678ea5a855436b949cd07ab6",
        ),
        (
            {
                "attr1": {
                    "DataType": "Binary",
                    "BinaryValue": b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c"
                    b"-2d2482211f6489da-01",
                }
            },
            "8cbe4db156db8a94db8b801b7addb984",
        ),
        ({"Foo": {"DataType": "String", "StringValue": "Bar"}}, "ae7155c6026991b6d54b11589678bf9c"),
        (
            {"timestamp": {"DataType": "Number", "StringValue": "1493147359900"}},
            "235c5c510d26fb653d073faed50ae77c",
        ),
        (KENOBI, "4c360f3fdafd970e05fae2f149d997f5"),
    ],
    ids=["MyAttribute", "binary-traceparent", "Foo", "timestamp", "kenobi"],
)
def test_md5_worked_examples_send_and_receive(
    sqs: Any, queue_url: str, attributes: dict[str, Any], md5: str
) -> None:
    """Section 7.2 worked examples through the wire: the send response and the
    received message (all attributes requested) carry the AWS-recorded MD5,
    and the received attributes equal the sent ones (Binary as bytes)."""
    sent = sqs.send_message(QueueUrl=queue_url, MessageBody="body", MessageAttributes=attributes)
    assert sent["MD5OfMessageAttributes"] == md5
    message = _receive_one(sqs, queue_url, MessageAttributeNames=["All"])
    assert message["MD5OfMessageAttributes"] == md5
    assert message["MessageAttributes"] == attributes
    assert reference_md5_of_attributes(message["MessageAttributes"]) == md5


@pytest.mark.parametrize(
    ("names", "expected", "md5"),
    [
        (["Hello", "General"], {"Hello", "General"}, "fca026605781cb4126a1e9044df24232"),
        (["Hello"], {"Hello"}, "a311262e065454b75da111d535b8dacd"),
        (["Hello", "Help.Me"], {"Hello", "Help.Me"}, "83fee93c1bcd8b9a5a923ffacdc636c7"),
        (["All"], {"Hello", "General", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"),
        ([".*"], {"Hello", "General", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"),
        (["*"], {"Hello", "General", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"),
        (["Help.*"], {"Help.Me"}, None),
        # Recorded against real AWS (issue 12, section 6): "Hel.*" returns every
        # name starting with "Hel", and the digest covers exactly those two.
        (["Hel.*"], {"Hello", "Help.Me"}, "83fee93c1bcd8b9a5a923ffacdc636c7"),
        (["General", "Nope"], {"General"}, None),
    ],
)
def test_message_attribute_names_filter_subsets(
    sqs: Any, queue_url: str, names: list[str], expected: set[str], md5: str | None
) -> None:
    """Section 2.1/7.2: MessageAttributes and MD5OfMessageAttributes on receive
    cover only the requested subset (AWS-recorded MD5s for the Help.Me / Hello /
    General example); unknown names are ignored; prefixes "foo.*" work."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="kenobi", MessageAttributes=KENOBI)
    message = _receive_one(sqs, queue_url, MessageAttributeNames=names)
    assert set(message["MessageAttributes"]) == expected
    assert message["MessageAttributes"] == {k: KENOBI[k] for k in expected}
    subset_md5 = reference_md5_of_attributes({k: KENOBI[k] for k in expected})
    assert message["MD5OfMessageAttributes"] == subset_md5
    if md5 is not None:
        assert subset_md5 == md5


def test_no_matching_attribute_names_omit_both_keys(sqs: Any, queue_url: str) -> None:
    """Section 2.1: if no attribute matches, MessageAttributes and
    MD5OfMessageAttributes are both omitted; not asking at all omits them too."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="a", MessageAttributes=KENOBI)
    sqs.send_message(QueueUrl=queue_url, MessageBody="b", MessageAttributes=KENOBI)
    filtered = _receive_one(sqs, queue_url, MessageAttributeNames=["Nope", "Other.*"])
    assert "MessageAttributes" not in filtered
    assert "MD5OfMessageAttributes" not in filtered
    unasked = _receive_one(sqs, queue_url)
    assert "MessageAttributes" not in unasked
    assert "MD5OfMessageAttributes" not in unasked


def test_binary_value_round_trips_as_bytes(sqs: Any, queue_url: str) -> None:
    """Section 1.2/6: BinaryValue is base64 on the wire and bytes in boto3,
    byte-exact including NUL and high bytes; custom type suffixes are kept."""
    blob = bytes(range(256))
    sqs.send_message(
        QueueUrl=queue_url,
        MessageBody="bin",
        MessageAttributes={
            "blob": {"DataType": "Binary.gif", "BinaryValue": blob},
            "n": {"DataType": "Number.int", "StringValue": "42"},
        },
    )
    message = _receive_one(sqs, queue_url, MessageAttributeNames=["All"])
    value = message["MessageAttributes"]["blob"]
    assert value == {"DataType": "Binary.gif", "BinaryValue": blob}
    assert isinstance(value["BinaryValue"], bytes)
    assert message["MessageAttributes"]["n"] == {"DataType": "Number.int", "StringValue": "42"}


# -- ReceiveMessage ------------------------------------------------------------------


def test_receive_on_empty_queue_has_no_messages_key(sqs: Any, queue_url: str) -> None:
    """Section 1.3: an empty ReceiveMessage answer has no "Messages" key."""
    response = sqs.receive_message(QueueUrl=queue_url)
    assert set(response) == {"ResponseMetadata"}
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_long_poll_on_empty_queue_returns_empty_without_sleeping(
    sqs: Any, queue_url: str, clock: ManualClock
) -> None:
    """Section 12: a long poll that finds nothing returns {} at the deadline
    (virtual time: the ManualClock jumps, the test does not sleep)."""
    response = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=20)
    assert "Messages" not in response
    assert clock.now() == pytest.approx(1_700_000_020.0)


def test_received_message_shape_without_attributes(sqs: Any, queue_url: str) -> None:
    """Section 2.1: a message carries MessageId, ReceiptHandle, MD5OfBody, Body;
    no Attributes and no MessageAttributes unless asked for."""
    sent = sqs.send_message(QueueUrl=queue_url, MessageBody="héllo ✓", MessageAttributes=KENOBI)
    message = _receive_one(sqs, queue_url)
    assert set(message) == {"MessageId", "ReceiptHandle", "MD5OfBody", "Body"}
    assert message["MessageId"] == sent["MessageId"]
    assert message["Body"] == "héllo ✓"
    assert message["MD5OfBody"] == sent["MD5OfMessageBody"]
    assert len(message["ReceiptHandle"]) <= 1024


def test_system_attributes_only_when_asked(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1/6: All returns the standard-queue set; SentTimestamp and
    ApproximateFirstReceiveTimestamp are epoch milliseconds; the receive count
    increments on every receive."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    clock.advance(1.5)
    first = _receive_one(sqs, queue_url, AttributeNames=["All"], VisibilityTimeout=0)
    assert first["Attributes"] == {
        "SenderId": "123456789012",
        "SentTimestamp": "1700000000000",
        "ApproximateReceiveCount": "1",
        "ApproximateFirstReceiveTimestamp": "1700000001500",
    }
    clock.advance(1)
    second = _receive_one(sqs, queue_url, MessageSystemAttributeNames=["All"])
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"
    assert second["Attributes"]["ApproximateFirstReceiveTimestamp"] == "1700000001500"


def test_system_attribute_names_union_of_both_parameters(sqs: Any, queue_url: str) -> None:
    """Section 2.1: AttributeNames (deprecated) and MessageSystemAttributeNames
    are combined; names that do not apply (SequenceNumber on standard) are
    omitted, not errors."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    message = _receive_one(
        sqs,
        queue_url,
        AttributeNames=["SentTimestamp"],
        MessageSystemAttributeNames=["ApproximateReceiveCount", "SequenceNumber"],
    )
    assert message["Attributes"] == {
        "SentTimestamp": "1700000000000",
        "ApproximateReceiveCount": "1",
    }


def test_message_group_id_on_standard_queue_is_returned_without_sequence_number(
    sqs: Any, queue_url: str
) -> None:
    """Section 10.1: a MessageGroupId on a standard queue (fair queue) is
    returned as a system attribute; SendMessage has no SequenceNumber."""
    sent = sqs.send_message(QueueUrl=queue_url, MessageBody="x", MessageGroupId="tenant-1")
    assert "SequenceNumber" not in sent
    message = _receive_one(sqs, queue_url, MessageSystemAttributeNames=["All"])
    assert message["Attributes"]["MessageGroupId"] == "tenant-1"
    assert "SequenceNumber" not in message["Attributes"]


def test_receive_max_number_of_messages(sqs: Any, queue_url: str) -> None:
    """Section 2.1: default 1, up to 10, in send order on this queue."""
    for i in range(12):
        sqs.send_message(QueueUrl=queue_url, MessageBody=str(i))
    assert len(sqs.receive_message(QueueUrl=queue_url)["Messages"]) == 1
    ten = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    assert len(ten) == 10
    rest = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    assert len(rest) == 1
    bodies = {m["Body"] for m in ten} | {m["Body"] for m in rest}
    assert len(bodies) == 11


def test_each_receive_issues_a_new_receipt_handle(
    sqs: Any, queue_url: str, clock: ManualClock
) -> None:
    """Section 2.1: each receive issues a new ReceiptHandle."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    first = _receive_one(sqs, queue_url, VisibilityTimeout=5)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
    clock.advance(5)
    second = _receive_one(sqs, queue_url)
    assert first["MessageId"] == second["MessageId"]
    assert first["ReceiptHandle"] != second["ReceiptHandle"]


def test_delay_seconds_hides_a_message(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1: per-message DelaySeconds on a standard queue."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="later", DelaySeconds=10)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
    clock.advance(10)
    assert _receive_one(sqs, queue_url)["Body"] == "later"


# -- DeleteMessage and ChangeMessageVisibility ----------------------------------


def test_delete_message(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 8: DeleteMessage returns an empty response and the message never
    comes back; deleting again with the same handle is a 200 no-op."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = _receive_one(sqs, queue_url, VisibilityTimeout=1)["ReceiptHandle"]
    assert set(sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)) == {"ResponseMetadata"}
    clock.advance(2)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)


def test_delete_with_expired_handle_on_standard_queue(
    sqs: Any, queue_url: str, clock: ManualClock
) -> None:
    """Section 8: on a standard queue a handle whose visibility expired still
    deletes the message (AWS-obs)."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = _receive_one(sqs, queue_url, VisibilityTimeout=1)["ReceiptHandle"]
    clock.advance(5)
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)


def test_change_message_visibility_counts_from_the_call(
    sqs: Any, queue_url: str, clock: ManualClock
) -> None:
    """Section 8: the new timeout counts from the time of the call; 0 makes
    the message visible at once."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = _receive_one(sqs, queue_url, VisibilityTimeout=60)["ReceiptHandle"]
    clock.advance(15)
    response = sqs.change_message_visibility(
        QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=10
    )
    assert set(response) == {"ResponseMetadata"}
    clock.advance(9.9)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
    clock.advance(0.1)
    handle2 = _receive_one(sqs, queue_url)["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=handle2, VisibilityTimeout=0)
    assert _receive_one(sqs, queue_url)["Body"] == "x"


def test_change_visibility_of_deleted_message(sqs: Any, queue_url: str) -> None:
    """Section 8: ChangeMessageVisibility on a deleted message is
    InvalidParameterValue with AWS's observed text."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="x")
    handle = _receive_one(sqs, queue_url)["ReceiptHandle"]
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=handle)
    with pytest.raises(sqs.exceptions.ClientError) as exc:
        sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=5)
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message=f"Value {handle} for parameter ReceiptHandle is invalid. Reason: Message does "
        "not exist or is not available for visibility timeout change.",
        operation="ChangeMessageVisibility",
    )


# -- X-Amzn-Trace-Id --------------------------------------------------------------------


@pytest.mark.parametrize("header", ["X-Amzn-Trace-Id", "x-amzn-trace-id"])
def test_x_amzn_trace_id_header_becomes_aws_trace_header(
    sqs: Any, queue_url: str, header: str
) -> None:
    """Section 2.1: an X-Amzn-Trace-Id HTTP header on SendMessage is stored as
    the AWSTraceHeader system attribute (HTTP header names are
    case-insensitive)."""

    def add_header(request: Any, **_: Any) -> None:
        request.headers[header] = TRACE

    sqs.meta.events.register("before-sign.sqs.SendMessage", add_header)
    try:
        sent = sqs.send_message(QueueUrl=queue_url, MessageBody="traced")
    finally:
        sqs.meta.events.unregister("before-sign.sqs.SendMessage", add_header)
    assert sent["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    sqs.send_message(QueueUrl=queue_url, MessageBody="untraced")
    traced = _receive_one(sqs, queue_url, MessageSystemAttributeNames=["AWSTraceHeader"])
    assert traced["Body"] == "traced"
    assert traced["Attributes"] == {"AWSTraceHeader": TRACE}
    untraced = _receive_one(sqs, queue_url, MessageSystemAttributeNames=["AWSTraceHeader"])
    assert untraced["Body"] == "untraced"
    assert "Attributes" not in untraced


def test_explicit_trace_header_is_returned_when_asked(sqs: Any, queue_url: str) -> None:
    """Section 6: AWSTraceHeader only if supplied, only when asked for; All
    includes it."""
    sqs.send_message(
        QueueUrl=queue_url,
        MessageBody="x",
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}},
    )
    message = _receive_one(sqs, queue_url, AttributeNames=["All"])
    assert message["Attributes"]["AWSTraceHeader"] == TRACE
