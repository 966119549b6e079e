"""The query protocol over HTTP (section 1.1): raw form requests for every one of
the 23 actions, their XML answers checked against AWS's shapes (element names
of the query model: ``<QueueUrl>``, ``<Attribute><Name>..</Name><Value>..``,
``<SendMessageBatchResultEntry>``, ``<ResponseMetadata><RequestId>``), and
AWS's ``ErrorResponse`` for refused requests."""

from __future__ import annotations

import base64
import json
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import urlencode

import pytest

from sqsqueue import Broker
from sqsqueue.server import EndpointHandle
from tests.endpoint.conftest import ACCOUNT, Reply, raw

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def post(handle: EndpointHandle, params: dict[str, str], path: str = "/") -> Reply:
    body = urlencode({"Version": "2012-11-05", **params}).encode()
    return raw(handle.endpoint_url, "POST", path, body, FORM)


def ok(reply: Reply, action: str) -> ET.Element | None:
    """The <ActionResult> of a 200 answer (None for actions without output)."""
    assert reply.status == 200, reply.body
    assert reply.headers["content-type"] == "text/xml"
    root = ET.fromstring(reply.body)
    assert root.tag == f"{NS}{action}Response"
    request_id = root.find(f"{NS}ResponseMetadata/{NS}RequestId")
    assert request_id is not None and request_id.text == reply.headers["x-amzn-requestid"]
    return root.find(f"{NS}{action}Result")


def error(reply: Reply, status: int, code: str, message: str | None = None) -> None:
    assert reply.status == status, reply.body
    root = ET.fromstring(reply.body)
    assert root.tag == f"{NS}ErrorResponse"
    assert root.findtext(f"{NS}Error/{NS}Type") == "Sender"
    assert root.findtext(f"{NS}Error/{NS}Code") == code
    if message is not None:
        assert root.findtext(f"{NS}Error/{NS}Message") == message
    assert root.findtext(f"{NS}RequestId")
    assert b"Traceback" not in reply.body


def texts(parent: ET.Element | None, tag: str) -> list[str]:
    assert parent is not None
    return [e.text or "" for e in parent.findall(f"{NS}{tag}")]


def pairs(parent: ET.Element | None, tag: str, key: str = "Name") -> dict[str, str]:
    assert parent is not None
    return {
        e.findtext(f"{NS}{key}") or "": e.findtext(f"{NS}Value") or ""
        for e in parent.findall(f"{NS}{tag}")
    }


def test_every_action_answers_with_aws_xml_shapes(
    endpoint: EndpointHandle, broker: Broker[Any]
) -> None:
    """Section 2: all 23 actions, as older SDKs send them, answer AWS's XML."""
    base = endpoint.endpoint_url
    dlq = ok(post(endpoint, {"Action": "CreateQueue", "QueueName": "dlq"}), "CreateQueue")
    dlq_url = texts(dlq, "QueueUrl")[0]
    assert dlq_url == f"{base}/{ACCOUNT}/dlq"
    arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:dlq"
    created = ok(
        post(
            endpoint,
            {
                "Action": "CreateQueue",
                "QueueName": "jobs",
                "Attribute.1.Name": "VisibilityTimeout",
                "Attribute.1.Value": "45",
                "Attribute.2.Name": "RedrivePolicy",
                "Attribute.2.Value": f'{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}',
                "Tag.1.Key": "team",
                "Tag.1.Value": "a",
            },
        ),
        "CreateQueue",
    )
    url = texts(created, "QueueUrl")[0]
    path = f"/{ACCOUNT}/jobs"
    timeout = broker.get_queue("jobs").get_attributes(["VisibilityTimeout"])
    assert timeout == {"VisibilityTimeout": "45"}
    assert texts(
        ok(post(endpoint, {"Action": "GetQueueUrl", "QueueName": "jobs"}), "GetQueueUrl"),
        "QueueUrl",
    ) == [url]
    assert texts(ok(post(endpoint, {"Action": "ListQueues"}), "ListQueues"), "QueueUrl") == [
        dlq_url,
        url,
    ]
    listed = ok(
        post(endpoint, {"Action": "ListDeadLetterSourceQueues", "QueueUrl": dlq_url}),
        "ListDeadLetterSourceQueues",
    )
    assert texts(listed, "QueueUrl") == [url]
    attrs = ok(
        post(
            endpoint,
            {
                "Action": "GetQueueAttributes",
                "AttributeName.1": "VisibilityTimeout",
                "AttributeName.2": "QueueArn",
            },
            path,
        ),
        "GetQueueAttributes",
    )
    assert pairs(attrs, "Attribute") == {
        "VisibilityTimeout": "45",
        "QueueArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs",
    }
    assert (
        ok(
            post(
                endpoint,
                {
                    "Action": "SetQueueAttributes",
                    "QueueUrl": url,
                    "Attribute.1.Name": "DelaySeconds",
                    "Attribute.1.Value": "0",
                },
            ),
            "SetQueueAttributes",
        )
        is None
    )
    assert (
        ok(
            post(
                endpoint,
                {"Action": "TagQueue", "QueueUrl": url, "Tag.1.Key": "env", "Tag.1.Value": "test"},
            ),
            "TagQueue",
        )
        is None
    )
    assert pairs(
        ok(post(endpoint, {"Action": "ListQueueTags"}, path), "ListQueueTags"), "Tag", "Key"
    ) == {"team": "a", "env": "test"}
    assert (
        ok(post(endpoint, {"Action": "UntagQueue", "TagKey.1": "env"}, path), "UntagQueue") is None
    )
    sent = ok(
        post(
            endpoint,
            {
                "Action": "SendMessage",
                "MessageBody": "line\r\nnext <&>",
                "MessageAttribute.1.Name": "blob",
                "MessageAttribute.1.Value.DataType": "Binary",
                "MessageAttribute.1.Value.BinaryValue": base64.b64encode(b"\x00\xff").decode(),
                "MessageAttribute.2.Name": "n",
                "MessageAttribute.2.Value.DataType": "Number",
                "MessageAttribute.2.Value.StringValue": "7",
            },
            path,
        ),
        "SendMessage",
    )
    assert sent is not None
    assert [e.tag for e in sent] == [
        f"{NS}MD5OfMessageBody",
        f"{NS}MD5OfMessageAttributes",
        f"{NS}MessageId",
    ]
    batch = ok(
        post(
            endpoint,
            {
                "Action": "SendMessageBatch",
                "SendMessageBatchRequestEntry.1.Id": "a",
                "SendMessageBatchRequestEntry.1.MessageBody": "one",
                "SendMessageBatchRequestEntry.2.Id": "b",
                "SendMessageBatchRequestEntry.2.MessageBody": "two",
                "SendMessageBatchRequestEntry.2.DelaySeconds": "901",
            },
            path,
        ),
        "SendMessageBatch",
    )
    assert batch is not None
    assert [e.findtext(f"{NS}Id") for e in batch.findall(f"{NS}SendMessageBatchResultEntry")] == [
        "a"
    ]
    [failed] = batch.findall(f"{NS}BatchResultErrorEntry")
    assert failed.findtext(f"{NS}Id") == "b"
    assert failed.findtext(f"{NS}SenderFault") == "true"
    assert failed.findtext(f"{NS}Code") == "InvalidParameterValue"
    received = ok(
        post(
            endpoint,
            {
                "Action": "ReceiveMessage",
                "MaxNumberOfMessages": "10",
                "AttributeName.1": "All",
                "MessageAttributeName.1": "All",
            },
            path,
        ),
        "ReceiveMessage",
    )
    assert received is not None
    messages = received.findall(f"{NS}Message")
    assert [m.findtext(f"{NS}Body") for m in messages] == ["line\r\nnext <&>", "one"]
    first = messages[0]
    assert pairs(first, "Attribute")["ApproximateReceiveCount"] == "1"
    [blob, number] = first.findall(f"{NS}MessageAttribute")
    assert blob.findtext(f"{NS}Name") == "blob"
    assert blob.findtext(f"{NS}Value/{NS}BinaryValue") == base64.b64encode(b"\x00\xff").decode()
    assert number.findtext(f"{NS}Value/{NS}StringValue") == "7"
    assert number.findtext(f"{NS}Value/{NS}DataType") == "Number"
    handles = [m.findtext(f"{NS}ReceiptHandle") or "" for m in messages]
    assert (
        ok(
            post(
                endpoint,
                {
                    "Action": "ChangeMessageVisibility",
                    "ReceiptHandle": handles[0],
                    "VisibilityTimeout": "60",
                },
                path,
            ),
            "ChangeMessageVisibility",
        )
        is None
    )
    changed = ok(
        post(
            endpoint,
            {
                "Action": "ChangeMessageVisibilityBatch",
                "ChangeMessageVisibilityBatchRequestEntry.1.Id": "x",
                "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle": handles[1],
                "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout": "60",
            },
            path,
        ),
        "ChangeMessageVisibilityBatch",
    )
    assert texts(
        changed.find(f"{NS}ChangeMessageVisibilityBatchResultEntry")
        if changed is not None
        else None,
        "Id",
    ) == ["x"]
    assert (
        ok(
            post(endpoint, {"Action": "DeleteMessage", "ReceiptHandle": handles[0]}, path),
            "DeleteMessage",
        )
        is None
    )
    deleted = ok(
        post(
            endpoint,
            {
                "Action": "DeleteMessageBatch",
                "DeleteMessageBatchRequestEntry.1.Id": "y",
                "DeleteMessageBatchRequestEntry.1.ReceiptHandle": handles[1],
            },
            path,
        ),
        "DeleteMessageBatch",
    )
    assert deleted is not None and deleted.find(f"{NS}DeleteMessageBatchResultEntry") is not None
    assert (
        ok(
            post(
                endpoint,
                {
                    "Action": "AddPermission",
                    "Label": "l",
                    "AWSAccountId.1": "210987654321",
                    "ActionName.1": "SendMessage",
                },
                path,
            ),
            "AddPermission",
        )
        is None
    )
    assert (
        ok(post(endpoint, {"Action": "RemovePermission", "Label": "l"}, path), "RemovePermission")
        is None
    )
    assert ok(post(endpoint, {"Action": "PurgeQueue"}, path), "PurgeQueue") is None
    started = ok(
        post(endpoint, {"Action": "StartMessageMoveTask", "SourceArn": arn}), "StartMessageMoveTask"
    )
    task = texts(started, "TaskHandle")[0]
    tasks = ok(
        post(endpoint, {"Action": "ListMessageMoveTasks", "SourceArn": arn}), "ListMessageMoveTasks"
    )
    assert tasks is not None
    [entry] = tasks.findall(f"{NS}ListMessageMoveTasksResultEntry")
    assert entry.findtext(f"{NS}Status") in {"RUNNING", "COMPLETED"}
    if entry.findtext(f"{NS}Status") == "RUNNING":
        cancelled = ok(
            post(endpoint, {"Action": "CancelMessageMoveTask", "TaskHandle": task}),
            "CancelMessageMoveTask",
        )
        assert texts(cancelled, "ApproximateNumberOfMessagesMoved") == ["0"]
    else:
        error(
            post(endpoint, {"Action": "CancelMessageMoveTask", "TaskHandle": task}),
            400,
            "InvalidParameterValue",
        )
    assert ok(post(endpoint, {"Action": "DeleteQueue"}, path), "DeleteQueue") is None
    assert "jobs" not in broker


def test_get_requests_and_queue_url_paths(endpoint: EndpointHandle) -> None:
    """Section 1.1: GET with the query string, on / and on the queue URL."""
    ok(raw(endpoint.endpoint_url, "GET", "/?Action=CreateQueue&QueueName=q"), "CreateQueue")
    ok(
        raw(endpoint.endpoint_url, "GET", f"/{ACCOUNT}/q?Action=SendMessage&MessageBody=hi"),
        "SendMessage",
    )
    result = ok(
        raw(endpoint.endpoint_url, "GET", f"/{ACCOUNT}/q?Action=ReceiveMessage"), "ReceiveMessage"
    )
    assert result is not None and result.findtext(f"{NS}Message/{NS}Body") == "hi"


@pytest.mark.parametrize(
    ("params", "path", "status", "code", "message"),
    [
        (
            {"Action": "GetQueueUrl", "QueueName": "nope"},
            "/",
            400,
            "AWS.SimpleQueueService.NonExistentQueue",
            "The specified queue does not exist for this wsdl version.",
        ),
        ({}, "/", 400, "MissingAction", "The request must contain the parameter Action."),
        (
            {"Action": "Explode"},
            "/",
            400,
            "InvalidAction",
            "The action Explode is not valid for this endpoint.",
        ),
        (
            {"Action": "SendMessage"},
            f"/{ACCOUNT}/q",
            400,
            "MissingParameter",
            "The request must contain the parameter MessageBody.",
        ),
        (
            {"Action": "ReceiveMessage", "MaxNumberOfMessages": "ten"},
            f"/{ACCOUNT}/q",
            400,
            "InvalidParameterValue",
            None,
        ),
        (
            {"Action": "ReceiveMessage", "MaxNumberOfMessages": "11"},
            f"/{ACCOUNT}/q",
            400,
            "InvalidParameterValue",
            "Value 11 for parameter MaxNumberOfMessages is invalid. "
            "Reason: Must be between 1 and 10, if provided.",
        ),
        (
            {"Action": "SendMessage", "MessageBody": "x", "MessageAttribute.1.Name": "a"},
            f"/{ACCOUNT}/q",
            400,
            "InvalidParameterValue",
            None,
        ),
        (
            {"Action": "SendMessage", "MessageBody": "x", "MessageAttribute.x.Name": "a"},
            f"/{ACCOUNT}/q",
            404,
            "MalformedQueryString",
            None,
        ),
        (
            {
                "Action": "SendMessage",
                "MessageBody": "x",
                "MessageAttribute.1.Name": "a",
                "MessageAttribute.1.Value.DataType": "Binary",
                "MessageAttribute.1.Value.BinaryValue": "***",
            },
            f"/{ACCOUNT}/q",
            400,
            "InvalidParameterValue",
            None,
        ),
        (
            {"Action": "DeleteMessage", "ReceiptHandle": "garbage"},
            f"/{ACCOUNT}/q",
            404,
            "ReceiptHandleIsInvalid",
            'The input receipt handle "garbage" is not a valid receipt handle.',
        ),
        (
            {"Action": "SendMessageBatch"},
            f"/{ACCOUNT}/q",
            400,
            "AWS.SimpleQueueService.EmptyBatchRequest",
            "There should be at least one SendMessageBatchRequestEntry in the request.",
        ),
        (
            {"Action": "DeleteMessageBatch"},
            f"/{ACCOUNT}/q",
            400,
            "AWS.SimpleQueueService.EmptyBatchRequest",
            "There should be at least one DeleteMessageBatchRequestEntry in the request.",
        ),
    ],
)
def test_refused_requests_get_error_responses(
    endpoint: EndpointHandle,
    params: dict[str, str],
    path: str,
    status: int,
    code: str,
    message: str | None,
) -> None:
    """Section 1.4/3: each refusal is AWS's query ErrorResponse, with its status."""
    ok(post(endpoint, {"Action": "CreateQueue", "QueueName": "q"}), "CreateQueue")
    error(post(endpoint, params, path), status, code, message)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"Action=ListQueues&Version=2099-01-01", 400, "NoSuchVersion"),
        (b"Action=ListQueues&Version=2012-11-05&%zz=1", 404, "MalformedQueryString"),
        (b"Action=ListQueues&Version=2012-11-05&QueueNamePrefix=a%2", 404, "MalformedQueryString"),
        (
            f"Action=SendMessage&Version=2012-11-05&QueueUrl=/{ACCOUNT}/q&MessageBody=%ff%fe".encode(),
            404,
            "MalformedQueryString",
        ),
    ],
    ids=["other-version", "bad-escape", "short-escape", "escaped-non-utf8"],
)
def test_bad_forms_and_versions_are_refused(
    endpoint: EndpointHandle, broker: Broker[Any], body: bytes, status: int, code: str
) -> None:
    """A Version other than 2012-11-05 is NoSuchVersion (SQS Common Errors), and
    a form is decoded strictly: a malformed % escape, or escaped bytes that are
    not UTF-8, are MalformedQueryString (CommonErrors, 404), never a message of
    U+FFFD characters. In a POST body and in a GET query string alike."""
    queue = broker.create_queue("q")
    error(raw(endpoint.endpoint_url, "POST", "/", body, FORM), status, code)
    error(raw(endpoint.endpoint_url, "GET", "/?" + body.decode()), status, code)
    assert queue.receive(max_messages=10) == []


def test_no_version_is_2012_11_05(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """kombu's own query requests (botocore before 1.34.90) carry no Version;
    AWS served them, and so does the endpoint."""
    queue = broker.create_queue("q")
    body = f"Action=SendMessage&QueueUrl=/{ACCOUNT}/q&MessageBody=caf%C3%A9+%E2%9C%93".encode()
    ok(raw(endpoint.endpoint_url, "POST", "/", body, FORM), "SendMessage")
    assert [m.body for m in queue.receive()] == ["caf\u00e9 \u2713"]


# -- where the query protocol answered otherwise than AWS was recorded answering ------


def test_trace_header_on_a_query_send(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """A query-protocol SendMessage stores the ``X-Amzn-Trace-Id`` header as the
    message's AWSTraceHeader, as the JSON protocol does (and as AWS does)."""
    queue = broker.create_queue("q")
    body = urlencode(
        {"Version": "2012-11-05", "Action": "SendMessage", "MessageBody": "traced"}
    ).encode()
    headers = {**FORM, "X-Amzn-Trace-Id": "Root=1-5759e988-bd862e3fe1be46a994272793"}
    ok(raw(endpoint.endpoint_url, "POST", f"/{ACCOUNT}/q", body, headers), "SendMessage")
    [message] = queue.receive(attribute_names=["AWSTraceHeader"])
    assert message.attributes == {"AWSTraceHeader": "Root=1-5759e988-bd862e3fe1be46a994272793"}


def test_accept_json_is_answered_in_json(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """A query request with ``Accept: application/json`` (API Gateway's SQS
    integrations send one) gets AWS's JSON: ``<Op>Response`` holding
    ``<Op>Result`` (every member, null when absent, lists in lowerCamelCase)
    and ``ResponseMetadata``."""
    base = endpoint.endpoint_url
    queue = broker.create_queue("q")
    accept = {"Accept": "application/json"}
    empty = raw(base, "GET", f"/{ACCOUNT}/q?Action=ReceiveMessage", headers=accept)
    assert empty.status == 200 and empty.headers["content-type"] == "application/json"
    answer = json.loads(empty.body)
    request_id = empty.headers["x-amzn-requestid"]
    assert answer == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {"messages": None},
            "ResponseMetadata": {"RequestId": request_id},
        }
    }
    sent = queue.send("hello")
    reply = raw(base, "GET", f"/{ACCOUNT}/q?Action=ReceiveMessage", headers=accept)
    [message] = json.loads(reply.body)["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"]
    assert message == {
        "Attributes": None,
        "Body": "hello",
        "MD5OfBody": sent.md5_of_body,
        "MD5OfMessageAttributes": None,
        "MessageAttributes": None,
        "MessageId": sent.message_id,
        "ReceiptHandle": message["ReceiptHandle"],
    }
    listed = json.loads(raw(base, "GET", "/?Action=ListQueues", headers=accept).body)
    assert listed["ListQueuesResponse"]["ListQueuesResult"] == {
        "NextToken": None,
        "queueUrls": [f"{base}/{ACCOUNT}/q"],
    }
    # Without the header, the same request is answered in XML.
    assert raw(base, "GET", "/?Action=ListQueues").headers["content-type"] == "text/xml"


@pytest.mark.parametrize("action", ["CreateQueue", "ListQueues"])
def test_service_actions_on_a_queue_url_are_invalid(
    endpoint: EndpointHandle, broker: Broker[Any], action: str
) -> None:
    """CreateQueue or ListQueues sent to a queue URL: 400 InvalidAction, "The
    action CreateQueue is not valid for this endpoint." (recorded from AWS);
    nothing is created."""
    broker.create_queue("q")
    error(
        post(endpoint, {"Action": action, "QueueName": "other"}, f"/{ACCOUNT}/q"),
        400,
        "InvalidAction",
        f"The action {action} is not valid for this endpoint.",
    )
    assert [q.name for q in broker] == ["q"]


def test_get_on_a_queue_url_without_an_action(
    endpoint: EndpointHandle, broker: Broker[Any]
) -> None:
    """AWS: a GET on a queue URL naming no Action is 404 with the body
    ``<UnknownOperationException/>``, and stays XML with ``Accept:
    application/json`` (recorded: LocalStack's AWS-validated
    TestSqsQueryApi::test_get_without_query_returns_unknown_operation and
    ::test_get_without_query_json_format_returns_returns_xml, which look for
    ``<UnknownOperationException`` in the body: not an ErrorResponse's
    ``<Code>``). On the service root it stays MissingAction (400)."""
    broker.create_queue("q")
    for headers in ({}, {"Accept": "application/json"}):
        reply = raw(endpoint.endpoint_url, "GET", f"/{ACCOUNT}/q", headers=headers)
        assert reply.status == 404
        assert reply.body == b"<UnknownOperationException/>"
        assert ET.fromstring(reply.body).tag == "UnknownOperationException"
    error(raw(endpoint.endpoint_url, "GET", "/"), 400, "MissingAction")


def test_an_empty_result_is_self_closed(endpoint: EndpointHandle, broker: Broker[Any]) -> None:
    """An empty result element is written self-closed, as AWS writes it."""
    broker.create_queue("q")
    reply = raw(endpoint.endpoint_url, "GET", f"/{ACCOUNT}/q?Action=ReceiveMessage")
    assert b"<ReceiveMessageResult/>" in reply.body
    assert b"<ReceiveMessageResult></ReceiveMessageResult>" not in reply.body
    assert ok(reply, "ReceiveMessage") is not None  # still a ReceiveMessageResult element
