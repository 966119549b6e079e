"""FifoQueue send rules: queue names, MessageGroupId, MessageDeduplicationId,
per-message DelaySeconds and sequence numbers (``docs/aws-behaviour.md`` sections
2.1, 4 and 9)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsqueue import FifoQueue, ManualClock, Message
from sqsqueue._message import SEQ_MASK
from sqsqueue._ordering import marker_digit, markers, sequence_number
from sqsqueue.errors import InvalidParameterValue, MissingParameter

START = 1_700_000_000.0
MISSING_GROUP = "The request must contain the parameter MessageGroupId."
MISSING_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
BAD_IDS = ["", "a" * 129, "has space"]


def id_error(param: str, value: str) -> str:
    """AWS's text for an invalid FIFO id (section 2.1, AWS-obs 2025-07-30)."""
    return (
        f"Value {value} for parameter {param} is invalid. Reason: {param} can only "
        "include alphanumeric and punctuation characters. 1 to 128 in length."
    )


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


class TestQueueName:
    """A FIFO queue name ends in ".fifo" and has at most 80 characters in all."""

    def test_name_without_fifo_suffix_is_rejected(self, clock: ManualClock) -> None:
        """Section 2.1: FIFO queue names must end in `.fifo`; otherwise
        InvalidParameterValue (AWS-obs code)."""
        with pytest.raises(InvalidParameterValue):
            FifoQueue("x", clock=clock)

    def test_eighty_characters_with_the_suffix_are_accepted(self, clock: ManualClock) -> None:
        """Section 4: a queue name has at most 80 characters, `.fifo` included."""
        name = "a" * 75 + ".fifo"
        q = FifoQueue(name, clock=clock)
        assert q.name == name
        assert q.url.endswith("/" + name)
        assert q.arn.endswith(":" + name)

    def test_eighty_one_characters_are_rejected(self, clock: ManualClock) -> None:
        """Section 4: the `.fifo` suffix counts toward the 80-character limit."""
        with pytest.raises(InvalidParameterValue):
            FifoQueue("a" * 76 + ".fifo", clock=clock)

    @pytest.mark.parametrize("name", [".fifo", "a b.fifo", "a.b.fifo", "a.FIFO", "a.fifo.x"])
    def test_malformed_names_are_rejected(self, clock: ManualClock, name: str) -> None:
        """Section 2.1: `[A-Za-z0-9_-]` plus the `.fifo` suffix, at least one
        character before it."""
        with pytest.raises(InvalidParameterValue):
            FifoQueue(name, clock=clock)

    def test_valid_characters_are_accepted(self, clock: ManualClock) -> None:
        """Section 2.1: letters, digits, hyphens and underscores are allowed."""
        assert FifoQueue("Orders_2-x.fifo", clock=clock).name == "Orders_2-x.fifo"


class TestMessageGroupId:
    """Every FIFO send needs a valid MessageGroupId."""

    def test_send_without_group_id_is_missing_parameter(self, fifo: FifoQueue) -> None:
        """Section 2.1: FIFO without MessageGroupId -> MissingParameter
        `The request must contain the parameter MessageGroupId.` (AWS-obs)."""
        with pytest.raises(MissingParameter) as exc:
            fifo.send("hello")
        assert exc.value.message == MISSING_GROUP
        assert exc.value.code == "MissingParameter"
        assert len(fifo) == 0
        fifo._check()

    def test_explicit_dedup_id_does_not_replace_group_id(self, clock: ManualClock) -> None:
        """Section 2.1: MessageGroupId is required on FIFO queues whatever else
        the request holds."""
        q = FifoQueue("plain.fifo", clock=clock)
        with pytest.raises(MissingParameter) as exc:
            q.send("hello", deduplication_id="d1")
        assert exc.value.message == MISSING_GROUP
        assert len(q) == 0

    @pytest.mark.parametrize("bad", BAD_IDS)
    def test_invalid_group_id_is_rejected_with_aws_text(self, fifo: FifoQueue, bad: str) -> None:
        """Section 2.1: empty, 129-character or space-containing MessageGroupId
        -> InvalidParameterValue with AWS's text (AWS-obs 2025-07-30)."""
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.send("hello", group_id=bad)
        assert exc.value.message == id_error("MessageGroupId", bad)
        assert len(fifo) == 0
        fifo._check()

    @pytest.mark.parametrize("good", ["a" * 128, PUNCTUATION, "Az09"])
    def test_valid_group_ids_are_accepted_and_returned(self, fifo: FifoQueue, good: str) -> None:
        """Section 4: MessageGroupId is 1..128 alphanumeric or punctuation
        characters, returned as the MessageGroupId system attribute (section 6)."""
        fifo.send("hello", group_id=good)
        [m] = fifo.receive()
        assert m.attributes["MessageGroupId"] == good
        fifo._check()


class TestMessageDeduplicationId:
    """Without content-based deduplication every send needs a valid dedup id."""

    def test_missing_dedup_id_is_rejected(self, clock: ManualClock) -> None:
        """Section 2.1: FIFO send without MessageDeduplicationId and without
        ContentBasedDeduplication -> InvalidParameterValue (AWS-obs text)."""
        q = FifoQueue("plain.fifo", clock=clock)
        with pytest.raises(InvalidParameterValue) as exc:
            q.send("hello", group_id="g1")
        assert exc.value.message == MISSING_DEDUP
        assert len(q) == 0
        q._check()

    def test_explicit_dedup_id_is_enough(self, clock: ManualClock) -> None:
        """Section 2.1: with an explicit MessageDeduplicationId no
        content-based deduplication is needed."""
        q = FifoQueue("plain.fifo", clock=clock)
        q.send("hello", group_id="g1", deduplication_id="d1")
        assert bodies(q.receive()) == ["hello"]
        q._check()

    @pytest.mark.parametrize("bad", BAD_IDS)
    def test_invalid_dedup_id_is_rejected_with_aws_text(self, fifo: FifoQueue, bad: str) -> None:
        """Section 2.1: empty, 129-character or space-containing
        MessageDeduplicationId -> InvalidParameterValue with AWS's text."""
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.send("hello", group_id="g1", deduplication_id=bad)
        assert exc.value.message == id_error("MessageDeduplicationId", bad)
        assert len(fifo) == 0

    @pytest.mark.parametrize("good", ["d" * 128, PUNCTUATION])
    def test_valid_dedup_ids_are_accepted(self, fifo: FifoQueue, good: str) -> None:
        """Section 4: MessageDeduplicationId is 1..128 alphanumeric or
        punctuation characters."""
        fifo.send("hello", group_id="g1", deduplication_id=good)
        [m] = fifo.receive()
        assert m.attributes["MessageDeduplicationId"] == good


class TestPerMessageDelay:
    """FIFO queues refuse a per-message delay; the queue delay always applies."""

    @pytest.mark.parametrize("delay", [2, 900])
    def test_positive_message_delay_is_rejected(self, fifo: FifoQueue, delay: int) -> None:
        """Section 2.1: FIFO `DelaySeconds>0` -> InvalidParameterValue `Value 2 for
        parameter DelaySeconds is invalid. Reason: The request include parameter
        that is not valid for this queue type.` (AWS-obs)."""
        with pytest.raises(InvalidParameterValue) as exc:
            fifo.send("hello", group_id="g1", delay_seconds=delay)
        assert exc.value.message == (
            f"Value {delay} for parameter DelaySeconds is invalid. Reason: The request "
            "include parameter that is not valid for this queue type."
        )
        assert len(fifo) == 0

    def test_zero_message_delay_is_accepted_and_queue_delay_applies(
        self, clock: ManualClock
    ) -> None:
        """Section 2.1: `DelaySeconds=0` is accepted on FIFO and the queue-level
        delay still applies (AWS-obs 2024-04-30, 2025-07-31)."""
        q = FifoQueue("delayed.fifo", clock=clock, content_based_deduplication=True)
        q.set_attributes(DelaySeconds=10)
        q.send("hello", group_id="g1", delay_seconds=0)
        assert q.get_attributes(["ApproximateNumberOfMessagesDelayed"]) == {
            "ApproximateNumberOfMessagesDelayed": "1"
        }
        assert q.receive() == []
        clock.advance(9)
        assert q.receive() == []
        clock.advance(1)
        assert bodies(q.receive()) == ["hello"]
        q._check()


class TestSequenceNumber:
    """Sequence numbers are large decimal strings, strictly increasing per queue."""

    def test_sequence_numbers_are_large_increasing_and_not_consecutive(
        self, fifo: FifoQueue
    ) -> None:
        """Section 4: SequenceNumber is a decimal string, large, non-consecutive
        and increasing (observed 20-digit values)."""
        results = [fifo.send(f"m{i}", group_id=f"g{i % 3}") for i in range(20)]
        numbers = [r.sequence_number for r in results]
        assert all(n is not None and n.isdigit() and len(n) >= 18 for n in numbers)
        values = [int(n) for n in numbers if n is not None]
        assert all(b > a for a, b in itertools.pairwise(values))
        assert any(b - a > 1 for a, b in itertools.pairwise(values))
        fifo._check()

    @pytest.mark.parametrize(
        "account_id",
        [
            "000000000000",  # the endpoint's default: twelve zeros appeared in one (issue 12 §6)
            "123456789012",  # the fixtures' account
            "180000000000",  # the old numbers' leading digits
            "111111111111",
            "100000000001",
            "987654321098",
        ],
    )
    def test_sequence_numbers_never_contain_the_account_id(
        self, clock: ManualClock, account_id: str
    ) -> None:
        """Issue 12 §6: a sequence number must not contain the queue's account id,
        by construction (snapshot tools that mask account ids corrupt it). Checked
        on sends and on counters up to the largest sequence number a queue can
        reach, with every random low part."""
        q = FifoQueue(
            "seq.fifo", clock=clock, account_id=account_id, content_based_deduplication=True
        )
        numbers = [q.send(f"m{i}", group_id="g").sequence_number for i in range(300)]
        assert all(n is not None and account_id not in n and len(n) == 20 for n in numbers)
        marks = markers(marker_digit(account_id))
        for seq in [1, 2, 999, 10**6, 10**9 + 7, 2**39, 2**40 - 1]:
            for low in range(0, 1 << 10, 37):
                text = str(sequence_number(seq, low, marks))
                assert account_id not in text and len(text) == 20

    @given(st.integers(1, 2**40 - 1), st.integers(0, 1023), st.sampled_from("123456789"))
    def test_a_sequence_number_is_its_data_digits_with_markers(
        self, seq: int, low: int, marker: str
    ) -> None:
        """The arithmetic is the rule written as text: 17 data digits, ``1``
        then ``seq << 10 | low``, with the marker after every 5 of them."""
        data = str(10**16 + (seq << 10 | low))
        text = f"{data[:5]}{marker}{data[5:10]}{marker}{data[10:15]}{marker}{data[15:]}"
        assert str(sequence_number(seq, low, markers(marker))) == text

    @given(st.from_regex(r"[0-9]{12}", fullmatch=True), st.integers(1, 2**40 - 1))
    def test_no_account_id_inside_any_sequence_number(self, account_id: str, seq: int) -> None:
        """Issue 12 §6, for any 12-digit account id: a marker digit at every 6th
        position keeps the account id out of every 12-digit window; numbers of one
        queue stay strictly increasing."""
        q = FifoQueue("seq.fifo", account_id=account_id, content_based_deduplication=True)
        q.send("a", group_id="g")
        values = []
        for offset in (0, 1):
            values.append(q._ordering.sequence_number(min(seq + offset, SEQ_MASK)))
        assert all(account_id not in str(v) and len(str(v)) == 20 for v in values)
        assert seq + 1 > SEQ_MASK or values[1] > values[0]

    def test_receive_returns_the_send_sequence_number(self, fifo: FifoQueue) -> None:
        """Section 6: SequenceNumber, MessageGroupId and MessageDeduplicationId
        are system attributes of a received FIFO message."""
        sent = fifo.send("hello", group_id="g1", deduplication_id="d1")
        [m] = fifo.receive()
        assert m.message_id == sent.message_id
        assert m.attributes["SequenceNumber"] == sent.sequence_number
        assert m.attributes["MessageGroupId"] == "g1"
        assert m.attributes["MessageDeduplicationId"] == "d1"

    def test_system_attributes_can_be_chosen(self, fifo: FifoQueue) -> None:
        """Section 2.1: only the system attributes asked for are returned."""
        sent = fifo.send("hello", group_id="g1")
        [m] = fifo.receive(attribute_names=["SequenceNumber"])
        assert dict(m.attributes) == {"SequenceNumber": sent.sequence_number}

    def test_sequence_numbers_keep_increasing_after_purge(self, fifo: FifoQueue) -> None:
        """Section 4: sequence numbers increase per queue; a purge does not
        restart them."""
        before = fifo.send("a", group_id="g1").sequence_number
        fifo.purge()
        after = fifo.send("b", group_id="g1").sequence_number
        assert before is not None and after is not None
        assert int(after) > int(before)
        fifo._check()
