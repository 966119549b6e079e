"""A broker presented as moto's SQS backend (see :mod:`sqsqueue.moto`).

:func:`route` gives moto's ``sqs_backends`` object a subclass whose lookups
answer with a :class:`BrokerBackend` while a provider is active.
:class:`BrokerBackend` has the methods and attributes moto's other services
use of their SQS backend (moto 5.0 to 5.2, every use in moto's source:
``get_queue``, ``send_message``, ``get_queue_attributes``, ``create_queue``,
``delete_queue``, ``queues``, ``receive_message``, ``delete_message``,
``change_message_visibility``, ``iter_tagged_resources``, ...), each a call
of sqsqueue's client, so SQS's rules apply and errors are SQS's. Anything else
moto might ask of it raises an AttributeError naming it, never a silent
default.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from sqsqueue.aws._client import BrokerAPI, Client
from sqsqueue.errors import QueueDoesNotExist, SQSError
from sqsqueue.moto._delivery import in_sns_delivery, topic_deduplication_id
from sqsqueue.moto._lambda import MessageView, client, mappings_of
from sqsqueue.moto._providers import current

__all__ = ["BrokerBackend", "QueueView", "attributes_of", "moto_error", "route"]


def route(models: ModuleType) -> None:
    """Swap the class of ``models.sqs_backends`` (moto's one SQS BackendDict)
    for a subclass whose ``[account]`` asks the active provider first."""
    backends = models.sqs_backends
    base = type(backends)
    if getattr(base, "_sqsqueue_routed", False):
        return

    class RoutedBackends(base):  # type: ignore[misc, valid-type]
        _sqsqueue_routed = True

        def __getitem__(self, account_id: str) -> Any:
            provider = current()
            if provider is None:
                return super().__getitem__(account_id)
            # moto's tagging API walks only backend dicts that have an account:
            # register this one as moto itself would, then answer for sqsqueue.
            self._create_account_specific_backend(account_id)
            return _Account(provider, account_id)

        def __contains__(self, account_id: object) -> bool:
            if current() is not None and isinstance(account_id, str):
                return True
            found: bool = super().__contains__(account_id)
            return found

    RoutedBackends.__name__ = RoutedBackends.__qualname__ = f"{base.__name__}"
    backends.__class__ = RoutedBackends


class _Account:
    """``sqs_backends[account]`` while a provider is active: its regions."""

    def __init__(self, provider: Any, account_id: str) -> None:
        self.provider = provider
        self.account_id = account_id
        self.service_name = "sqs"

    def __getitem__(self, region: str) -> BrokerBackend:
        return BrokerBackend(self.provider, self.account_id, region)

    def __contains__(self, region: object) -> bool:
        return isinstance(region, str)

    @property
    def regions(self) -> list[str]:
        return []

    def keys(self) -> list[str]:
        return []

    def values(self) -> list[Any]:
        return []

    def items(self) -> list[Any]:
        return []

    def reset(self) -> None:
        """moto resets its own state; the provider owns sqsqueue's."""


def moto_error(err: SQSError) -> Exception:
    """The exception moto's SQS backend raises for ``err``: its own
    QueueDoesNotExist, else its SQS exception with SQS's query error code
    (moto 5.1 on: ``SQSException``; 5.0: core's ``RESTError``)."""
    from moto.core import exceptions as core
    from moto.sqs import exceptions

    sqs_errors: Any = exceptions
    if isinstance(err, QueueDoesNotExist):
        missing: Exception = sqs_errors.QueueDoesNotExist()
        return missing
    generic = getattr(sqs_errors, "SQSException", None)
    if generic is not None:
        found: Exception = generic(err.query_code, err.message)
        return found
    rest_error: Any = vars(core)["RESTError"]
    exc: Exception = rest_error(err.query_code, err.message)
    exc.code = err.http_status  # type: ignore[attr-defined]
    return exc


def _call(client: Client, operation: str, **params: Any) -> dict[str, Any]:
    try:
        return client.call(operation, params)
    except SQSError as err:
        raise moto_error(err) from None


#: The attributes CreateQueue takes, which are also the properties of
#: CloudFormation's AWS::SQS::Queue (besides QueueName and Tags); moto adds
#: others of its own (the resource type, the region), which are not SQS's.
_QUEUE_ATTRIBUTES = frozenset(
    {
        "ContentBasedDeduplication",
        "DeduplicationScope",
        "DelaySeconds",
        "FifoQueue",
        "FifoThroughputLimit",
        "KmsDataKeyReusePeriodSeconds",
        "KmsMasterKeyId",
        "MaximumMessageSize",
        "MessageRetentionPeriod",
        "Policy",
        "ReceiveMessageWaitTimeSeconds",
        "RedriveAllowPolicy",
        "RedrivePolicy",
        "SqsManagedSseEnabled",
        "VisibilityTimeout",
    }
)


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def _text(value: Any) -> str:
    """A moto-side attribute value as SQS's string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value)
    return str(value)


def attributes_of(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """moto's message attributes (``DataType``/``StringValue`` from moto 5.1,
    ``data_type``/``string_value`` before; binary values base64 text or bytes)
    as SQS's MessageAttributes."""
    out: dict[str, Any] = {}
    for name, value in (raw or {}).items():
        get = {k.replace("_", "").lower(): v for k, v in value.items()}
        item: dict[str, Any] = {"DataType": get.get("datatype")}
        if get.get("stringvalue") is not None:
            item["StringValue"] = str(get["stringvalue"])
        if get.get("binaryvalue") is not None:
            blob = get["binaryvalue"]
            item["BinaryValue"] = base64.b64decode(blob) if isinstance(blob, str) else blob
        out[name] = item
    return out


class QueueView:
    """A sqsqueue queue as moto's code reads one: name, ARN, URL, FIFO-ness,
    attributes and tags (read from the broker at each access), CloudFormation's
    attributes, and the Lambda event source mappings registered on it."""

    _backend: BrokerBackend
    name: str

    def __init__(self, backend: BrokerBackend, name: str) -> None:
        object.__setattr__(self, "_backend", backend)
        object.__setattr__(self, "name", name)

    @property
    def _client(self) -> Client:
        return self._backend.client

    @property
    def queue_url(self) -> str:
        return self._backend.url_of(self.name)

    @property
    def physical_resource_id(self) -> str:
        return self.queue_url

    @property
    def region(self) -> str:
        return self._backend.region_name

    @property
    def account_id(self) -> str:
        return self._backend.account_id

    @property
    def attributes(self) -> dict[str, str]:
        answer = _call(
            self._client, "GetQueueAttributes", QueueUrl=self.queue_url, AttributeNames=["All"]
        )
        attributes: dict[str, str] = answer.get("Attributes", {})
        return attributes

    @property
    def queue_arn(self) -> str:
        return self.attributes["QueueArn"]

    @property
    def fifo_queue(self) -> bool:
        return self.name.endswith(".fifo")

    @property
    def content_based_deduplication(self) -> bool:
        return self.attributes.get("ContentBasedDeduplication") == "true"

    @property
    def tags(self) -> dict[str, str]:
        answer = _call(self._client, "ListQueueTags", QueueUrl=self.queue_url)
        tags: dict[str, str] = answer.get("Tags", {})
        return tags

    @property
    def lambda_event_source_mappings(self) -> dict[str, Any]:
        return mappings_of(self._backend.broker, self.name)

    def url(self, request_url: Any = None) -> str:
        return self.queue_url

    @staticmethod
    def has_cfn_attr(attr: str) -> bool:
        return attr in ("Arn", "QueueName")

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SQS::Queue"

    def is_created(self) -> bool:
        """CloudFormation's question: a queue exists once CreateQueue returned."""
        return True

    def get_cfn_attribute(self, attribute_name: str) -> str:
        if attribute_name == "Arn":
            return self.queue_arn
        if attribute_name == "QueueName":
            return self.name
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        raise UnformattedGetAttTemplateException()

    def __getattr__(self, name: str) -> Any:
        """Attributes moto reads by their snake-case names
        (``visibility_timeout``, ``receive_message_wait_time_seconds``, ...),
        as the integers or strings SQS stores."""
        if name.startswith("_"):
            raise AttributeError(name)
        value = self.attributes.get(_camel(name))
        if value is None:
            raise AttributeError(
                f"sqsqueue's queue {self.name!r} has no attribute {name!r} for moto"
            )
        return int(value) if value.lstrip("-").isdigit() else value

    def __setattr__(self, name: str, value: Any) -> None:
        """A queue attribute moto's CloudFormation update sets
        (``visibility_timeout = 60``) becomes SetQueueAttributes; anything else
        (moto's bookkeeping on a resource) stays on this object."""
        if _camel(name) not in _QUEUE_ATTRIBUTES:
            object.__setattr__(self, name, value)
            return
        _call(
            self._client,
            "SetQueueAttributes",
            QueueUrl=self.queue_url,
            Attributes={_camel(name): _text(value)},
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, QueueView)
            and other._backend.broker is self._backend.broker
            and other.name == self.name
        )

    def __hash__(self) -> int:
        return hash((id(self._backend.broker), self.name))

    def __repr__(self) -> str:
        return f"QueueView({self.name!r} in sqsqueue)"


class BrokerBackend:
    """The SQS backend of one account and region, as moto's services use it,
    answered by the provider's broker (none: every queue is missing)."""

    SERVICE_NAMESPACE = "sqs"

    def __init__(self, provider: Any, account_id: str, region_name: str) -> None:
        self.account_id = account_id
        self.region_name = region_name
        self.broker: BrokerAPI | None = provider.broker_for(account_id, region_name)

    @property
    def client(self) -> Client:
        if self.broker is None:
            from moto.sqs.exceptions import QueueDoesNotExist as MotoQueueDoesNotExist

            raise MotoQueueDoesNotExist()
        return client(self.broker)

    @property
    def partition(self) -> str:
        if self.region_name.startswith("cn-"):
            return "aws-cn"
        if self.region_name.startswith("us-gov"):
            return "aws-us-gov"
        return "aws"

    def url_of(self, name: str) -> str:
        return f"https://sqs.{self.region_name}.amazonaws.com/{self.account_id}/{name}"

    @staticmethod
    def _name(queue_name: str) -> str:
        """The queue's name (moto passes names; some callers ARNs or URLs)."""
        return queue_name.rsplit("/", 1)[-1].rsplit(":", 1)[-1]

    def _url(self, queue_name: str) -> str:
        """The URL of a queue named (moto passes names; some callers ARNs or URLs)."""
        return self.url_of(self._name(queue_name))

    # -- queues -----------------------------------------------------------------

    @property
    def queues(self) -> dict[str, QueueView]:
        if self.broker is None:
            return {}
        answer = _call(self.client, "ListQueues")
        names = [url.rsplit("/", 1)[-1] for url in answer.get("QueueUrls", [])]
        return {name: QueueView(self, name) for name in names}

    def get_queue(self, queue_name: str) -> QueueView:
        _call(self.client, "GetQueueUrl", QueueName=queue_name.rsplit(":", 1)[-1])
        return QueueView(self, queue_name.rsplit(":", 1)[-1])

    def get_queue_url(self, queue_name: str) -> QueueView:
        return self.get_queue(queue_name)

    def list_queues(self, queue_name_prefix: str | None = None) -> list[QueueView]:
        params = {"QueueNamePrefix": queue_name_prefix} if queue_name_prefix else {}
        answer = _call(self.client, "ListQueues", **params)
        return [QueueView(self, u.rsplit("/", 1)[-1]) for u in answer.get("QueueUrls", [])]

    def create_queue(
        self, name: str, tags: Mapping[str, str] | None = None, **kwargs: Any
    ) -> QueueView:
        """CloudFormation's ``AWS::SQS::Queue``: its properties as SQS attributes."""
        attributes = {
            key: _text(value)
            for key, value in kwargs.items()
            if key in _QUEUE_ATTRIBUTES and value is not None
        }
        if attributes.get("FifoQueue") == "false":
            # A template's FifoQueue: false makes a standard queue (CloudFormation
            # leaves it out of its CreateQueue, which refuses it).
            del attributes["FifoQueue"]
        params: dict[str, Any] = {"QueueName": name, "Attributes": attributes}
        if tags:
            params["tags"] = dict(tags)
        _call(self.client, "CreateQueue", **params)
        return QueueView(self, name)

    def delete_queue(self, queue_name: str) -> None:
        _call(self.client, "DeleteQueue", QueueUrl=self._url(queue_name))

    def get_queue_attributes(
        self, queue_name: str, attribute_names: list[str] | None = None
    ) -> dict[str, str]:
        if not attribute_names:
            self.get_queue(queue_name)
            return {}
        answer = _call(
            self.client,
            "GetQueueAttributes",
            QueueUrl=self._url(queue_name),
            AttributeNames=list(attribute_names),
        )
        attributes: dict[str, str] = answer.get("Attributes", {})
        return attributes

    def set_queue_attributes(self, queue_name: str, attributes: Mapping[str, Any]) -> QueueView:
        _call(
            self.client,
            "SetQueueAttributes",
            QueueUrl=self._url(queue_name),
            Attributes={k: _text(v) for k, v in attributes.items()},
        )
        return QueueView(self, queue_name)

    def purge_queue(self, queue_name: str) -> None:
        _call(self.client, "PurgeQueue", QueueUrl=self._url(queue_name))

    def tag_queue(self, queue_name: str, tags: Mapping[str, str]) -> None:
        _call(self.client, "TagQueue", QueueUrl=self._url(queue_name), Tags=dict(tags))

    def untag_queue(self, queue_name: str, tag_keys: list[str]) -> None:
        _call(self.client, "UntagQueue", QueueUrl=self._url(queue_name), TagKeys=list(tag_keys))

    def list_queue_tags(self, queue_name: str) -> QueueView:
        return self.get_queue(queue_name)

    # -- messages ---------------------------------------------------------------

    def send_message(
        self,
        queue_name: str,
        message_body: str,
        message_attributes: Mapping[str, Any] | None = None,
        delay_seconds: int | None = None,
        deduplication_id: str | None = None,
        group_id: str | None = None,
        system_attributes: Mapping[str, Any] | None = None,
        **_: Any,
    ) -> MessageView:
        """What SNS, S3 and EventBridge deliver: SendMessage with SQS's checks
        (``validate_group_id`` and the like are moto's own and ignored).

        An SNS FIFO topic delivering to a standard queue passes neither its
        group nor its deduplication id: "Message group ID is not passed to
        Amazon SQS standard queues" (SNS Developer Guide,
        fifo-message-grouping), and the deduplication id, a FIFO queue's
        parameter, is not either (moto's aws_verified
        ``test_publish_from_sns_fifo_to_standard_sqs``: the message arrives).
        moto passes both on; SQS refuses a deduplication id on a standard
        queue, which would fail the publish."""
        if in_sns_delivery() and not self._name(queue_name).endswith(".fifo"):
            group_id = deduplication_id = None
        params: dict[str, Any] = {"QueueUrl": self._url(queue_name), "MessageBody": message_body}
        if message_attributes:
            params["MessageAttributes"] = attributes_of(message_attributes)
        if system_attributes:
            params["MessageSystemAttributes"] = attributes_of(system_attributes)
        if delay_seconds is not None:
            params["DelaySeconds"] = int(delay_seconds)
        if group_id is not None:
            params["MessageGroupId"] = group_id
        if deduplication_id is None and group_id is not None:
            deduplication_id = topic_deduplication_id()
        if deduplication_id is not None:
            params["MessageDeduplicationId"] = deduplication_id
        sent = _call(self.client, "SendMessage", **params)
        return MessageView({"Body": message_body, **sent})

    def receive_message(
        self,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int = 0,
        visibility_timeout: int | None = None,
        message_attribute_names: list[str] | None = None,
        **_: Any,
    ) -> list[MessageView]:
        """What a Lambda event source mapping polls (never waits: moto's does not
        either when it runs a mapping right after a send)."""
        params: dict[str, Any] = {
            "QueueUrl": self._url(queue_name),
            "MaxNumberOfMessages": max(1, min(int(count), 10)),
            "MessageSystemAttributeNames": ["All"],
            "MessageAttributeNames": list(message_attribute_names or ["All"]),
        }
        if visibility_timeout is not None:
            params["VisibilityTimeout"] = int(visibility_timeout)
        answer = _call(self.client, "ReceiveMessage", **params)
        return [MessageView(m) for m in answer.get("Messages", [])]

    def delete_message(self, queue_name: str, receipt_handle: str) -> None:
        _call(
            self.client,
            "DeleteMessage",
            QueueUrl=self._url(queue_name),
            ReceiptHandle=receipt_handle,
        )

    def change_message_visibility(
        self, queue_name: str, receipt_handle: str, visibility_timeout: int
    ) -> None:
        _call(
            self.client,
            "ChangeMessageVisibility",
            QueueUrl=self._url(queue_name),
            ReceiptHandle=receipt_handle,
            VisibilityTimeout=int(visibility_timeout),
        )

    # -- the resource groups tagging API -----------------------------------------

    def iter_tagged_resources(self) -> Iterator[Any]:
        from moto.core.resource_tagging import TaggedResource

        for queue in self.queues.values():
            yield TaggedResource(arn=queue.queue_arn, tags=queue.tags, resource_type="sqs:queue")

    def owns_arn(self, arn: str) -> bool:
        return arn.startswith(f"arn:{self.partition}:sqs:")

    def tag_resource(self, arn: str, tags: Mapping[str, str]) -> None:
        self.tag_queue(arn, tags)

    def untag_resource(self, arn: str, tag_keys: list[str]) -> None:
        self.untag_queue(arn, tag_keys)

    def reset(self) -> None:
        """moto resets its own state; the provider owns sqsqueue's."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"moto asked sqsqueue's SQS backend for {name!r}, which the bridge does not "
            "provide (sqsqueue.moto): please report the moto call that needs it"
        )
