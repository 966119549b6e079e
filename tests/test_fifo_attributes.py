"""FifoQueue attributes: defaults, the FIFO-only attributes and their rules,
and the retroactive queue delay (``docs/aws-behaviour.md`` §§2.1, 5 and 9)."""

from __future__ import annotations

import pytest

from sqsqueue import FifoQueue, ManualClock, Message
from sqsqueue.errors import InvalidAttributeValue
from tests._helpers import new_queue_attributes

START = 1_700_000_000.0


def bodies(messages: list[Message]) -> list[str]:
    return [m.body for m in messages]


def delayed(q: FifoQueue) -> int:
    return int(
        q.get_attributes(["ApproximateNumberOfMessagesDelayed"])[
            "ApproximateNumberOfMessagesDelayed"
        ]
    )


class TestDefaults:
    """A new FIFO queue has AWS's default attributes."""

    def test_new_fifo_queue_attributes(self, clock: ManualClock) -> None:
        """Section 2.1: defaults of a new queue (AWS-obs 2025-12-10); FIFO adds
        ContentBasedDeduplication false, DeduplicationScope queue, FifoQueue
        true, FifoThroughputLimit perQueue (AWS-obs 2025-08-19)."""
        q = FifoQueue("orders.fifo", clock=clock)
        assert q.attributes == {
            **new_queue_attributes("arn:aws:sqs:us-east-1:123456789012:orders.fifo"),
            "ContentBasedDeduplication": "false",
            "DeduplicationScope": "queue",
            "FifoQueue": "true",
            "FifoThroughputLimit": "perQueue",
        }

    def test_fifo_attributes_set_at_creation(self, clock: ManualClock) -> None:
        """Section 5: ContentBasedDeduplication, DeduplicationScope and
        FifoThroughputLimit can be given when the queue is created."""
        q = FifoQueue(
            "orders.fifo",
            clock=clock,
            attributes={
                "FifoQueue": "true",
                "ContentBasedDeduplication": "true",
                "DeduplicationScope": "messageGroup",
                "FifoThroughputLimit": "perMessageGroupId",
            },
        )
        assert q.get_attributes(
            ["FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"]
        ) == {
            "FifoQueue": "true",
            "ContentBasedDeduplication": "true",
            "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId",
        }


class TestFifoOnlyAttributes:
    """FifoThroughputLimit, DeduplicationScope and FifoQueue are validated together."""

    def test_per_group_throughput_needs_message_group_scope_at_creation(
        self, clock: ManualClock
    ) -> None:
        """Section 5: `perMessageGroupId` is only allowed if
        DeduplicationScope=`messageGroup` [BM]."""
        with pytest.raises(InvalidAttributeValue):
            FifoQueue("orders.fifo", clock=clock, fifo_throughput_limit="perMessageGroupId")

    def test_per_group_throughput_needs_message_group_scope_on_set(self, fifo: FifoQueue) -> None:
        """Section 5: the same rule on SetQueueAttributes; a refused update
        changes nothing (design principle 6)."""
        with pytest.raises(InvalidAttributeValue):
            fifo.set_attributes(
                {"FifoThroughputLimit": "perMessageGroupId", "VisibilityTimeout": "60"}
            )
        assert fifo.attributes["FifoThroughputLimit"] == "perQueue"
        assert fifo.attributes["VisibilityTimeout"] == "30"

    def test_high_throughput_can_be_switched_on_in_one_call(self, fifo: FifoQueue) -> None:
        """Section 5: high throughput = DeduplicationScope=messageGroup +
        FifoThroughputLimit=perMessageGroupId, settable together."""
        fifo.set_attributes(
            {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
        )
        assert fifo.attributes["DeduplicationScope"] == "messageGroup"
        assert fifo.attributes["FifoThroughputLimit"] == "perMessageGroupId"

    def test_scope_cannot_go_back_to_queue_under_per_group_throughput(
        self, fifo: FifoQueue
    ) -> None:
        """Section 5: the combination rule is checked against the current values."""
        fifo.set_attributes(
            {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
        )
        with pytest.raises(InvalidAttributeValue):
            fifo.set_attributes({"DeduplicationScope": "queue"})
        assert fifo.attributes["DeduplicationScope"] == "messageGroup"
        fifo.set_attributes({"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue"})
        assert fifo.attributes["DeduplicationScope"] == "queue"

    def test_message_group_scope_alone_is_allowed(self, fifo: FifoQueue) -> None:
        """Section 5: any other combination is normal throughput "and
        deduplication occurs as specified"."""
        fifo.set_attributes(deduplication_scope="messageGroup")
        assert fifo.attributes["DeduplicationScope"] == "messageGroup"
        assert fifo.attributes["FifoThroughputLimit"] == "perQueue"

    @pytest.mark.parametrize(
        ("name", "value"),
        [
            ("DeduplicationScope", "group"),
            ("FifoThroughputLimit", "perGroup"),
            ("ContentBasedDeduplication", "maybe"),
        ],
    )
    def test_bad_values_are_rejected(self, fifo: FifoQueue, name: str, value: str) -> None:
        """Section 5: DeduplicationScope is `messageGroup`|`queue`,
        FifoThroughputLimit `perQueue`|`perMessageGroupId`,
        ContentBasedDeduplication `true`|`false`; otherwise InvalidAttributeValue
        (section 3.1)."""
        before = fifo.attributes[name]
        with pytest.raises(InvalidAttributeValue):
            fifo.set_attributes({name: value})
        assert fifo.attributes[name] == before

    def test_fifo_queue_false_is_refused(self, fifo: FifoQueue) -> None:
        """Section 2.1: `FifoQueue=false` on FIFO -> InvalidAttributeValue
        `Invalid value for the parameter FifoQueue. Reason: Modifying queue type
        is not supported.` (AWS-obs 2024-05-14)."""
        with pytest.raises(InvalidAttributeValue) as exc:
            fifo.set_attributes({"FifoQueue": "false"})
        assert exc.value.message == (
            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is "
            "not supported."
        )
        assert fifo.attributes["FifoQueue"] == "true"

    def test_fifo_queue_true_is_a_no_op(self, fifo: FifoQueue) -> None:
        """Section 2.1: `FifoQueue=true` on a FIFO queue is accepted (no-op)."""
        fifo.set_attributes({"FifoQueue": "true"})
        assert fifo.attributes["FifoQueue"] == "true"


class TestRetroactiveDelay:
    """Changing a FIFO queue's DelaySeconds applies to messages already stored."""

    def test_lowering_the_delay_frees_stored_messages(self, clock: ManualClock) -> None:
        """Section 9: changing queue DelaySeconds on FIFO is retroactive: a
        message sent under delay 60 is receivable at once when it is set to 0."""
        q = FifoQueue("slow.fifo", clock=clock, content_based_deduplication=True, delay_seconds=60)
        q.send("m", group_id="g1")
        assert q.receive() == []
        assert delayed(q) == 1
        clock.advance(10)
        q.set_attributes(DelaySeconds=0)
        assert delayed(q) == 0
        assert bodies(q.receive()) == ["m"]
        q._check()

    def test_raising_the_delay_holds_back_stored_messages(
        self, fifo: FifoQueue, clock: ManualClock
    ) -> None:
        """Section 9: raising DelaySeconds on FIFO delays stored messages too,
        counted from when they were sent."""
        fifo.send("m", group_id="g1")
        clock.advance(10)
        fifo.set_attributes({"DelaySeconds": "60"})
        assert delayed(fifo) == 1
        assert fifo.receive() == []
        clock.advance(49)  # +59
        assert fifo.receive() == []
        clock.advance(1)  # +60
        assert bodies(fifo.receive()) == ["m"]
        fifo._check()

    @pytest.mark.usefixtures("autojump")
    def test_long_poll_sees_a_lowered_delay(self, clock: ManualClock) -> None:
        """Section 12: a long poll returns when a message becomes deliverable; a
        delayed message ends its delay at the new, shorter time."""
        q = FifoQueue("slow.fifo", clock=clock, content_based_deduplication=True, delay_seconds=60)
        q.send("m", group_id="g1")
        q.set_attributes(DelaySeconds=5)
        assert bodies(q.receive(wait_time_seconds=20)) == ["m"]
        assert clock.now() == START + 5
