"""Queue attributes: names, defaults, ranges and AWS's validation (section 5).

One table describes every attribute; :func:`parse` validates a whole request
before anything is applied, so a SetQueueAttributes that fails changes nothing.
Values are kept as Python values (``int``, ``bool``, ``str``, parsed JSON) and
rendered as AWS's strings by :func:`render`.

Pythonic keyword names (``visibility_timeout``) and AWS names
(``VisibilityTimeout``) are both accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import attrs

from sqsqueue import _policy as policy_rules
from sqsqueue._limits import (
    DELAY_SECONDS_MAX,
    KMS_REUSE_MAX,
    KMS_REUSE_MIN,
    MAX_RECEIVE_COUNT_MAX,
    MAX_RECEIVE_COUNT_MIN,
    MESSAGE_SIZE_MAX,
    MESSAGE_SIZE_MIN,
    REDRIVE_ALLOW_SOURCES_MAX,
    RETENTION_DEFAULT,
    RETENTION_MAX,
    RETENTION_MIN,
    VISIBILITY_TIMEOUT_DEFAULT,
    VISIBILITY_TIMEOUT_MAX,
    WAIT_TIME_MAX,
)
from sqsqueue._validate import show
from sqsqueue.errors import InvalidAttributeName, InvalidAttributeValue

__all__ = ["ATTRIBUTES", "READ_ONLY", "parse", "render"]

_INT = re.compile(r"-?[0-9]+")
_ARN = re.compile(
    r"arn:aws[a-zA-Z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,75}(\.fifo)?|"
    r"arn:aws[a-zA-Z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,80}"
)


def _bad(name: str, reason: str | None = None) -> NoReturn:
    # "Invalid value for the parameter <Name>." (section 2.1, likely AWS text).
    text = f"Invalid value for the parameter {name}."
    if reason:
        text = f"Invalid value for the parameter {name}. Reason: {reason}"
    raise InvalidAttributeValue(text)


def _int_parser(low: int, high: int) -> Callable[[str, object], object]:
    def parse(name: str, value: object) -> int:
        if isinstance(value, bool):
            _bad(name)
        if isinstance(value, str):
            if not _INT.fullmatch(value.strip()):
                _bad(name)
            value = int(value)
        if not isinstance(value, int) or not low <= value <= high:
            _bad(name)
        return value

    return parse


def _bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    _bad(name)


def _enum(*choices: str) -> Callable[[str, object], object]:
    def parse(name: str, value: object) -> str:
        if value not in choices:
            _bad(name)
        assert isinstance(value, str)
        return value

    return parse


def _string(name: str, value: object) -> str:
    if not isinstance(value, str):
        _bad(name)
    return value


def _json_object(name: str, value: object) -> dict[str, Any] | None:
    """A JSON policy document given as text or as a dict; ``""`` removes it."""
    if value == "" or value is None:
        return None
    if isinstance(value, Mapping):
        # Through JSON and back: what is stored is plain JSON and no longer shares
        # anything with the caller's dict; what JSON cannot encode (too deep,
        # tuple keys, objects, ints past 4,300 digits) is invalid JSON.
        try:
            doc: Any = json.loads(json.dumps(dict(value)))
        except (TypeError, ValueError, RecursionError):
            _bad(name, "Invalid JSON.")
    elif isinstance(value, str):
        try:
            doc = json.loads(value)
        except (ValueError, RecursionError):
            _bad(name, "Invalid JSON.")
    else:
        _bad(name)
    if not isinstance(doc, dict):
        _bad(name, "The policy must be a JSON object.")
    return doc


def _redrive_policy(name: str, value: object) -> dict[str, Any] | None:
    """RedrivePolicy: ``deadLetterTargetArn`` and ``maxReceiveCount`` 1..1000 (section 5).

    Existence and type of the target are checked by the queue's owner.
    Message texts follow LocalStack's provider (UNCONFIRMED).
    """
    doc = _json_object(name, value)
    if doc is None:
        return None
    text = value if isinstance(value, str) else json.dumps(doc)
    unknown = set(doc) - {"deadLetterTargetArn", "maxReceiveCount"}
    if unknown:
        _bad(
            name,
            f"Value {text} for parameter RedrivePolicy is invalid. Reason: "
            f"Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount].",
        )
    arn = doc.get("deadLetterTargetArn")
    count = doc.get("maxReceiveCount")
    if arn is None or count is None:
        raise InvalidAttributeValue(
            f"Value {text} for parameter RedrivePolicy is invalid. Reason: Redrive policy "
            "does not contain mandatory attribute: "
            f"{'deadLetterTargetArn' if arn is None else 'maxReceiveCount'}."
        )
    if not isinstance(arn, str) or not _ARN.fullmatch(arn):
        raise InvalidAttributeValue(
            f"Value {text} for parameter RedrivePolicy is invalid. Reason: Invalid value "
            "for deadLetterTargetArn."
        )
    if isinstance(count, str) and _INT.fullmatch(count):
        count = int(count)
    if (
        isinstance(count, bool)
        or not isinstance(count, int)
        or not MAX_RECEIVE_COUNT_MIN <= count <= MAX_RECEIVE_COUNT_MAX
    ):
        raise InvalidAttributeValue(
            f"Value {text} for parameter RedrivePolicy is invalid. Reason: Invalid value "
            f"for maxReceiveCount: {count}, valid values are from 1 to 1000 both inclusive."
        )
    return {"deadLetterTargetArn": arn, "maxReceiveCount": count}


def _redrive_allow_policy(name: str, value: object) -> dict[str, Any] | None:
    """RedriveAllowPolicy: allowAll | denyAll | byQueue with <= 10 ARNs (section 5)."""
    doc = _json_object(name, value)
    if doc is None:
        return None
    text = value if isinstance(value, str) else json.dumps(doc)
    unknown = set(doc) - {"redrivePermission", "sourceQueueArns"}
    permission = doc.get("redrivePermission")
    sources = doc.get("sourceQueueArns")
    reason = None
    if unknown:
        reason = "Only following attributes are supported: [redrivePermission, sourceQueueArns]."
    elif permission not in ("allowAll", "denyAll", "byQueue"):
        reason = "Invalid value for redrivePermission."
    elif permission == "byQueue":
        if (
            not isinstance(sources, list)
            or not sources
            or not all(isinstance(a, str) and _ARN.fullmatch(a) for a in sources)
        ):
            reason = (
                "sourceQueueArns must be a non-empty list of queue ARNs when "
                "redrivePermission is byQueue."
            )
        elif len(sources) > REDRIVE_ALLOW_SOURCES_MAX:
            reason = "Maximum number of sourceQueueArns is 10."
    elif sources is not None:
        reason = "sourceQueueArns can only be specified when redrivePermission is byQueue."
    if reason:
        raise InvalidAttributeValue(
            f"Value {text} for parameter RedriveAllowPolicy is invalid. Reason: {reason}"
        )
    out: dict[str, Any] = {"redrivePermission": permission}
    if sources is not None:
        out["sourceQueueArns"] = list(sources)
    return out


def _policy(name: str, value: object) -> dict[str, Any] | None:
    doc = _json_object(name, value)
    if doc is not None:
        policy_rules.validate(doc)
    return doc


@attrs.frozen
class Attribute:
    """One queue attribute."""

    name: str
    py_name: str
    parse: Callable[[str, object], object]
    default: object
    fifo_only: bool = False
    #: AWS takes an integer (a string under the AWS name; an int as a keyword).
    integer: bool = False


def _integer(name: str, py_name: str, low: int, high: int, default: int | None) -> Attribute:
    return Attribute(name, py_name, _int_parser(low, high), default, integer=True)


ATTRIBUTES: dict[str, Attribute] = {
    a.name: a
    for a in (
        _integer("DelaySeconds", "delay_seconds", 0, DELAY_SECONDS_MAX, 0),
        _integer(
            "MaximumMessageSize",
            "maximum_message_size",
            MESSAGE_SIZE_MIN,
            MESSAGE_SIZE_MAX,
            MESSAGE_SIZE_MAX,
        ),
        _integer(
            "MessageRetentionPeriod",
            "message_retention_period",
            RETENTION_MIN,
            RETENTION_MAX,
            RETENTION_DEFAULT,
        ),
        _integer(
            "ReceiveMessageWaitTimeSeconds",
            "receive_message_wait_time_seconds",
            0,
            WAIT_TIME_MAX,
            0,
        ),
        _integer(
            "VisibilityTimeout",
            "visibility_timeout",
            0,
            VISIBILITY_TIMEOUT_MAX,
            VISIBILITY_TIMEOUT_DEFAULT,
        ),
        Attribute("Policy", "policy", _policy, None),
        Attribute("RedrivePolicy", "redrive_policy", _redrive_policy, None),
        Attribute("RedriveAllowPolicy", "redrive_allow_policy", _redrive_allow_policy, None),
        Attribute("KmsMasterKeyId", "kms_master_key_id", _string, None),
        _integer(
            "KmsDataKeyReusePeriodSeconds",
            "kms_data_key_reuse_period_seconds",
            KMS_REUSE_MIN,
            KMS_REUSE_MAX,
            None,
        ),
        Attribute("SqsManagedSseEnabled", "sqs_managed_sse_enabled", _bool, True),
        # Fixed at creation: parse() refuses FifoQueue=false on an existing queue.
        Attribute("FifoQueue", "fifo_queue", _bool, True, fifo_only=True),
        Attribute(
            "ContentBasedDeduplication",
            "content_based_deduplication",
            _bool,
            False,
            fifo_only=True,
        ),
        Attribute(
            "DeduplicationScope",
            "deduplication_scope",
            _enum("messageGroup", "queue"),
            "queue",
            fifo_only=True,
        ),
        Attribute(
            "FifoThroughputLimit",
            "fifo_throughput_limit",
            _enum("perQueue", "perMessageGroupId"),
            "perQueue",
            fifo_only=True,
        ),
    )
}

_BY_PY_NAME = {a.py_name: a for a in ATTRIBUTES.values()}

#: Attributes computed by the queue; GetQueueAttributes only.
READ_ONLY = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
)

#: The order GetQueueAttributes(All) lists attributes in.
ALL_NAMES = (*READ_ONLY, *ATTRIBUTES)


def canonical_name(name: object) -> str | None:
    """The AWS name of an attribute given by AWS or Pythonic name."""
    if not isinstance(name, str):
        return None
    if name in ATTRIBUTES:
        return name
    spec = _BY_PY_NAME.get(name)
    return spec.name if spec is not None else None


def defaults(*, fifo: bool) -> dict[str, object]:
    """The attribute values of a new queue (section 2.1, AWS-obs defaults)."""
    return {a.name: a.default for a in ATTRIBUTES.values() if fifo or not a.fifo_only}


def parse(
    raw: Mapping[str, object], *, fifo: bool, creating: bool, current: Mapping[str, object]
) -> dict[str, object]:
    """Validate a CreateQueue or SetQueueAttributes request (section 2.1, 5).

    Returns the new values by AWS name. Raises before anything is applied.
    """
    out: dict[str, object] = {}
    for raw_name, value in raw.items():
        name = canonical_name(raw_name)
        if name is None:
            raise InvalidAttributeName(f"Unknown Attribute {raw_name}.")
        spec = ATTRIBUTES[name]
        if spec.fifo_only and not fifo:
            if name == "DeduplicationScope":
                raise InvalidAttributeName(
                    "You can specify the DeduplicationScope only when FifoQueue is set to true."
                )
            if name == "FifoThroughputLimit":
                raise InvalidAttributeName(
                    "You can specify the FifoThroughputLimit only when FifoQueue is set to true."
                )
            raise InvalidAttributeName(f"Unknown Attribute {name}.")
        if raw_name == spec.py_name and spec.integer and isinstance(value, str):
            # A keyword is Python: an int, as every integer parameter of the API
            # (AWS's integer members are JSON numbers, and botocore refuses a str:
            # docs/aws-behaviour.md §1.2). The string "5" belongs to the AWS
            # name's map, which speaks the wire's strings.
            raise InvalidAttributeValue(
                f"Invalid value for the parameter {name}. Reason: the keyword {raw_name} "
                f"takes an int, not {show(value)} (attributes={{{name!r}: ...}} takes strings)."
            )
        parsed = spec.parse(name, value)
        if name == "FifoQueue" and parsed is not True:
            if creating:
                _bad(name)
            raise InvalidAttributeValue(
                "Invalid value for the parameter FifoQueue. Reason: Modifying queue type "
                "is not supported."
            )
        out[name] = parsed
    # Only one type of server-side encryption (AWS-obs, section 2.1).
    if out.get("KmsMasterKeyId") and out.get("SqsManagedSseEnabled") is True:
        raise InvalidAttributeName(
            "You can use one type of server-side encryption (SSE) at one time. You can "
            "either enable KMS SSE or SQS SSE."
        )
    if fifo:
        merged = {**current, **out}
        # perMessageGroupId requires DeduplicationScope=messageGroup [BM]; the
        # message text is UNCONFIRMED.
        if (
            merged.get("FifoThroughputLimit") == "perMessageGroupId"
            and merged.get("DeduplicationScope") != "messageGroup"
        ):
            raise InvalidAttributeValue(
                "Invalid value for the parameter FifoThroughputLimit. Reason: "
                "perMessageGroupId is allowed only when DeduplicationScope is messageGroup."
            )
    return out


def apply_sse(values: dict[str, object], update: Mapping[str, object]) -> None:
    """Switching one SSE type on switches the other off."""
    if update.get("KmsMasterKeyId"):
        values["SqsManagedSseEnabled"] = False
    elif update.get("SqsManagedSseEnabled") is True:
        values["KmsMasterKeyId"] = None
        values["KmsDataKeyReusePeriodSeconds"] = None
    elif "KmsMasterKeyId" in update and not update["KmsMasterKeyId"]:
        # KmsMasterKeyId "" switches KMS off, and with it the data key reuse
        # period, even one set in the same call: GetQueueAttributes then lists
        # neither, as AWS was observed to do (docs/aws-behaviour.md §2.1,
        # SetQueueAttributes).
        values["KmsMasterKeyId"] = None
        values["KmsDataKeyReusePeriodSeconds"] = None


def render(name: str, value: object) -> str:
    """AWS's string for an attribute value (section 5)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
