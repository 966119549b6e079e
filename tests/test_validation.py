"""Validation of every caller-supplied value, with AWS's error codes and texts.

Sections 2.1, 3, 4, 5 and 6 of docs/aws-behaviour.md. Every failing call must leave
the queue unchanged: the tests compare a snapshot before and after.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from sqsqueue import ManualClock, MessageAttributeValue, Queue, _attributes, errors
from sqsqueue._message import md5_of_attributes
from sqsqueue._validate import has_invalid_chars
from tests._helpers import refused

START = 1_700_000_000.0

INVALID_CONTENTS = (
    "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | "
    "#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
)
RESERVED_NAME = (
    "You can't use message attribute names beginning with 'AWS.' or 'Amazon.'. "
    "These strings are reserved for internal use. Additionally, they cannot start "
    "or end with '.'."
)


@pytest.fixture
def q() -> Queue:
    queue = Queue("valid", clock=ManualClock(start=START))
    queue.send("already here")  # so "nothing changed" is not trivially true
    return queue


# -- bodies ---------------------------------------------------------------------


class TestBody:
    """MessageBody: non-empty, allowed characters only (section 2.1)."""

    def test_empty_body_is_missing_parameter(self, q: Queue) -> None:
        """Section 2.1: an empty body -> MissingParameter with AWS's text."""
        err = refused(
            q,
            errors.MissingParameter,
            lambda: q.send(""),
            "The request must contain the parameter MessageBody.",
        )
        assert err.code == "MissingParameter"
        assert err.wire_type == "MissingRequiredParameterException"

    def test_none_body_is_missing_parameter(self, q: Queue) -> None:
        """Section 2.1: a missing body -> MissingParameter."""
        refused(q, errors.MissingParameter, lambda: q.send(None))  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "body",
        [
            "\x00",
            "a\x08b",
            "\x13",
            "\x1f",
            "\uffff",
            "\ufffe",
            "\ud800",
            "ok\udfffok",
            "Invalid-\x00-\x08-\x13-\uffff",
        ],
    )
    def test_invalid_characters(self, q: Queue, body: str) -> None:
        """Section 2.1: characters outside #x9|#xA|#xD|#x20-#xD7FF|#xE000-#xFFFD|#x10000-
        #x10FFFF (lone surrogates included) -> InvalidMessageContents."""
        err = refused(q, errors.InvalidMessageContents, lambda: q.send(body), INVALID_CONTENTS)
        assert err.code == "InvalidMessageContents"

    @pytest.mark.parametrize(
        "body",
        [
            "\t",
            "\n",
            "\r",
            " ",
            "tab\there",
            "\ud7ff",
            "\ue000",
            "\ufffd",
            "\U00010000",
            "\U0010ffff",
            "emoji \U0001f600",
            "x" * 1000,
        ],
    )
    def test_allowed_characters(self, q: Queue, body: str) -> None:
        """Section 2.1: tab, LF, CR, the BMP outside surrogates and astral characters are allowed
        and come back unchanged."""
        q.purge()
        q.send(body)
        [m] = q.receive()
        assert m.body == body
        q._check()

    @pytest.mark.parametrize("body", [5, b"bytes", 1.5, ["x"], True])
    def test_non_str_body(self, q: Queue, body: object) -> None:
        """Section 2.1: a body that is not a string is refused with an SQSError, never a
        bare TypeError."""
        refused(q, errors.InvalidParameterValue, lambda: q.send(body))  # type: ignore[arg-type]

    def test_has_invalid_chars_helper(self) -> None:
        """Section 2.1: the character rule at its boundaries."""
        for bad in ("\x00", "\x08", "\x0b", "\x0c", "\x1f", "\ud800", "\udfff", "\ufffe", "\uffff"):
            assert has_invalid_chars(bad), repr(bad)
        for good in (
            "\t",
            "\n",
            "\r",
            "\x20",
            "\ud7ff",
            "\ue000",
            "\ufffd",
            "\U00010000",
            "\U0010ffff",
        ):
            assert not has_invalid_chars(good), repr(good)


class TestMessageSize:
    """Body plus attribute name, type and value bytes <= MaximumMessageSize (section 2.1)."""

    def test_exact_maximum_accepted(self, clock: ManualClock) -> None:
        """Section 2.1: a message of exactly MaximumMessageSize bytes is accepted."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        q.send("x" * 1024)
        assert len(q) == 1
        q._check()

    def test_one_byte_over_rejected(self, clock: ManualClock) -> None:
        """Section 2.1: one byte more -> InvalidParameterValue with AWS's text."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x" * 1025),
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
        )

    def test_default_maximum_is_1_mib(self, clock: ManualClock) -> None:
        """Section 4: the default MaximumMessageSize is 1,048,576 bytes."""
        q = Queue("big", clock=clock)
        q.send("x" * 1_048_576)
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x" * 1_048_577),
            "One or more parameters are invalid. Reason: Message must be shorter than "
            "1048576 bytes.",
        )

    def test_size_counts_utf8_bytes(self, clock: ManualClock) -> None:
        """Section 2.1: the size is in UTF-8 bytes, not characters."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        q.send("\u00e9" * 512)  # 1024 bytes
        refused(q, errors.InvalidParameterValue, lambda: q.send("\u00e9" * 512 + "x"))
        refused(q, errors.InvalidParameterValue, lambda: q.send("\U0001f600" * 257))

    def test_attributes_count_toward_size(self, clock: ManualClock) -> None:
        """Section 2.1/6: attribute name + DataType + value bytes count toward the size."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        # 1000 + len("abc") 3 + len("String") 6 + 15 = 1024
        q.send("x" * 1000, message_attributes={"abc": "y" * 15})
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x" * 1000, message_attributes={"abc": "y" * 16}),
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
        )
        # Binary: 1000 + 3 + len("Binary") 6 + 15 = 1024
        q.send(
            "x" * 1000,
            message_attributes={"abc": {"DataType": "Binary", "BinaryValue": b"\0" * 15}},
        )
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x" * 1000,
                message_attributes={"abc": {"DataType": "Binary", "BinaryValue": b"\0" * 16}},
            ),
        )
        # A custom type suffix counts too: "String.x" is 8 bytes.
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x" * 1000,
                message_attributes={"abc": {"DataType": "String.x", "StringValue": "y" * 14}},
            ),
        )
        assert len(q) == 2

    def test_trace_header_does_not_count(self, clock: ManualClock) -> None:
        """Section 2.1: MessageSystemAttributes do not count toward the message size."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        q.send("x" * 1024, trace_header="Root=" + "1" * 500)
        assert len(q) == 1

    def test_per_queue_maximum_follows_set_attributes(self, clock: ManualClock) -> None:
        """Section 2.1: the limit is the queue's current MaximumMessageSize."""
        q = Queue("small", clock=clock)
        q.send("x" * 2000)
        q.set_attributes(maximum_message_size=1500)
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x" * 2000),
            "One or more parameters are invalid. Reason: Message must be shorter than 1500 bytes.",
        )
        q.send("x" * 1500)
        assert len(q) == 2


# -- message attributes -------------------------------------------------------


def _string(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


class TestMessageAttributeNames:
    """Attribute names: < 256 bytes of letters, digits, _ - . (non-ASCII letters
    included, issue 12 §6), no reserved prefixes (section 4)."""

    def test_at_most_ten(self, q: Queue) -> None:
        """Section 2.1/4: at most 10 message attributes; 11 -> InvalidParameterValue."""
        q.send("x", message_attributes={f"a{i}": "v" for i in range(10)})
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={f"a{i}": "v" for i in range(11)}),
        )

    @pytest.mark.parametrize(
        "name",
        ["AWS.x", "aws.x", "Aws.Trace", "Amazon.x", "amazon.x", "AMAZON.thing", ".x", "x.", "a..b"],
    )
    def test_reserved_and_dotted_names(self, q: Queue, name: str) -> None:
        """Section 4: names beginning AWS./Amazon. (any case), starting or ending with '.',
        or containing '..' -> InvalidParameterValue."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={name: "v"}),
            RESERVED_NAME,
        )

    @pytest.mark.parametrize(
        "name",
        [
            "a b",
            "a!",
            'a"b',
            "Invalid-\u00a7-attr",  # "§": refused by AWS (issue 12 §6 evidence)
            "a(b)",
            "a?",
            "a/b",
            "a\u00b2",  # superscript two: a numeric, not a decimal digit
            "a\u0308",  # a combining mark, not a letter
            "a\u2603",  # a symbol (snowman)
            "a\u3000b",  # an ideographic space
            "a\ud800",  # a lone surrogate
        ],
    )
    def test_bad_characters(self, q: Queue, name: str) -> None:
        """Section 3.2/4: names with characters other than letters, digits, _ - . ->
        InvalidParameterValue. AWS refused ! " § ( ? (LocalStack's AWS-validated
        test_send_message_with_invalid_string_attributes)."""
        refused(
            q, errors.InvalidParameterValue, lambda: q.send("x", message_attributes={name: "v"})
        )

    def test_length(self, q: Queue) -> None:
        """Section 4: a 256-character name is accepted, 257 is refused."""
        q.send("x", message_attributes={"n" * 256: "v"})
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"n" * 257: "v"}),
        )

    @pytest.mark.parametrize("name", ["", 5, None])
    def test_empty_or_non_str_name(self, q: Queue, name: object) -> None:
        """Section 6: a name must not be empty; a non-str name is an SQSError."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={name: "v"}),  # type: ignore[dict-item]
        )

    @pytest.mark.parametrize(
        "name", ["attr.1\u00f8\u00df\u00e4", "\u00e9", "\u540d\u524d", "x\u0663"]
    )
    def test_non_ascii_letters_and_digits(self, q: Queue, name: str) -> None:
        """Issue 12 §6: AWS accepted the attribute name attr.1øßä, so letters and
        decimal digits of any script are valid (Latin, CJK, Arabic-Indic digits);
        the name and its value round-trip, and the digest counts the UTF-8 name."""
        q.purge()
        sent = q.send("x", message_attributes={name: "v"})
        [m] = q.receive()
        assert {k: v.value for k, v in m.message_attributes.items()} == {name: "v"}
        assert m.md5_of_message_attributes == sent.md5_of_message_attributes
        assert sent.md5_of_message_attributes == md5_of_attributes(((name, "String", "v"),))
        q._check()

    def test_non_ascii_name_length_counts_bytes(self, q: Queue) -> None:
        """Section 3.2: names must be shorter than 256 bytes; a 2-byte letter counts twice."""
        q.send("x", message_attributes={"\u00e9" * 128: "v"})
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"\u00e9" * 128 + "a": "v"}),
        )

    @pytest.mark.parametrize("name", ["aws.\u00e9", "\u00e9.", ".\u00e9", "\u00e9..\u00e9"])
    def test_non_ascii_reserved_and_dotted(self, q: Queue, name: str) -> None:
        """Section 4: the prefix and dot rules apply to non-ASCII names too."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={name: "v"}),
            RESERVED_NAME,
        )

    def test_valid_names(self, q: Queue) -> None:
        """Section 4: dots inside, hyphens, underscores and digits are fine; case matters."""
        names = {"a.b": "1", "A-b_9": "2", "x.y.z": "3", "Name": "4", "name": "5", "AWSx": "6"}
        q.purge()
        q.send("x", message_attributes=names)
        [m] = q.receive()
        assert {k: v.value for k, v in m.message_attributes.items()} == names
        q._check()


class TestMessageAttributeValues:
    """Data types, custom suffixes, empty values, Number range (sections 4, 6)."""

    @pytest.mark.parametrize(
        ("attr", "expected"),
        [
            (_string("hello"), MessageAttributeValue("String", "hello")),
            (
                {"DataType": "Number", "StringValue": "12.5"},
                MessageAttributeValue("Number", "12.5"),
            ),
            (
                {"DataType": "Number.int", "StringValue": "7"},
                MessageAttributeValue("Number.int", "7"),
            ),
            (
                {"DataType": "Number.java.lang.Long", "StringValue": "7"},
                MessageAttributeValue("Number.java.lang.Long", "7"),
            ),
            (
                {"DataType": "String.json", "StringValue": "{}"},
                MessageAttributeValue("String.json", "{}"),
            ),
            (
                {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
                MessageAttributeValue("Binary", binary_value=b"\x00\xff"),
            ),
            (
                {"DataType": "Binary.gif", "BinaryValue": b"GIF89a"},
                MessageAttributeValue("Binary.gif", binary_value=b"GIF89a"),
            ),
            (MessageAttributeValue("String", "v"), MessageAttributeValue("String", "v")),
            ("plain", MessageAttributeValue("String", "plain")),
            (b"raw", MessageAttributeValue("Binary", binary_value=b"raw")),
            (42, MessageAttributeValue("Number", "42")),
            (Decimal("1.50"), MessageAttributeValue("Number", "1.50")),
            ("\U0001f600\t", MessageAttributeValue("String", "\U0001f600\t")),
        ],
    )
    def test_accepted_and_returned_verbatim(
        self, q: Queue, attr: object, expected: MessageAttributeValue
    ) -> None:
        """Section 6: valid types, including custom suffixes, are stored and returned verbatim."""
        q.purge()
        q.send("x", message_attributes={"a": attr})
        [m] = q.receive()
        assert m.message_attributes == {"a": expected}
        q._check()

    @pytest.mark.parametrize(
        "data_type",
        ["Foo", "string", "STRING", "Strings", "Number_int", "String.", "Binaryx", "", "Int"],
    )
    def test_bad_data_type(self, q: Queue, data_type: str) -> None:
        """Section 4: DataType must be String, Number or Binary, optionally '.suffix'."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x", message_attributes={"a": {"DataType": data_type, "StringValue": "1"}}
            ),
        )

    def test_data_type_length(self, q: Queue) -> None:
        """Section 4: DataType is at most 256 characters."""
        ok = "String." + "t" * 249  # 256
        q.send("x", message_attributes={"a": {"DataType": ok, "StringValue": "v"}})
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x", message_attributes={"a": {"DataType": ok + "t", "StringValue": "v"}}
            ),
        )

    def test_missing_data_type(self, q: Queue) -> None:
        """Section 6: a DataType is required."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"a": {"StringValue": "v"}}),
        )

    def test_empty_string_value(self, q: Queue) -> None:
        """Section 6: an empty StringValue -> AWS's 'must contain a non-empty value' text."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"a": _string("")}),
            "Message (user) attribute 'a' must contain a non-empty value of type 'String'.",
        )

    @pytest.mark.parametrize(
        "attr",
        [
            {"DataType": "String"},
            {"DataType": "Number"},
            {"DataType": "Number", "StringValue": ""},
            {"DataType": "Binary"},
            {"DataType": "Binary", "BinaryValue": b""},
            {"DataType": "Binary", "StringValue": "x"},
            {"DataType": "String", "BinaryValue": b"x"},
        ],
    )
    def test_empty_or_mismatched_values(self, q: Queue, attr: dict[str, object]) -> None:
        """Section 6: name, type and value must not be empty; Binary takes BinaryValue and
        String/Number take StringValue."""
        refused(
            q, errors.InvalidParameterValue, lambda: q.send("x", message_attributes={"a": attr})
        )

    @pytest.mark.parametrize(
        "value", ["abc", "1.2.3", "", " ", "NaN", "Infinity", "1e", "0x10", "1_000", "1__0"]
    )
    def test_number_must_cast(self, q: Queue, value: str) -> None:
        """Section 4: a Number value that is not a number -> InvalidParameterValue."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x", message_attributes={"n": {"DataType": "Number", "StringValue": value}}
            ),
        )

    @pytest.mark.parametrize(
        "value",
        [
            "0",
            "-1",
            "3.14",
            "1" * 38,
            "1" * 38 + "000",
            "0." + "1" * 38,
            "1e126",
            "9.9e126",
            "1e-128",
            "-1e126",
            "0.000",
        ],
    )
    def test_number_in_range(self, q: Queue, value: str) -> None:
        """Section 4: up to 38 digits, 10^-128..10^+126 are accepted."""
        q.send("x", message_attributes={"n": {"DataType": "Number", "StringValue": value}})

    @pytest.mark.parametrize(
        "value", ["1" * 39, "1" * 30 + "." + "1" * 9, "1e127", "-1e127", "1e-129"]
    )
    def test_number_out_of_range(self, q: Queue, value: str) -> None:
        """Section 4: more than 38 digits or outside 10^-128..10^+126 -> InvalidParameterValue."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x", message_attributes={"n": {"DataType": "Number", "StringValue": value}}
            ),
        )

    @pytest.mark.parametrize("value", ["bad\x00", "\x08", "\uffff", "\ud800"])
    def test_string_value_invalid_chars(self, q: Queue, value: str) -> None:
        """Section 3.2: invalid characters in a String attribute -> InvalidParameterValue (not
        InvalidMessageContents)."""
        err = refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"a": _string(value)}),
        )
        assert not isinstance(err, errors.InvalidMessageContents)

    def test_list_values_not_supported(self, q: Queue) -> None:
        """Section 6: StringListValues/BinaryListValues are reserved, not implemented."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send(
                "x", message_attributes={"a": {"DataType": "String", "StringListValues": ["a"]}}
            ),
        )

    @pytest.mark.parametrize(
        "attrs",
        [
            ["not", "a", "mapping"],
            "text",
            5,
            {"a": None},
            {"a": True},
            {"a": ["list"]},
            {"a": object()},
            {"a": {"DataType": 5, "StringValue": "x"}},
            {"a": {"DataType": "String", "StringValue": 5}},
            {"a": {"DataType": "Binary", "BinaryValue": "not bytes"}},
            {"a": {"DataType": "String", "StringValue": "x", "Extra": 1}},
        ],
    )
    def test_wrong_python_types(self, q: Queue, attrs: object) -> None:
        """Section 6: wrong Python types raise an SQSError, never TypeError/KeyError."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes=attrs),  # type: ignore[arg-type]
        )

    def test_one_bad_attribute_sends_nothing(self, q: Queue) -> None:
        """Section 6: one invalid attribute refuses the whole message."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", message_attributes={"good": "v", "bad": _string("")}),
        )


# -- integer parameters ---------------------------------------------------------


class TestDelaySeconds:
    """Per-message DelaySeconds: 0..900 (section 4)."""

    @pytest.mark.parametrize("delay", [0, 1, 900])
    def test_in_range(self, q: Queue, delay: int) -> None:
        """Section 4: 0..900 accepted."""
        q.send("x", delay_seconds=delay)
        q._check()

    @pytest.mark.parametrize("delay", [-1, 901, 10**9])
    def test_out_of_range(self, q: Queue, delay: int) -> None:
        """Section 4: outside 0..900 -> InvalidParameterValue."""
        err = refused(q, errors.InvalidParameterValue, lambda: q.send("x", delay_seconds=delay))
        assert err.message.startswith(f"Value {delay} for parameter DelaySeconds is invalid.")

    @pytest.mark.parametrize("delay", ["five", 1.5, 5.0, True, False, [1], b"1"])
    def test_wrong_type(self, q: Queue, delay: object) -> None:
        """Section 1.2: a non-integer DelaySeconds is an SQSError, never a TypeError."""
        refused(q, errors.InvalidParameterValue, lambda: q.send("x", delay_seconds=delay))  # type: ignore[arg-type]


class TestReceiveParameters:
    """MaxNumberOfMessages 1..10, WaitTimeSeconds 0..20, VisibilityTimeout 0..43200 (2.1)."""

    @pytest.mark.parametrize("n", [0, 11, -1, 100])
    def test_max_messages_range(self, q: Queue, n: int) -> None:
        """Section 2.1: MaxNumberOfMessages outside 1..10 -> AWS's observed text."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.receive(n),
            f"Value {n} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 "
            "and 10, if provided.",
        )

    def test_max_messages_11_text(self, q: Queue) -> None:
        """Section 2.1: the exact AWS text for 11."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.receive(max_messages=11),
            "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and "
            "10, if provided.",
        )

    @pytest.mark.parametrize("n", [21, -1, 100])
    def test_wait_time_range(self, q: Queue, n: int) -> None:
        """Section 2.1: WaitTimeSeconds outside 0..20 -> AWS's observed text."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.receive(wait_time_seconds=n),
            f"Value {n} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, "
            "if provided.",
        )

    @pytest.mark.parametrize("n", [-1, 43_201])
    def test_visibility_timeout_range(self, q: Queue, n: int) -> None:
        """Section 4: a receive's VisibilityTimeout outside 0..43200 -> InvalidParameterValue."""
        err = refused(q, errors.InvalidParameterValue, lambda: q.receive(visibility_timeout=n))
        assert err.message.startswith(f"Value {n} for parameter VisibilityTimeout is invalid.")

    def test_visibility_timeout_bounds_accepted(self, q: Queue) -> None:
        """Section 4: 0 and 43200 are valid receive visibility timeouts."""
        [m] = q.receive(visibility_timeout=43_200)
        q.change_visibility(m.receipt_handle, 0)
        [m] = q.receive(visibility_timeout=0)
        assert m.body == "already here"
        q._check()

    @pytest.mark.parametrize("value", ["ten", 2.0, 2.5, True, None, [2]])
    def test_max_messages_wrong_type(self, q: Queue, value: object) -> None:
        """Section 1.2: a non-integer MaxNumberOfMessages is an SQSError, never a TypeError."""
        refused(q, errors.InvalidParameterValue, lambda: q.receive(value))  # type: ignore[arg-type]

    @pytest.mark.parametrize("value", ["ten", 2.0, True, [2]])
    def test_wait_and_visibility_wrong_type(self, q: Queue, value: object) -> None:
        """Section 1.2: non-integer WaitTimeSeconds/VisibilityTimeout are SQSErrors."""
        refused(q, errors.InvalidParameterValue, lambda: q.receive(wait_time_seconds=value))  # type: ignore[arg-type]
        refused(q, errors.InvalidParameterValue, lambda: q.receive(visibility_timeout=value))  # type: ignore[arg-type]

    @pytest.mark.parametrize("names", [5, [1, 2], object()])
    def test_attribute_name_lists_wrong_type(self, q: Queue, names: object) -> None:
        """Section 2.1: AttributeNames/MessageAttributeNames must be lists of strings."""
        refused(q, errors.InvalidParameterValue, lambda: q.receive(attribute_names=names))  # type: ignore[arg-type]
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.receive(message_attribute_names=names),  # type: ignore[arg-type]
        )


class TestChangeVisibilityParameters:
    """ChangeMessageVisibility's VisibilityTimeout: 0..43200 (section 4)."""

    @pytest.mark.parametrize("timeout", [-1, 43_201, "soon", 1.5, True, None])
    def test_bad_timeout(self, q: Queue, timeout: object) -> None:
        """Section 4: an out-of-range or non-integer timeout -> InvalidParameterValue."""
        [m] = q.receive()
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.change_visibility(m.receipt_handle, timeout),  # type: ignore[arg-type]
        )


class TestGroupAndDeduplicationIds:
    """MessageGroupId on a standard queue (fair queues) and MessageDeduplicationId (section 2.1)."""

    @pytest.mark.parametrize("group", ["", "a b", "x" * 129, "\u00e9", 5])
    def test_invalid_group_id(self, q: Queue, group: object) -> None:
        """Section 2.1: an invalid MessageGroupId is refused on standard queues too."""
        err = refused(q, errors.InvalidParameterValue, lambda: q.send("x", group_id=group))  # type: ignore[arg-type]
        assert "MessageGroupId" in err.message

    def test_invalid_group_id_text(self, q: Queue) -> None:
        """Section 2.1: AWS's text for an invalid MessageGroupId."""
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.send("x", group_id="a b"),
            "Value a b for parameter MessageGroupId is invalid. Reason: MessageGroupId can only "
            "include alphanumeric and punctuation characters. 1 to 128 in length.",
        )

    def test_valid_group_id(self, q: Queue) -> None:
        """Section 2.1: 128 characters of alphanumerics and punctuation are valid."""
        q.send("x", group_id="x" * 128)
        q.send("x", group_id="!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
        q._check()

    def test_deduplication_id_on_standard_queue(self, q: Queue) -> None:
        """Section 2.1: MessageDeduplicationId on a standard queue is refused."""
        refused(q, errors.InvalidParameterValue, lambda: q.send("x", deduplication_id="d1"))

    def test_invalid_trace_header(self, q: Queue) -> None:
        """Section 2.1: AWSTraceHeader must be a non-empty string."""
        refused(q, errors.InvalidParameterValue, lambda: q.send("x", trace_header=""))
        refused(q, errors.InvalidParameterValue, lambda: q.send("x", trace_header=5))  # type: ignore[arg-type]


# -- queue names ----------------------------------------------------------------


class TestQueueName:
    """Queue names: 1..80 of [A-Za-z0-9_-]; '.fifo' only on FIFO queues (section 2.1)."""

    @pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 80, "UPPER", "0"])
    def test_valid(self, clock: ManualClock, name: str) -> None:
        """Section 2.1: up to 80 alphanumerics, hyphens and underscores."""
        assert Queue(name, clock=clock).name == name

    @pytest.mark.parametrize("name", ["", "x" * 81, "a b", "a.b", "a/b", "\u00e9", "q!"])
    def test_invalid(self, clock: ManualClock, name: str) -> None:
        """Section 2.1: anything else -> InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue) as info:
            Queue(name, clock=clock)
        assert info.value.message == (
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
        )

    def test_fifo_suffix_on_standard_queue(self, clock: ManualClock) -> None:
        """Section 2.1: a '.fifo' name on a standard queue -> InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue):
            Queue("orders.fifo", clock=clock)

    @pytest.mark.parametrize("name", [5, None, b"jobs"])
    def test_non_str_name(self, clock: ManualClock, name: object) -> None:
        """Section 2.1: a name that is not a string is an SQSError."""
        with pytest.raises(errors.InvalidParameterValue):
            Queue(name, clock=clock)  # type: ignore[arg-type]

    def test_bad_clock(self) -> None:
        """docs/design.md principle 1: A clock that is not a Clock is an SQSError."""
        with pytest.raises(errors.InvalidParameterValue):
            Queue("q", clock=object())  # type: ignore[arg-type]


# -- queue attributes -------------------------------------------------------------

FIFO_ONLY = [
    ("FifoQueue", "true", "Unknown Attribute FifoQueue."),
    ("FifoQueue", "false", "Unknown Attribute FifoQueue."),
    ("ContentBasedDeduplication", "true", "Unknown Attribute ContentBasedDeduplication."),
    (
        "DeduplicationScope",
        "queue",
        "You can specify the DeduplicationScope only when FifoQueue is set to true.",
    ),
    (
        "FifoThroughputLimit",
        "perQueue",
        "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
    ),
]

BAD_VALUES = [
    ("VisibilityTimeout", "43201"),
    ("VisibilityTimeout", "-1"),
    ("VisibilityTimeout", "abc"),
    ("VisibilityTimeout", "1.5"),
    ("VisibilityTimeout", 1.5),
    ("VisibilityTimeout", True),
    ("VisibilityTimeout", None),
    ("DelaySeconds", "901"),
    ("DelaySeconds", "-1"),
    ("MessageRetentionPeriod", "59"),
    ("MessageRetentionPeriod", "1209601"),
    ("MaximumMessageSize", "1023"),
    ("MaximumMessageSize", "1048577"),
    ("ReceiveMessageWaitTimeSeconds", "21"),
    ("ReceiveMessageWaitTimeSeconds", "-1"),
    ("KmsDataKeyReusePeriodSeconds", "59"),
    ("KmsDataKeyReusePeriodSeconds", "86401"),
    ("SqsManagedSseEnabled", "yes"),
    ("SqsManagedSseEnabled", 1),
    ("RedrivePolicy", "{not json"),
    ("Policy", "[]"),
]

GOOD_VALUES = [
    ("VisibilityTimeout", "0", "0"),
    ("VisibilityTimeout", "43200", "43200"),
    ("VisibilityTimeout", 45, "45"),
    ("DelaySeconds", "900", "900"),
    ("MessageRetentionPeriod", "60", "60"),
    ("MessageRetentionPeriod", "1209600", "1209600"),
    ("MaximumMessageSize", "1024", "1024"),
    ("ReceiveMessageWaitTimeSeconds", "20", "20"),
    ("SqsManagedSseEnabled", "false", "false"),
    ("SqsManagedSseEnabled", False, "false"),
]


class TestQueueAttributesAtCreation:
    """CreateQueue attribute validation (sections 2.1 and 5)."""

    @pytest.mark.parametrize(("name", "value", "text"), FIFO_ONLY)
    def test_fifo_only_attributes(
        self, clock: ManualClock, name: str, value: str, text: str
    ) -> None:
        """Section 2.1: FIFO-only attributes on a standard queue -> InvalidAttributeName."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            Queue("q", clock=clock, attributes={name: value})
        assert info.value.message == text

    @pytest.mark.parametrize(("name", "value"), BAD_VALUES)
    def test_bad_values(self, clock: ManualClock, name: str, value: object) -> None:
        """Section 2.1: out-of-range or malformed values -> InvalidAttributeValue."""
        with pytest.raises(errors.InvalidAttributeValue) as info:
            Queue("q", clock=clock, attributes={name: value})
        assert info.value.message.startswith(f"Invalid value for the parameter {name}.")

    @pytest.mark.parametrize(("name", "value", "rendered"), GOOD_VALUES)
    def test_good_values(self, clock: ManualClock, name: str, value: object, rendered: str) -> None:
        """Section 5: valid values are accepted and read back as AWS's strings."""
        q = Queue("q", clock=clock, attributes={name: value})
        assert q.get_attributes([name]) == {name: rendered}

    def test_keyword_and_aws_names(self, clock: ManualClock) -> None:
        """Section 5: Pythonic keywords and AWS names set the same attribute."""
        a = Queue("a", clock=clock, visibility_timeout=45)
        b = Queue("b", clock=clock, attributes={"VisibilityTimeout": "45"})
        assert a.get_attributes(["VisibilityTimeout"]) == b.get_attributes(["VisibilityTimeout"])
        assert a.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "45"}

    @pytest.mark.parametrize(
        "kwarg",
        [
            {"visibility_timeout": -1},
            {"delay_seconds": 1000},
            {"message_retention_period": 10},
            {"maximum_message_size": 10},
            {"receive_message_wait_time_seconds": 30},
            {"visibility_timeout": "x"},
        ],
    )
    def test_bad_keyword_values(self, clock: ManualClock, kwarg: dict[str, Any]) -> None:
        """Section 2.1: keyword attributes get the same validation."""
        with pytest.raises(errors.InvalidAttributeValue):
            Queue("q", clock=clock, **kwarg)

    def test_unknown_attribute(self, clock: ManualClock) -> None:
        """Section 2.1: an unknown attribute name -> InvalidAttributeName 'Unknown Attribute X.'."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            Queue("q", clock=clock, attributes={"Colour": "blue"})
        assert info.value.message == "Unknown Attribute Colour."

    def test_unknown_keyword(self, clock: ManualClock) -> None:
        """Section 2.1: an unknown keyword is refused the same way."""
        with pytest.raises(errors.InvalidAttributeName):
            Queue("q", clock=clock, colour="blue")

    @pytest.mark.parametrize(
        "name",
        [
            "QueueArn",
            "ApproximateNumberOfMessages",
            "CreatedTimestamp",
            "LastModifiedTimestamp",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    )
    def test_read_only_attributes(self, clock: ManualClock, name: str) -> None:
        """Section 2.1: read-only attributes cannot be supplied -> InvalidAttributeName."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            Queue("q", clock=clock, attributes={name: "1"})
        assert info.value.message == f"Unknown Attribute {name}."

    def test_sse_conflict(self, clock: ManualClock) -> None:
        """Section 2.1: KMS SSE and SQS SSE together -> InvalidAttributeName with AWS's text."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            Queue(
                "q",
                clock=clock,
                attributes={"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "true"},
            )
        assert info.value.message == (
            "You can use one type of server-side encryption (SSE) at one time. You can either "
            "enable KMS SSE or SQS SSE."
        )

    def test_kms_turns_sqs_sse_off(self, clock: ManualClock) -> None:
        """Section 5: one SSE type at a time; choosing KMS reports SqsManagedSseEnabled false."""
        q = Queue("q", clock=clock, attributes={"KmsMasterKeyId": "alias/aws/sqs"})
        got = q.get_attributes(["KmsMasterKeyId", "SqsManagedSseEnabled"])
        assert got == {"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "false"}

    @pytest.mark.parametrize("attributes", [5, ["VisibilityTimeout"], "VisibilityTimeout=5"])
    def test_attributes_not_a_mapping(self, clock: ManualClock, attributes: object) -> None:
        """Section 1.2: an attributes argument that is not a mapping is an SQSError."""
        with pytest.raises(errors.SQSError):
            Queue("q", clock=clock, attributes=attributes)  # type: ignore[arg-type]


class TestSetAttributes:
    """SetQueueAttributes validation; a refused request changes nothing (sections 2.1, 5)."""

    @pytest.mark.parametrize(("name", "value", "text"), FIFO_ONLY)
    def test_fifo_only_attributes(self, q: Queue, name: str, value: str, text: str) -> None:
        """Section 2.1: FIFO-only attributes on a standard queue -> InvalidAttributeName."""
        refused(q, errors.InvalidAttributeName, lambda: q.set_attributes({name: value}), text)

    @pytest.mark.parametrize(("name", "value"), BAD_VALUES)
    def test_bad_values(self, q: Queue, name: str, value: object) -> None:
        """Section 2.1: out-of-range values -> InvalidAttributeValue 'Invalid value for the
        parameter X.'"""
        err = refused(q, errors.InvalidAttributeValue, lambda: q.set_attributes({name: value}))
        assert err.message.startswith(f"Invalid value for the parameter {name}.")

    def test_exact_invalid_value_text(self, q: Queue) -> None:
        """Section 2.1: the likely AWS text for an out-of-range MessageRetentionPeriod."""
        refused(
            q,
            errors.InvalidAttributeValue,
            lambda: q.set_attributes({"MessageRetentionPeriod": "59"}),
            "Invalid value for the parameter MessageRetentionPeriod.",
        )

    @pytest.mark.parametrize(("name", "value", "rendered"), GOOD_VALUES)
    def test_good_values(self, q: Queue, name: str, value: object, rendered: str) -> None:
        """Section 5: valid values apply and read back as AWS's strings."""
        q.set_attributes({name: value})
        assert q.get_attributes([name]) == {name: rendered}
        q._check()

    def test_unknown_attribute(self, q: Queue) -> None:
        """Section 2.1: unknown name -> InvalidAttributeName 'Unknown Attribute X.'."""
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.set_attributes({"Colour": "blue"}),
            "Unknown Attribute Colour.",
        )

    @pytest.mark.parametrize(
        "name",
        [
            "QueueArn",
            "ApproximateNumberOfMessages",
            "CreatedTimestamp",
            "LastModifiedTimestamp",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    )
    def test_read_only_refused(self, q: Queue, name: str) -> None:
        """Section 2.1: read-only attributes -> InvalidAttributeName."""
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.set_attributes({name: "1"}),
            f"Unknown Attribute {name}.",
        )

    def test_one_bad_value_applies_nothing(self, q: Queue) -> None:
        """Section 5: a request with one bad value changes no attribute at all."""
        refused(
            q,
            errors.InvalidAttributeValue,
            lambda: q.set_attributes({"VisibilityTimeout": "60", "DelaySeconds": "1000"}),
        )
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.set_attributes({"VisibilityTimeout": "60", "Colour": "blue"}),
        )
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}

    def test_sse_conflict(self, q: Queue) -> None:
        """Section 2.1: enabling KMS and SQS SSE in one request -> InvalidAttributeName."""
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.set_attributes(
                {"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "true"}
            ),
            "You can use one type of server-side encryption (SSE) at one time. You can either "
            "enable KMS SSE or SQS SSE.",
        )

    def test_switching_sse_types(self, q: Queue) -> None:
        """Section 5: switching SSE type in separate requests replaces the other type."""
        q.set_attributes({"KmsMasterKeyId": "alias/aws/sqs"})
        assert q.get_attributes(["SqsManagedSseEnabled"]) == {"SqsManagedSseEnabled": "false"}
        q.set_attributes({"SqsManagedSseEnabled": "true"})
        got = q.get_attributes(["All"])
        assert got["SqsManagedSseEnabled"] == "true"
        assert "KmsMasterKeyId" not in got

    @pytest.mark.parametrize("attributes", [5, ["VisibilityTimeout"], "VisibilityTimeout"])
    def test_not_a_mapping(self, q: Queue, attributes: object) -> None:
        """Section 1.2: attributes that are not a mapping -> an SQSError, not TypeError."""
        refused(q, errors.InvalidParameterValue, lambda: q.set_attributes(attributes))  # type: ignore[arg-type]

    def test_unknown_keyword(self, q: Queue) -> None:
        """Section 2.1: an unknown keyword -> InvalidAttributeName."""
        refused(q, errors.InvalidAttributeName, lambda: q.set_attributes(colour="blue"))

    def test_get_unknown_attribute(self, q: Queue) -> None:
        """Section 2.1: GetQueueAttributes with an unknown name -> InvalidAttributeName."""
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.get_attributes(["Colour"]),
            "Unknown Attribute Colour.",
        )
        refused(
            q,
            errors.InvalidAttributeName,
            lambda: q.get_attributes(["FifoQueue"]),
            "Unknown Attribute FifoQueue.",
        )

    def test_get_attribute_names_wrong_type(self, q: Queue) -> None:
        """Section 1.2: attribute names that are not strings -> an SQSError."""
        refused(q, errors.InvalidParameterValue, lambda: q.get_attributes(5))  # type: ignore[arg-type]
        refused(q, errors.InvalidParameterValue, lambda: q.get_attributes([1]))  # type: ignore[list-item]


class TestHandleParameters:
    """Receipt handles that are missing or the wrong type (sections 2.1, 8)."""

    @pytest.mark.parametrize("handle", ["", None])
    def test_missing_handle(self, q: Queue, handle: object) -> None:
        """Section 3.2: a missing ReceiptHandle -> MissingParameter."""
        refused(q, errors.MissingParameter, lambda: q.delete(handle))  # type: ignore[arg-type]
        refused(q, errors.MissingParameter, lambda: q.change_visibility(handle, 5))  # type: ignore[arg-type]

    @pytest.mark.parametrize("handle", [5, b"handle", ["h"]])
    def test_non_str_handle(self, q: Queue, handle: object) -> None:
        """Section 8: a handle that is not a string -> ReceiptHandleIsInvalid, never TypeError."""
        refused(q, errors.ReceiptHandleIsInvalid, lambda: q.delete(handle))  # type: ignore[arg-type]
        refused(q, errors.ReceiptHandleIsInvalid, lambda: q.change_visibility(handle, 5))  # type: ignore[arg-type]


class TestIntegerParametersRefuseStrings:
    """Issue 12 §5: where AWS takes an integer, the Python API takes an int only.
    A str such as "5" is refused with InvalidParameterValue and the parameter's
    AWS reason, and changes nothing (botocore refuses a str client-side,
    section 1.2; the wire codec gets JSON numbers)."""

    @pytest.mark.parametrize(
        ("call", "text"),
        [
            (
                lambda q: q.send("x", delay_seconds="5"),
                "Value '5' for parameter DelaySeconds is invalid. Reason: DelaySeconds must "
                "be >= 0 and <= 900.",
            ),
            (
                lambda q: q.receive(max_messages="10"),
                "Value '10' for parameter MaxNumberOfMessages is invalid. Reason: Must be "
                "between 1 and 10, if provided.",
            ),
            (
                lambda q: q.receive("1"),
                "Value '1' for parameter MaxNumberOfMessages is invalid. Reason: Must be "
                "between 1 and 10, if provided.",
            ),
            (
                lambda q: q.receive(visibility_timeout="5"),
                "Value '5' for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 "
                "and <= 43200, if provided.",
            ),
            (
                lambda q: q.receive(wait_time_seconds="0"),
                "Value '0' for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 "
                "and <= 20, if provided.",
            ),
        ],
    )
    def test_send_and_receive(self, q: Queue, call: Any, text: str) -> None:
        """send(delay_seconds="5"), receive(max_messages="10"), visibility_timeout="5",
        wait_time_seconds="0": all refused, nothing received or sent."""
        refused(q, errors.InvalidParameterValue, lambda: call(q), text)

    def test_receive_async(self, q: Queue) -> None:
        """receive_async validates the same way."""
        import asyncio

        for kwargs in (
            {"max_messages": "2"},
            {"wait_time_seconds": "1"},
            {"visibility_timeout": "0"},
        ):
            refused(
                q,
                errors.InvalidParameterValue,
                lambda kwargs=kwargs: asyncio.run(q.receive_async(**kwargs)),  # type: ignore[misc]
            )

    def test_change_visibility(self, q: Queue) -> None:
        """ChangeMessageVisibility's VisibilityTimeout: "5" is refused."""
        [m] = q.receive()
        refused(
            q,
            errors.InvalidParameterValue,
            lambda: q.change_visibility(m.receipt_handle, "5"),  # type: ignore[arg-type]
            "Value '5' for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and "
            "<= 43200, if provided.",
        )

    def test_fifo_queue(self, clock: ManualClock) -> None:
        """The FIFO queue shares the checks (DelaySeconds "0" included)."""
        from sqsqueue import FifoQueue

        f = FifoQueue("f.fifo", clock=clock, content_based_deduplication=True)
        with pytest.raises(errors.InvalidParameterValue):
            f.send("x", group_id="g", delay_seconds="0")  # type: ignore[arg-type]
        with pytest.raises(errors.InvalidParameterValue):
            f.receive("1")  # type: ignore[arg-type]
        assert len(f) == 0

    @pytest.mark.parametrize(
        "keyword",
        [
            "delay_seconds",
            "maximum_message_size",
            "message_retention_period",
            "receive_message_wait_time_seconds",
            "visibility_timeout",
            "kms_data_key_reuse_period_seconds",
        ],
    )
    def test_attribute_keywords(self, q: Queue, clock: ManualClock, keyword: str) -> None:
        """Queue attributes as keywords are Python: ``visibility_timeout="60"`` is
        refused (InvalidAttributeValue, as any bad attribute value) by
        set_attributes, the constructors and create_queue, changing nothing; the
        AWS-name map keeps taking the wire's strings."""
        from sqsqueue import Broker, FifoQueue

        takes_an_int = f"keyword {keyword} takes an int"
        before = q.get_attributes()
        refused(q, errors.InvalidAttributeValue, lambda: q.set_attributes(**{keyword: "60"}))
        assert q.get_attributes() == before
        for make in (
            lambda: Queue("z", clock=clock, **{keyword: "60"}),
            lambda: FifoQueue("z.fifo", clock=clock, **{keyword: "60"}),
        ):
            with pytest.raises(errors.InvalidAttributeValue, match=takes_an_int):
                make()
        broker = Broker(clock=clock)
        with pytest.raises(errors.InvalidAttributeValue, match=takes_an_int):
            broker.create_queue("z", **{keyword: "60"})
        assert "z" not in broker
        name = _attributes.canonical_name(keyword)
        assert name is not None
        valid = {"maximum_message_size": 1024, "receive_message_wait_time_seconds": 20}
        q.set_attributes({name: str(valid.get(keyword, 60))})
        q.set_attributes(**{keyword: valid.get(keyword, 60)})

    def test_batch_entries(self, q: Queue) -> None:
        """Batch entries: a str DelaySeconds or VisibilityTimeout fails that entry
        (InvalidParameterValue in Failed), the others are applied."""
        from sqsqueue import ChangeVisibilityEntry, SendEntry

        before = len(q)
        result = q.send_batch([SendEntry("bad", "x", delay_seconds="5"), SendEntry("ok", "y")])  # type: ignore[arg-type]
        assert [f.id for f in result.failed] == ["bad"]
        assert result.failed[0].code == "InvalidParameterValue"
        assert list(result.successful) == ["ok"]
        assert len(q) == before + 1
        m1, m2 = q.receive(2)
        result = q.change_visibility_batch(
            [
                ChangeVisibilityEntry("bad", m1.receipt_handle, "5"),  # type: ignore[arg-type]
                ChangeVisibilityEntry("ok", m2.receipt_handle, 0),
            ]
        )
        assert [f.id for f in result.failed] == ["bad"]
        assert result.failed[0].code == "InvalidParameterValue"
        assert [m.message_id for m in q.receive(10)] == [m2.message_id]
        q._check()

    def test_broker_parameters(self, clock: ManualClock) -> None:
        """Broker: MaxResults and MaxNumberOfMessagesPerSecond take ints only."""
        from sqsqueue import Broker

        broker = Broker(clock=clock, account_id="123456789012")
        dlq = broker.create_queue("dlq")
        broker.create_queue(
            "src", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}
        )
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_queues(max_results="5")  # type: ignore[arg-type]
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_dead_letter_source_queues(dlq.url, max_results="5")  # type: ignore[arg-type]
        with pytest.raises(errors.InvalidParameterValue):
            broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second="5")  # type: ignore[arg-type]
        assert broker.list_message_move_tasks(dlq.arn) == []
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_message_move_tasks(dlq.arn, max_results="1")  # type: ignore[arg-type]

    def test_standalone_max_receive_count(self, clock: ManualClock) -> None:
        """Queue(max_receive_count=...) is an int too; its range error is the
        RedrivePolicy's InvalidAttributeValue."""
        dlq = Queue("d", clock=clock)
        with pytest.raises(errors.InvalidAttributeValue):
            Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count="3")  # type: ignore[arg-type]
        Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count=3)
