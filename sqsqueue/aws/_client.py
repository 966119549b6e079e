"""A boto3-shaped client without boto3: the 23 SQS operations as dicts.

``broker.client()`` returns a :class:`Client` whose methods have boto3's names
and parameters (``send_message(QueueUrl=..., MessageBody=...)``) and return
boto3's response dicts, but raise :mod:`sqsqueue.errors` exceptions. The boto3
wire facade (``sqsqueue.aws``) is this client plus JSON: every rule lives in the
engine, this module only translates names and shapes (section 2).

Response shapes follow AWS: optional empty collections are omitted
(``Messages``, ``Tags``, ``Attributes``, ``QueueUrls``), required members are
always present (batch ``Successful``, ``queueUrls``), except that a batch
response has ``Failed`` only when an entry failed, as AWS answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from sqsqueue._batches import MESSAGE_MEMBERS, system_trace
from sqsqueue._fifo import FifoQueue
from sqsqueue._message import (
    BatchResult,
    Message,
    SendResult,
)
from sqsqueue._policy import access_denied, caller_account
from sqsqueue._ports import SQSClient
from sqsqueue._receive import Views
from sqsqueue._standard import Queue
from sqsqueue._validate import kind_name, show
from sqsqueue.errors import InvalidAction, InvalidParameterValue, MissingParameter

__all__ = ["OPERATIONS", "RECEIVE_MEMBERS", "BrokerAPI", "Client"]

T = TypeVar("T")


class _Page(Protocol):
    """One page of queue URLs (``sqsqueue.ListQueuesResult``)."""

    @property
    def queue_urls(self) -> Sequence[str]: ...
    @property
    def next_token(self) -> str | None: ...


class BrokerAPI(Protocol):
    """What the client needs of a :class:`~sqsqueue.Broker`: its namespace and
    move-task operations. Typing the client by this, not by the class, keeps the
    adapters free of an import of ``sqsqueue._broker``, so ``Broker.client()``
    can build a client without an import cycle (docs/architecture.md)."""

    @property
    def account_id(self) -> str: ...
    @property
    def region(self) -> str: ...
    def get_queue(self, ref: str) -> Queue | FifoQueue: ...
    def get_queue_url(
        self, name: str, *, queue_owner_account_id: str | None = ..., principal: str | None = ...
    ) -> str: ...
    def create_queue(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = ...,
        tags: Mapping[str, str] | None = ...,
    ) -> Queue | FifoQueue: ...
    def delete_queue(self, ref: str, *, principal: str | None = ...) -> None: ...
    def list_queues(
        self,
        prefix: str | None = ...,
        *,
        max_results: int | None = ...,
        next_token: str | None = ...,
    ) -> _Page: ...
    def list_dead_letter_source_queues(
        self,
        ref: str,
        *,
        max_results: int | None = ...,
        next_token: str | None = ...,
        principal: str | None = ...,
    ) -> _Page: ...
    def start_message_move_task(
        self,
        source_arn: str,
        *,
        destination_arn: str | None = ...,
        max_number_of_messages_per_second: int | None = ...,
        principal: str | None = ...,
    ) -> str: ...
    def list_message_move_tasks(
        self, source_arn: str, *, max_results: int | None = ..., principal: str | None = ...
    ) -> list[dict[str, object]]: ...
    def cancel_message_move_task(self, task_handle: str, *, principal: str | None = ...) -> int: ...


#: ReceiveMessage's members (the codec's short path takes the same).
RECEIVE_MEMBERS = (
    "QueueUrl",
    "AttributeNames",
    "MessageSystemAttributeNames",
    "MessageAttributeNames",
    "MaxNumberOfMessages",
    "VisibilityTimeout",
    "WaitTimeSeconds",
    "ReceiveRequestAttemptId",
)

#: The 23 operations of the botocore SQS model (section 2).
OPERATIONS = (
    "AddPermission",
    "CancelMessageMoveTask",
    "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch",
    "CreateQueue",
    "DeleteMessage",
    "DeleteMessageBatch",
    "DeleteQueue",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "ListMessageMoveTasks",
    "ListQueueTags",
    "ListQueues",
    "PurgeQueue",
    "ReceiveMessage",
    "RemovePermission",
    "SendMessage",
    "SendMessageBatch",
    "SetQueueAttributes",
    "StartMessageMoveTask",
    "TagQueue",
    "UntagQueue",
)


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


#: Each operation's method name (``SendMessage`` -> ``send_message``).
_METHODS = {operation: _snake(operation) for operation in OPERATIONS}


class _Params:
    """Typed access to one request's parameters, with AWS's errors."""

    def __init__(self, operation: str, params: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
        if not isinstance(params, Mapping):
            raise InvalidParameterValue("The request parameters must be a mapping.")
        unknown = [k for k in params if k not in allowed]
        if unknown:
            raise InvalidParameterValue(
                f"Unknown parameter {unknown[0]} for operation {operation}; expected one of "
                f"{', '.join(allowed)}."
            )
        self._params = params

    def get(self, name: str, kind: type | tuple[type, ...], *, required: bool = False) -> Any:
        value = self._params.get(name)
        if value is None:  # absent or null
            if required:
                raise MissingParameter(f"The request must contain the parameter {name}.")
            return None
        if isinstance(value, bool) and kind is int:
            raise InvalidParameterValue(
                f"Value {value} for parameter {name} is invalid. Reason: must be an integer."
            )
        if not isinstance(value, kind):
            raise InvalidParameterValue(
                f"Value {show(value)} for parameter {name} is invalid. "
                f"Reason: must be {kind_name(kind)}."
            )
        return value

    def strings(self, name: str, *, required: bool = False) -> list[str] | None:
        value = self.get(name, (list, tuple), required=required)
        if value is not None and not all(isinstance(v, str) for v in value):
            raise InvalidParameterValue(
                f"Value for parameter {name} is invalid. Reason: must be a list of strings."
            )
        return None if value is None else list(value)

    def string_map(
        self, name: str, *, required: bool = False, values: type = str
    ) -> dict[str, Any] | None:
        """A JSON map: string keys, and values of type ``values`` (section 1.2:
        attribute and tag maps are string -> string, MessageAttributes map to
        MessageAttributeValue structures)."""
        value = self.get(name, Mapping, required=required)
        if value is not None and not all(isinstance(k, str) for k in value):
            raise InvalidParameterValue(
                f"Value for parameter {name} is invalid. Reason: keys must be strings."
            )
        if value is not None:
            _check_values(name, value, values)
        return None if value is None else dict(value)


def _send_result(r: SendResult) -> dict[str, Any]:
    out: dict[str, Any] = {"MD5OfMessageBody": r.md5_of_body}
    if r.md5_of_message_attributes is not None:
        out["MD5OfMessageAttributes"] = r.md5_of_message_attributes
    if r.md5_of_message_system_attributes is not None:
        out["MD5OfMessageSystemAttributes"] = r.md5_of_message_system_attributes
    out["MessageId"] = r.message_id
    if r.sequence_number is not None:
        out["SequenceNumber"] = r.sequence_number
    return out


def _batch(result: BatchResult, send: bool = False) -> dict[str, Any]:
    successful = []
    for entry_id, value in result.successful.items():
        item: dict[str, Any] = {"Id": entry_id}
        if send and isinstance(value, SendResult):
            item.update(_send_result(value))
        successful.append(item)
    out: dict[str, Any] = {"Successful": successful}
    # AWS leaves Failed out when no entry failed, although the model marks it
    # required (docs/aws-behaviour.md §2.1, recorded for SendMessageBatch;
    # Delete/ChangeMessageVisibilityBatch share the response shape and the
    # protocol's rule that empty collections are omitted, section 1.3).
    if result.failed:
        out["Failed"] = [f.to_aws() for f in result.failed]
    return out


def _message(m: Message) -> dict[str, Any]:
    return m.to_aws()


class Client(SQSClient):
    """boto3's SQS client surface over a :class:`~sqsqueue.Broker`, without boto3.

    >>> from sqsqueue import Broker, ManualClock
    >>> sqs = Broker(clock=ManualClock(start=1_700_000_000.0)).client()
    >>> url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    >>> sqs.send_message(QueueUrl=url, MessageBody="test")["MD5OfMessageBody"]
    '098f6bcd4621d373cade4e832627b4f6'
    >>> sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"]
    'test'

    ``principal`` (an account id) makes every call on behalf of that account.
    ``endpoint_url`` (``http://127.0.0.1:9324``) makes the queue URLs it answers
    with point there instead of at AWS (an HTTP endpoint serving the broker);
    queue URLs of either form are accepted back.
    """

    def __init__(
        self,
        broker: BrokerAPI,
        *,
        principal: str | None = None,
        endpoint_url: str | None = None,
        default_region: str | None = None,
    ) -> None:
        self.broker = broker
        self.principal = principal
        self.endpoint_url = endpoint_url.rstrip("/") if endpoint_url else None
        #: An endpoint serving several regions (``sqsqueue serve``): the queue
        #: URLs of other regions than this one say theirs.
        self.default_region = default_region

    def _url(self, url: str) -> str:
        """A queue URL as this client shows it: ``<endpoint>/<account>/<name>``,
        or ``<endpoint>/queue/<region>/<account>/<name>`` for a region other
        than ``default_region`` when that is set. O(1)."""
        if self.endpoint_url is None:
            return url
        _scheme, _empty, host, path = url.split("/", 3)
        if self.default_region is not None:
            region = host.split(".")[1]  # sqs.<region>.amazonaws.com
            if region != self.default_region:
                return f"{self.endpoint_url}/queue/{region}/{path}"
        return f"{self.endpoint_url}/{path}"

    def call(self, operation: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation by its AWS name (``"SendMessage"``) with boto3 params."""
        method_name = _METHODS.get(operation) if isinstance(operation, str) else None
        if method_name is None:
            raise InvalidAction(f"The action {show(operation)} is not valid for this endpoint.")
        if params is not None and not isinstance(params, Mapping):
            raise InvalidParameterValue("The request parameters must be a mapping.")
        unknown = [k for k in params or () if not isinstance(k, str)]
        if unknown:
            raise InvalidParameterValue(
                f"Unknown parameter {show(unknown[0])} for operation {operation}."
            )
        method: Callable[..., dict[str, Any]] = getattr(self, method_name)
        return method(**dict(params or {}))

    async def call_async(
        self, operation: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """:meth:`call` for asyncio: a ReceiveMessage long poll awaits the engine
        (``Queue.receive_async``) and never blocks the event loop; every other
        operation runs as :meth:`call` does (none of them waits)."""
        if operation == "ReceiveMessage" and (params is None or isinstance(params, Mapping)):
            unknown = [k for k in params or () if not isinstance(k, str)]
            if not unknown:
                return await self.receive_message_async(**dict(params or {}))
        return self.call(operation, params)

    def _of_another_account(self) -> bool:
        """Whether the caller is a principal of an account other than the
        broker's. Account-level actions (CreateQueue, ListQueues) act in the
        caller's own account, which this broker is not; cross-account
        permissions do not apply to them (``_policy.OWNER_ONLY``). O(1)."""
        return self.principal is not None and caller_account(self.principal) != (
            self.broker.account_id
        )

    def _queue(self, p: _Params) -> Queue | FifoQueue:
        return self.broker.get_queue(p.get("QueueUrl", str, required=True))

    # -- queues -------------------------------------------------------------------

    def create_queue(self, **params: Any) -> dict[str, Any]:
        p = _Params("CreateQueue", params, ("QueueName", "Attributes", "tags"))
        name = p.get("QueueName", str, required=True)
        if self._of_another_account():
            broker = self.broker
            raise access_denied(
                self._url(f"https://sqs.{broker.region}.amazonaws.com/{broker.account_id}/{name}")
            )
        attributes = p.string_map("Attributes") or {}
        tags = p.string_map("tags")
        queue = self.broker.create_queue(name, attributes=attributes, tags=tags)
        return {"QueueUrl": self._url(queue.url)}

    def delete_queue(self, **params: Any) -> dict[str, Any]:
        p = _Params("DeleteQueue", params, ("QueueUrl",))
        self.broker.delete_queue(p.get("QueueUrl", str, required=True), principal=self.principal)
        return {}

    def get_queue_url(self, **params: Any) -> dict[str, Any]:
        p = _Params("GetQueueUrl", params, ("QueueName", "QueueOwnerAWSAccountId"))
        url = self.broker.get_queue_url(
            p.get("QueueName", str, required=True),
            queue_owner_account_id=p.get("QueueOwnerAWSAccountId", str),
            principal=self.principal,
        )
        return {"QueueUrl": self._url(url)}

    def list_queues(self, **params: Any) -> dict[str, Any]:
        p = _Params("ListQueues", params, ("QueueNamePrefix", "NextToken", "MaxResults"))
        page = self.broker.list_queues(
            p.get("QueueNamePrefix", str),
            max_results=p.get("MaxResults", int),
            next_token=p.get("NextToken", str),
        )
        out: dict[str, Any] = {}
        if self._of_another_account():
            return out  # the caller's own account has no queues here
        if page.queue_urls:
            out["QueueUrls"] = [self._url(u) for u in page.queue_urls]
        if page.next_token:
            out["NextToken"] = page.next_token
        return out

    def list_dead_letter_source_queues(self, **params: Any) -> dict[str, Any]:
        p = _Params("ListDeadLetterSourceQueues", params, ("QueueUrl", "NextToken", "MaxResults"))
        page = self.broker.list_dead_letter_source_queues(
            p.get("QueueUrl", str, required=True),
            max_results=p.get("MaxResults", int),
            next_token=p.get("NextToken", str),
            principal=self.principal,
        )
        out: dict[str, Any] = {"queueUrls": [self._url(u) for u in page.queue_urls]}
        if page.next_token:
            out["NextToken"] = page.next_token
        return out

    def get_queue_attributes(self, **params: Any) -> dict[str, Any]:
        p = _Params("GetQueueAttributes", params, ("QueueUrl", "AttributeNames"))
        queue = self._queue(p)
        attributes = queue.get_attributes(
            p.strings("AttributeNames") or [], principal=self.principal
        )
        return {"Attributes": attributes} if attributes else {}

    def set_queue_attributes(self, **params: Any) -> dict[str, Any]:
        p = _Params("SetQueueAttributes", params, ("QueueUrl", "Attributes"))
        queue = self._queue(p)
        queue.set_attributes(p.string_map("Attributes", required=True), principal=self.principal)
        return {}

    def purge_queue(self, **params: Any) -> dict[str, Any]:
        p = _Params("PurgeQueue", params, ("QueueUrl",))
        self._queue(p).purge(principal=self.principal)
        return {}

    # -- messages -----------------------------------------------------------------

    def send_message(self, **params: Any) -> dict[str, Any]:
        p = _Params(
            "SendMessage",
            params,
            ("QueueUrl", *MESSAGE_MEMBERS),
        )
        queue = self._queue(p)
        body = p.get("MessageBody", str, required=True)
        result = queue.send(
            body,
            delay_seconds=p.get("DelaySeconds", int),
            message_attributes=p.string_map("MessageAttributes", values=Mapping),
            trace_header=system_trace(p.string_map("MessageSystemAttributes", values=Mapping)),
            group_id=p.get("MessageGroupId", str),
            deduplication_id=p.get("MessageDeduplicationId", str),
            principal=self.principal,
        )
        return _send_result(result)

    def send_message_batch(self, **params: Any) -> dict[str, Any]:
        p = _Params("SendMessageBatch", params, ("QueueUrl", "Entries"))
        queue = self._queue(p)
        entries = p.get("Entries", (list, tuple), required=True)
        result = queue.send_batch(_entries(entries), principal=self.principal)
        return _batch(result, send=True)

    def _receive(self, params: dict[str, Any]) -> tuple[Queue | FifoQueue, dict[str, Any]]:
        p = _Params("ReceiveMessage", params, RECEIVE_MEMBERS)
        queue = self._queue(p)
        # AttributeNames (deprecated) and MessageSystemAttributeNames: the union
        # (AWS-obs, section 2.1).
        names = [
            *(p.strings("AttributeNames") or []),
            *(p.strings("MessageSystemAttributeNames") or []),
        ]
        max_messages = p.get("MaxNumberOfMessages", int)
        return queue, {
            "max_messages": 1 if max_messages is None else max_messages,
            "visibility_timeout": p.get("VisibilityTimeout", int),
            "wait_time_seconds": p.get("WaitTimeSeconds", int),
            "attribute_names": names,
            "message_attribute_names": p.strings("MessageAttributeNames") or [],
            "receive_request_attempt_id": p.get("ReceiveRequestAttemptId", str),
            "principal": self.principal,
        }

    def receive_message(self, **params: Any) -> dict[str, Any]:
        messages = self.receive_messages(**params)
        return {"Messages": [_message(m) for m in messages]} if messages else {}

    async def receive_message_async(self, **params: Any) -> dict[str, Any]:
        """:meth:`receive_message` awaiting ``Queue.receive_async``: a long poll
        suspends the calling task, never the event loop. Cost as ``receive``."""
        messages = await self.receive_messages_async(**params)
        return {"Messages": [_message(m) for m in messages]} if messages else {}

    def receive_as(self, views: Views[T], **params: Any) -> list[T]:
        """:meth:`receive_messages` answering with what ``views`` makes of the
        delivered records, under the queue's lock (``_receive.Views``): a
        codec that writes its answer from the records (``_wire.received_views``)
        makes no Message views. Takes and checks what :meth:`receive_message`
        does. Cost as ``Queue.receive``."""
        queue, args = self._receive(params)
        return queue._receive_as(views, **args)

    async def receive_as_async(self, views: Views[T], **params: Any) -> list[T]:
        """:meth:`receive_as` awaiting the engine (a long poll suspends the
        calling task). Cost as ``Queue.receive``."""
        queue, args = self._receive(params)
        return await queue._receive_as_async(views, **args)

    def receive_messages(self, **params: Any) -> list[Message]:
        """ReceiveMessage's messages as the engine returns them, for a codec
        that writes its answer from them (``_wire.encode_messages``: the same
        bytes as the response dict encoded, without building it). Takes and
        checks what :meth:`receive_message` does. Cost as ``Queue.receive``."""
        queue, args = self._receive(params)
        return queue.receive(**args)

    async def receive_messages_async(self, **params: Any) -> list[Message]:
        """:meth:`receive_messages` awaiting ``Queue.receive_async`` (a long
        poll suspends the calling task). Cost as ``Queue.receive``."""
        queue, args = self._receive(params)
        return await queue.receive_async(**args)

    def delete_message(self, **params: Any) -> dict[str, Any]:
        p = _Params("DeleteMessage", params, ("QueueUrl", "ReceiptHandle"))
        queue = self._queue(p)
        queue.delete(p.get("ReceiptHandle", str, required=True), principal=self.principal)
        return {}

    def delete_message_batch(self, **params: Any) -> dict[str, Any]:
        p = _Params("DeleteMessageBatch", params, ("QueueUrl", "Entries"))
        queue = self._queue(p)
        entries = p.get("Entries", (list, tuple), required=True)
        result = queue.delete_batch(_entries(entries), principal=self.principal)
        return _batch(result)

    def change_message_visibility(self, **params: Any) -> dict[str, Any]:
        p = _Params(
            "ChangeMessageVisibility", params, ("QueueUrl", "ReceiptHandle", "VisibilityTimeout")
        )
        queue = self._queue(p)
        queue.change_visibility(
            p.get("ReceiptHandle", str, required=True),
            p.get("VisibilityTimeout", int, required=True),
            principal=self.principal,
        )
        return {}

    def change_message_visibility_batch(self, **params: Any) -> dict[str, Any]:
        p = _Params("ChangeMessageVisibilityBatch", params, ("QueueUrl", "Entries"))
        queue = self._queue(p)
        entries = p.get("Entries", (list, tuple), required=True)
        result = queue.change_visibility_batch(_entries(entries), principal=self.principal)
        return _batch(result)

    # -- permissions and tags -------------------------------------------------------

    def add_permission(self, **params: Any) -> dict[str, Any]:
        p = _Params("AddPermission", params, ("QueueUrl", "Label", "AWSAccountIds", "Actions"))
        self._queue(p).add_permission(
            p.get("Label", str, required=True),
            p.strings("AWSAccountIds", required=True) or [],
            p.strings("Actions", required=True) or [],
            principal=self.principal,
        )
        return {}

    def remove_permission(self, **params: Any) -> dict[str, Any]:
        p = _Params("RemovePermission", params, ("QueueUrl", "Label"))
        self._queue(p).remove_permission(
            p.get("Label", str, required=True), principal=self.principal
        )
        return {}

    def tag_queue(self, **params: Any) -> dict[str, Any]:
        p = _Params("TagQueue", params, ("QueueUrl", "Tags"))
        self._queue(p).tag(p.string_map("Tags", required=True) or {}, principal=self.principal)
        return {}

    def untag_queue(self, **params: Any) -> dict[str, Any]:
        p = _Params("UntagQueue", params, ("QueueUrl", "TagKeys"))
        self._queue(p).untag(p.strings("TagKeys", required=True) or [], principal=self.principal)
        return {}

    def list_queue_tags(self, **params: Any) -> dict[str, Any]:
        p = _Params("ListQueueTags", params, ("QueueUrl",))
        tags = self._queue(p).list_tags(principal=self.principal)
        return {"Tags": tags} if tags else {}

    # -- move tasks -----------------------------------------------------------------

    def start_message_move_task(self, **params: Any) -> dict[str, Any]:
        p = _Params(
            "StartMessageMoveTask",
            params,
            ("SourceArn", "DestinationArn", "MaxNumberOfMessagesPerSecond"),
        )
        handle = self.broker.start_message_move_task(
            p.get("SourceArn", str, required=True),
            destination_arn=p.get("DestinationArn", str),
            max_number_of_messages_per_second=p.get("MaxNumberOfMessagesPerSecond", int),
            principal=self.principal,
        )
        return {"TaskHandle": handle}

    def cancel_message_move_task(self, **params: Any) -> dict[str, Any]:
        p = _Params("CancelMessageMoveTask", params, ("TaskHandle",))
        moved = self.broker.cancel_message_move_task(
            p.get("TaskHandle", str, required=True), principal=self.principal
        )
        return {"ApproximateNumberOfMessagesMoved": moved}

    def list_message_move_tasks(self, **params: Any) -> dict[str, Any]:
        p = _Params("ListMessageMoveTasks", params, ("SourceArn", "MaxResults"))
        results = self.broker.list_message_move_tasks(
            p.get("SourceArn", str, required=True),
            max_results=p.get("MaxResults", int),
            principal=self.principal,
        )
        return {"Results": results}


def _check_values(name: str, mapping: Mapping[str, Any], kind: type) -> None:
    for key, item in mapping.items():
        if not isinstance(item, kind):
            wanted = "a structure" if kind is Mapping else kind_name(kind)
            raise InvalidParameterValue(
                f"Value {show(item)} for parameter {name}.{show(key)} is invalid. "
                f"Reason: must be {wanted}."
            )


def _entries(entries: Any) -> list[Mapping[str, Any]]:
    """Batch entries as the engine takes them: boto3-shaped mappings, checked
    there (``_batches._aws_entry``)."""
    if not all(isinstance(e, Mapping) for e in entries):
        raise InvalidParameterValue("Each batch entry must be a mapping.")
    return list(entries)
