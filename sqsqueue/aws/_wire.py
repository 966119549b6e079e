"""The awsJson1_0 wire codec SQS speaks to boto3 (section 1).

:func:`handle` takes the pieces of an HTTP request as botocore sends it
(``X-Amz-Target: AmazonSQS.<Operation>``, a JSON body) and returns the status,
headers and body AWS would answer with, errors included (section 1.4):
``x-amzn-query-error: <legacy code>;Sender`` and ``{"__type": ..., "message":
...}``. It is a thin translation over :class:`sqsqueue.aws._client.Client`, which is
itself a thin translation over the engine: no SQS rule lives here. It needs
neither boto3 nor botocore.

**The hot operations' short path.** SendMessage, ReceiveMessage, DeleteMessage
and the three batches are looked up by their ``X-Amz-Target`` in a table
(:data:`_SHORT`) whose handlers read the parsed JSON, call the engine and
write the answer's JSON straight from the engine's result (no response dict,
no generic encoder). A handler takes a request only when its parameters are
exactly of the shape the dict client passes on unchanged (known names, JSON
types the client accepts, no trace header to add): it then makes the engine
call :class:`~sqsqueue.aws._client.Client` would make, with the same
arguments, so every error is the engine's own, raised at the same point. Any
other request (a wrong type, an unknown member, a client subclass that adds
work to ``call``) takes the general path, which answers it with the dict
client's error. The answers are byte for byte those of :func:`encode` on the
dict client's result (tests/aws/test_wire_fast.py checks both on generated
messages).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import json
import os
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from sqsqueue._message import (
    R_BODY,
    R_COUNT,
    R_EXTRA,
    R_FIRST,
    R_ID,
    R_SENDER,
    R_SKEY,
    SEQ_BITS,
    SMALL_MD5,
    X_ATTRS,
    BatchResult,
    Message,
    SendResult,
    _Record,
    md5_of_body,
    small_md5,
)
from sqsqueue._views import message_view, message_views
from sqsqueue.aws._client import OPERATIONS, RECEIVE_MEMBERS, Client
from sqsqueue.errors import (
    AccessDenied,
    InternalError,
    InvalidAction,
    InvalidParameterValue,
    MissingParameter,
    SQSError,
)

__all__ = [
    "MAX_REQUEST_BYTES",
    "NO_MESSAGES",
    "SerializationError",
    "answer_short",
    "decode",
    "encode",
    "encode_batch_result",
    "encode_error",
    "encode_messages",
    "encode_received",
    "encode_send_result",
    "handle",
    "handle_async",
    "new_request_id",
    "ok",
    "receive_short",
    "received_views",
]

TARGET_PREFIX = "AmazonSQS."
CONTENT_TYPE = "application/x-amz-json-1.0"
#: The body of a ReceiveMessage answer carrying no message (AWS omits "Messages").
NO_MESSAGES = b"{}"
#: Larger bodies are refused before parsing: a full batch of 1 MiB messages in
#: base64 with JSON overhead stays well below this.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Deeper JSON than any SQS request needs is refused (SendMessageBatch entries
#: with attributes nest 5 levels).
MAX_JSON_DEPTH = 32

#: Generic errors SQS does not model; AWS names them in the Coral namespace
#: (section 1.4).
_UNMODELED: tuple[type[SQSError], ...] = (
    InvalidParameterValue,
    MissingParameter,
    AccessDenied,
    InvalidAction,
)


class SerializationError(SQSError, ValueError):
    """A request body that is not the JSON the protocol expects."""

    code = "SerializationException"
    query_code = "SerializationException"
    wire_type = "SerializationException"
    http_status = 400
    sender_fault = True


#: Request ids: a version-4 UUID's first 80 bits drawn once per process, then
#: a counter from a random start (str(uuid.uuid4()) per request cost 3 µs).
_ID_PREFIX = str(uuid.uuid4())[:24]
_IDS = itertools.count(int.from_bytes(os.urandom(6), "big"))


def new_request_id() -> str:
    """A request id in the UUID form AWS's have, unique in this process. O(1)."""
    return f"{_ID_PREFIX}{next(_IDS) & 0xFFFFFFFFFFFF:012x}"


_CONTAINERS = (dict, list)


def _depth_ok(value: Any, depth: int = 0) -> bool:
    """Whether no value of the parsed JSON ``value`` (at ``depth``) lies
    deeper than MAX_JSON_DEPTH. Only containers are recursed into: a scalar
    is too deep exactly when its container has no room for children.
    O(size of value)."""
    if depth > MAX_JSON_DEPTH:
        return False
    if isinstance(value, dict):
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return True
    if not children:
        return True
    if depth >= MAX_JSON_DEPTH:  # a child of any kind would lie too deep
        return False
    for child in children:
        if isinstance(child, _CONTAINERS) and not _depth_ok(child, depth + 1):
            return False
    return True


def _decode_blobs(attributes: Any) -> None:
    """BinaryValue members arrive base64-encoded (section 1.2)."""
    if not isinstance(attributes, dict):
        return
    for value in attributes.values():
        if not isinstance(value, dict):
            continue
        blob = value.get("BinaryValue")
        if isinstance(blob, str):
            try:
                value["BinaryValue"] = base64.b64decode(blob, validate=True)
            except (binascii.Error, ValueError):
                raise SerializationError("BinaryValue is not valid base64.") from None
        blobs = value.get("BinaryListValues")
        if isinstance(blobs, list):
            try:
                value["BinaryListValues"] = [base64.b64decode(b, validate=True) for b in blobs]
            except (binascii.Error, ValueError, TypeError):
                raise SerializationError("BinaryListValues are not valid base64.") from None


def _parse(operation: str, body: bytes) -> dict[str, Any]:
    if len(body) > MAX_REQUEST_BYTES:
        raise SerializationError("The request body is too large.")
    if not body.strip():
        return {}
    try:
        params = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SerializationError("The request body is not valid JSON.") from None
    if not isinstance(params, dict):
        raise SerializationError("The request body must be a JSON object.")
    if not _depth_ok(params):
        raise SerializationError("The request body is nested too deeply.")
    if operation == "SendMessage":
        _decode_blobs(params.get("MessageAttributes"))
        _decode_blobs(params.get("MessageSystemAttributes"))
    elif operation == "SendMessageBatch" and isinstance(params.get("Entries"), list):
        for entry in params["Entries"]:
            if isinstance(entry, dict):
                _decode_blobs(entry.get("MessageAttributes"))
                _decode_blobs(entry.get("MessageSystemAttributes"))
    return params


def _json_default(value: object) -> object:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


#: One encoder for every answer, made once (``json.dumps`` with ``default=``
#: builds a new one per call); compact, as AWS writes JSON.
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_json_default)
_dumps = _ENCODER.encode
#: A JSON string literal, escaped exactly as :data:`_ENCODER` escapes one
#: (``ensure_ascii``: the C implementation when present).
_string = json.encoder.encode_basestring_ascii


def _error(err: SQSError, request_id: str) -> tuple[int, dict[str, str], bytes]:
    unmodeled = isinstance(err, (*_UNMODELED, SerializationError)) or getattr(err, "coral", False)
    namespace = "com.amazon.coral.service" if unmodeled else "com.amazonaws.sqs"
    body = _dumps({"__type": f"{namespace}#{err.wire_type}", "message": err.message})
    headers = {
        "x-amzn-RequestId": request_id,
        "x-amzn-query-error": f"{err.query_code};{'Sender' if err.sender_fault else 'Receiver'}",
        "Content-Type": CONTENT_TYPE,
    }
    return err.http_status, headers, body.encode("utf-8")


def decode(
    target: str | None, body: bytes, headers: Mapping[str, str] | None = None
) -> tuple[str, dict[str, Any]]:
    """(operation, params) of one awsJson1_0 request; raises :class:`SQSError`
    for a request AWS would refuse. O(body size)."""
    if not isinstance(target, str) or not target.startswith(TARGET_PREFIX):
        raise InvalidAction("The request must name an operation in X-Amz-Target.")
    operation = target[len(TARGET_PREFIX) :]
    if operation not in OPERATIONS:
        raise InvalidAction(f"The action {operation} is not valid for this endpoint.")
    params = _parse(operation, body)
    add_trace_header(operation, params, headers)
    return operation, params


def add_trace_header(
    operation: str, params: dict[str, Any], headers: Mapping[str, str] | None
) -> None:
    """An ``X-Amzn-Trace-Id`` header on SendMessage is stored as the message's
    AWSTraceHeader unless the request names one (AWS-obs, 2.1), in either
    protocol. O(headers)."""
    # HTTP header names are case-insensitive (x-amzn-trace-id is the same header).
    trace = next((v for k, v in (headers or {}).items() if k.lower() == "x-amzn-trace-id"), None)
    if operation == "SendMessage" and trace and "MessageSystemAttributes" not in params:
        params["MessageSystemAttributes"] = {
            "AWSTraceHeader": {"DataType": "String", "StringValue": trace}
        }


def ok(payload: bytes, request_id: str) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer carrying ``payload``, an operation's JSON result."""
    return 200, {"x-amzn-RequestId": request_id, "Content-Type": CONTENT_TYPE}, payload


def encode(result: Mapping[str, Any], request_id: str) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer carrying an operation's response dict."""
    return ok(_dumps(result).encode("utf-8"), request_id)


def encode_error(err: SQSError, request_id: str) -> tuple[int, dict[str, str], bytes]:
    """The answer AWS sends for ``err`` (section 1.4)."""
    return _error(err, request_id)


def internal_error(exc: BaseException) -> SQSError:
    """What a client is told of a bug: its exception's class name, never a traceback."""
    return InternalError(f"Internal error: {type(exc).__name__}")


def handle(
    client_for: Callable[[], Client],
    target: str | None,
    body: bytes,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """Answer one awsJson1_0 request: (HTTP status, headers, body). The hot
    operations take the short path (module docstring). ``client_for`` is
    called once, after the request is parsed, and not for a request refused
    before any operation runs."""
    rid = new_request_id()
    try:
        short = _SHORT.get(target) if isinstance(target, str) else None
        if short is not None and len(body) <= MAX_REQUEST_BYTES:
            payload = short(client_for, body, headers)
            if payload is not None:
                return ok(payload, rid)
        operation, params = decode(target, body, headers)
        return encode(client_for().call(operation, params), rid)
    except SQSError as err:
        return _error(err, rid)
    except Exception as exc:  # a bug: answer as AWS answers its own (500, Receiver)
        return _error(internal_error(exc), rid)


async def handle_async(
    client: Client,
    target: str | None,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    request_id: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """:func:`handle` for asyncio: a ReceiveMessage long poll awaits the engine.

    An unexpected exception propagates (the caller logs it and answers 500)."""
    rid = request_id or new_request_id()
    try:
        short = _SHORT.get(target) if isinstance(target, str) else None
        if short is not None and len(body) <= MAX_REQUEST_BYTES:
            if target == _RECEIVE_TARGET:  # a long poll awaits the engine
                request = _receive_request(body)
                if request is not None:
                    params, url, args = request
                    if type(client) is not Client:
                        return encode(await client.call_async("ReceiveMessage", params), rid)
                    return ok(await _receive_answer(client, url, args), rid)
            else:
                payload = short(lambda: client, body, headers)
                if payload is not None:
                    return ok(payload, rid)
        operation, params = decode(target, body, headers)
        return encode(await client.call_async(operation, params), rid)
    except SQSError as err:
        return _error(err, rid)


def answer_short(
    target: str | None, client: Client, body: bytes, headers: Mapping[str, str] | None
) -> bytes | None:
    """The body of the 200 answer to a hot operation that never waits
    (SendMessage, DeleteMessage and the batches) by the short path, or None
    where the caller must take the general path (another operation, a
    ReceiveMessage, a request of another shape). An SQSError propagates as
    it would from ``client.call``. O(body)."""
    if target is None or target == _RECEIVE_TARGET or len(body) > MAX_REQUEST_BYTES:
        return None
    short = _SHORT.get(target)
    return None if short is None else short(lambda: client, body, headers)


# -- the hot operations' short path (see the module docstring) --------------------------

_ClientFor = Callable[[], Client]
#: A short handler: the body of the 200 answer, or None for the general path.
_Short = Callable[[_ClientFor, bytes, "Mapping[str, str] | None"], "bytes | None"]

_SEND = frozenset(
    (
        "QueueUrl",
        "MessageBody",
        "DelaySeconds",
        "MessageAttributes",
        "MessageGroupId",
        "MessageDeduplicationId",
    )
)
_RECEIVE = frozenset(RECEIVE_MEMBERS)
_DELETE = frozenset(("QueueUrl", "ReceiptHandle"))
_RECEIVE_TARGET = TARGET_PREFIX + "ReceiveMessage"
_BATCH = frozenset(("QueueUrl", "Entries"))


#: The scanner ``json.loads`` runs (its decoder's, with the same defaults),
#: called directly on a body that is one object and nothing else: CPython's
#: decoder has it; elsewhere json.loads reads every body.
_scan: Callable[[str, int], tuple[Any, int]] | None = getattr(json.JSONDecoder(), "scan_once", None)


def _object(body: bytes) -> dict[str, Any] | None:
    """The JSON object a request body holds, or None where the general path
    must answer (no body, not UTF-8, not JSON, not an object). A body that
    starts with ``{`` and is one JSON value to its end (SDKs send no
    whitespace around it) is read by the scanner alone, as ``json.loads``
    would read it; any other goes through ``json.loads``. O(body)."""
    try:
        text = body.decode("utf-8")
        if _scan is not None and text[:1] == "{":
            params, end = _scan(text, 0)
            if end != len(text):
                params = json.loads(text)
        else:
            params = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError, StopIteration):
        return None
    return params if type(params) is dict else None


def _traced(headers: Mapping[str, str] | None) -> bool:
    """Whether :func:`add_trace_header` would add a trace to a SendMessage."""
    if not headers:
        return False
    return any(value and name.lower() == "x-amzn-trace-id" for name, value in headers.items())


def _strings(value: object) -> bool:
    """Absent, or a list of strings (what ``_Params.strings`` passes on)."""
    return value is None or (type(value) is list and all(type(v) is str for v in value))


def _plain_attributes(attributes: object) -> bool:
    """A MessageAttributes map the dict client passes on as it is: values that
    are objects of strings only (so no nesting the depth check could refuse).
    Their BinaryValue is decoded here as :func:`_parse` decodes it."""
    if type(attributes) is not dict:
        return False
    for value in attributes.values():
        if type(value) is not dict or not all(type(v) is str for v in value.values()):
            return False
    _decode_blobs(attributes)
    return True


def _general(client: Client, operation: str, params: dict[str, Any]) -> bytes:
    """The answer through ``client.call``: a client subclass may add work there."""
    return _dumps(client.call(operation, params)).encode("utf-8")


def _send_members(r: SendResult) -> str:
    """The members of a SendMessage result (``_client._send_result``'s order)."""
    out = '"MD5OfMessageBody":"' + md5_of_body(r.body) + '"'
    if r.md5_of_message_attributes is not None:
        out += ',"MD5OfMessageAttributes":' + _string(r.md5_of_message_attributes)
    if r.md5_of_message_system_attributes is not None:
        out += ',"MD5OfMessageSystemAttributes":' + _string(r.md5_of_message_system_attributes)
    out += ',"MessageId":' + _string(r.message_id)
    if r.sequence_number is not None:
        out += ',"SequenceNumber":' + _string(r.sequence_number)
    return out


def encode_send_result(result: SendResult) -> bytes:
    """The SendMessage answer's body: ``encode`` of the dict client's result,
    without building it. O(body)."""
    return ("{" + _send_members(result) + "}").encode("utf-8")


def encode_messages(messages: Sequence[Message]) -> bytes:
    """The ReceiveMessage answer's body: ``encode`` of the dict client's
    result (``Message.to_aws`` of each), written from the messages
    themselves. O(size of the messages)."""
    if not messages:
        return NO_MESSAGES
    return ('{"Messages":[' + ",".join(map(_message_json, messages)) + "]}").encode("utf-8")


def _message_json(m: Message) -> str:
    """One message of a ReceiveMessage answer: ``_dumps(m.to_aws())``."""
    text = m.body
    item = (
        '{"MessageId":'
        + _string(m.message_id)
        + ',"ReceiptHandle":'
        + _string(m.receipt_handle)
        + ',"MD5OfBody":"'
        + md5_of_body(text)
        + '","Body":'
        + _string(text)
    )
    if m.attributes:
        item += ',"Attributes":' + _dumps(dict(m.attributes))
    if m.message_attributes:
        item += (
            ',"MD5OfMessageAttributes":'
            + _dumps(m.md5_of_message_attributes)
            + ',"MessageAttributes":'
            + _dumps({k: v.to_aws() for k, v in m.message_attributes.items()})
        )
    return item + "}"


#: The receive counts' texts, formatted once (most messages are received a few times).
_COUNTED = 64
_COUNTS = tuple(str(n) for n in range(_COUNTED))


def received_views(
    recs: list[_Record],
    handles: list[str],
    attribute_names: Sequence[str],
    message_attribute_names: Sequence[str],
) -> list[bytes]:
    """The ReceiveMessage answer's body written from the records a receive
    delivered, under the queue's lock (an ``_receive.Views``: the engine
    calls it where it would make the Message views): ``[encode_messages(
    message_views(...))]``, byte for byte, or ``[]`` for no records.

    A message with nothing to show beyond its id, handle, body and, when
    ``All`` system attributes are asked for, the four every message has (no
    user attributes asked for or none stored, no FIFO, trace or dead-letter
    field) is written from its record here; any other goes through its
    Message view. Its id (hex digits and dashes, made by the engine) and
    handle (base64) hold no character JSON escapes, so they are written
    unescaped. O(size of the messages)."""
    if not recs:
        return []
    every = "All" in attribute_names
    if attribute_names and not every:
        # A choice of system attributes: through the views.
        return [
            encode_messages(message_views(recs, handles, attribute_names, message_attribute_names))
        ]
    parts = []
    sent_ms = first_ms = -1
    system = sent_text = first_text = ""
    for rec, handle in zip(recs, handles, strict=True):
        extra = rec[R_EXTRA]
        if extra is not None and (every or (extra[X_ATTRS] and message_attribute_names)):
            parts.append(
                _message_json(message_view(rec, handle, attribute_names, message_attribute_names))
            )
            continue
        body = rec[R_BODY]
        raw = body.encode()
        digest = (
            small_md5(raw) if len(raw) <= SMALL_MD5 else hashlib.md5(raw, usedforsecurity=False)
        ).hexdigest()
        if every:
            # _views.message_views' system attributes, as _dumps writes them: two hot
            # paths held equal by tests/aws/test_wire_fast.py.
            ms = (rec[R_SKEY] >> SEQ_BITS) // 1000  # key_time, inlined
            if ms != sent_ms:
                sent_ms = ms
                sent_text = str(ms)
            ms = rec[R_FIRST] // 1000
            if ms != first_ms:
                first_ms = ms
                first_text = str(ms)
            count = rec[R_COUNT]  # no extra fields: no receive base
            system = (
                ',"Attributes":{"SenderId":'
                + _string(rec[R_SENDER])
                + ',"SentTimestamp":"'
                + sent_text
                + '","ApproximateReceiveCount":"'
                + (_COUNTS[count] if count < _COUNTED else str(count))
                + '","ApproximateFirstReceiveTimestamp":"'
                + first_text
                + '"}'
            )
        parts.append(
            f'{{"MessageId":"{rec[R_ID]}","ReceiptHandle":"{handle}",'
            f'"MD5OfBody":"{digest}","Body":{_string(body)}{system}}}'
        )
    return [('{"Messages":[' + ",".join(parts) + "]}").encode()]


def encode_received(
    messages: Sequence[Message], request_id: str
) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer to a ReceiveMessage: :func:`encode` of the dict
    client's result, written from the messages (``Client.receive_messages``)."""
    return ok(encode_messages(messages), request_id)


def encode_batch_result(result: BatchResult) -> bytes:
    """A batch answer's body: ``encode`` of the dict client's result (a
    SendMessageBatch's entries carry their SendResult). O(entries)."""
    parts = []
    for entry_id, value in result.successful.items():
        if isinstance(value, SendResult):
            parts.append('{"Id":' + _string(entry_id) + "," + _send_members(value) + "}")
        else:
            parts.append('{"Id":' + _string(entry_id) + "}")
    out = '{"Successful":[' + ",".join(parts) + "]"
    if result.failed:
        out += ',"Failed":' + _dumps([f.to_aws() for f in result.failed])
    return (out + "}").encode("utf-8")


def _send_message(
    client_for: _ClientFor, body: bytes, headers: Mapping[str, str] | None
) -> bytes | None:
    params = _object(body)
    if params is None or not params.keys() <= _SEND or _traced(headers):
        return None
    get = params.get
    url, text, delay = get("QueueUrl"), get("MessageBody"), get("DelaySeconds")
    group, dedup = get("MessageGroupId"), get("MessageDeduplicationId")
    attributes = get("MessageAttributes")
    if (
        type(url) is not str
        or type(text) is not str
        or not (delay is None or type(delay) is int)
        or not (group is None or type(group) is str)
        or not (dedup is None or type(dedup) is str)
        or not (attributes is None or _plain_attributes(attributes))
    ):
        return None
    client = client_for()
    if type(client) is not Client:
        return _general(client, "SendMessage", params)
    result = client.broker.get_queue(url).send(
        text,
        delay_seconds=delay,
        message_attributes=attributes,
        trace_header=None,
        group_id=group,
        deduplication_id=dedup,
        principal=client.principal,
    )
    return encode_send_result(result)


#: ``Queue.receive``'s arguments but the principal, in its order.
_ReceiveArgs = tuple[int, "int | None", "int | None", list[str], list[str], "str | None"]


def _receive_request(body: bytes) -> tuple[dict[str, Any], str, _ReceiveArgs] | None:
    """(params, QueueUrl, ``Queue.receive``'s arguments but the principal, in
    its order) of a ReceiveMessage the dict client would pass on unchanged,
    or None."""
    params = _object(body)
    if params is None or not params.keys() <= _RECEIVE:
        return None
    get = params.get
    url, most = get("QueueUrl"), get("MaxNumberOfMessages")
    visibility, wait = get("VisibilityTimeout"), get("WaitTimeSeconds")
    names, system = get("AttributeNames"), get("MessageSystemAttributeNames")
    wanted, attempt = get("MessageAttributeNames"), get("ReceiveRequestAttemptId")
    if (
        type(url) is not str
        or not (most is None or type(most) is int)
        or not (visibility is None or type(visibility) is int)
        or not (wait is None or type(wait) is int)
        or not (attempt is None or type(attempt) is str)
        or not _strings(names)
        or not _strings(system)
        or not _strings(wanted)
    ):
        return None
    return (
        params,
        url,
        (
            1 if most is None else most,
            visibility,
            wait,
            [*(names or ()), *(system or ())],
            wanted or [],
            attempt,
        ),
    )


def _receive_message(
    client_for: _ClientFor, body: bytes, headers: Mapping[str, str] | None
) -> bytes | None:
    request = _receive_request(body)
    if request is None:
        return None
    params, url, args = request
    client = client_for()
    if type(client) is not Client:
        return _general(client, "ReceiveMessage", params)
    queue = client.broker.get_queue(url)
    got = queue._receive_as(received_views, *args, client.principal)
    return got[0] if got else NO_MESSAGES


def receive_short(client: Client, body: bytes) -> Coroutine[Any, Any, bytes] | None:
    """The body of the 200 answer to a ReceiveMessage by the short path, as a
    coroutine to await (a long poll waits in it; one that finds messages, or
    need not wait, finishes at its first step), or None where the caller must
    take the general path (a request of another shape, a client subclass).
    The answer is written from the delivered records (:func:`received_views`),
    byte for byte what :func:`encode_received` writes of
    ``client.receive_messages_async``'s messages; an SQSError propagates as
    it would from ``client.call``. O(body + size of the messages)."""
    if len(body) > MAX_REQUEST_BYTES or type(client) is not Client:
        return None
    request = _receive_request(body)
    if request is None:
        return None
    _params, url, args = request
    return _receive_answer(client, url, args)


async def _receive_answer(client: Client, url: str, args: _ReceiveArgs) -> bytes:
    queue = client.broker.get_queue(url)
    got = await queue._receive_as_async(received_views, *args, client.principal)
    return got[0] if got else NO_MESSAGES


def _delete_message(
    client_for: _ClientFor, body: bytes, headers: Mapping[str, str] | None
) -> bytes | None:
    params = _object(body)
    if params is None or not params.keys() <= _DELETE:
        return None
    url, receipt = params.get("QueueUrl"), params.get("ReceiptHandle")
    if type(url) is not str or type(receipt) is not str:
        return None
    client = client_for()
    if type(client) is not Client:
        return _general(client, "DeleteMessage", params)
    client.broker.get_queue(url).delete(receipt, principal=client.principal)
    return b"{}"


def _batch(operation: str) -> _Short:
    """The short handler of a batch operation: entries that are objects are
    passed on to the engine, which checks them (``_lifecycle._aws_entry``)."""
    sends = operation == "SendMessageBatch"

    def short(
        client_for: _ClientFor, body: bytes, headers: Mapping[str, str] | None
    ) -> bytes | None:
        params = _object(body)
        if params is None or not params.keys() <= _BATCH:
            return None
        url, entries = params.get("QueueUrl"), params.get("Entries")
        if (
            type(url) is not str
            or type(entries) is not list
            or not all(type(e) is dict for e in entries)
            or not _depth_ok(params)
        ):
            return None
        if sends:
            for entry in entries:
                _decode_blobs(entry.get("MessageAttributes"))
                _decode_blobs(entry.get("MessageSystemAttributes"))
        client = client_for()
        if type(client) is not Client:
            return _general(client, operation, params)
        queue = client.broker.get_queue(url)
        principal = client.principal
        if sends:
            result = queue.send_batch(entries, principal=principal)
        elif operation == "DeleteMessageBatch":
            result = queue.delete_batch(entries, principal=principal)
        else:
            result = queue.change_visibility_batch(entries, principal=principal)
        return encode_batch_result(result)

    return short


#: The short handlers, by X-Amz-Target.
_SHORT: dict[str, _Short] = {
    TARGET_PREFIX + "SendMessage": _send_message,
    TARGET_PREFIX + "ReceiveMessage": _receive_message,
    TARGET_PREFIX + "DeleteMessage": _delete_message,
    **{
        TARGET_PREFIX + operation: _batch(operation)
        for operation in ("SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch")
    },
}
