"""Lambda event source mappings on sqsqueue's queues, run as moto runs them on
its own queues: after each send (see :mod:`sqsqueue.moto`)."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from sqsqueue.aws._client import BrokerAPI, Client
from sqsqueue.errors import SQSError

__all__ = ["MAPPINGS", "MessageView", "client", "mappings_of", "run_mappings"]

#: Event source mappings by broker and queue name (moto keeps them on its
#: queue objects; sqsqueue's queues are not moto's, so they live here).
MAPPINGS: weakref.WeakKeyDictionary[Any, dict[str, dict[str, Any]]] = weakref.WeakKeyDictionary()


def mappings_of(broker: Any, name: str) -> dict[str, Any]:
    """The mappings of queue ``name`` (function ARN -> moto's mapping). O(1)."""
    return MAPPINGS.setdefault(broker, {}).setdefault(name, {})


class MessageView:
    """A received or sent message as moto's code reads one."""

    def __init__(self, message: Mapping[str, Any]) -> None:
        attributes = message.get("Attributes", {})
        self.id: str = message["MessageId"]
        self.receipt_handle: str | None = message.get("ReceiptHandle")
        self.body: str = message.get("Body", "")
        self.group_id: str | None = attributes.get("MessageGroupId")
        self.deduplication_id: str | None = attributes.get("MessageDeduplicationId")
        self.sequence_number: str | None = message.get("SequenceNumber") or attributes.get(
            "SequenceNumber"
        )
        self.message_attributes: dict[str, Any] = dict(message.get("MessageAttributes", {}))
        self.body_md5: str | None = message.get("MD5OfMessageBody") or message.get("MD5OfBody")

    def __repr__(self) -> str:
        return f"MessageView({self.id!r})"


def run_mappings(broker: BrokerAPI, name: str) -> None:
    """Run the event source mappings on queue ``name`` as moto runs them after
    a send: receive up to the batch size (no wait), hand the batch to moto's
    Lambda, delete it if the function succeeded, else make it visible again.
    A queue with no mapping costs O(1)."""
    mappings = mappings_of(broker, name)
    if not mappings:
        return
    from moto.awslambda.utils import get_backend

    sqs = Client(broker)
    url = f"https://sqs.{broker.region}.amazonaws.com/{broker.account_id}/{name}"
    queue_arn = f"arn:aws:sqs:{broker.region}:{broker.account_id}:{name}"
    for function_arn, mapping in list(mappings.items()):
        if not getattr(mapping, "enabled", True):
            continue
        batch = max(1, min(int(getattr(mapping, "batch_size", 10) or 10), 10))
        try:
            answer = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=batch, MessageSystemAttributeNames=["All"]
            )
        except SQSError:  # the queue is gone: nothing to run
            return
        messages = [MessageView(m) for m in answer.get("Messages", [])]
        if not messages:
            continue
        lambdas = get_backend(broker.account_id, broker.region)
        succeeded = lambdas.send_sqs_batch(function_arn, messages, queue_arn)
        for m in messages:
            if succeeded:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m.receipt_handle)
            else:
                sqs.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=m.receipt_handle, VisibilityTimeout=0
                )


class _MappedClient(Client):
    """A client that runs a queue's event source mappings after each
    successful send to it."""

    def call(self, operation: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        # Client.call_async sends every operation but a long poll through
        # call, so this one place covers aiobotocore's clients too.
        result = super().call(operation, params)
        if operation in ("SendMessage", "SendMessageBatch"):
            self._after_send(params)
        return result

    def _after_send(self, params: Mapping[str, Any] | None) -> None:
        url = params.get("QueueUrl") if isinstance(params, Mapping) else None
        if isinstance(url, str):
            run_mappings(self.broker, url.rstrip("/").rsplit("/", 1)[-1])


def client(broker: BrokerAPI, *, endpoint_url: str | None = None) -> Client:
    """A client of ``broker`` (see :func:`sqsqueue.moto.client`). O(1)."""
    if MAPPINGS.get(broker):
        return _MappedClient(broker, endpoint_url=endpoint_url)
    return Client(broker, endpoint_url=endpoint_url)
