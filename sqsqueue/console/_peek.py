"""LocalStack's developer endpoint for peeking: ``/_aws/sqs/messages``.

Tests written against LocalStack read a queue without receiving it through
this endpoint; sqsqueue answers it the same way (LocalStack's
``localstack/services/sqs/developer_api.py`` and its tests are the
reference):

* ``GET`` or ``POST /_aws/sqs/messages?QueueUrl=<url>``, or
  ``/_aws/sqs/messages/<region>/<account>/<queue name>``; a boto3 client whose
  ``endpoint_url`` is ``.../_aws/sqs/messages`` calling ``receive_message``
  (query or JSON protocol) works too, and any other operation is refused
  with ``InvalidRequest``, "This endpoint only accepts ReceiveMessage calls".
* The answer is a ReceiveMessage response: the query protocol's XML, or the
  JSON rendering of that XML with ``Accept: application/json``, or AWS JSON
  1.0 for a JSON-protocol request. Every message carries all its system and
  message attributes, and the receipt handle ``SQS/BACKDOOR/ACCESS``, which
  acts on nothing. ``MaxNumberOfMessages`` is ignored, as LocalStack does.
* Visible messages only, unless ``ShowInvisible`` (in flight too, with an
  ``IsVisible`` attribute) or ``ShowDelayed`` (delayed too, with
  ``IsDelayed``) is ``true``.
* Nothing changes: messages are read with ``Queue.browse``, which moves no
  visibility, receive count or first-receive time.
* On an endpoint serving every account and region (``sqsqueue serve``), the
  queue is looked up in the account and region its URL (or ARN, or the
  path's ``<region>/<account>``) names; the console gives :func:`peek` that
  look-up (a :data:`Finder`).

One addition: the answer holds at most ``Limit`` messages (1..1000, default
1000) in arrival order, and when more remain the header
``X-Sqsqueue-Next-After`` gives the ``After`` parameter of the next page, so a
queue of a million messages is read a page at a time.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqsqueue._message import Message, MessageInfo
from sqsqueue._settings import BROWSE_MAX
from sqsqueue.aws import _errors, _query, _wire
from sqsqueue.errors import InvalidParameterValue, QueueDoesNotExist, SQSError

__all__ = ["BACKDOOR_HANDLE", "PREFIX", "Finder", "peek", "refuse"]

PREFIX = "/_aws/sqs/messages"
#: The receipt handle LocalStack gives peeked messages.
BACKDOOR_HANDLE = "SQS/BACKDOOR/ACCESS"
_ONLY_RECEIVE = "This endpoint only accepts ReceiveMessage calls"

Answer = tuple[int, dict[str, str], bytes]
#: The queue a peek names: ``(QueueUrl or name, account, region)`` (account
#: and region None unless the path names them) to the queue; raises
#: QueueDoesNotExist when there is none.
Finder = Callable[[str, str | None, str | None], Any]


def _true(value: object) -> bool:
    return str(value).lower() in ("true", "1")


def peek(
    find: Finder,
    principal: str | None,
    method: str,
    path: str,
    form: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    body: bytes,
    endpoint_url: str,
) -> Answer:
    """Answer one request to the peek endpoint (never raises SQSError)."""
    request_id = str(uuid.uuid4())
    json_protocol = "x-amz-target" in headers or headers.get("content-type", "").startswith(
        "application/x-amz-json"
    )
    as_json = "application/json" in headers.get("accept", "")
    try:
        if method not in ("GET", "POST"):
            raise _errors.InvalidRequest(f"{PREFIX} takes GET or POST, not {method}.")
        values = dict(form)
        if json_protocol:
            operation, params = _wire.decode(headers.get("x-amz-target"), body, headers)
            if operation != "ReceiveMessage":
                raise _errors.InvalidRequest(_ONLY_RECEIVE)
            values.update({k: v for k, v in params.items() if isinstance(v, str)})
        elif "Action" in values:
            operation, params = _query.decode(form, "/", endpoint_url)
            if operation != "ReceiveMessage":
                raise _errors.InvalidRequest(_ONLY_RECEIVE)
        queue = _queue(find, path, values)
        states = ["visible"]
        show_invisible = _true(values.get("ShowInvisible"))
        show_delayed = _true(values.get("ShowDelayed"))
        if show_invisible:
            states.append("in_flight")
        if show_delayed:
            states.append("delayed")
        after = _integer(values, "After")
        limit = _integer(values, "Limit")
        page = queue.browse(
            after, BROWSE_MAX if limit is None else limit, states=states, principal=principal
        )
        messages = [_message(info, show_invisible, show_delayed).to_aws() for info in page.messages]
        result: dict[str, Any] = {"Messages": messages} if messages else {}
        if json_protocol:
            answer = _wire.encode(result, request_id)
        elif as_json:
            answer = _json_answer(result, request_id)
        else:
            answer = _query.encode("ReceiveMessage", result, request_id)
        if page.next_after is not None:
            answer[1]["X-Sqsqueue-Next-After"] = str(page.next_after)
        return answer
    except SQSError as err:
        return refuse(err, headers, request_id)


def refuse(err: SQSError, headers: Mapping[str, str], request_id: str | None = None) -> Answer:
    """``err`` answered in the protocol of the request (``headers``)."""
    request_id = request_id or str(uuid.uuid4())
    if "x-amz-target" in headers or headers.get("content-type", "").startswith(
        "application/x-amz-json"
    ):
        return _wire.encode_error(err, request_id)
    if "application/json" in headers.get("accept", ""):
        return _json_error(err, request_id)
    return _query.encode_error(err, request_id)


def _integer(values: Mapping[str, str], name: str) -> int | None:
    raw = values.get(name)
    if raw is None:
        return None
    if not raw.isdigit():
        raise InvalidParameterValue(
            f"Value {raw} for parameter {name} is invalid. Reason: must be a whole number."
        )
    return int(raw)


def _queue(find: Finder, path: str, values: Mapping[str, str]) -> Any:
    rest = path[len(PREFIX) :].strip("/")
    if rest:
        parts = rest.split("/")
        if len(parts) != 3:
            raise QueueDoesNotExist()
        region, account, name = parts
        return find(name, account, region)
    url = values.get("QueueUrl")
    if not url:
        raise QueueDoesNotExist()
    return find(url, None, None)


def _message(info: MessageInfo, show_invisible: bool, show_delayed: bool) -> Message:
    attributes = dict(info.attributes)
    if show_invisible:
        attributes["IsVisible"] = "true" if info.state != "in_flight" else "false"
    if show_delayed:
        attributes["IsDelayed"] = "true" if info.state == "delayed" else "false"
    return Message(
        info.message_id,
        BACKDOOR_HANDLE,
        info.body,
        attributes,
        info.message_attributes,
        info.md5_of_message_attributes,
    )


def _json_answer(result: Mapping[str, Any], request_id: str) -> Answer:
    """The query protocol's XML answer as JSON, as LocalStack renders it for
    ``Accept: application/json``: one message is an object, several a list."""
    rendered = []
    for m in result.get("Messages", []):
        item: dict[str, Any] = {
            "MessageId": m["MessageId"],
            "ReceiptHandle": m["ReceiptHandle"],
            "MD5OfBody": m["MD5OfBody"],
            "Body": m["Body"],
            "Attribute": [{"Name": k, "Value": v} for k, v in m.get("Attributes", {}).items()],
        }
        if "MessageAttributes" in m:
            item["MD5OfMessageAttributes"] = m["MD5OfMessageAttributes"]
            item["MessageAttribute"] = [
                {"Name": k, "Value": _attribute_value(v)} for k, v in m["MessageAttributes"].items()
            ]
        rendered.append(item)
    body: dict[str, Any] = {}
    if rendered:
        body["Message"] = rendered[0] if len(rendered) == 1 else rendered
    doc = {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": body or None,
            "ResponseMetadata": {"RequestId": request_id},
        }
    }
    return _json(200, doc, request_id)


def _attribute_value(value: Mapping[str, Any]) -> dict[str, str]:
    out = {"DataType": str(value["DataType"])}
    if "StringValue" in value:
        out["StringValue"] = str(value["StringValue"])
    if "BinaryValue" in value:
        out["BinaryValue"] = base64.b64encode(value["BinaryValue"]).decode("ascii")
    return out


def _json_error(err: SQSError, request_id: str) -> Answer:
    doc = {
        "ErrorResponse": {
            "Error": {
                "Type": "Sender" if err.sender_fault else "Receiver",
                "Code": err.query_code,
                "Message": err.message,
            },
            "RequestId": request_id,
        }
    }
    return _json(err.http_status, doc, request_id)


def _json(status: int, doc: object, request_id: str) -> Answer:
    headers = {"x-amzn-RequestId": request_id, "Content-Type": "application/json"}
    return status, headers, json.dumps(doc).encode("utf-8")
