"""``broker.client()``: the boto3-shaped dict client without boto3 — same
responses as boto3 minus ResponseMetadata, sqsqueue.errors exceptions, AWS's
texts for missing parameters, principals (docs/aws-behaviour.md §§1.4, 2,
2.1, 3)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker, ManualClock, errors
from sqsqueue.aws._client import OPERATIONS, Client
from sqsqueue.testing import mock_sqs
from tests._helpers import run_python
from tests.aws._helpers import arn_of, strip_metadata, url_of

OTHER = "111122223333"
START = 1_700_000_000.0


def _scenario(sqs: Any, clock: ManualClock, fail: Callable[[Callable[[], Any]], Any]) -> list[Any]:
    """Drive a client through every operation, collecting responses and errors."""
    out: list[Any] = []
    url = sqs.create_queue(QueueName="main", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    fifo = sqs.create_queue(
        QueueName="f.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    out.append(sqs.list_queues())
    out.append(sqs.list_queues(MaxResults=1))
    out.append(sqs.get_queue_url(QueueName="dlq"))
    out.append(sqs.get_queue_attributes(QueueUrl=url))
    out.append(sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"]))
    out.append(
        sqs.set_queue_attributes(
            QueueUrl=url,
            Attributes={
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": arn_of("dlq"), "maxReceiveCount": 2}
                )
            },
        )
    )
    out.append(sqs.list_dead_letter_source_queues(QueueUrl=dlq))
    out.append(sqs.list_dead_letter_source_queues(QueueUrl=url))
    out.append(sqs.list_queue_tags(QueueUrl=url))
    out.append(sqs.tag_queue(QueueUrl=url, Tags={"a": "1", "b": ""}))
    out.append(sqs.untag_queue(QueueUrl=url, TagKeys=["b"]))
    out.append(sqs.list_queue_tags(QueueUrl=url))
    out.append(sqs.add_permission(QueueUrl=url, Label="p", AWSAccountIds=[OTHER], Actions=["*"]))
    out.append(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]))
    out.append(sqs.remove_permission(QueueUrl=url, Label="p"))
    attrs = {
        "s": {"DataType": "String", "StringValue": "v"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
        "n": {"DataType": "Number.float", "StringValue": "1.50"},
    }
    out.append(sqs.send_message(QueueUrl=url, MessageBody="one", MessageAttributes=attrs))
    out.append(
        sqs.send_message(
            QueueUrl=url,
            MessageBody="two",
            MessageSystemAttributes={
                "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-a"}
            },
        )
    )
    out.append(sqs.send_message(QueueUrl=fifo, MessageBody="f", MessageGroupId="g"))
    out.append(
        sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "ok", "MessageBody": "three"},
                {"Id": "bad", "MessageBody": "\x00"},
            ],
        )
    )
    out.append(sqs.receive_message(QueueUrl=dlq))
    clock.advance(1)
    received = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        AttributeNames=["All"],
        MessageAttributeNames=["s", "b"],
    )
    out.append(received)
    handles = [m["ReceiptHandle"] for m in received["Messages"]]
    out.append(sqs.receive_message(QueueUrl=fifo, MessageSystemAttributeNames=["All"]))
    out.append(
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles[0], VisibilityTimeout=0)
    )
    out.append(
        sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "x", "ReceiptHandle": handles[1], "VisibilityTimeout": 100},
                {"Id": "y", "ReceiptHandle": "garbage", "VisibilityTimeout": 1},
            ],
        )
    )
    out.append(sqs.delete_message(QueueUrl=url, ReceiptHandle=handles[1]))
    out.append(
        sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[{"Id": "d", "ReceiptHandle": handles[2]}, {"Id": "e", "ReceiptHandle": "no"}],
        )
    )
    for _ in range(3):
        clock.advance(11)
        out.append(sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"]))
    out.append(sqs.receive_message(QueueUrl=dlq, AttributeNames=["All"]))
    clock.advance(30)
    out.append(sqs.start_message_move_task(SourceArn=arn_of("dlq")))
    out.append(sqs.list_message_move_tasks(SourceArn=arn_of("dlq"), MaxResults=10))
    out.append(sqs.purge_queue(QueueUrl=fifo))
    out.append(sqs.delete_queue(QueueUrl=fifo))
    # errors
    out.append(fail(lambda: sqs.get_queue_url(QueueName="missing")))
    out.append(fail(lambda: sqs.purge_queue(QueueUrl=fifo)))
    out.append(fail(lambda: sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")))
    out.append(fail(lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11)))
    out.append(fail(lambda: sqs.send_message(QueueUrl=url, MessageBody="")))
    out.append(fail(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[])))
    out.append(
        fail(lambda: sqs.create_queue(QueueName="main", Attributes={"VisibilityTimeout": "5"}))
    )
    out.append(fail(lambda: sqs.cancel_message_move_task(TaskHandle="garbage")))
    out.append(fail(lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["X"])))
    return out


def _boto_fail(call: Callable[[], Any]) -> tuple[str, str, int]:
    with pytest.raises(ClientError) as exc:
        call()
    err = exc.value.response["Error"]
    return err["Code"], err["Message"], exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def _client_fail(call: Callable[[], Any]) -> tuple[str, str, int]:
    with pytest.raises(errors.SQSError) as exc:
        call()
    return exc.value.query_code, exc.value.message, exc.value.http_status


def test_same_responses_as_boto3_minus_response_metadata() -> None:
    """Section 2: the same scenario through boto3 and through broker.client(),
    on identically seeded brokers, gives identical responses (boto3's minus
    ResponseMetadata: MessageIds, receipt handles, MD5s, bytes, omitted keys)
    and identical errors (legacy code, message, HTTP status)."""
    clock_a, clock_b = ManualClock(start=START), ManualClock(start=START)
    via_boto = Broker(clock=clock_a, account_id="123456789012", random=random.Random(7))
    direct = Broker(clock=clock_b, account_id="123456789012", random=random.Random(7))
    with mock_sqs(via_boto):
        sqs = boto3.client("sqs", region_name="us-east-1")
        boto_out = _scenario(sqs, clock_a, _boto_fail)
    client_out = _scenario(direct.client(), clock_b, _client_fail)
    stripped = [strip_metadata(r) if isinstance(r, dict) else r for r in boto_out]
    assert len(stripped) == len(client_out)
    for i, (b, c) in enumerate(zip(stripped, client_out, strict=True)):
        assert b == c, f"response {i} differs"
    # sanity: the scenario saw real content, including bytes and omissions
    received = client_out[20]
    assert received["Messages"][0]["MessageAttributes"]["b"]["BinaryValue"] == b"\x00\xff"
    assert client_out[3] == {}
    assert client_out[8] == {}


def test_client_raises_sqsqueue_errors() -> None:
    """Section 3: errors are sqsqueue.errors classes with the wire facts as
    attributes, and the matching builtin bases."""
    sqs = Broker(clock=ManualClock(start=START), account_id="123456789012").client()
    with pytest.raises(errors.QueueDoesNotExist) as exc:
        sqs.get_queue_url(QueueName="missing")
    assert isinstance(exc.value, LookupError)
    assert exc.value.message == "The specified queue does not exist."
    assert exc.value.query_code == "AWS.SimpleQueueService.NonExistentQueue"
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    with pytest.raises(errors.ReceiptHandleIsInvalid) as rh:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")
    assert rh.value.http_status == 404
    sqs.purge_queue(QueueUrl=url)
    with pytest.raises(errors.PurgeQueueInProgress) as purge:
        sqs.purge_queue(QueueUrl=url)
    assert isinstance(purge.value, PermissionError)
    assert purge.value.http_status == 403
    with pytest.raises(errors.InvalidParameterValue):
        sqs.receive_message(QueueUrl=url, WaitTimeSeconds=21)


MISSING: list[tuple[str, dict[str, Any], str]] = [
    ("create_queue", {}, "QueueName"),
    ("get_queue_url", {}, "QueueName"),
    ("delete_queue", {}, "QueueUrl"),
    ("send_message", {}, "QueueUrl"),
    ("send_message", {"QueueUrl": url_of("q")}, "MessageBody"),
    ("send_message", {"QueueUrl": url_of("q"), "MessageBody": ""}, "MessageBody"),
    ("send_message_batch", {"QueueUrl": url_of("q")}, "Entries"),
    ("receive_message", {}, "QueueUrl"),
    ("delete_message", {"QueueUrl": url_of("q")}, "ReceiptHandle"),
    ("delete_message_batch", {"QueueUrl": url_of("q")}, "Entries"),
    (
        "change_message_visibility",
        {"QueueUrl": url_of("q"), "ReceiptHandle": "h"},
        "VisibilityTimeout",
    ),
    ("change_message_visibility_batch", {"QueueUrl": url_of("q")}, "Entries"),
    ("get_queue_attributes", {}, "QueueUrl"),
    ("set_queue_attributes", {"QueueUrl": url_of("q")}, "Attributes"),
    ("purge_queue", {}, "QueueUrl"),
    ("list_dead_letter_source_queues", {}, "QueueUrl"),
    ("add_permission", {"QueueUrl": url_of("q")}, "Label"),
    ("add_permission", {"QueueUrl": url_of("q"), "Label": "l", "Actions": ["*"]}, "AWSAccountIds"),
    ("remove_permission", {"QueueUrl": url_of("q")}, "Label"),
    ("tag_queue", {"QueueUrl": url_of("q")}, "Tags"),
    ("untag_queue", {"QueueUrl": url_of("q")}, "TagKeys"),
    ("list_queue_tags", {}, "QueueUrl"),
    ("start_message_move_task", {}, "SourceArn"),
    ("cancel_message_move_task", {}, "TaskHandle"),
    ("list_message_move_tasks", {}, "SourceArn"),
]


@pytest.mark.parametrize(
    ("method", "params", "missing"), MISSING, ids=[f"{m}-{p}" for m, _, p in MISSING]
)
def test_missing_required_parameters(method: str, params: dict[str, Any], missing: str) -> None:
    """Section 2.1/3.2: a missing required parameter is MissingParameter with
    AWS's text "The request must contain the parameter X."."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    broker.create_queue("q")
    with pytest.raises(errors.MissingParameter) as exc:
        getattr(broker.client(), method)(**params)
    assert exc.value.message == f"The request must contain the parameter {missing}."
    assert exc.value.query_code == "MissingParameter"
    assert exc.value.wire_type == "MissingRequiredParameterException"


def test_list_queues_needs_nothing() -> None:
    """Section 2: ListQueues has no required parameter; no queues, no key."""
    sqs = Broker(clock=ManualClock(start=START)).client()
    assert sqs.list_queues() == {}


@pytest.mark.parametrize("method", ["create_queue", "send_message", "list_queues"])
def test_unknown_parameters_rejected(method: str) -> None:
    """Section 2: only model parameters are accepted (boto3 refuses others too);
    the error names the parameter. Case matters (QueueURL is not QueueUrl)."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    broker.create_queue("q")
    params = {
        "create_queue": {"QueueName": "x", "Tags": {"a": "b"}},
        "send_message": {"QueueURL": url_of("q"), "MessageBody": "x"},
        "list_queues": {"Prefix": "q"},
    }[method]
    with pytest.raises(errors.InvalidParameterValue) as exc:
        getattr(broker.client(), method)(**params)
    bad = next(k for k in params if k not in ("QueueName", "MessageBody"))
    assert bad in exc.value.message
    assert len(broker) == 1
    assert len(broker.get_queue("q")) == 0


def test_unknown_batch_entry_member_rejected() -> None:
    """Section 2: batch entries accept only the model's members."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    url = broker.create_queue("q").url
    with pytest.raises(errors.InvalidParameterValue) as exc:
        broker.client().send_message_batch(
            QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "x", "Body": "y"}]
        )
    assert "Body" in exc.value.message
    assert len(broker.get_queue("q")) == 0


@pytest.mark.parametrize(
    ("operation", "params", "wanted"),
    [
        ("CreateQueue", {"QueueName": 5}, "must be a string."),
        ("CreateQueue", {"QueueName": "q", "Attributes": [1]}, "must be a map."),
        ("CreateQueue", {"QueueName": "q", "Attributes": {"DelaySeconds": 5}}, "be a string."),
        ("SendMessageBatch", {"QueueUrl": "q", "Entries": {}}, "must be a list."),
        ("ReceiveMessage", {"QueueUrl": "q", "WaitTimeSeconds": "5"}, "must be an integer."),
        ("ReceiveMessage", {"QueueUrl": "q", "AttributeNames": "All"}, "must be a list."),
        ("SendMessageBatch", {"QueueUrl": "q", "Entries": [{"Id": 1}]}, "must be a string."),
        (
            "SendMessageBatch",
            {"QueueUrl": "q", "Entries": [{"Id": "a", "MessageBody": "x", "DelaySeconds": "1"}]},
            "must be an integer.",
        ),
    ],
)
def test_wrong_types_are_named_as_the_api_names_them(
    operation: str, params: dict[str, Any], wanted: str
) -> None:
    """A value of the wrong type is InvalidParameterValue naming the type in the
    API's words (a string, an integer, a list, a map), never Python's (str,
    Mapping, list/tuple)."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    broker.create_queue("q")
    with pytest.raises(errors.InvalidParameterValue) as exc:
        broker.client().call(operation, params)
    assert exc.value.message.endswith(wanted), exc.value.message
    for python in ("str", "int", "Mapping", "list/tuple", "dict"):
        assert f"must be {python}" not in exc.value.message


def test_call_by_operation_name() -> None:
    """Section 2: Client.call(<AWS operation name>, params) for each of the 23;
    an unknown name is InvalidAction."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    sqs = broker.client()
    url = sqs.call("CreateQueue", {"QueueName": "q"})["QueueUrl"]
    sqs.call("SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    assert sqs.call("ReceiveMessage", {"QueueUrl": url})["Messages"][0]["Body"] == "x"
    assert all(callable(getattr(sqs, _snake(op))) for op in OPERATIONS)
    with pytest.raises(errors.InvalidAction):
        sqs.call("Nope", {})
    with pytest.raises(errors.InvalidAction):
        sqs.call("create_queue", {"QueueName": "q"})


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def test_principal_needs_a_grant() -> None:
    """Section 3.2: a client for another account (principal=) gets AccessDenied
    (PermissionError) until AddPermission grants the action; the grant covers
    the batch variant; SenderId records the caller's account."""
    broker = Broker(clock=ManualClock(start=START), account_id="123456789012")
    owner = broker.client()
    url = owner.create_queue(QueueName="q")["QueueUrl"]
    stranger = broker.client(principal=OTHER)
    assert isinstance(stranger, Client)
    for call in (
        lambda: stranger.send_message(QueueUrl=url, MessageBody="x"),
        lambda: stranger.receive_message(QueueUrl=url),
        lambda: stranger.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]),
        lambda: stranger.purge_queue(QueueUrl=url),
        lambda: stranger.delete_queue(QueueUrl=url),
        lambda: stranger.get_queue_url(QueueName="q"),
    ):
        with pytest.raises(errors.AccessDenied) as exc:
            call()
        assert isinstance(exc.value, PermissionError)
        assert exc.value.query_code == "AccessDenied"
        assert exc.value.wire_type == "AccessDeniedException"
    assert len(broker.get_queue("q")) == 0
    owner.add_permission(QueueUrl=url, Label="send", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    stranger.send_message(QueueUrl=url, MessageBody="x")
    stranger.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "y"}])
    with pytest.raises(errors.AccessDenied):
        stranger.receive_message(QueueUrl=url)
    messages = owner.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["SenderId"]
    )["Messages"]
    assert sorted(m["Body"] for m in messages) == ["x", "y"]
    assert {m["Attributes"]["SenderId"] for m in messages} == {OTHER}
    owner.remove_permission(QueueUrl=url, Label="send")
    with pytest.raises(errors.AccessDenied):
        stranger.send_message(QueueUrl=url, MessageBody="z")


def test_client_works_without_boto3() -> None:
    """Section 2: broker.client() serves the 23 operations needing neither boto3
    nor botocore (fresh interpreter with both imports blocked)."""
    script = (
        "import sys\n"
        "sys.modules['boto3'] = None\n"
        "sys.modules['botocore'] = None\n"
        "from sqsqueue import Broker, ManualClock\n"
        "sqs = Broker(clock=ManualClock(start=1_700_000_000.0)).client()\n"
        "url = sqs.create_queue(QueueName='q')['QueueUrl']\n"
        "sqs.send_message(QueueUrl=url, MessageBody='test')\n"
        "print(sqs.receive_message(QueueUrl=url)['Messages'][0]['MD5OfBody'])\n"
        "assert 'botocore' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    assert run_python(script).strip() == "098f6bcd4621d373cade4e832627b4f6"
