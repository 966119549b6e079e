"""SNS subscriptions to sqsqueue's queues: what AWS's SNS does around its SQS
call that moto's does not (see :mod:`sqsqueue.moto`)."""

from __future__ import annotations

import contextvars
import copy
import hashlib
import json
from types import ModuleType
from typing import Any

from sqsqueue.moto._providers import current

__all__ = ["patch_sns", "topic_deduplication_id"]

#: The topic and message of the SNS delivery running in this context.
_delivery: contextvars.ContextVar[tuple[Any, str] | None] = contextvars.ContextVar(
    "sqsqueue_sns_delivery", default=None
)


def topic_deduplication_id() -> str | None:
    """During an SNS delivery from a FIFO topic with content-based
    deduplication, the id SNS computes and passes to the FIFO queue: the
    SHA-256 of the message, in hex. None otherwise (moto passes none). O(n)."""
    delivery = _delivery.get()
    if delivery is None:
        return None
    topic, message = delivery
    if not getattr(topic, "fifo_topic", False):
        return None
    if not getattr(topic, "content_based_deduplication", False):
        return None
    return hashlib.sha256(message.encode("utf-8")).hexdigest()


def _dead_letter_arn(subscription: Any) -> str | None:
    policy = subscription.attributes.get("RedrivePolicy")
    if not policy:
        return None
    try:
        arn = json.loads(policy).get("deadLetterTargetArn")
    except (ValueError, AttributeError):
        return None
    return arn if isinstance(arn, str) else None


def patch_sns(models: ModuleType) -> None:
    """Wrap moto's ``Subscription.publish`` for subscriptions to queues while a
    provider is active: the topic's message is known to the backend's
    ``send_message`` (for the deduplication id), and a delivery to a queue that
    does not exist goes to the subscription's dead-letter queue when it has
    one (AWS: a client-side error moves the message there). Without one,
    moto's error stands: moto fails the publish."""
    from moto.sqs.exceptions import QueueDoesNotExist

    subscription = models.Subscription
    original = subscription.publish
    if getattr(original, "_sqsqueue", False):
        return

    def publish(self: Any, message: str, message_id: str, *args: Any, **kwargs: Any) -> Any:
        if self.protocol != "sqs" or current() is None:
            return original(self, message, message_id, *args, **kwargs)
        token = _delivery.set((self.topic, message))
        try:
            return original(self, message, message_id, *args, **kwargs)
        except QueueDoesNotExist:
            dead_letter = _dead_letter_arn(self)
            if dead_letter is None:
                raise
            redirected = copy.copy(self)
            redirected.endpoint = dead_letter
            redirected._filter_policy_matcher = None  # the message matched already
            return original(redirected, message, message_id, *args, **kwargs)
        finally:
            _delivery.reset(token)

    publish._sqsqueue = True  # type: ignore[attr-defined]
    subscription.publish = publish
