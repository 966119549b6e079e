"""The JSON codec's short path for the hot operations (``sqsqueue.aws._wire``,
module docstring): its answers are byte for byte what the general encoder
writes for the dict client's result, on generated messages (every character
SQS allows in a body, attributes of every type, FIFO and standard queues,
batches with failed entries); a request it answers gets the status, error and
state the general path gives; and the mock's botocore glue
(``sqsqueue.testing._hooks``) answers the same through botocore's public
interface where its shortcuts do not apply; the query protocol's compiled XML
writers write what the model walker they replace wrote, for every result
shape (docs/aws-behaviour.md §§1.2-1.4)."""

from __future__ import annotations

import asyncio
import base64
import json
import random
from collections.abc import Sequence
from typing import Any
from unittest import mock
from xml.sax.saxutils import escape

import boto3
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sqsqueue import Broker, ManualClock, SendEntry
from sqsqueue._message import MessageAttributeValue
from sqsqueue._views import message_views
from sqsqueue.aws import _query, _wire, handle
from sqsqueue.aws._client import Client, _batch, _send_result
from sqsqueue.errors import InvalidParameterValue
from sqsqueue.testing import _hooks, mock_sqs
from sqsqueue.testing import strategies as sqs_st
from tests.aws._helpers import url_of

START = 1_700_000_000.0
URL = url_of("jobs")
FIFO_URL = url_of("orders.fifo")
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: Characters JSON must escape, and the edges of the ranges SQS allows.
AWKWARD = '"\\/\t\n\r \x7f\u00e9\u2028\u2029\ud7ff\ue000\ufffd\U00010000\U0010ffff'


def general(result: Any) -> bytes:
    """The general encoder's answer body for a dict client result."""
    return _wire.encode(result, "rid")[2]


def broker() -> Broker:
    b = Broker(clock=ManualClock(start=START))
    b.create_queue("jobs")
    b.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
    return b


# -- the encoders ------------------------------------------------------------------------------


@SETTINGS
@given(
    messages=st.lists(
        st.tuples(sqs_st.message_bodies(max_size=300), sqs_st.message_attributes(max_size=4)),
        min_size=1,
        max_size=10,
    ),
    system=st.sampled_from([[], ["All"], ["SentTimestamp", "ApproximateReceiveCount"]]),
    wanted=st.sampled_from([[], ["All"], ["a", "b.*"]]),
)
@example(messages=[(AWKWARD, {})], system=["All"], wanted=["All"])
@example(
    messages=[
        (
            "x",
            {
                "s": MessageAttributeValue("String", string_value=AWKWARD),
                "n": MessageAttributeValue("Number.int", string_value="-12.5"),
                "b": MessageAttributeValue("Binary.gz", binary_value=b"\x00\xff\n"),
            },
        )
    ],
    system=["All"],
    wanted=["All"],
)
def test_received_messages_as_the_general_encoder_writes_them(
    messages: list[tuple[str, dict[str, MessageAttributeValue]]],
    system: list[str],
    wanted: list[str],
) -> None:
    queue = broker().get_queue("jobs")
    for body, attributes in messages:
        queue.send(body, message_attributes=attributes or None, trace_header="Root=1-a")
    received = queue.receive(10, attribute_names=system, message_attribute_names=wanted)
    assert received
    expected = general({"Messages": [m.to_aws() for m in received]})
    assert _wire.encode_messages(received) == expected
    assert json.loads(expected)["Messages"][0]["Body"] == received[0].body


def test_no_messages_is_the_empty_object() -> None:
    assert _wire.encode_messages([]) == general({}) == b"{}"


@SETTINGS
@given(
    body=sqs_st.message_bodies(max_size=300),
    attributes=sqs_st.message_attributes(max_size=4),
    trace=st.none() | st.just("Root=1-5759e988-bd862e3fe1be46a994272793"),
    fifo=st.booleans(),
)
@example(body=AWKWARD, attributes={}, trace=None, fifo=True)
def test_send_results_as_the_general_encoder_writes_them(
    body: str, attributes: dict[str, MessageAttributeValue], trace: str | None, fifo: bool
) -> None:
    b = broker()
    if fifo:
        result = b.get_queue("orders.fifo").send(
            body, message_attributes=attributes or None, trace_header=trace, group_id="g"
        )
        assert result.sequence_number is not None
    else:
        result = b.get_queue("jobs").send(
            body, message_attributes=attributes or None, trace_header=trace
        )
    assert _wire.encode_send_result(result) == general(_send_result(result))


@SETTINGS
@given(
    entries=st.lists(
        st.tuples(sqs_st.message_bodies(max_size=50) | sqs_st.invalid_bodies(5), st.booleans()),
        min_size=1,
        max_size=10,
    ),
    ids=st.lists(sqs_st.batch_entry_ids(), min_size=10, max_size=10, unique=True),
)
def test_batch_results_as_the_general_encoder_writes_them(
    entries: list[tuple[str, bool]], ids: list[str]
) -> None:
    """SendMessageBatch with failed entries (bodies SQS refuses), then
    DeleteMessageBatch and ChangeMessageVisibilityBatch of good and bad handles."""
    queue = broker().get_queue("jobs")
    sent = queue.send_batch(
        [
            SendEntry(entry_id, body, message_attributes={"a": "1"} if attrs else None)
            for entry_id, (body, attrs) in zip(ids, entries, strict=False)
        ]
    )
    assert _wire.encode_batch_result(sent) == general(_batch(sent, send=True))
    handles = [m.receipt_handle for m in queue.receive(9)]  # and one bad: 10
    good = [{"Id": f"m{i}", "ReceiptHandle": h} for i, h in enumerate(handles)]
    bad = [{"Id": "bad", "ReceiptHandle": "not a handle"}]
    changed = queue.change_visibility_batch([{**e, "VisibilityTimeout": 5} for e in bad + good])
    deleted = queue.delete_batch(bad + good)
    for result in (changed, deleted):
        assert result.failed
        assert _wire.encode_batch_result(result) == general(_batch(result))


# -- the short path against the general path ---------------------------------------------------

#: Values a member may take: good ones, and every JSON type that is wrong somewhere.
ODD_VALUES = [None, True, 0, -1, 7, 11, 2.5, "", "x", [], ["x"], [1], {}, {"a": 1}, [{"a": 1}]]
ODD = st.sampled_from(ODD_VALUES)
BLOBS = st.sampled_from(["AAE=", "", "!!!", 5])
ATTRIBUTES = st.dictionaries(
    st.sampled_from(["a", "b", "AWS.x", ""]),
    st.fixed_dictionaries(
        {"DataType": st.sampled_from(["String", "Number", "Binary", "Wrong", 1])},
        optional={
            "StringValue": st.sampled_from(["v", "12", "", 3]),
            "BinaryValue": BLOBS,
            "StringListValues": st.just(["x"]),
        },
    )
    | ODD,
    max_size=3,
)


QUEUES = st.sampled_from([URL, FIFO_URL, url_of("missing"), "jobs"])
HANDLES = st.sampled_from(["@HANDLE@", "not a handle"])
ENTRY = st.fixed_dictionaries(
    {"Id": st.sampled_from(["1", "2", "bad id!"])},
    optional={
        "MessageBody": st.sampled_from(["b", "", "\x00"]),
        "ReceiptHandle": HANDLES,
        "VisibilityTimeout": st.sampled_from([0, 5, -1]),
        "MessageGroupId": st.just("g"),
        "MessageAttributes": ATTRIBUTES,
    },
)
ENTRIES = st.lists(ENTRY | ODD, max_size=3)
#: Each hot operation's valid request (@HANDLE@: a message in flight) ...
BASE: dict[str, dict[str, Any]] = {
    "SendMessage": {"QueueUrl": URL, "MessageBody": "hello"},
    "ReceiveMessage": {"QueueUrl": URL, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0},
    "DeleteMessage": {"QueueUrl": URL, "ReceiptHandle": "@HANDLE@"},
    "SendMessageBatch": {"QueueUrl": URL, "Entries": [{"Id": "1", "MessageBody": "b"}]},
    "DeleteMessageBatch": {"QueueUrl": URL, "Entries": [{"Id": "1", "ReceiptHandle": "@HANDLE@"}]},
    "ChangeMessageVisibilityBatch": {
        "QueueUrl": URL,
        "Entries": [{"Id": "1", "ReceiptHandle": "@HANDLE@", "VisibilityTimeout": 5}],
    },
}
#: ... and the members a request may change, with their other good values
#: (``Unknown`` is a member no operation has).
MEMBERS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "SendMessage": {
        "QueueUrl": QUEUES,
        "MessageBody": st.sampled_from(["hello", AWKWARD, "\x00"]),
        "DelaySeconds": st.sampled_from([0, 3, 901]),
        "MessageAttributes": ATTRIBUTES,
        "MessageGroupId": st.just("g"),
        "MessageDeduplicationId": st.just("d"),
        "MessageSystemAttributes": st.just({}),
        "Unknown": st.just(1),
    },
    "ReceiveMessage": {
        "QueueUrl": QUEUES,
        "MaxNumberOfMessages": st.sampled_from([1, 10, 11]),
        "VisibilityTimeout": st.sampled_from([0, 30, 43201]),
        "AttributeNames": st.sampled_from([["All"], ["Nope"]]),
        "MessageSystemAttributeNames": st.just(["SentTimestamp"]),
        "MessageAttributeNames": st.just(["All"]),
        "ReceiveRequestAttemptId": st.just("r"),
        "Unknown": st.just(1),
    },
    "DeleteMessage": {"QueueUrl": QUEUES, "ReceiptHandle": HANDLES, "Unknown": st.just(1)},
    **{
        operation: {"QueueUrl": QUEUES, "Entries": ENTRIES, "Unknown": st.just(1)}
        for operation in ("SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch")
    },
}
#: A long poll's wait stays 0 or invalid: the clock is frozen.
WAITS = st.sampled_from([0, 21, -1, None, True, "1", [0], 2.5])
ABSENT = object()


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A hot operation's valid request with up to three members changed: to
    another good value, to a value of a wrong JSON type, or left out."""
    operation = draw(st.sampled_from(sorted(BASE)))
    params = dict(BASE[operation])
    members = {**MEMBERS[operation]}
    if operation == "ReceiveMessage":
        members["WaitTimeSeconds"] = WAITS
    for name in draw(st.lists(st.sampled_from(sorted(members)), max_size=3, unique=True)):
        odd = st.just(ABSENT) | (WAITS if name == "WaitTimeSeconds" else ODD)
        value = draw(members[name] | odd)
        if value is ABSENT:
            params.pop(name, None)
        else:
            params[name] = value
    return operation, params


def answer(
    short: bool, operation: str, params: dict[str, Any], aio: bool = False
) -> tuple[Any, ...]:
    """The answer of a fresh broker (one message in flight, whose handle
    replaces @HANDLE@): status and error, or the parsed body with the ids it
    draws masked (the encoders' bytes are tested above); and its state."""
    b = broker()
    queue = b.get_queue("jobs")
    queue.send("in flight")
    receipt = queue.receive(1)[0].receipt_handle
    body = json.dumps(params).replace("@HANDLE@", receipt).encode()
    target = f"AmazonSQS.{operation}"
    with mock.patch.object(_wire, "_SHORT", _wire._SHORT if short else {}):
        if aio:
            status, headers, payload = asyncio.run(_wire.handle_async(Client(b), target, body))
        else:
            status, headers, payload = handle(b.client, target, body)
    text = payload.decode().replace(receipt, "@HANDLE@")  # in errors' messages too
    state = {q: b.get_queue(q).get_attributes(["All"]) for q in ("jobs", "orders.fifo")}
    for attributes in state.values():
        attributes.pop("LastModifiedTimestamp", None)
    if status != 200:
        return status, headers["x-amzn-query-error"], text, state
    return status, masked(json.loads(text)), state


#: Members whose values each broker draws for itself.
DRAWN = frozenset({"MessageId", "ReceiptHandle", "SequenceNumber"})


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: k if k in DRAWN else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


@settings(SETTINGS, max_examples=400)
@given(request=requests())
@example(request=("SendMessage", {"QueueUrl": URL, "MessageBody": "a"}))
@example(
    request=(
        "SendMessage",
        {
            "QueueUrl": URL,
            "MessageBody": "a",
            "MessageAttributes": {"b": {"DataType": "Binary", "BinaryValue": "!!!"}},
        },
    )
)
@example(request=("ReceiveMessage", {"QueueUrl": URL, "VisibilityTimeout": 0}))
@example(request=("DeleteMessage", {"QueueUrl": URL, "ReceiptHandle": "@HANDLE@"}))
def test_short_path_answers_as_the_general_path(request: tuple[str, dict[str, Any]]) -> None:
    """Same status, same error code and message, same body up to the ids
    drawn at random, same queue state afterwards; for ``handle`` and for
    ``handle_async`` (aiobotocore's path)."""
    operation, params = request
    expected = answer(False, operation, params)
    assert answer(True, operation, params) == expected
    assert answer(True, operation, params, aio=True) == expected


def test_each_member_of_a_wrong_type_answers_as_the_general_path() -> None:
    """Every member of every hot operation's valid request, set in turn to
    each JSON type (and left out), is refused or served as the general path
    does; and a batch entry nested deeper than the codec takes."""
    deep: Any = "x"
    for _ in range(_wire.MAX_JSON_DEPTH):
        deep = {"a": deep}
    cases = [
        ("SendMessageBatch", {"QueueUrl": URL, "Entries": [{"Id": "1", "MessageBody": deep}]}),
        ("SendMessage", {"QueueUrl": URL, "MessageBody": "b", "MessageAttributes": deep}),
    ]
    for operation, base in BASE.items():
        names = [*MEMBERS[operation], "WaitTimeSeconds"]
        for name in names:
            without = {k: v for k, v in base.items() if k != name}
            cases.append((operation, without))
            for value in ODD_VALUES:
                if name != "WaitTimeSeconds" or not isinstance(value, int) or value < 1:
                    cases.append((operation, {**base, name: value}))
    for operation, params in cases:
        expected = answer(False, operation, params)
        assert answer(True, operation, params) == expected, (operation, params)
        assert answer(True, operation, params, aio=True) == expected, (operation, params)


def test_hot_operations_bypass_the_dict_client() -> None:
    """The short path runs without Client.call (so it is the one answering),
    and the general path answers a request of another shape."""
    b = broker()
    with mock.patch.object(Client, "call", side_effect=AssertionError("general path")):
        status, _, body = handle(
            b.client,
            "AmazonSQS.SendMessage",
            json.dumps({"QueueUrl": URL, "MessageBody": "a"}).encode(),
        )
        assert status == 200
        assert json.loads(body)["MD5OfMessageBody"] == "0cc175b9c0f1b6a831c399e269772661"
        status, _, body = handle(
            b.client,
            "AmazonSQS.ReceiveMessage",
            json.dumps({"QueueUrl": URL, "MaxNumberOfMessages": 10}).encode(),
        )
        assert [m["Body"] for m in json.loads(body)["Messages"]] == ["a"]
    status, headers, _ = handle(
        b.client,
        "AmazonSQS.SendMessage",
        json.dumps({"QueueUrl": URL, "MessageBody": 1}).encode(),
    )
    assert status == 400
    assert headers["x-amzn-query-error"] == "InvalidParameterValue;Sender"


def test_a_client_subclass_is_called_through_call() -> None:
    """A client that adds work to ``call`` (moto's Lambda mappings run after a
    send) gets every hot operation through ``call`` (``call_async`` for an
    awaited ReceiveMessage), blobs decoded."""
    b = broker()
    seen: list[tuple[str, dict[str, Any]]] = []

    class Watching(Client):
        def call(self, operation: str, params: Any = None) -> dict[str, Any]:
            seen.append((operation, dict(params)))
            return super().call(operation, params)

        async def call_async(self, operation: str, params: Any = None) -> dict[str, Any]:
            seen.append((f"async {operation}", dict(params)))
            return await super().call_async(operation, params)

    params = {
        "QueueUrl": URL,
        "MessageBody": "a",
        "MessageAttributes": {"b": {"DataType": "Binary", "BinaryValue": "AAE="}},
    }
    status, _, body = handle(
        lambda: Watching(b), "AmazonSQS.SendMessage", json.dumps(params).encode()
    )
    assert status == 200
    assert seen[0][1]["MessageAttributes"]["b"]["BinaryValue"] == b"\x00\x01"
    assert json.loads(body)["MD5OfMessageAttributes"]
    receive = json.dumps({"QueueUrl": URL, "VisibilityTimeout": 0}).encode()
    handle(lambda: Watching(b), "AmazonSQS.ReceiveMessage", receive)
    status, _, body = asyncio.run(
        _wire.handle_async(Watching(b), "AmazonSQS.ReceiveMessage", receive)
    )
    assert [m["Body"] for m in json.loads(body)["Messages"]] == ["a"]
    asyncio.run(
        _wire.handle_async(Watching(b), "AmazonSQS.SendMessage", json.dumps(params).encode())
    )
    assert [op for op, _ in seen] == [
        "SendMessage",
        "ReceiveMessage",
        "async ReceiveMessage",
        "SendMessage",  # the short path's general answer: call, as handle's
    ]


def test_trace_header_takes_the_general_path() -> None:
    """A SendMessage with X-Amzn-Trace-Id stores the trace (section 2.1)."""
    b = broker()
    status, _, body = handle(
        b.client,
        "AmazonSQS.SendMessage",
        json.dumps({"QueueUrl": URL, "MessageBody": "a"}).encode(),
        {"x-AMZN-trace-id": "Root=1-abc"},
    )
    assert status == 200
    assert "MD5OfMessageSystemAttributes" in json.loads(body)
    [m] = b.get_queue("jobs").receive(1, attribute_names=["AWSTraceHeader"])
    assert m.attributes["AWSTraceHeader"] == "Root=1-abc"


# -- the mock's botocore glue ------------------------------------------------------------------


def cycle(b: Broker) -> list[dict[str, Any]]:
    """A boto3 send, receive and delete through mock_sqs; their responses."""
    with mock_sqs(b):
        sqs = boto3.client("sqs", region_name="us-east-1")
        sent = sqs.send_message(
            QueueUrl=URL,
            MessageBody=AWKWARD,
            MessageAttributes={"b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}},
        )
        received = sqs.receive_message(
            QueueUrl=URL, MessageAttributeNames=["All"], MessageSystemAttributeNames=["All"]
        )
        deleted = sqs.delete_message(
            QueueUrl=URL, ReceiptHandle=received["Messages"][0]["ReceiptHandle"]
        )
        with pytest.raises(sqs.exceptions.QueueDoesNotExist) as missing:
            sqs.get_queue_url(QueueName="missing")
    return [sent, received, deleted, missing.value.response]


@pytest.mark.parametrize("shortcuts", [True, False], ids=["botocore internals", "public only"])
def test_mock_answers_through_botocore_either_way(
    monkeypatch: pytest.MonkeyPatch, shortcuts: bool
) -> None:
    """botocore parses the mock's answers (MD5s checked, headers, request id,
    errors) the same whether the mock builds botocore's headers and response
    itself or through botocore's public constructors (another botocore)."""
    if not shortcuts:
        monkeypatch.setattr(_hooks, "_TABLE", False)
        monkeypatch.setattr(_hooks, "_INIT", False)
    else:
        assert _hooks._TABLE and _hooks._INIT  # the botocore tested against
    sent, received, deleted, missing = cycle(broker())
    [message] = received["Messages"]
    assert message["Body"] == AWKWARD
    assert message["MessageAttributes"]["b"]["BinaryValue"] == b"\x00\xff"
    assert message["MD5OfBody"] == sent["MD5OfMessageBody"]
    for response in (sent, received, deleted, missing):
        meta = response["ResponseMetadata"]
        assert meta["RequestId"] == meta["HTTPHeaders"]["x-amzn-requestid"]
        assert meta["HTTPHeaders"]["content-type"] == "application/x-amz-json-1.0"
    assert deleted["ResponseMetadata"]["HTTPHeaders"]["content-length"] == "2"
    assert missing["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


# -- the query protocol's XML writer -----------------------------------------------------------


def reference_text(value: Any) -> str:
    """How the query codec wrote a value before its writers were compiled."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return escape(str(value)).replace("\r", "&#xD;")


def reference_xml(shape_name: str, value: Any, out: list[str]) -> None:
    """The walker the query codec used before (one model lookup per value)."""
    _, table = _query.shapes()
    shape = table[shape_name]
    if shape["type"] != "structure":
        out.append(reference_text(value))
        return
    for member, ref in shape["members"].items():
        if member not in value:
            continue
        item = value[member]
        inner = table[ref["shape"]]
        if inner["type"] == "list":
            tag = _query._element(ref["shape"])
            for element in item:
                out.append(f"<{tag}>")
                reference_xml(inner["member"]["shape"], element, out)
                out.append(f"</{tag}>")
        elif inner["type"] == "map":
            entry, key_name, value_name = _query._entry(member, inner)
            for k, v in item.items():
                out.append(f"<{entry}><{key_name}>{reference_text(k)}</{key_name}><{value_name}>")
                reference_xml(inner["value"]["shape"], v, out)
                out.append(f"</{value_name}></{entry}>")
        else:
            out.append(f"<{member}>")
            reference_xml(ref["shape"], item, out)
            out.append(f"</{member}>")


TEXT = st.text(sqs_st.valid_characters | st.sampled_from("&<>\r\"'"), max_size=12)


def values_of(shape_name: str) -> st.SearchStrategy[Any]:
    """Any value of a shape of botocore's SQS model (strings with the
    characters XML escapes)."""
    shape = _query.shapes()[1][shape_name]
    kind = shape["type"]
    if kind == "structure":
        members = shape["members"].items()
        return st.fixed_dictionaries(
            {}, optional={m: st.deferred(lambda r=r: values_of(r["shape"])) for m, r in members}
        )
    if kind == "list":
        return st.lists(values_of(shape["member"]["shape"]), max_size=3)
    if kind == "map":
        return st.dictionaries(TEXT, values_of(shape["value"]["shape"]), max_size=3)
    if kind in ("integer", "long"):
        return st.integers(-(2**40), 2**40)
    if kind == "boolean":
        return st.booleans()
    if kind == "blob":
        return st.binary(max_size=8)
    return TEXT


OUTPUTS = sorted(
    (name, op["output"]["shape"]) for name, op in _query.shapes()[0].items() if "output" in op
)


@settings(SETTINGS, max_examples=300)
@given(data=st.data(), output=st.sampled_from(OUTPUTS))
def test_xml_writers_write_what_the_model_walker_wrote(data: st.DataObject, output: Any) -> None:
    """Every operation's result shape, with generated values: the compiled
    writer's XML is the old walker's, byte for byte."""
    operation, shape = output
    result = data.draw(values_of(shape))
    expected: list[str] = []
    reference_xml(shape, result, expected)
    written: list[str] = []
    _query._writer(shape)(result, written)
    assert "".join(written) == "".join(expected)
    status, _, body = _query.encode(operation, result, "rid")
    assert status == 200
    assert "".join(expected) in body.decode()


def test_received_messages_answer_for_the_endpoint() -> None:
    """``Client.receive_messages`` (what an endpoint may write its answer
    from) checks what ``receive_message`` checks, and ``encode_received`` of
    its messages is ``encode`` of the response dict."""
    b = broker()
    client = Client(b)
    for body in ("a", AWKWARD):
        client.send_message(QueueUrl=URL, MessageBody=body)
    messages = client.receive_messages(QueueUrl=URL, MaxNumberOfMessages=10)
    assert [m.body for m in messages] == ["a", AWKWARD]
    expected = _wire.encode({"Messages": [m.to_aws() for m in messages]}, "rid")
    assert _wire.encode_received(messages, "rid") == expected
    assert _wire.encode_received([], "rid") == _wire.encode({}, "rid")
    with pytest.raises(InvalidParameterValue, match="must be an integer"):
        client.receive_messages(QueueUrl=URL, MaxNumberOfMessages="10")
    with pytest.raises(InvalidParameterValue, match="Unknown parameter"):
        asyncio.run(client.receive_messages_async(QueueUrl=URL, Max=1))
    b.clock.advance(31)
    assert (
        len(asyncio.run(client.receive_messages_async(QueueUrl=URL, MaxNumberOfMessages=10))) == 2
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


@SETTINGS
@given(
    value=JSON_VALUES | st.dictionaries(TEXT, JSON_VALUES, max_size=3),
    before=st.sampled_from(["", " ", "\n"]),
    after=st.sampled_from(["", " ", "\t\r\n", "x", "}", "{}", "\x00"]),
)
@example(value={}, before="", after="")
@example(value={"a": 1}, before="", after=" ")
def test_request_objects_read_as_json_loads_reads_them(value: Any, before: str, after: str) -> None:
    """The short path reads a body as ``json.loads`` does: the same object, or
    the general path (None) for what is not one JSON object."""
    text = before + json.dumps(value) + after
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    assert _wire._object(text.encode()) == (expected if isinstance(expected, dict) else None)


# -- ReceiveMessage written from the records ------------------------------------------------


@SETTINGS
@given(
    messages=st.lists(
        st.tuples(
            sqs_st.message_bodies(max_size=1100),
            sqs_st.message_attributes(max_size=3),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    ),
    system=st.sampled_from([[], ["All"], ["SentTimestamp", "ApproximateReceiveCount"]]),
    wanted=st.sampled_from([[], ["All"], ["a", "b.*"]]),
    fifo=st.booleans(),
    receives=st.integers(1, 3),
    sender=st.sampled_from([None, 'AIDA"\\\u00e9']),
)
@example(
    messages=[(AWKWARD, {}, False), ("x" * 1025, {}, False)],
    system=["All"],
    wanted=[],
    fifo=False,
    receives=2,
    sender=None,
)
def test_received_views_write_what_the_message_views_encode(
    messages: list[tuple[str, dict[str, MessageAttributeValue], bool]],
    system: list[str],
    wanted: list[str],
    fifo: bool,
    receives: int,
    sender: str | None,
) -> None:
    """``_wire.received_views``, the ReceiveMessage answer written from the
    delivered records, is ``encode_messages`` of the Message views the same
    receive makes, byte for byte: on plain and attributed, traced, FIFO and
    redelivered messages (receive counts above 1), bodies on both sides of
    the MD5 size switch, and a sender id JSON must escape."""
    queue = broker().get_queue(FIFO_URL if fifo else URL)
    for i, (body, attributes, traced) in enumerate(messages):
        queue.send(
            body,
            message_attributes=attributes or None,
            trace_header="Root=1-a" if traced else None,
            group_id=str(i % 2) if fifo else None,
            sender_id=sender,
        )
    answers = []

    def both(
        recs: list[Any], handles: list[str], names: Sequence[str], wanted: Sequence[str]
    ) -> list[bytes]:
        written = _wire.received_views(recs, handles, names, wanted)
        views = message_views(recs, handles, names, wanted)
        answers.append((written, [_wire.encode_messages(views)] if views else []))
        return written

    for _ in range(receives):
        got = queue._receive_as(both, 10, 0, None, system, wanted, None, None)
        assert got == answers[-1][1]
        if not fifo:
            assert got
    assert all(written == viewed for written, viewed in answers)
    assert _wire.received_views([], [], system, wanted) == []


def seeded(seed: int = 7) -> Broker:
    """A broker whose ids and handles repeat from run to run."""
    b = Broker(clock=ManualClock(start=START), random=random.Random(seed))
    b.create_queue("jobs")
    b.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
    return b


@pytest.mark.parametrize(
    "params",
    [
        {"MaxNumberOfMessages": 10},
        {"MaxNumberOfMessages": 3, "AttributeNames": ["All"], "MessageAttributeNames": ["All"]},
        {"MessageSystemAttributeNames": ["SenderId"], "VisibilityTimeout": 5},
        {"MaxNumberOfMessages": 10, "WaitTimeSeconds": 0},
    ],
)
def test_receive_short_answers_what_the_dict_client_gives(params: dict[str, Any]) -> None:
    """``_wire.receive_short`` (an endpoint's ReceiveMessage), on two brokers
    seeded alike: the answer is ``encode_received`` of the dict client's
    ``receive_messages_async`` byte for byte, and the queues end alike."""
    answers = []
    for way in ("short", "client"):
        b = seeded()
        client = Client(b)
        for body in ("a", AWKWARD, "b" * 2000):
            client.send_message(
                QueueUrl=URL,
                MessageBody=body,
                MessageAttributes={"a": {"DataType": "String", "StringValue": "1"}},
            )
        client.send_message(QueueUrl=URL, MessageBody="plain")
        request = {"QueueUrl": URL, **params}
        if way == "short":
            coro = _wire.receive_short(client, json.dumps(request).encode())
            assert coro is not None
            body = asyncio.run(coro)
        else:
            messages = asyncio.run(client.receive_messages_async(**request))
            body = _wire.encode_received(messages, "rid")[2]
        queue = b.get_queue(URL)
        answers.append((body, queue.inspect(), len(queue)))
    assert answers[0] == answers[1]
    assert json.loads(answers[0][0])["Messages"]


def test_receive_short_leaves_other_requests_to_the_general_path() -> None:
    b = broker()
    client = Client(b)

    class Sub(Client):
        pass

    body = json.dumps({"QueueUrl": URL}).encode()
    assert _wire.receive_short(Sub(b), body) is None
    assert _wire.receive_short(client, json.dumps({"QueueUrl": URL, "X": 1}).encode()) is None
    assert _wire.receive_short(client, b"[]") is None
    assert asyncio.run(_wire.receive_short(client, body)) == b"{}"  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterValue, match="MaxNumberOfMessages"):
        asyncio.run(
            _wire.receive_short(  # type: ignore[arg-type]
                client, json.dumps({"QueueUrl": URL, "MaxNumberOfMessages": 11}).encode()
            )
        )
