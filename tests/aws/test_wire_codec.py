"""The raw awsJson1_0 codec ``sqsqueue.aws.handle``: every malformed request is
answered with a 4xx JSON error of AWS's shape, never an exception and never a
500 (docs/aws-behaviour.md §§1.2, 1.3, 1.4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqsqueue import Broker
from sqsqueue.aws import handle
from sqsqueue.aws._client import OPERATIONS, Client
from tests.aws._helpers import url_of

URL = url_of("jobs")


@pytest.fixture
def client_for(broker: Broker) -> Any:
    """What mock_sqs hands the codec: a factory of dict-level clients."""
    broker.create_queue("jobs")
    broker.create_queue("orders.fifo", fifo_queue=True)

    def make() -> Client:
        return broker.client()

    return make


def call(client_for: Any, target: str | None, body: bytes | str, headers: Any = None) -> Any:
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return handle(client_for, target, raw, headers)


def assert_error(
    result: tuple[int, dict[str, str], bytes],
    *,
    query_code: str | None = None,
    wire_type: str | None = None,
    status: int = 400,
) -> dict[str, Any]:
    """A well-formed AWS JSON error (section 1.4); returns the parsed body."""
    got_status, headers, body = result
    assert got_status == status
    assert 400 <= got_status < 500
    assert headers["Content-Type"] == "application/x-amz-json-1.0"
    assert headers["x-amzn-RequestId"]
    code, fault = headers["x-amzn-query-error"].split(";")
    assert fault == "Sender"
    parsed = json.loads(body)
    assert set(parsed) == {"__type", "message"}
    namespace, _, shape = parsed["__type"].partition("#")
    assert namespace in ("com.amazonaws.sqs", "com.amazon.coral.service")
    assert isinstance(parsed["message"], str)
    assert parsed["message"]
    if query_code is not None:
        assert code == query_code
    if wire_type is not None:
        assert shape == wire_type
    return parsed


def test_success_response_shape(client_for: Any) -> None:
    """Section 1.3: HTTP 200, JSON content type, a request id, the output
    members as JSON; BinaryValue base64 on the way in and out (section 1.2)."""
    status, headers, body = call(
        client_for,
        "AmazonSQS.SendMessage",
        json.dumps(
            {
                "QueueUrl": URL,
                "MessageBody": "test",
                "MessageAttributes": {"a": {"DataType": "Binary", "BinaryValue": "AAE="}},
            }
        ),
    )
    assert status == 200
    assert headers["Content-Type"] == "application/x-amz-json-1.0"
    assert headers["x-amzn-RequestId"]
    sent = json.loads(body)
    assert sent["MD5OfMessageBody"] == "098f6bcd4621d373cade4e832627b4f6"
    status, _, body = call(
        client_for,
        "AmazonSQS.ReceiveMessage",
        json.dumps({"QueueUrl": URL, "MessageAttributeNames": ["All"]}),
    )
    assert status == 200
    message = json.loads(body)["Messages"][0]
    assert message["MessageAttributes"] == {"a": {"DataType": "Binary", "BinaryValue": "AAE="}}
    assert message["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]


def test_empty_body_means_no_parameters(client_for: Any) -> None:
    """Section 1.3: an operation without required members accepts an empty body."""
    status, _, body = call(client_for, "AmazonSQS.ListQueues", b"")
    assert status == 200
    assert json.loads(body)["QueueUrls"] == [URL, url_of("orders.fifo")]


def test_modeled_error_shape(client_for: Any) -> None:
    """Section 1.4: the canonical modeled error, byte for byte in its parts."""
    parsed = assert_error(
        call(client_for, "AmazonSQS.GetQueueUrl", '{"QueueName": "missing"}'),
        query_code="AWS.SimpleQueueService.NonExistentQueue",
        wire_type="QueueDoesNotExist",
    )
    assert parsed == {
        "__type": "com.amazonaws.sqs#QueueDoesNotExist",
        "message": "The specified queue does not exist.",
    }


def test_unmodeled_error_uses_coral_namespace(client_for: Any) -> None:
    """Section 1.4: generic errors are com.amazon.coral.service#…Exception."""
    parsed = assert_error(
        call(
            client_for,
            "AmazonSQS.ReceiveMessage",
            json.dumps({"QueueUrl": URL, "MaxNumberOfMessages": 11}),
        ),
        query_code="InvalidParameterValue",
        wire_type="InvalidParameterValueException",
    )
    assert parsed["__type"] == "com.amazon.coral.service#InvalidParameterValueException"


@pytest.mark.parametrize(
    "target",
    [
        None,
        "",
        "AmazonSQS.",
        "AmazonSQS.Nope",
        "AmazonSQS.sendMessage",
        "DynamoDB_20120810.ListTables",
        "SendMessage",
        "AmazonSQS.SendMessage.Extra",
        "AmazonSQS.__init__",
        "AmazonSQS.call",
    ],
)
def test_unknown_or_missing_target(client_for: Any, target: str | None) -> None:
    """Section 1.2: the operation comes from X-Amz-Target "AmazonSQS.<Op>";
    anything else is a 400 InvalidAction, and Python attribute names on the
    client are not reachable."""
    assert_error(call(client_for, target, b"{}"), query_code="InvalidAction")


BAD_BODIES: list[bytes] = [
    b"{not json",
    b"[]",
    b'[{"QueueName": "x"}]',
    b"null",
    b'"QueueName"',
    b"42",
    b"true",
    b'{"QueueName": "x"',
    b'{"QueueName": "x"} trailing',
    b"\xff\xfe\x00",
    b'{"QueueName": "\xff"}',
    b"{" + b'"a":' * 3 + b"1",
    b'{"QueueName": NaN}',
    b'{"QueueName": Infinity}',
    b'{"QueueName": 1' + b"0" * 5000 + b"}",
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_malformed_bodies(client_for: Any, body: bytes) -> None:
    """Section 1.2: a body that is not a JSON object of parameters is a 400."""
    assert_error(call(client_for, "AmazonSQS.CreateQueue", body))


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_deeply_nested_json(client_for: Any, depth: int) -> None:
    """Section 1.2: absurd nesting (up to 100,000 levels) is refused with a 400,
    never a RecursionError."""
    body = b'{"QueueUrl": "' + URL.encode() + b'", "MessageAttributes": '
    body += b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    assert_error(call(client_for, "AmazonSQS.SendMessage", body))
    arrays = b"[" * depth + b"]" * depth
    assert_error(call(client_for, "AmazonSQS.ListQueues", arrays))


def test_five_mib_body(client_for: Any, broker: Broker) -> None:
    """Section 2.1/4: a 5 MiB request is refused with a 4xx (nothing stored)."""
    body = json.dumps({"QueueUrl": URL, "MessageBody": "x" * (5 * 1024 * 1024)})
    assert_error(call(client_for, "AmazonSQS.SendMessage", body))
    assert len(broker.get_queue("jobs")) == 0


def test_invalid_base64_binary_value(client_for: Any, broker: Broker) -> None:
    """Section 1.2: BinaryValue must be base64; garbage is a 400."""
    for blob in ("!!!", "AAE", "QUJD\n===", "é"):
        body = json.dumps(
            {
                "QueueUrl": URL,
                "MessageBody": "x",
                "MessageAttributes": {"a": {"DataType": "Binary", "BinaryValue": blob}},
            }
        )
        assert_error(call(client_for, "AmazonSQS.SendMessage", body))
        batch = json.dumps(
            {
                "QueueUrl": URL,
                "Entries": [
                    {
                        "Id": "e",
                        "MessageBody": "x",
                        "MessageAttributes": {"a": {"DataType": "Binary", "BinaryValue": blob}},
                    }
                ],
            }
        )
        assert_error(call(client_for, "AmazonSQS.SendMessageBatch", batch))
    assert len(broker.get_queue("jobs")) == 0


WRONG_TYPES: list[tuple[str, dict[str, Any]]] = [
    ("ReceiveMessage", {"QueueUrl": URL, "MaxNumberOfMessages": "ten"}),
    ("ReceiveMessage", {"QueueUrl": URL, "MaxNumberOfMessages": "5"}),
    ("ReceiveMessage", {"QueueUrl": URL, "MaxNumberOfMessages": 1.5}),
    ("ReceiveMessage", {"QueueUrl": URL, "MaxNumberOfMessages": True}),
    ("ReceiveMessage", {"QueueUrl": URL, "WaitTimeSeconds": [1]}),
    ("ReceiveMessage", {"QueueUrl": URL, "AttributeNames": "All"}),
    ("ReceiveMessage", {"QueueUrl": URL, "MessageAttributeNames": [1, 2]}),
    ("SendMessage", {"QueueUrl": URL, "MessageBody": 5}),
    ("SendMessage", {"QueueUrl": 5, "MessageBody": "x"}),
    ("SendMessage", {"QueueUrl": URL, "MessageBody": {"a": 1}}),
    ("SendMessage", {"QueueUrl": URL, "MessageBody": "x", "DelaySeconds": "1"}),
    ("SendMessage", {"QueueUrl": URL, "MessageBody": "x", "MessageAttributes": {"a": 5}}),
    ("SendMessage", {"QueueUrl": URL, "MessageBody": "x", "MessageAttributes": ["a"]}),
    (
        "SendMessage",
        {
            "QueueUrl": URL,
            "MessageBody": "x",
            "MessageAttributes": {"a": {"DataType": "String", "StringValue": 5}},
        },
    ),
    (
        "SendMessage",
        {
            "QueueUrl": URL,
            "MessageBody": "x",
            "MessageAttributes": {"a": {"DataType": 7, "StringValue": "v"}},
        },
    ),
    (
        "SendMessage",
        {"QueueUrl": URL, "MessageBody": "x", "MessageSystemAttributes": {"AWSTraceHeader": 5}},
    ),
    ("SendMessageBatch", {"QueueUrl": URL, "Entries": "x"}),
    ("SendMessageBatch", {"QueueUrl": URL, "Entries": [5]}),
    ("SendMessageBatch", {"QueueUrl": URL, "Entries": {"Id": "a"}}),
    ("SendMessageBatch", {"QueueUrl": URL, "Entries": [{"Id": "a", "MessageBody": 5}]}),
    ("SendMessageBatch", {"QueueUrl": URL, "Entries": [{"Id": 5, "MessageBody": "x"}]}),
    (
        "SendMessageBatch",
        {"QueueUrl": URL, "Entries": [{"Id": "a", "MessageBody": "x", "DelaySeconds": "1"}]},
    ),
    (
        "SendMessageBatch",
        {
            "QueueUrl": URL,
            "Entries": [{"Id": "a", "MessageBody": "x", "MessageAttributes": {"k": 1}}],
        },
    ),
    ("DeleteMessageBatch", {"QueueUrl": URL, "Entries": [{"Id": "a", "ReceiptHandle": 5}]}),
    (
        "ChangeMessageVisibilityBatch",
        {"QueueUrl": URL, "Entries": [{"Id": "a", "ReceiptHandle": "h", "VisibilityTimeout": "1"}]},
    ),
    ("DeleteMessage", {"QueueUrl": URL, "ReceiptHandle": ["h"]}),
    ("ChangeMessageVisibility", {"QueueUrl": URL, "ReceiptHandle": "h", "VisibilityTimeout": "1"}),
    ("CreateQueue", {"QueueName": 5}),
    ("CreateQueue", {"QueueName": "typed", "Attributes": [1]}),
    ("CreateQueue", {"QueueName": "typed", "Attributes": {"VisibilityTimeout": 5}}),
    ("CreateQueue", {"QueueName": "typed", "tags": {"k": 5}}),
    ("SetQueueAttributes", {"QueueUrl": URL, "Attributes": {"DelaySeconds": 5}}),
    ("SetQueueAttributes", {"QueueUrl": URL, "Attributes": "DelaySeconds=5"}),
    ("GetQueueAttributes", {"QueueUrl": URL, "AttributeNames": "All"}),
    ("TagQueue", {"QueueUrl": URL, "Tags": {"k": 5}}),
    ("TagQueue", {"QueueUrl": URL, "Tags": [["k", "v"]]}),
    ("UntagQueue", {"QueueUrl": URL, "TagKeys": "k"}),
    (
        "AddPermission",
        {"QueueUrl": URL, "Label": "l", "AWSAccountIds": "111122223333", "Actions": ["*"]},
    ),
    ("ListQueues", {"MaxResults": "5"}),
    ("ListQueues", {"QueueNamePrefix": 5}),
    ("ListQueues", {"NextToken": 5}),
    ("StartMessageMoveTask", {"SourceArn": ["arn"]}),
    ("CancelMessageMoveTask", {"TaskHandle": 5}),
    (
        "ListMessageMoveTasks",
        {"SourceArn": "arn:aws:sqs:us-east-1:123456789012:jobs", "MaxResults": "1"},
    ),
]


@pytest.mark.parametrize(("operation", "params"), WRONG_TYPES, ids=range(len(WRONG_TYPES)))
def test_wrong_json_types(
    client_for: Any, broker: Broker, operation: str, params: dict[str, Any]
) -> None:
    """Section 1.2: JSON types follow the model (integers are numbers, maps are
    string -> string or string -> structure, lists are lists); a wrong type
    fails the whole request with a 400 and changes nothing."""
    assert_error(call(client_for, f"AmazonSQS.{operation}", json.dumps(params)))
    assert len(broker.get_queue("jobs")) == 0
    assert "typed" not in broker
    assert broker.get_queue("jobs").list_tags() == {}


def _escaped(params: str) -> bytes:
    """A JSON body with a raw ``\\ud800`` escape (a lone surrogate) spliced in."""
    filled = params.replace("@URL@", URL).replace("@FIFO@", url_of("orders.fifo"))
    return filled.replace("LONE", "\\ud800").encode("ascii")


SURROGATES: list[tuple[str, str]] = [
    ("SendMessage", '{"QueueUrl": "@URL@", "MessageBody": "aLONEb"}'),
    ("SendMessage", '{"QueueUrl": "LONE", "MessageBody": "a"}'),
    ("SendMessage", '{"QueueUrl": "@URL@LONE", "MessageBody": "a"}'),
    (
        "SendMessage",
        '{"QueueUrl": "@URL@", "MessageBody": "a", "MessageAttributes": '
        '{"LONE": {"DataType": "String", "StringValue": "v"}}}',
    ),
    (
        "SendMessage",
        '{"QueueUrl": "@URL@", "MessageBody": "a", "MessageAttributes": '
        '{"k": {"DataType": "String", "StringValue": "LONE"}}}',
    ),
    (
        "SendMessage",
        '{"QueueUrl": "@URL@", "MessageBody": "a", "MessageAttributes": '
        '{"k": {"DataType": "String.LONE", "StringValue": "v"}}}',
    ),
    (
        "SendMessage",
        '{"QueueUrl": "@URL@", "MessageBody": "a", "MessageSystemAttributes": '
        '{"AWSTraceHeader": {"DataType": "String", "StringValue": "LONE"}}}',
    ),
    ("SendMessage", '{"QueueUrl": "@URL@", "MessageBody": "a", "MessageGroupId": "LONE"}'),
    (
        "SendMessage",
        '{"QueueUrl": "@FIFO@", "MessageBody": "a", "MessageGroupId": "g", '
        '"MessageDeduplicationId": "LONE"}',
    ),
    ("SendMessageBatch", '{"QueueUrl": "@URL@", "Entries": [{"Id": "LONE", "MessageBody": "a"}]}'),
    ("CreateQueue", '{"QueueName": "LONE"}'),
    ("CreateQueue", '{"QueueName": "q", "tags": {"LONE": "v"}}'),
    ("CreateQueue", '{"QueueName": "q", "Attributes": {"RedrivePolicy": "LONE"}}'),
    ("GetQueueUrl", '{"QueueName": "LONE"}'),
    ("GetQueueAttributes", '{"QueueUrl": "@URL@", "AttributeNames": ["LONE"]}'),
    ("SetQueueAttributes", '{"QueueUrl": "@URL@", "Attributes": {"Policy": "LONE"}}'),
    ("SetQueueAttributes", '{"QueueUrl": "@URL@", "Attributes": {"LONE": "1"}}'),
    ("DeleteMessage", '{"QueueUrl": "@URL@", "ReceiptHandle": "LONE"}'),
    (
        "ChangeMessageVisibility",
        '{"QueueUrl": "@URL@", "ReceiptHandle": "LONE", "VisibilityTimeout": 1}',
    ),
    ("ReceiveMessage", '{"QueueUrl": "@FIFO@", "ReceiveRequestAttemptId": "LONE"}'),
    ("TagQueue", '{"QueueUrl": "@URL@", "Tags": {"k": "LONE"}}'),
    (
        "AddPermission",
        '{"QueueUrl": "@URL@", "Label": "LONE", '
        '"AWSAccountIds": ["111122223333"], "Actions": ["*"]}',
    ),
    ("ListQueues", '{"LONE": 1}'),
    ("StartMessageMoveTask", '{"SourceArn": "LONE"}'),
    ("CancelMessageMoveTask", '{"TaskHandle": "LONE"}'),
]


@pytest.mark.parametrize(("operation", "params"), SURROGATES, ids=range(len(SURROGATES)))
def test_lone_surrogates(client_for: Any, broker: Broker, operation: str, params: str) -> None:
    """Section 2.1: a JSON-escaped lone surrogate (not a character: outside the
    allowed set) in any string is refused with a 4xx JSON error whose body is
    valid ASCII JSON; nothing is stored."""
    result = call(client_for, f"AmazonSQS.{operation}", _escaped(params))
    status = result[0]
    assert_error(result, status=status)
    result[2].decode("ascii")
    assert len(broker.get_queue("jobs")) == 0
    assert "q" not in broker


def test_lone_surrogate_where_harmless_is_ignored(client_for: Any) -> None:
    """Section 2.1: names that are only matched (never stored) may contain
    anything: a prefix or attribute-name filter that matches nothing, a tag
    key that does not exist."""
    for operation, params in [
        ("ListQueues", '{"QueueNamePrefix": "LONE"}'),
        ("ReceiveMessage", '{"QueueUrl": "@URL@", "MessageAttributeNames": ["LONE"]}'),
        ("UntagQueue", '{"QueueUrl": "@URL@", "TagKeys": ["LONE"]}'),
    ]:
        status, _, body = call(client_for, f"AmazonSQS.{operation}", _escaped(params))
        assert status == 200
        assert json.loads(body) == {}


def test_x_amzn_trace_id_header(client_for: Any, broker: Broker) -> None:
    """Section 2.1: the X-Amzn-Trace-Id header (any case) becomes AWSTraceHeader;
    an explicit MessageSystemAttributes wins."""
    body = json.dumps({"QueueUrl": URL, "MessageBody": "h"})
    for name in ("X-Amzn-Trace-Id", "x-amzn-trace-id", "X-AMZN-TRACE-ID"):
        status, _, out = call(client_for, "AmazonSQS.SendMessage", body, {name: "Root=1-abc"})
        assert status == 200
        assert "MD5OfMessageSystemAttributes" in json.loads(out)
    explicit = json.dumps(
        {
            "QueueUrl": URL,
            "MessageBody": "e",
            "MessageSystemAttributes": {
                "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-explicit"}
            },
        }
    )
    call(client_for, "AmazonSQS.SendMessage", explicit, {"X-Amzn-Trace-Id": "Root=1-header"})
    traces = [
        m.attributes["AWSTraceHeader"]
        for m in broker.get_queue("jobs").receive(10, attribute_names=["AWSTraceHeader"])
    ]
    assert traces == ["Root=1-abc"] * 3 + ["Root=1-explicit"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
PARAM_NAMES = st.sampled_from(
    [
        "QueueUrl",
        "QueueName",
        "MessageBody",
        "Entries",
        "Attributes",
        "AttributeNames",
        "MessageAttributes",
        "MessageAttributeNames",
        "MaxNumberOfMessages",
        "ReceiptHandle",
        "VisibilityTimeout",
        "Tags",
        "tags",
        "TagKeys",
        "Label",
        "AWSAccountIds",
        "Actions",
        "SourceArn",
        "TaskHandle",
        "NextToken",
        "MaxResults",
        "DelaySeconds",
        "MessageSystemAttributes",
        "MessageGroupId",
    ]
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    operation=st.sampled_from(OPERATIONS),
    params=st.dictionaries(PARAM_NAMES, JSON | st.just(URL), max_size=5),
)
def test_fuzzed_parameters_never_crash(
    client_for: Any, operation: str, params: dict[str, Any]
) -> None:
    """Sections 1.3/1.4: arbitrary JSON parameters for any operation get either a
    200 JSON object or a 4xx AWS-shaped error: never an exception, never a 500."""
    status, headers, body = call(client_for, f"AmazonSQS.{operation}", json.dumps(params))
    if status == 200:
        assert isinstance(json.loads(body), dict)
    else:
        assert_error((status, headers, body), status=status)


def test_the_depth_check_refuses_exactly_what_is_too_deep() -> None:
    """A value at depth MAX_JSON_DEPTH is taken, one below it refused, whether
    it is a scalar, an empty or a non-empty container, in objects or lists."""
    from sqsqueue.aws import _wire

    limit = _wire.MAX_JSON_DEPTH

    def nest(depth: int, leaf: Any, kind: str) -> Any:
        value = leaf
        for _ in range(depth):
            value = {"a": value} if kind == "object" else [value]
        return value

    for kind in ("object", "list"):
        for leaf in ("x", 1, None, {}, [], {"k": "v"}, ["v"]):
            # The leaf's own depth: a non-empty container's children lie one deeper.
            extra = 1 if leaf in ({"k": "v"}, ["v"]) else 0
            assert _wire._depth_ok(nest(limit - extra, leaf, kind)), (kind, leaf)
            assert not _wire._depth_ok(nest(limit - extra + 1, leaf, kind)), (kind, leaf)
    wide = {"QueueUrl": "u", "Entries": [{"Id": str(i), "ReceiptHandle": "h"} for i in range(10)]}
    assert _wire._depth_ok(wide)
