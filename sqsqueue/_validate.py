"""Validation of every value a caller passes, with AWS's rule and AWS's words.

Each function either returns the normalised value or raises the
:mod:`sqsqueue.errors` exception AWS would answer with. Messages marked
UNCONFIRMED in ``docs/aws-behaviour.md`` are our most plausible guess; the comment
beside each one says so.
"""

from __future__ import annotations

import os
import re
import reprlib
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

from sqsqueue._limits import (
    ATTRIBUTE_NAME_MAX,
    ATTRIBUTE_TYPE_MAX,
    DELAY_SECONDS_MAX,
    MAX_MESSAGES_MAX,
    MESSAGE_ATTRIBUTES_MAX,
    NUMBER_EXP_MAX,
    NUMBER_EXP_MIN,
    NUMBER_PRECISION,
    VISIBILITY_TIMEOUT_MAX,
    WAIT_TIME_MAX,
)
from sqsqueue._message import MessageAttributeValue, StoredAttribute, sort_attributes
from sqsqueue.errors import (
    InvalidMessageContents,
    InvalidParameterValue,
    MissingParameter,
)

# Allowed characters in a body and in String attribute values (section 2.1):
# #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
# Lone surrogates (U+D800..U+DFFF) fall outside, so they are rejected before
# anything tries to encode them.
_INVALID_CHARS = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
_FIFO_QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,75}\.fifo")
_BATCH_IDS = re.compile(r"[A-Za-z0-9_-]{1,80}(?:\n[A-Za-z0-9_-]{1,80})*")
# MessageGroupId, MessageDeduplicationId, ReceiveRequestAttemptId (section 4).
_FIFO_ID = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}")
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
#: Punctuation allowed in a message attribute name besides letters and digits.
_NAME_PUNCTUATION = frozenset("_.-")
_DATA_TYPE = re.compile(r"(String|Number|Binary)(\..+)?", re.DOTALL)


_SHOW = reprlib.Repr()
_SHOW.maxlevel = 3
_SHOW.maxstring = _SHOW.maxother = 80
_SHOW.maxlong = 40
_SHOW.maxlist = _SHOW.maxtuple = _SHOW.maxdict = _SHOW.maxset = _SHOW.maxfrozenset = 6


def show(value: object) -> str:
    """``repr(value)`` for an error message, abbreviated and never raising.

    A caller's value may be deeply nested (``repr`` would overflow the stack),
    huge (an int of more than 4,300 digits has no ``repr``; a 2 MiB string is no
    message) or hostile (its ``__repr__`` raises): the message must still be
    built, so the error raised is the SQSError the caller is owed. Small values
    read exactly as ``repr`` gives them.
    """
    try:
        return _SHOW.repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


#: How an error message names the type a parameter must have: the API's words
#: (string, integer, list, map), never Python's class names.
_KIND_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    bool: "a boolean",
    bytes: "binary data",
    list: "a list",
    tuple: "a list",
    Mapping: "a map",
    dict: "a map",
}


def kind_name(kind: type | tuple[type, ...]) -> str:
    """``kind`` (a type or a tuple of types) as an error message words it:
    ``str`` is "a string", ``(list, tuple)`` "a list", ``Mapping`` "a map"."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = dict.fromkeys(_KIND_NAMES.get(k, f"a {k.__name__}") for k in kinds)
    return " or ".join(names)


def echo(value: object) -> str:
    """A caller's value as AWS echoes it in a message: a string as it is, anything
    else as :func:`show` abbreviates it."""
    return value if isinstance(value, str) else show(value)


def _invalid(name: str, value: object, reason: str) -> NoReturn:
    raise InvalidParameterValue(f"Value {value} for parameter {name} is invalid. Reason: {reason}")


def has_invalid_chars(text: str) -> bool:
    return _INVALID_CHARS.search(text) is not None


def integer(name: str, value: object, low: int, high: int, reason: str | None = None) -> int:
    """An integer parameter in ``low..high``.

    ``reason`` defaults to AWS's wording for WaitTimeSeconds (section 2.1):
    ``Must be >= 0 and <= 20, if provided.``

    Only an ``int`` is accepted: a ``str`` such as ``"5"`` is refused like any
    other value outside the range, with the parameter's AWS reason. AWS takes
    these parameters as integers (JSON numbers; botocore refuses a str before
    sending, section 1.2), and a protocol that carries them as text
    (the query protocol) is the codec's business to convert, not the engine's.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _invalid(name, show(value), reason or f"Must be >= {low} and <= {high}, if provided.")
    return value


def max_messages(value: object) -> int:
    """MaxNumberOfMessages 1..10 (AWS-obs message, section 2.1)."""
    return integer(
        "MaxNumberOfMessages",
        value,
        1,
        MAX_MESSAGES_MAX,
        "Must be between 1 and 10, if provided.",
    )


def wait_time(value: object) -> int:
    """WaitTimeSeconds 0..20 (AWS-obs message, section 2.1)."""
    return integer("WaitTimeSeconds", value, 0, WAIT_TIME_MAX)


def visibility_timeout(value: object) -> int:
    """VisibilityTimeout 0..43,200 (range [BM]; message text UNCONFIRMED, modelled
    on the observed WaitTimeSeconds text)."""
    return integer("VisibilityTimeout", value, 0, VISIBILITY_TIMEOUT_MAX)


def delay_seconds(value: object) -> int:
    """DelaySeconds 0..900 (range [BM]; message text UNCONFIRMED)."""
    return integer(
        "DelaySeconds",
        value,
        0,
        DELAY_SECONDS_MAX,
        "DelaySeconds must be >= 0 and <= 900.",
    )


def body(value: object) -> tuple[str, int]:
    """A message body: non-empty, allowed characters only. Returns (body, bytes)."""
    if not isinstance(value, str):
        if value is None:
            raise MissingParameter("The request must contain the parameter MessageBody.")
        _invalid("MessageBody", show(value), "Must be a string.")
    if not value:
        raise MissingParameter("The request must contain the parameter MessageBody.")
    if value.isascii():
        # The send hot path: an ASCII body's characters are checked by a
        # bytes.translate in C (5x faster than str.isprintable, 6x than the
        # regular expression), and its UTF-8 size is its length.
        if not ascii_allowed(value):
            raise InvalidMessageContents()
        return value, len(value)
    # A printable character is always an allowed one (controls, surrogates and
    # U+FFFE/U+FFFF are not printable), and str.isprintable runs in C.
    if not value.isprintable() and _INVALID_CHARS.search(value) is not None:
        raise InvalidMessageContents()
    return value, len(value.encode("utf-8"))


#: The ASCII characters a message body may hold: tab, LF, CR, U+0020-U+007F.
ASCII_ALLOWED = bytes([0x9, 0xA, 0xD, *range(0x20, 0x80)])
#: Each byte to itself where ASCII_ALLOWED holds it, else to 0xFF, which no
#: ASCII text holds: an ASCII text's bytes are left unchanged by it exactly
#: when each of its characters is allowed. ``bytes.translate`` with a table and
#: nothing to delete is a plain loop in C, where deleting ASCII_ALLOWED first
#: builds a deletion table (it took half as long again).
ASCII_KEEP = bytes(c if c in ASCII_ALLOWED else 0xFF for c in range(256))


def ascii_allowed(text: str) -> bool:
    """Whether each character of an ASCII ``text`` may be in a message body,
    found by one ``bytes.translate`` in C. O(len(text))."""
    encoded = text.encode("ascii")
    return encoded.translate(ASCII_KEEP) == encoded


def too_big(max_size: int, *, batch: bool = False) -> InvalidParameterValue:
    """The oversized-message error: single send and batch entry differ (section 2.1)."""
    if batch:
        return InvalidParameterValue(
            "One or more parameters cannot be validated. Reason: Message must be "
            f"shorter than {max_size} bytes."
        )
    return InvalidParameterValue(
        f"One or more parameters are invalid. Reason: Message must be shorter than "
        f"{max_size} bytes."
    )


def _attribute_name(name: object) -> str:
    # Section 4 and 3.2 (texts emulated from LocalStack; UNCONFIRMED wording).
    if not isinstance(name, str) or not name:
        raise InvalidParameterValue("Message (user) attribute name must not be empty.")
    if len(name.encode("utf-8", "surrogatepass")) > ATTRIBUTE_NAME_MAX:
        raise InvalidParameterValue("Message (user) attribute names must be shorter than 256 Bytes")
    if not _attribute_name_chars(name):
        raise InvalidParameterValue(
            "Message (user) attributes name can only contain upper and lower score "
            "characters, digits, periods, hyphens and underscores. "
        )
    lowered = name.lower()
    if (
        lowered.startswith(("aws.", "amazon."))
        or name.startswith(".")
        or name.endswith(".")
        or ".." in name
    ):
        raise InvalidParameterValue(
            "You can't use message attribute names beginning with 'AWS.' or 'Amazon.'. "
            "These strings are reserved for internal use. Additionally, they cannot "
            "start or end with '.'."
        )
    return name


def _attribute_name_chars(name: str) -> bool:
    """Letters and digits of any script, ``_``, ``-`` and ``.``.

    The evidence (``docs/aws-behaviour.md`` §4, attribute name; LocalStack's
    AWS-validated ``test_send_message_with_invalid_string_attributes``): real
    AWS accepted ``attr.1øßä`` and refused ``!``, ``"``, ``§``, ``(`` and
    ``?``. So non-ASCII letters pass but non-ASCII symbols do not; the
    narrowest rule that fits is Unicode letters (categories L*) and decimal
    digits (Nd), which is also Java's ``Character.isLetterOrDigit``. Combining
    marks, other numerics (``²``, ``½``), spaces, symbols and surrogates stay
    refused.
    """
    if name.isascii():
        return _ATTRIBUTE_NAME.fullmatch(name) is not None
    return all(c.isalpha() or c.isdecimal() or c in _NAME_PUNCTUATION for c in name)


def _number(name: str, text: str) -> None:
    # Number: up to 38 digits of precision, 10^-128..10^+126 (section 4).
    try:
        # Python's Decimal also reads "1_000" (PEP 515); no other parser does.
        number = None if "_" in text else Decimal(text.strip())
    except InvalidOperation:
        number = None
    if number is None or not number.is_finite():
        raise InvalidParameterValue(
            f"Can't cast the value of message (user) attribute '{name}' to a number."
        )
    if number != 0:
        # Not normalize(): it rounds to the context's 28 digits, hiding a 39th.
        _sign, digit_tuple, exponent = number.as_tuple()
        assert isinstance(exponent, int)
        digits = "".join(map(str, digit_tuple)).rstrip("0")
        exponent += len(digit_tuple) - len(digits)
        magnitude = len(digits) + exponent - 1
        if (
            len(digits) > NUMBER_PRECISION
            or magnitude > NUMBER_EXP_MAX
            or magnitude < NUMBER_EXP_MIN
        ):
            raise InvalidParameterValue(
                f"Value {text} for parameter MessageAttributes.{name} is invalid. "
                "Reason: Number must be within 38 digits of precision and between "
                "10^-128 and 10^+126."
            )


def _coerce_attribute(name: str, raw: object) -> MessageAttributeValue:
    """Accept a MessageAttributeValue, a boto3-shaped dict, or a plain Python value."""
    if isinstance(raw, MessageAttributeValue):
        fields: tuple[object, object, object] = (
            raw.data_type,
            raw.string_value,
            raw.binary_value,
        )
        if (
            isinstance(fields[0], str)
            and (fields[1] is None or isinstance(fields[1], str))
            and (fields[2] is None or isinstance(fields[2], bytes))
        ):
            return raw
        # Built with wrong types (attrs does not check): the checks below say which.
        raw = dict(zip(("DataType", "StringValue", "BinaryValue"), fields, strict=True))
    if isinstance(raw, Mapping):
        unknown = set(raw) - {
            "DataType",
            "StringValue",
            "BinaryValue",
            "StringListValues",
            "BinaryListValues",
        }
        if unknown:
            raise InvalidParameterValue(
                f"Message (user) attribute '{name}' has unknown fields: "
                f"{show(sorted(unknown, key=show))}."
            )
        if raw.get("StringListValues") or raw.get("BinaryListValues"):
            raise InvalidParameterValue(
                "Message attribute list values in SendMessage operation are not supported."
            )
        data_type = raw.get("DataType")
        if data_type is None:
            raise InvalidParameterValue(
                f"The message attribute '{name}' must contain non-empty message attribute type."
            )
        binary = raw.get("BinaryValue")
        if isinstance(binary, bytearray | memoryview):
            binary = bytes(binary)
        string = raw.get("StringValue")
        if not isinstance(data_type, str):
            _invalid(f"MessageAttributes.{name}.DataType", show(data_type), "Must be a string.")
        if string is not None and not isinstance(string, str):
            _invalid(f"MessageAttributes.{name}.StringValue", show(string), "Must be a string.")
        if binary is not None and not isinstance(binary, bytes):
            _invalid(f"MessageAttributes.{name}.BinaryValue", show(binary), "Must be bytes.")
        return MessageAttributeValue(data_type, string, binary)
    if isinstance(raw, str):
        return MessageAttributeValue("String", string_value=raw)
    if isinstance(raw, bytes | bytearray | memoryview):
        return MessageAttributeValue("Binary", binary_value=bytes(raw))
    if isinstance(raw, bool):
        _invalid(
            f"MessageAttributes.{name}", show(raw), "Booleans are not a message attribute type."
        )
    if isinstance(raw, int | Decimal):
        try:
            text = str(raw)
        except ValueError:  # an int of more than 4,300 digits: far beyond 38 digits
            _invalid(f"MessageAttributes.{name}", show(raw), "Number is out of range.")
        return MessageAttributeValue("Number", string_value=text)
    if isinstance(raw, float):
        return MessageAttributeValue("Number", string_value=repr(raw))
    _invalid(f"MessageAttributes.{name}", show(raw), "Unsupported attribute value type.")


def message_attributes(
    raw: object,
) -> tuple[tuple[StoredAttribute, ...] | None, int]:
    """Validate user message attributes (sections 4, 6, 3.2).

    Returns the attributes in MD5 order (None when there are none) and their
    size in bytes (name + type + value, which counts toward the message size).
    """
    if raw is None:
        return None, 0
    if not isinstance(raw, Mapping):
        _invalid("MessageAttributes", show(raw), "Must be a mapping of name to value.")
    if not raw:
        return None, 0
    if len(raw) > MESSAGE_ATTRIBUTES_MAX:
        raise InvalidParameterValue(
            f"Number of message attributes [{len(raw)}] exceeds the allowed maximum [10]."
        )
    stored: list[StoredAttribute] = []
    size = 0
    for name_obj, raw_value in raw.items():
        name = _attribute_name(name_obj)
        value = _coerce_attribute(name, raw_value)
        data_type = value.data_type
        match = _DATA_TYPE.fullmatch(data_type) if data_type else None
        if match is None:
            if not data_type:
                raise InvalidParameterValue(
                    f"The message attribute '{name}' must contain non-empty message attribute type."
                )
            raise InvalidParameterValue(
                f"The type of message (user) attribute '{name}' is invalid. You must use "
                "only the following supported type prefixes: Binary, Number, String."
            )
        if len(data_type.encode("utf-8", "surrogatepass")) > ATTRIBUTE_TYPE_MAX:
            raise InvalidParameterValue(
                f"Message (user) attribute '{name}' type must be shorter than 256 bytes."
            )
        if has_invalid_chars(data_type):
            raise InvalidParameterValue(
                f"Message (user) attribute '{name}' type contains invalid characters."
            )
        base = match.group(1)
        value_part: str | bytes
        if base == "Binary":
            if value.string_value is not None or not value.binary_value:
                raise InvalidParameterValue(
                    f"Message (user) attribute '{name}' must contain a non-empty value "
                    "of type 'Binary'."
                )
            value_part = value.binary_value
            value_len = len(value_part)
        else:
            if value.binary_value is not None or not value.string_value:
                raise InvalidParameterValue(
                    f"Message (user) attribute '{name}' must contain a non-empty value "
                    f"of type '{base}'."
                )
            value_part = value.string_value
            if has_invalid_chars(value_part):
                raise InvalidParameterValue(
                    f"Message (user) attribute '{name}' contains invalid characters. "
                    "Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | "
                    "#xE000 to #xFFFD | #x10000 to #x10FFFF"
                )
            if base == "Number":
                _number(name, value_part)
            value_len = len(value_part.encode("utf-8"))
        size += len(name.encode("utf-8")) + len(data_type.encode("utf-8")) + value_len
        stored.append((name, data_type, value_part))
    return sort_attributes(stored), size


def trace_header(value: object) -> str | None:
    """The AWSTraceHeader system attribute: a non-empty String (section 2.1)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        if value.get("DataType") != "String":
            raise InvalidParameterValue(
                "Value for parameter MessageSystemAttributes.AWSTraceHeader.DataType is "
                "invalid. Reason: must be String."
            )
        value = value.get("StringValue")
    if not isinstance(value, str) or not value or has_invalid_chars(value):
        raise InvalidParameterValue(
            "Value for parameter MessageSystemAttributes.AWSTraceHeader is invalid. "
            "Reason: must be a non-empty X-Ray trace header string."
        )
    return value


def fifo_id(name: str, value: object) -> str:
    """MessageGroupId / MessageDeduplicationId / ReceiveRequestAttemptId (section 2.1)."""
    if not isinstance(value, str) or not _FIFO_ID.fullmatch(value):
        _invalid(
            name,
            value if isinstance(value, str) else show(value),
            f"{name} can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        )
    return value


def batch_entry_ids(values: list[Any]) -> bool:
    """True when every value is a valid batch entry Id (section 4).

    One regular expression over the Ids joined by newlines, which no valid Id
    contains (an Id that does is caught by the count): a fifth of the cost of
    checking each Id on its own, on the path of every batch.
    """
    try:
        joined = "\n".join(values)
    except TypeError:
        return False  # an Id that is not a string
    return joined.count("\n") == len(values) - 1 and _BATCH_IDS.fullmatch(joined) is not None


def queue_name(value: object, *, fifo: bool) -> str:
    """A queue name: ``[A-Za-z0-9_-]{1,80}``, FIFO names ending ``.fifo`` (section 2.1).

    Message text is LocalStack's (UNCONFIRMED); the code is AWS-observed.
    """
    if isinstance(value, str):
        pattern = _FIFO_QUEUE_NAME if fifo else _QUEUE_NAME
        if pattern.fullmatch(value):
            return value
        if fifo and _QUEUE_NAME.fullmatch(value):
            raise InvalidParameterValue(
                "The name of a FIFO queue can only include alphanumeric characters, "
                "hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in "
                "length."
            )
    raise InvalidParameterValue(
        "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
    )


# -- constructor arguments (Queue, FifoQueue and Broker share them) ---------------


def region(value: object) -> str:
    """An AWS region name: the ARN and URL are built from it."""
    if not isinstance(value, str) or not re.fullmatch(r"[a-z0-9-]{1,32}", value):
        raise InvalidParameterValue(f"Value {show(value)} for parameter region is invalid.")
    return value


def account_id(value: object) -> str:
    """A 12-digit AWS account id."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9]{12}", value):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter account_id is invalid. Reason: an "
            "AWS account id is 12 digits."
        )
    return value


#: The account of a broker or queue created without one: moto's default, which
#: tests written for moto hard-code in their ARNs and queue URLs.
DEFAULT_ACCOUNT_ID = "123456789012"


def default_account_id() -> str:
    """The account to use when none is given: ``MOTO_ACCOUNT_ID`` when set (moto's
    own setting, read at each call as moto reads it), else 123456789012. O(1)."""
    value = os.environ.get("MOTO_ACCOUNT_ID")
    if not value:
        return DEFAULT_ACCOUNT_ID
    if not re.fullmatch(r"[0-9]{12}", value):
        raise InvalidParameterValue(
            f"The environment variable MOTO_ACCOUNT_ID is {show(value)}: an AWS account "
            "id is 12 digits."
        )
    return value


def instance(name: str, value: object, kind: type | tuple[type, ...], what: str) -> None:
    """Refuse a ``value`` (not None) of the wrong type: ``what`` names the type."""
    if value is not None and not isinstance(value, kind):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter {name} is invalid. Reason: must be {what}."
        )
