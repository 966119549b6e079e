"""SNS subscriptions and EventBridge targets on sqsqueue's queues: what AWS
does around these SQS deliveries that moto does not (see :mod:`sqsqueue.moto`)."""

from __future__ import annotations

import contextvars
import copy
import hashlib
import json
from types import ModuleType
from typing import Any

from sqsqueue.moto._providers import current

__all__ = [
    "in_sns_delivery",
    "patch_events",
    "patch_s3",
    "patch_sns",
    "topic_deduplication_id",
]

#: The topic and message of the SNS delivery running in this context.
_delivery: contextvars.ContextVar[tuple[Any, str] | None] = contextvars.ContextVar(
    "sqsqueue_sns_delivery", default=None
)


def in_sns_delivery() -> bool:
    """Whether an SNS subscription is delivering in this context. O(1)."""
    return _delivery.get() is not None


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


def _in_queue_account(subscription: Any) -> Any:
    """``subscription`` as moto delivers it to the account its queue ARN
    names: moto looks the queue up in the subscription's own account
    (``sqs_backends[self.account_id]``), AWS in the ARN's. O(1)."""
    parts = str(subscription.endpoint).split(":")
    if len(parts) != 6 or parts[4] == subscription.account_id:
        return subscription
    moved = copy.copy(subscription)
    moved.account_id = parts[4]
    return moved


def patch_sns(models: ModuleType) -> None:
    """Wrap moto's ``Subscription.publish`` for subscriptions to queues while a
    provider is active: the topic's message is known to the backend's
    ``send_message`` (for the deduplication id), and a delivery to a queue that
    does not exist goes to the subscription's dead-letter queue when it has
    one (AWS: a client-side error moves the message there). Without one,
    moto's error stands: moto fails the publish. A queue of another account
    gets the message in that account (moto looks in the topic's own)."""
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
            return original(_in_queue_account(self), message, message_id, *args, **kwargs)
        except QueueDoesNotExist:
            dead_letter = _dead_letter_arn(self)
            if dead_letter is None:
                raise
            redirected = copy.copy(self)
            redirected.endpoint = dead_letter
            redirected = _in_queue_account(redirected)
            redirected._filter_policy_matcher = None  # the message matched already
            return original(redirected, message, message_id, *args, **kwargs)
        finally:
            _delivery.reset(token)

    publish._sqsqueue = True  # type: ignore[attr-defined]
    subscription.publish = publish


# -- EventBridge --------------------------------------------------------------------


def _at(event: Any, path: str) -> Any:
    """The value at an EventBridge JSON path (``$``, ``$.detail.id``): the
    dotted form AWS's examples use. None when a key is missing."""
    value = event
    for key in path.removeprefix("$").split("."):
        if not key:
            continue
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _transform(template: str, paths: dict[str, str], event: Any) -> str:
    """An InputTransformer's template with each ``<name>`` replaced by its
    path's value: inside a JSON string literal as the raw text, elsewhere as
    JSON (a string value gets its quotes), as EventBridge writes them."""
    values = {name: _at(event, path) for name, path in paths.items()}
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(template):
        ch = template[i]
        if ch == "<":
            end = template.find(">", i)
            name = template[i + 1 : end] if end > 0 else None
            if name is not None and name in values:
                value = values[name]
                if in_string:
                    text = value if isinstance(value, str) else json.dumps(value)
                    out.append(json.dumps(text)[1:-1])
                else:
                    out.append(json.dumps(value))
                i = end + 1
                continue
        if in_string and ch == "\\" and not escaped:
            escaped = True
            out.append(ch)
            i += 1
            continue
        if ch == '"' and not escaped:
            in_string = not in_string
        escaped = False
        out.append(ch)
        i += 1
    return "".join(out)


def _event_as_sent(event: Any) -> dict[str, Any]:
    """The event as EventBridge sends it to a target (``time`` as ISO 8601, as
    moto's own SQS delivery writes it)."""
    from moto.core.utils import iso_8601_datetime_without_milliseconds, utcfromtimestamp

    sent = dict(event)
    if isinstance(sent.get("time"), int | float):
        sent["time"] = iso_8601_datetime_without_milliseconds(
            utcfromtimestamp(float(sent["time"]))  # type: ignore[arg-type]
        )
    return sent


def patch_events(models: ModuleType) -> None:
    """Wrap moto's ``Rule.send_to_targets`` while a provider is active: an SQS
    target with ``Input`` (delivered verbatim), ``InputPath`` (the value at the
    path, as JSON) or ``InputTransformer`` gets the body AWS sends, which moto
    does not compute (moto 5.0 to 5.2 send the whole event for the first two;
    5.0 for the third too). Every other target is moto's, as before."""
    from moto.sqs.models import sqs_backends

    rule_class = models.Rule
    original = rule_class.send_to_targets
    if getattr(original, "_sqsqueue", False):
        return

    def shaped(rule: Any, target: dict[str, Any]) -> bool:
        arn = str(target.get("Arn", "")).split(":")
        if len(arn) != 6 or arn[0] != "arn" or arn[2] != "sqs":
            return False
        # A queue of another account or region: moto would look in the rule's own.
        elsewhere = (arn[4], arn[3]) != (rule.account_id, rule.region_name)
        return elsewhere or any(k in target for k in ("Input", "InputPath", "InputTransformer"))

    def send_to_targets(self: Any, event: Any, *args: Any, **kwargs: Any) -> Any:
        transform = kwargs.get("transform_input", args[0] if args else True)
        ours = [t for t in self.targets if shaped(self, t)] if current() is not None else []
        if not ours or not transform or not self.event_pattern.matches_event(event):
            return original(self, event, *args, **kwargs)
        sent = _event_as_sent(event)
        for target in ours:
            if "Input" in target:
                body = target["Input"]
            elif "InputPath" in target:
                body = json.dumps(_at(sent, target["InputPath"]))
            elif "InputTransformer" in target:
                transformer = target["InputTransformer"]
                body = _transform(
                    transformer.get("InputTemplate", ""),
                    transformer.get("InputPathsMap", {}),
                    sent,
                )
            else:
                body = json.dumps(sent)  # the event itself, as EventBridge sends it
            group_id = target.get("SqsParameters", {}).get("MessageGroupId")
            _arn, _aws, _sqs, region, account, _name = target["Arn"].split(":")
            backend = sqs_backends[account][region]
            backend.send_message(
                queue_name=target["Arn"].split(":")[-1], message_body=body, group_id=group_id
            )
        kept = self.targets
        self.targets = [t for t in kept if not any(t is o for o in ours)]
        try:
            return original(self, event, *args, **kwargs)
        finally:
            self.targets = kept

    send_to_targets._sqsqueue = True  # type: ignore[attr-defined]
    rule_class.send_to_targets = send_to_targets


# -- S3 -----------------------------------------------------------------------------


def patch_s3(notifications: ModuleType) -> None:
    """Wrap moto's ``send_event`` while a provider is active: a bucket's
    notification to a queue of another account is delivered in that account
    (moto sends it to the bucket's own, where the queue is missing and the
    message is dropped). Every other notification is moto's, as before."""
    original = notifications.send_event
    if getattr(original, "_sqsqueue", False):
        return

    def send_event(account_id: str, event_name: Any, bucket: Any, key: Any) -> Any:
        config = getattr(bucket, "notification_configuration", None)
        if current() is None or config is None:
            return original(account_id, event_name, bucket, key)
        queues = list(config.queue)
        elsewhere = [n for n in queues if _arn_account(n.arn) not in (None, account_id)]
        if not elsewhere:
            return original(account_id, event_name, bucket, key)
        for notification in elsewhere:
            if notification.matches(event_name, key.name):
                body = notifications._get_s3_event(event_name, bucket, key, notification.id)
                _arn, _aws, _sqs, region, account, name = notification.arn.split(":")
                notifications._send_sqs_message(account, body, name, region)
        config.queue = [n for n in queues if not any(n is e for e in elsewhere)]
        try:
            return original(account_id, event_name, bucket, key)
        finally:
            config.queue = queues

    send_event._sqsqueue = True  # type: ignore[attr-defined]
    notifications.__dict__["send_event"] = send_event  # models call notifications.send_event


def _arn_account(arn: object) -> str | None:
    """The account of an SQS ARN; None for anything else. O(1)."""
    parts = str(arn).split(":")
    return parts[4] if len(parts) == 6 and parts[2] == "sqs" else None
