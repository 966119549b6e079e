"""The query protocol codec: form-encoded requests, XML answers (SQS before 2024).

Older SDKs and tools (boto3 before 1.34.90, the AWS CLI v1 of that age,
kombu's pycurl transport, aws-sdk-java v1, ...) send ``Action=SendMessage&
Version=2012-11-05&QueueUrl=...&MessageAttribute.1.Name=...`` as a form (POST)
or a query string (GET), to ``/`` or to the queue URL itself, and read XML.

The shapes come from botocore's own SQS model (``service-2.json``, loaded
once): which members a request and a result have, their types, which lists
and maps are flattened. What the JSON model dropped are the query protocol's
element names; they follow rules read off botocore 1.34.89's query model (the
last one), applied by :func:`_element` and :func:`_entry`:

* a flattened list's items are named after the list shape without ``List``
  (``AttributeNameList`` -> ``AttributeName.1``, ``MessageList`` ->
  ``<Message>``), except ``StringList``/``BinaryList`` (``StringListValue``,
  ``BinaryListValue``);
* a map's entries are named after its member in the singular
  (``Attributes`` -> ``Attribute.1.Name``/``Attribute.1.Value``, ``tags`` ->
  ``Tag.1.Key``), with ``Key`` for tag maps and ``Name`` otherwise.

The one list the query model never had (ReceiveMessage's
``MessageSystemAttributeNames``, added with the JSON protocol) is read as
``MessageSystemAttributeName.N`` (UNCONFIRMED). The parameters then go to the
same :class:`~sqsqueue.aws._client.Client` as JSON requests: no SQS rule lives
here. Cost: linear in the size of the request and of the answer.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from sqsqueue.aws._client import OPERATIONS
from sqsqueue.aws._errors import (
    MalformedQueryString,
    MissingAction,
    NoSuchVersion,
    UnknownOperation,
)
from sqsqueue.errors import InvalidAction, InvalidParameterValue, QueueDoesNotExist, SQSError

__all__ = [
    "API_VERSION",
    "CONTENT_TYPE",
    "XMLNS",
    "decode",
    "encode",
    "encode_error",
    "encode_json",
    "shapes",
]

#: The one API version of the query protocol sqsqueue speaks (``Version``).
API_VERSION = "2012-11-05"
XMLNS = f"http://queue.amazonaws.com/doc/{API_VERSION}/"
CONTENT_TYPE = "text/xml"
#: Parameters every query request may carry besides the operation's own
#: (the action, the API version, and Signature V2 / presigned V4 fields).
_ENVELOPE = re.compile(r"Action|Version|AWSAccessKeyId|Signature\w*|Timestamp|Expires|X-Amz-.*")
#: The query protocol's message for an unknown queue (section 1.4).
_NO_QUEUE = "The specified queue does not exist for this wsdl version."
#: Actions on the service, not on a queue: sent to a queue URL, AWS answers
#: InvalidAction (recorded for these two; the other queue-less actions are
#: UNCONFIRMED and still served there).
_SERVICE_ACTIONS = frozenset({"CreateQueue", "ListQueues"})
_BATCHES = frozenset({"SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"})
_LIST_ITEMS = {
    "StringList": "StringListValue",
    "BinaryList": "BinaryListValue",
    "MessageSystemAttributeList": "MessageSystemAttributeName",
}


@functools.cache
def shapes() -> tuple[dict[str, Any], dict[str, Any]]:
    """(operations, shapes) of botocore's SQS model, loaded once (about 50 ms)."""
    from botocore.loaders import create_loader

    model = create_loader().load_service_model("sqs", "service-2", api_version="2012-11-05")
    return model["operations"], model["shapes"]


def _element(list_shape: str) -> str:
    return _LIST_ITEMS.get(list_shape, list_shape.removesuffix("List"))


def _entry(member: str, map_shape: Mapping[str, Any]) -> tuple[str, str, str]:
    """(entry name, key name, value name) of a flattened map member."""
    entry = member[0].upper() + member[1:]
    key = "Key" if map_shape["key"]["shape"] == "TagKey" else "Name"
    return entry.removesuffix("s"), key, "Value"


def _name(member: str, ref: Mapping[str, Any]) -> str:
    """The query name of a structure member."""
    _, table = shapes()
    shape = table[ref["shape"]]
    if shape["type"] == "list":
        return _element(ref["shape"])
    if shape["type"] == "map":
        return _entry(member, shape)[0]
    return member


# -- requests ---------------------------------------------------------------------------


def _tree(form: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``a.1.b=x`` pairs as nested dicts ({"a": {"1": {"b": "x"}}}); the last
    of repeated keys wins."""
    root: dict[str, Any] = {}
    for key, value in form:
        if _ENVELOPE.fullmatch(key):
            continue
        parts = key.split(".")
        node = root
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise MalformedQueryString(f"The parameter {key} conflicts with another.")
            node = child
        if isinstance(node.get(parts[-1]), dict):
            raise MalformedQueryString(f"The parameter {key} conflicts with another.")
        node[parts[-1]] = value
    return root


def _indexed(node: Any, where: str) -> list[Any]:
    if not isinstance(node, dict):
        raise InvalidParameterValue(
            f"Value for parameter {where} is invalid. Reason: must be a numbered list."
        )
    try:
        items = sorted((int(k), v) for k, v in node.items() if k.isdigit())
    except ValueError:  # pragma: no cover - isdigit() admits only ints
        items = []
    if len(items) != len(node):
        raise MalformedQueryString(f"The parameter {where} has an entry without a number.")
    return [v for _, v in items]


def _value(shape_name: str, node: Any, where: str) -> Any:
    _, table = shapes()
    shape = table[shape_name]
    kind = shape["type"]
    if kind == "structure":
        if not isinstance(node, dict):
            raise InvalidParameterValue(
                f"Value for parameter {where} is invalid. Reason: must be a structure."
            )
        out: dict[str, Any] = {}
        for member, ref in shape["members"].items():
            name = _name(member, ref)
            if name in node:
                out[member] = _value(ref["shape"], node[name], f"{where}.{name}".lstrip("."))
        return out
    if kind == "list":
        return [
            _value(shape["member"]["shape"], item, f"{where}.{i}")
            for i, item in enumerate(_indexed(node, where), 1)
        ]
    if kind == "map":
        _, key_name, value_name = _entry(where.rsplit(".", 1)[-1], shape)
        result: dict[str, Any] = {}
        for i, entry in enumerate(_indexed(node, where), 1):
            if not isinstance(entry, dict) or not isinstance(entry.get(key_name), str):
                raise InvalidParameterValue(
                    f"Value for parameter {where}.{i}.{key_name} is invalid. Reason: missing."
                )
            if value_name not in entry:
                raise InvalidParameterValue(
                    f"Value for parameter {where}.{i}.{value_name} is invalid. Reason: missing."
                )
            result[entry[key_name]] = _value(
                shape["value"]["shape"], entry[value_name], f"{where}.{i}.{value_name}"
            )
        return result
    if not isinstance(node, str):
        raise InvalidParameterValue(
            f"Value for parameter {where} is invalid. Reason: must be a single value."
        )
    if kind in ("integer", "long"):
        if not re.fullmatch(r"-?[0-9]{1,18}", node):
            raise InvalidParameterValue(
                f"Value {node} for parameter {where} is invalid. Reason: must be an integer."
            )
        return int(node)
    if kind == "boolean":
        if node not in ("true", "false"):
            raise InvalidParameterValue(
                f"Value {node} for parameter {where} is invalid. Reason: must be true or false."
            )
        return node == "true"
    if kind == "blob":
        try:
            return base64.b64decode(node, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidParameterValue(
                f"Value for parameter {where} is invalid. Reason: must be base64."
            ) from None
    return node


def decode(
    form: Sequence[tuple[str, str]], path: str, endpoint_url: str, method: str = "POST"
) -> tuple[str, dict[str, Any]]:
    """(operation, params) of a query request, ``form`` being its decoded pairs
    (query string, then body). A queue URL path (``/<account>/<name>``) is the
    request's QueueUrl unless it names one. A ``Version`` other than
    2012-11-05 is NoSuchVersion; none at all is taken as 2012-11-05. As AWS
    answers: a GET on a queue URL without ``Action`` is 404
    UnknownOperationException, and CreateQueue or ListQueues sent to a queue
    URL is InvalidAction."""
    action = version = None
    for key, value in form:
        if key == "Action":
            action = value
        elif key == "Version":
            version = value
    on_queue = bool(path.strip("/"))
    if not action:
        if method == "GET" and on_queue:
            raise UnknownOperation()
        raise MissingAction()
    if action not in OPERATIONS or (on_queue and action in _SERVICE_ACTIONS):
        raise InvalidAction(f"The action {action} is not valid for this endpoint.")
    # No Version is taken as 2012-11-05: kombu's asynchronous SQS transport
    # (its query path, used with botocore before 1.34.90) never sends one, and
    # ran against AWS so for years. A version named must be the one spoken.
    if version and version != API_VERSION:
        raise NoSuchVersion(
            f"An incorrect version was specified in the request: {version}. "
            f"This endpoint speaks {API_VERSION}."
        )
    operations, _ = shapes()
    op = operations[action]
    params: dict[str, Any] = {}
    if "input" in op:
        params = _value(op["input"]["shape"], _tree(form), "")
        members = shapes()[1][op["input"]["shape"]]["members"]
        if "QueueUrl" in members and "QueueUrl" not in params and path.strip("/"):
            params["QueueUrl"] = endpoint_url + "/" + path.strip("/")
        if action in _BATCHES and "Entries" not in params:
            # A flattened list cannot be written empty: no entries is the empty
            # batch, AWS's EmptyBatchRequest, not a missing parameter.
            params["Entries"] = []
    return action, params


# -- answers ----------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A value as XML text. XML parsers turn a literal CR into LF: AWS sends
    it as a character reference."""
    if type(value) is str:  # most values: xml.sax.saxutils.escape, inlined
        return (
            value.replace("&", "&amp;")
            .replace(">", "&gt;")
            .replace("<", "&lt;")
            .replace("\r", "&#xD;")
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return escape(str(value)).replace("\r", "&#xD;")


#: How a structure member is written: as one element, a flattened list, a
#: flattened map.
_ONE, _LIST, _MAP = 0, 1, 2
_Writer = Callable[[Any, list[str]], None]


def _scalar(value: Any, out: list[str]) -> None:
    out.append(_text(value))


@functools.cache
def _writer(shape_name: str) -> _Writer:
    """The function writing a value of ``shape_name`` as XML, built once per
    shape from the model (the element names and the writers of the members'
    shapes worked out here, not per value written). Cost per value: linear
    in its size."""
    _, table = shapes()
    shape = table[shape_name]
    if shape["type"] != "structure":
        return _scalar
    # (member, how, opening tag, a map entry's tags between key and value,
    # closing tag, the writer of the member's items)
    steps: list[tuple[str, int, str, str, str, _Writer]] = []
    for member, ref in shape["members"].items():
        inner = table[ref["shape"]]
        if inner["type"] == "list":
            tag = _element(ref["shape"])
            sub = _writer(inner["member"]["shape"])
            steps.append((member, _LIST, f"<{tag}>", "", f"</{tag}>", sub))
        elif inner["type"] == "map":
            entry, key, val = _entry(member, inner)
            sub = _writer(inner["value"]["shape"])
            steps.append(
                (member, _MAP, f"<{entry}><{key}>", f"</{key}><{val}>", f"</{val}></{entry}>", sub)
            )
        else:
            sub = _writer(ref["shape"])
            steps.append((member, _ONE, f"<{member}>", "", f"</{member}>", sub))

    def write(value: Any, out: list[str]) -> None:
        append = out.append
        for member, how, opening, middle, closing, sub in steps:
            if member not in value:
                continue
            item = value[member]
            if how == _ONE:
                append(opening)
                if sub is _scalar:
                    append(_text(item))
                else:
                    sub(item, out)
                append(closing)
            elif how == _LIST:
                for element in item:
                    append(opening)
                    sub(element, out)
                    append(closing)
            else:
                for k, v in item.items():
                    append(opening + _text(k) + middle)
                    sub(v, out)
                    append(closing)

    return write


def encode(
    operation: str, result: Mapping[str, Any], request_id: str
) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer: ``<OpResponse><OpResult>...</OpResult><ResponseMetadata>``."""
    operations, _ = shapes()
    op = operations[operation]
    out = [f'<?xml version="1.0"?><{operation}Response xmlns="{XMLNS}">']
    if "output" in op:
        inner: list[str] = []
        _writer(op["output"]["shape"])(result, inner)
        if inner:
            out.extend([f"<{operation}Result>", *inner, f"</{operation}Result>"])
        else:  # AWS writes an empty result self-closed: <ReceiveMessageResult/>
            out.append(f"<{operation}Result/>")
    out.append(
        f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
        f"</{operation}Response>"
    )
    return 200, _headers(request_id), "".join(out).encode("utf-8")


def _json_value(shape_name: str, value: Any) -> Any:
    """A result value as AWS's JSON answer to a query request writes it: every
    member of a structure (null when absent), a list member named in
    lowerCamelCase (``messages``, ``queueUrls``), maps as objects, blobs in
    base64."""
    _, table = shapes()
    shape = table[shape_name]
    kind = shape["type"]
    if value is None:
        return None
    if kind == "structure":
        out: dict[str, Any] = {}
        for member, ref in shape["members"].items():
            name = member
            if table[ref["shape"]]["type"] == "list":
                name = member[0].lower() + member[1:]
            out[name] = _json_value(ref["shape"], value.get(member))
        return out
    if kind == "list":
        return [_json_value(shape["member"]["shape"], v) for v in value]
    if kind == "map":
        return {k: _json_value(shape["value"]["shape"], v) for k, v in value.items()}
    if kind == "blob":
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def encode_json(
    operation: str, result: Mapping[str, Any], request_id: str
) -> tuple[int, dict[str, str], bytes]:
    """The 200 answer to a query request sent with ``Accept: application/json``,
    as AWS writes it: ``{"<Op>Response": {"<Op>Result": {...},
    "ResponseMetadata": {"RequestId": ...}}}`` (for ReceiveMessage,
    ``ReceiveMessageResult.messages``, null when there is none)."""
    operations, _ = shapes()
    op = operations[operation]
    answer: dict[str, Any] = {}
    if "output" in op:
        answer[f"{operation}Result"] = _json_value(op["output"]["shape"], result)
    answer["ResponseMetadata"] = {"RequestId": request_id}
    body = json.dumps({f"{operation}Response": answer}).encode("utf-8")
    return 200, {"x-amzn-RequestId": request_id, "Content-Type": "application/json"}, body


def encode_error(err: SQSError, request_id: str) -> tuple[int, dict[str, str], bytes]:
    """AWS's ``ErrorResponse``: Type, the legacy Code, Message (section 1.4).

    One exception: a GET on a queue URL naming no ``Action`` is answered with
    the bare element ``<UnknownOperationException/>``, 404, whatever the
    ``Accept`` header (recorded: LocalStack's AWS-validated
    ``TestSqsQueryApi::test_get_without_query_returns_unknown_operation`` and
    ``..._json_format_returns_returns_xml``; section 1.1). Its Content-Type is
    UNCONFIRMED: sqsqueue's choice is text/xml, as every other query answer."""
    if isinstance(err, UnknownOperation):
        return err.http_status, _headers(request_id), b"<UnknownOperationException/>"
    message = err.message
    if isinstance(err, QueueDoesNotExist) and message == QueueDoesNotExist().message:
        message = _NO_QUEUE
    body = (
        f'<?xml version="1.0"?><ErrorResponse xmlns="{XMLNS}"><Error>'
        f"<Type>{'Sender' if err.sender_fault else 'Receiver'}</Type>"
        f"<Code>{_text(err.query_code)}</Code><Message>{_text(message)}</Message><Detail/>"
        f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>"
    )
    return err.http_status, _headers(request_id), body.encode("utf-8")


def _headers(request_id: str) -> dict[str, str]:
    return {"x-amzn-RequestId": request_id, "Content-Type": CONTENT_TYPE}
