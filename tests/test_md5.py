"""MD5 digests of bodies, message attributes and system attributes (docs/aws-behaviour.md §7)."""

from __future__ import annotations

import hashlib
import struct

import pytest

from sqsqueue import ManualClock, MessageAttributeValue, Queue, SendEntry, _message
from sqsqueue._message import md5_of_attributes, md5_of_body, sort_attributes

START = 1_700_000_000.0

TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
TRACE_MD5 = "5ae4d5d7636402d80f4eb6d213245a88"
TRACEPARENT = b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01"

KENOBI = {"Help.Me": "Me", "Hello": "There", "General": "Kenobi"}

#: The eight worked examples of section 7.2: (attributes, AWS digest).
TABLE = [
    ({"MyAttribute": ("String", "foobar")}, "adb59cd4678ea5a855436b949cd07ab6"),
    ({"attr1": ("Binary", TRACEPARENT)}, "8cbe4db156db8a94db8b801b7addb984"),
    ({"Foo": ("String", "Bar")}, "ae7155c6026991b6d54b11589678bf9c"),
    ({"timestamp": ("Number", "1493147359900")}, "235c5c510d26fb653d073faed50ae77c"),
    ({k: ("String", v) for k, v in KENOBI.items()}, "4c360f3fdafd970e05fae2f149d997f5"),
    (
        {"General": ("String", "Kenobi"), "Hello": ("String", "There")},
        "fca026605781cb4126a1e9044df24232",
    ),
    ({"Hello": ("String", "There")}, "a311262e065454b75da111d535b8dacd"),
    (
        {"Hello": ("String", "There"), "Help.Me": ("String", "Me")},
        "83fee93c1bcd8b9a5a923ffacdc636c7",
    ),
]


def _stored(attrs: dict[str, tuple[str, str | bytes]]) -> tuple[tuple[str, str, str | bytes], ...]:
    return sort_attributes([(name, dt, value) for name, (dt, value) in attrs.items()])


def _wire(attrs: dict[str, tuple[str, str | bytes]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, (dt, value) in attrs.items():
        if isinstance(value, bytes):
            out[name] = {"DataType": dt, "BinaryValue": value}
        else:
            out[name] = {"DataType": dt, "StringValue": value}
    return out


@pytest.fixture
def q() -> Queue:
    return Queue("md5", clock=ManualClock(start=START))


class TestBodyMd5:
    """MD5OfMessageBody is the hex MD5 of the UTF-8 body."""

    def test_test_body(self) -> None:
        """Section 7.1: "test" -> 098f6bcd4621d373cade4e832627b4f6."""
        assert md5_of_body("test") == "098f6bcd4621d373cade4e832627b4f6"

    def test_non_ascii_body_hashes_utf8(self) -> None:
        """Section 7.1: the digest covers the UTF-8 encoding, astral characters included."""
        body = "h\u00e9llo \U0001f600"
        assert md5_of_body(body) == hashlib.md5(body.encode("utf-8")).hexdigest()

    def test_send_and_receive_report_body_md5(self, q: Queue) -> None:
        """Section 7.1: SendMessage's MD5OfMessageBody and the received MD5OfBody agree."""
        sent = q.send("test")
        assert sent.md5_of_body == "098f6bcd4621d373cade4e832627b4f6"
        [m] = q.receive()
        assert m.md5_of_body == "098f6bcd4621d373cade4e832627b4f6"
        q._check()


class TestAttributesMd5Function:
    """md5_of_attributes reproduces every worked example of section 7.2."""

    @pytest.mark.parametrize(("attrs", "digest"), TABLE)
    def test_table(self, attrs: dict[str, tuple[str, str | bytes]], digest: str) -> None:
        """Section 7.2: each row of the worked-example table matches AWS's digest."""
        assert md5_of_attributes(_stored(attrs)) == digest

    def test_byte_layout(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Section 7.2: the hashed buffer is the documented byte layout for MyAttribute."""
        layout = bytes.fromhex(
            "0000000b4d7941747472696275746500000006537472696e670100000006666f6f626172"
        )
        assert hashlib.md5(layout).hexdigest() == "adb59cd4678ea5a855436b949cd07ab6"
        seen: list[bytes] = []
        real_md5 = hashlib.md5

        def spy(data: bytes, **kwargs: object) -> object:
            seen.append(bytes(data))
            return real_md5(data)

        monkeypatch.setattr(_message.hashlib, "md5", spy)
        digest = md5_of_attributes((("MyAttribute", "String", "foobar"),))
        assert seen == [layout]
        assert digest == "adb59cd4678ea5a855436b949cd07ab6"

    def test_binary_uses_transport_byte_2(self) -> None:
        """Section 7.2: Binary values use transport byte 0x02 and raw bytes."""
        buf = (
            struct.pack(">I", 1)
            + b"b"
            + struct.pack(">I", 6)
            + b"Binary"
            + b"\x02"
            + struct.pack(">I", 3)
            + b"\x00\x01\x02"
        )
        expected = hashlib.md5(buf).hexdigest()
        assert md5_of_attributes((("b", "Binary", b"\x00\x01\x02"),)) == expected

    def test_custom_type_suffix_is_hashed(self) -> None:
        """Section 6 and 7.2: the full DataType, custom suffix included, goes into the digest."""
        plain = md5_of_attributes((("n", "Number", "1"),))
        custom = md5_of_attributes((("n", "Number.int", "1"),))
        assert plain != custom

    def test_sorted_by_utf16_code_units(self) -> None:
        """Section 7.2 step 1: names sort in UTF-16 code-unit order, not code-point order."""
        astral = "\U00010000"  # UTF-16 D800 DC00: sorts before U+FF61 in UTF-16
        bmp_high = "\uff61"
        ordered = sort_attributes([(bmp_high, "String", "a"), (astral, "String", "b")])
        assert [a[0] for a in ordered] == [astral, bmp_high]
        # Code-point order would be the opposite.
        assert sorted([astral, bmp_high]) == [bmp_high, astral]

    def test_order_of_input_does_not_matter(self) -> None:
        """Section 7.2 step 1: attributes are sorted by name before hashing."""
        a = sort_attributes([("b", "String", "1"), ("a", "String", "2")])
        b = sort_attributes([("a", "String", "2"), ("b", "String", "1")])
        assert md5_of_attributes(a) == md5_of_attributes(b)


class TestSystemAttributesMd5:
    """MD5OfMessageSystemAttributes covers AWSTraceHeader (section 7.3)."""

    def test_function(self) -> None:
        """Section 7.3: the AWSTraceHeader worked example hashes to 5ae4d5d7..."""
        assert md5_of_attributes((("AWSTraceHeader", "String", TRACE),)) == TRACE_MD5

    def test_send_reports_system_md5(self, q: Queue) -> None:
        """Section 7.3: SendMessage with a trace header returns the AWS digest."""
        sent = q.send("hello", trace_header=TRACE)
        assert sent.md5_of_message_system_attributes == TRACE_MD5
        q._check()

    def test_send_without_trace_header_has_no_system_md5(self, q: Queue) -> None:
        """Section 7.3: MD5OfMessageSystemAttributes is absent when none were sent."""
        assert q.send("hello").md5_of_message_system_attributes is None

    def test_system_attributes_do_not_affect_attribute_md5(self, q: Queue) -> None:
        """Section 7.3: system attributes do not change MD5OfMessageAttributes."""
        with_trace = q.send("x", message_attributes={"Foo": "Bar"}, trace_header=TRACE)
        without = q.send("x", message_attributes={"Foo": "Bar"})
        assert with_trace.md5_of_message_attributes == "ae7155c6026991b6d54b11589678bf9c"
        assert without.md5_of_message_attributes == "ae7155c6026991b6d54b11589678bf9c"
        q._check()

    def test_batch_reports_system_md5(self, q: Queue) -> None:
        """Section 7.3: SendMessageBatch entries carry MD5OfMessageSystemAttributes."""
        result = q.send_batch([SendEntry("a", "x", trace_header=TRACE), SendEntry("b", "y")])
        ok = result.successful
        assert ok["a"] is not None and ok["a"].md5_of_message_system_attributes == TRACE_MD5
        assert ok["b"] is not None and ok["b"].md5_of_message_system_attributes is None
        q._check()


class TestQueueAttributesMd5:
    """Send and receive report the section 7.2 digests."""

    @pytest.mark.parametrize(("attrs", "digest"), TABLE)
    def test_send_result(
        self, q: Queue, attrs: dict[str, tuple[str, str | bytes]], digest: str
    ) -> None:
        """Section 7.2: SendMessage's MD5OfMessageAttributes equals AWS's digest."""
        assert q.send("body", message_attributes=_wire(attrs)).md5_of_message_attributes == digest
        q._check()

    @pytest.mark.parametrize(("attrs", "digest"), TABLE)
    def test_receive_all(
        self, q: Queue, attrs: dict[str, tuple[str, str | bytes]], digest: str
    ) -> None:
        """Section 7.2: a receive returning every attribute reports the same digest."""
        q.send("body", message_attributes=_wire(attrs))
        [m] = q.receive(message_attribute_names=["All"])
        assert m.md5_of_message_attributes == digest
        q._check()

    def test_message_attribute_value_objects(self, q: Queue) -> None:
        """Section 7.2: MessageAttributeValue inputs hash like boto3-shaped dicts."""
        sent = q.send(
            "body", message_attributes={"MyAttribute": MessageAttributeValue("String", "foobar")}
        )
        assert sent.md5_of_message_attributes == "adb59cd4678ea5a855436b949cd07ab6"

    def test_plain_python_values(self, q: Queue) -> None:
        """Section 7.2: a plain str is a String, an int a Number, bytes a Binary."""
        assert q.send("b", message_attributes={"Foo": "Bar"}).md5_of_message_attributes == (
            "ae7155c6026991b6d54b11589678bf9c"
        )
        assert (
            q.send("b", message_attributes={"timestamp": 1493147359900}).md5_of_message_attributes
            == "235c5c510d26fb653d073faed50ae77c"
        )
        assert (
            q.send("b", message_attributes={"attr1": TRACEPARENT}).md5_of_message_attributes
            == "8cbe4db156db8a94db8b801b7addb984"
        )

    def test_no_attributes_no_md5(self, q: Queue) -> None:
        """Section 7.2: without attributes MD5OfMessageAttributes is omitted."""
        assert q.send("b").md5_of_message_attributes is None
        assert q.send("b", message_attributes={}).md5_of_message_attributes is None
        for m in q.receive(10):
            assert m.md5_of_message_attributes is None
            assert "MD5OfMessageAttributes" not in m.to_aws()

    @pytest.mark.parametrize(
        ("names", "digest"),
        [
            (["Hello", "General"], "fca026605781cb4126a1e9044df24232"),
            (["General", "Hello"], "fca026605781cb4126a1e9044df24232"),
            (["Hello"], "a311262e065454b75da111d535b8dacd"),
            (["Hello", "Help.Me"], "83fee93c1bcd8b9a5a923ffacdc636c7"),
            (["Help.*", "Hello"], "83fee93c1bcd8b9a5a923ffacdc636c7"),
            # "Hel.*" is a prefix wildcard: Hello and Help.Me (issue 12, section 6).
            (["Hel.*"], "83fee93c1bcd8b9a5a923ffacdc636c7"),
            (["All"], "4c360f3fdafd970e05fae2f149d997f5"),
            ([".*"], "4c360f3fdafd970e05fae2f149d997f5"),
            (["Hello", "General", "Help.Me", "Nope"], "4c360f3fdafd970e05fae2f149d997f5"),
        ],
    )
    def test_receive_subset(self, q: Queue, names: list[str], digest: str) -> None:
        """Section 2.1/7.2: the received digest covers only the returned subset."""
        sent = q.send("body", message_attributes=KENOBI)
        assert sent.md5_of_message_attributes == "4c360f3fdafd970e05fae2f149d997f5"
        [m] = q.receive(message_attribute_names=names)
        assert m.md5_of_message_attributes == digest
        recomputed = md5_of_attributes(
            sort_attributes([(k, v.data_type, v.value) for k, v in m.message_attributes.items()])
        )
        assert m.md5_of_message_attributes == recomputed
        q._check()

    def test_receive_no_match_omits_md5(self, q: Queue) -> None:
        """Section 2.1: when no requested attribute exists both keys are omitted."""
        q.send("body", message_attributes=KENOBI)
        [m] = q.receive(message_attribute_names=["Nope"])
        assert m.message_attributes == {}
        assert m.md5_of_message_attributes is None
        out = m.to_aws()
        assert "MessageAttributes" not in out and "MD5OfMessageAttributes" not in out
        q._check()
