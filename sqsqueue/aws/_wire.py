"""The awsJson1_0 wire codec SQS speaks to boto3 (section 1).

:func:`handle` takes the pieces of an HTTP request as botocore sends it
(``X-Amz-Target: AmazonSQS.<Operation>``, a JSON body) and returns the status,
headers and body AWS would answer with, errors included (section 1.4):
``x-amzn-query-error: <legacy code>;Sender`` and ``{"__type": ..., "message":
...}``. It is a thin translation over :class:`sqsqueue.aws._client.Client`, which is
itself a thin translation over the engine: no SQS rule lives here. It needs
neither boto3 nor botocore.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import os
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from sqsqueue.aws._client import OPERATIONS, Client
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
    "SerializationError",
    "decode",
    "encode",
    "encode_error",
    "handle",
    "handle_async",
    "new_request_id",
]

TARGET_PREFIX = "AmazonSQS."
CONTENT_TYPE = "application/x-amz-json-1.0"
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


def _depth_ok(value: Any, depth: int = 0) -> bool:
    if depth > MAX_JSON_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_depth_ok(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return all(_depth_ok(v, depth + 1) for v in value)
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


def _error(err: SQSError, request_id: str) -> tuple[int, dict[str, str], bytes]:
    unmodeled = isinstance(err, (*_UNMODELED, SerializationError)) or getattr(err, "coral", False)
    namespace = "com.amazon.coral.service" if unmodeled else "com.amazonaws.sqs"
    body = json.dumps({"__type": f"{namespace}#{err.wire_type}", "message": err.message})
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


def encode(result: Mapping[str, Any], request_id: str) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer carrying an operation's response dict."""
    payload = json.dumps(result, default=_json_default).encode("utf-8")
    return 200, {"x-amzn-RequestId": request_id, "Content-Type": CONTENT_TYPE}, payload


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
    """Answer one awsJson1_0 request: (HTTP status, headers, body)."""
    rid = new_request_id()
    try:
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
        operation, params = decode(target, body, headers)
        return encode(await client.call_async(operation, params), rid)
    except SQSError as err:
        return _error(err, rid)
