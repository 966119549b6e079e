"""System and user attributes returned by ReceiveMessage on a standard queue (sections 2.1, 6)."""

from __future__ import annotations

import pytest

from sqsqueue import ManualClock, MessageAttributeValue, Queue

START = 1_700_000_000.0
START_MS = "1700000000000"
TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

USER = {
    "Help.Me": "Me",
    "Hello": "There",
    "General": "Kenobi",
    "foo.bar": "1",
    "foo.baz": "2",
    "foox": "3",
}


class TestSystemAttributes:
    """Message system attributes (section 6)."""

    def test_all_on_standard_queue(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: 'All' on a standard queue gives exactly SenderId, SentTimestamp,
        ApproximateReceiveCount and ApproximateFirstReceiveTimestamp for a plain message."""
        queue.send("a")
        clock.advance(2.5)
        [m] = queue.receive(attribute_names=["All"])
        assert m.attributes == {
            "SenderId": "123456789012",
            "SentTimestamp": START_MS,
            "ApproximateReceiveCount": "1",
            "ApproximateFirstReceiveTimestamp": "1700000002500",
        }
        queue._check()

    def test_timestamps_are_epoch_milliseconds(self, clock: ManualClock, queue: Queue) -> None:
        """Section 1.3: SentTimestamp and ApproximateFirstReceiveTimestamp are epoch ms."""
        clock.advance(0.123)
        queue.send("a")
        clock.advance(1.0)
        [m] = queue.receive(visibility_timeout=0)
        assert m.attributes["SentTimestamp"] == "1700000000123"
        assert m.attributes["ApproximateFirstReceiveTimestamp"] == "1700000001123"
        clock.advance(60)
        [m] = queue.receive()
        # The first-receive time does not move on later receives.
        assert m.attributes["ApproximateFirstReceiveTimestamp"] == "1700000001123"
        assert m.attributes["SentTimestamp"] == "1700000000123"

    def test_receive_count_increments(self, clock: ManualClock, queue: Queue) -> None:
        """Section 6: ApproximateReceiveCount increments on every receive ("1", "2", ...)."""
        queue.send("a")
        for n in range(1, 6):
            [m] = queue.receive(visibility_timeout=10)
            assert m.attributes["ApproximateReceiveCount"] == str(n)
            clock.advance(10)
        queue._check()

    def test_sender_id(self, queue: Queue) -> None:
        """Section 6: SenderId is the sender's id (the account id unless given)."""
        queue.send("a", sender_id="AIDAIO23YVJENQZJOL4VO")
        queue.send("b")
        got = {m.body: m.attributes["SenderId"] for m in queue.receive(10)}
        assert got == {"a": "AIDAIO23YVJENQZJOL4VO", "b": "123456789012"}

    def test_trace_header(self, queue: Queue) -> None:
        """Section 6: AWSTraceHeader is returned only when it was supplied."""
        queue.send("traced", trace_header=TRACE)
        queue.send("plain")
        got = {m.body: m.attributes for m in queue.receive(10)}
        assert got["traced"]["AWSTraceHeader"] == TRACE
        assert "AWSTraceHeader" not in got["plain"]

    def test_message_group_id_on_standard_queue(self, queue: Queue) -> None:
        """Section 10.1: a standard queue returns MessageGroupId (fair queues) but never a
        SequenceNumber or MessageDeduplicationId."""
        sent = queue.send("a", group_id="tenant-1")
        assert sent.sequence_number is None
        [m] = queue.receive(attribute_names=["All"])
        assert m.attributes["MessageGroupId"] == "tenant-1"
        assert "SequenceNumber" not in m.attributes
        assert "MessageDeduplicationId" not in m.attributes
        queue._check()

    def test_no_sequence_number_even_when_asked(self, queue: Queue) -> None:
        """Section 2.1: asking for SequenceNumber on a standard queue just omits it."""
        queue.send("a")
        [m] = queue.receive(attribute_names=["SequenceNumber", "MessageGroupId"])
        assert m.attributes == {}

    def test_filtering_by_name(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: only the system attributes asked for are returned."""
        queue.send("a", trace_header=TRACE)
        [m] = queue.receive(attribute_names=["SentTimestamp", "AWSTraceHeader"])
        assert m.attributes == {"SentTimestamp": START_MS, "AWSTraceHeader": TRACE}

    def test_single_name_as_string(self, queue: Queue) -> None:
        """Section 2.1: a single attribute name may be given as a string."""
        queue.send("a")
        [m] = queue.receive(attribute_names="ApproximateReceiveCount")  # type: ignore[arg-type]
        assert m.attributes == {"ApproximateReceiveCount": "1"}

    def test_no_names_no_attributes(self, queue: Queue) -> None:
        """Section 2.1: without names no system attributes are returned; the boto3 shape
        then has no Attributes key."""
        queue.send("a")
        [m] = queue.receive(attribute_names=[])
        assert m.attributes == {}
        assert "Attributes" not in m.to_aws()

    def test_unknown_names_ignored(self, queue: Queue) -> None:
        """Section 2.1: unknown system attribute names are ignored, not refused."""
        queue.send("a")
        [m] = queue.receive(attribute_names=["Bogus", "SentTimestamp"])
        assert m.attributes == {"SentTimestamp": START_MS}

    def test_receiving_does_not_alter_user_attributes(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Section 6: receiving does not alter a message's attributes."""
        queue.send("a", message_attributes={"k": "v", "n": 5})
        first = queue.receive(visibility_timeout=0)[0].message_attributes
        second = queue.receive()[0].message_attributes
        assert (
            first
            == second
            == {
                "k": MessageAttributeValue("String", "v"),
                "n": MessageAttributeValue("Number", "5"),
            }
        )


class TestMessageAttributeFiltering:
    """MessageAttributeNames: names, All, .*, * or prefix foo.* (section 2.1)."""

    @pytest.mark.parametrize(
        ("names", "expected"),
        [
            (["All"], sorted(USER)),
            ([".*"], sorted(USER)),
            (["*"], sorted(USER)),
            (["Hello", "General"], ["General", "Hello"]),
            # "X.*" selects every name starting with X, the dot included or not:
            # AWS returned Hello and Help.Me for "Hel.*" (issue 12, section 6).
            (["foo.*"], ["foo.bar", "foo.baz", "foox"]),
            (["Help.*"], ["Help.Me"]),
            (["Hel.*"], ["Hello", "Help.Me"]),
            (["foo.b.*"], ["foo.bar", "foo.baz"]),
            (["Hel.*", "General"], ["General", "Hello", "Help.Me"]),
            (["foo.bar", "Hello"], ["Hello", "foo.bar"]),
            (["hello"], []),  # names are case-sensitive
            (["Nope"], []),
            (["foo"], []),
            ([], []),
            (["All", "Nope"], sorted(USER)),
        ],
    )
    def test_selection(self, queue: Queue, names: list[str], expected: list[str]) -> None:
        """Section 2.1: the returned user attributes are exactly the selected ones;
        non-existent names are silently ignored."""
        queue.send("a", message_attributes=USER)
        [m] = queue.receive(message_attribute_names=names)
        assert sorted(m.message_attributes) == expected
        for name in expected:
            assert m.message_attributes[name] == MessageAttributeValue("String", USER[name])
        if not expected:
            assert m.md5_of_message_attributes is None
        queue._check()

    def test_default_returns_everything(self, queue: Queue) -> None:
        """Section 2.1: The Pythonic default asks for all system and user attributes."""
        queue.send("a", message_attributes={"k": "v"})
        [m] = queue.receive()
        assert set(m.message_attributes) == {"k"}
        assert "SentTimestamp" in m.attributes

    def test_binary_attribute_round_trip(self, queue: Queue) -> None:
        """Section 6: Binary values come back as the same bytes."""
        queue.send(
            "a", message_attributes={"b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}}
        )
        [m] = queue.receive()
        assert m.message_attributes["b"].binary_value == b"\x00\xff"
        assert m.to_aws()["MessageAttributes"] == {
            "b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}
        }


class TestReceiveShape:
    """The received Message record (section 2.1)."""

    def test_message_fields(self, queue: Queue) -> None:
        """Section 2.1: MessageId, ReceiptHandle, MD5OfBody and Body are always present."""
        sent = queue.send("hello")
        [m] = queue.receive()
        assert m.message_id == sent.message_id
        assert m.body == "hello"
        assert m.md5_of_body == sent.md5_of_body
        out = m.to_aws()
        assert out["MessageId"] == sent.message_id
        assert out["ReceiptHandle"] == m.receipt_handle
        assert out["MD5OfBody"] == "5d41402abc4b2a76b9719d911017c592"
        assert out["Body"] == "hello"

    def test_message_ids_unique(self, queue: Queue) -> None:
        """Section 4: every send gets its own MessageId (a UUID, <= 100 chars)."""
        ids = {queue.send("x").message_id for _ in range(200)}
        assert len(ids) == 200
        assert all(len(i) == 36 and len(i) <= 100 for i in ids)

    def test_max_messages(self, queue: Queue) -> None:
        """Section 2.1: a receive returns at most MaxNumberOfMessages (default 1)."""
        for i in range(15):
            queue.send(str(i))
        assert len(queue.receive()) == 1
        assert len(queue.receive(3)) == 3
        assert len(queue.receive(10)) == 10
        assert len(queue.receive(10)) == 1
        assert queue.receive(10) == []
        queue._check()

    def test_each_message_at_most_once_per_receive(self, queue: Queue) -> None:
        """Section 10: one receive never returns the same message twice."""
        for i in range(5):
            queue.send(str(i))
        ms = queue.receive(10, visibility_timeout=0)
        assert len({m.message_id for m in ms}) == len(ms) == 5
