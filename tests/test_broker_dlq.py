"""Dead-letter queues: RedrivePolicy, RedriveAllowPolicy and the move at
receive time (docs/aws-behaviour.md §§4, 5, 9, 10, 11)."""

from __future__ import annotations

import json

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, MessageAttributeValue, Queue, errors
from tests._helpers import counts

ACCOUNT = "123456789012"


def check_all(broker: Broker) -> None:
    for q in broker:
        q._check()


def redrive(dlq: Queue | FifoQueue, count: int) -> dict[str, object]:
    return {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": count}


class TestRedrivePolicyAttribute:
    def test_as_json_string(self, broker: Broker) -> None:
        """Section 5: RedrivePolicy is JSON; GetQueueAttributes returns it as a
        JSON string with maxReceiveCount a number."""
        dlq = broker.create_queue("dlq")
        text = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": "5"})
        src = broker.create_queue("src", attributes={"RedrivePolicy": text})
        got = json.loads(src.get_attributes(["RedrivePolicy"])["RedrivePolicy"])
        assert got == {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 5}

    def test_as_dict(self, broker: Broker) -> None:
        """Section 5: a dict is accepted too (Pythonic API)."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 7))
        got = json.loads(src.get_attributes(["RedrivePolicy"])["RedrivePolicy"])
        assert got == {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 7}

    def test_set_later(self, broker: Broker) -> None:
        """Section 5: SetQueueAttributes can add a RedrivePolicy."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src")
        src.set_attributes({"RedrivePolicy": json.dumps(redrive(dlq, 2))})
        assert "RedrivePolicy" in src.get_attributes()

    @pytest.mark.parametrize("count", [1, 1000])
    def test_max_receive_count_bounds(self, broker: Broker, count: int) -> None:
        """Section 4: maxReceiveCount 1..1000 (UNCONFIRMED range, emulator text)."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, count))
        assert (
            json.loads(src.get_attributes(["RedrivePolicy"])["RedrivePolicy"])["maxReceiveCount"]
            == count
        )

    @pytest.mark.parametrize("count", [0, 1001, -1, "x", True])
    def test_max_receive_count_out_of_range(self, broker: Broker, count: object) -> None:
        """Section 4: maxReceiveCount outside 1..1000 is refused; nothing is created."""
        dlq = broker.create_queue("dlq")
        with pytest.raises(errors.InvalidAttributeValue, match="maxReceiveCount"):
            broker.create_queue("src", redrive_policy=redrive(dlq, count))  # type: ignore[arg-type]
        assert "src" not in broker

    def test_missing_member(self, broker: Broker) -> None:
        """Section 5: both deadLetterTargetArn and maxReceiveCount are required."""
        dlq = broker.create_queue("dlq")
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("src", redrive_policy={"deadLetterTargetArn": dlq.arn})
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("src", redrive_policy={"maxReceiveCount": 3})

    def test_invalid_json(self, broker: Broker) -> None:
        """Section 5: RedrivePolicy must be a JSON object."""
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("src", attributes={"RedrivePolicy": "{not json"})

    def test_target_must_exist(self, broker: Broker) -> None:
        """Section 5: the dead-letter queue must exist."""
        with pytest.raises(errors.InvalidParameterValue, match="RedrivePolicy"):
            broker.create_queue(
                "src",
                redrive_policy={
                    "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:missing",
                    "maxReceiveCount": 3,
                },
            )
        assert "src" not in broker

    def test_target_in_other_account_refused(self, broker: Broker) -> None:
        """Section 5: DLQ must be in the same account and region."""
        broker.create_queue("dlq")
        src = broker.create_queue("src")
        with pytest.raises(errors.SQSError):
            src.set_attributes(
                redrive_policy={
                    "deadLetterTargetArn": "arn:aws:sqs:us-east-1:999999999999:dlq",
                    "maxReceiveCount": 3,
                }
            )
        assert "RedrivePolicy" not in src.get_attributes()

    @pytest.mark.parametrize("name", ["selfish", "selfish.fifo"])
    def test_queue_may_be_its_own_dlq(self, broker: Broker, name: str) -> None:
        """Issue 12 §6: real AWS accepted a SetQueueAttributes whose RedrivePolicy
        names the queue itself. The policy is stored and returned; messages past
        maxReceiveCount stay deliverable in place (UNCONFIRMED, package choice:
        the move would change nothing)."""
        q = (
            broker.create_queue(name, fifo_queue=True)
            if name.endswith(".fifo")
            else broker.create_queue(name)
        )
        q.set_attributes({"RedrivePolicy": json.dumps(redrive(q, 1))})
        got = json.loads(q.get_attributes(["RedrivePolicy"])["RedrivePolicy"])
        assert got == {"deadLetterTargetArn": q.arn, "maxReceiveCount": 1}
        assert broker.list_dead_letter_source_queues(q.url).queue_urls == (q.url,)
        kwargs = {"group_id": "g", "deduplication_id": "d"} if q.FIFO else {}
        sent = q.send("m", **kwargs)  # type: ignore[arg-type]
        for count in ("1", "2", "3"):
            [m] = q.receive(visibility_timeout=0)
            assert m.message_id == sent.message_id
            assert m.attributes["ApproximateReceiveCount"] == count
            assert "DeadLetterQueueSourceArn" not in m.attributes
        check_all(broker)

    def test_fifo_source_standard_dlq_refused(self, broker: Broker) -> None:
        """Section 5/9: the DLQ of a FIFO queue must be FIFO."""
        dlq = broker.create_queue("dlq")
        with pytest.raises(errors.SQSError):
            broker.create_queue("src.fifo", fifo_queue=True, redrive_policy=redrive(dlq, 3))
        assert "src.fifo" not in broker

    def test_standard_source_fifo_dlq_refused(self, broker: Broker) -> None:
        """Section 5: DLQ type must match (standard <-> standard)."""
        dlq = broker.create_queue("dlq.fifo", fifo_queue=True)
        src = broker.create_queue("src")
        with pytest.raises(errors.SQSError):
            src.set_attributes(redrive_policy=redrive(dlq, 3))
        assert "RedrivePolicy" not in src.get_attributes()

    def test_empty_string_removes(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): RedrivePolicy "" removes it; messages are no
        longer dead-lettered."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        src.set_attributes({"RedrivePolicy": ""})
        assert "RedrivePolicy" not in src.get_attributes()
        src.send("m")
        for _ in range(3):
            assert [m.body for m in src.receive(visibility_timeout=0)] == ["m"]
        assert counts(dlq) == (0, 0, 0)
        check_all(broker)


class TestRedriveAllowPolicy:
    def test_allow_all_default(self, broker: Broker) -> None:
        """Section 5: default allowAll."""
        dlq = broker.create_queue(
            "dlq", attributes={"RedriveAllowPolicy": {"redrivePermission": "allowAll"}}
        )
        broker.create_queue("src", redrive_policy=redrive(dlq, 3))
        assert "src" in broker

    def test_deny_all(self, broker: Broker) -> None:
        """Section 5: denyAll refuses every source queue."""
        dlq = broker.create_queue(
            "dlq",
            attributes={"RedriveAllowPolicy": json.dumps({"redrivePermission": "denyAll"})},
        )
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("src", redrive_policy=redrive(dlq, 3))
        assert "src" not in broker
        src = broker.create_queue("src2")
        with pytest.raises(errors.InvalidParameterValue):
            src.set_attributes(redrive_policy=redrive(dlq, 3))
        assert "RedrivePolicy" not in src.get_attributes()

    def test_by_queue(self, broker: Broker) -> None:
        """Section 5: byQueue admits exactly the listed source ARNs."""
        arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:"
        dlq = broker.create_queue(
            "dlq",
            redrive_allow_policy={
                "redrivePermission": "byQueue",
                "sourceQueueArns": [arn + "allowed"],
            },
        )
        allowed = broker.create_queue("allowed", redrive_policy=redrive(dlq, 3))
        assert "RedrivePolicy" in allowed.get_attributes()
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("denied", redrive_policy=redrive(dlq, 3))
        assert "denied" not in broker

    def test_by_queue_at_most_ten(self, broker: Broker) -> None:
        """Section 4/5: sourceQueueArns <= 10."""
        arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:"
        ten = [arn + f"s{i}" for i in range(10)]
        broker.create_queue(
            "dlq", redrive_allow_policy={"redrivePermission": "byQueue", "sourceQueueArns": ten}
        )
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue(
                "dlq2",
                redrive_allow_policy={
                    "redrivePermission": "byQueue",
                    "sourceQueueArns": [*ten, arn + "s10"],
                },
            )

    @pytest.mark.parametrize(
        "policy",
        [
            {"redrivePermission": "sometimes"},
            {"redrivePermission": "byQueue"},
            {"redrivePermission": "allowAll", "sourceQueueArns": []},
            {"redrivePermission": "byQueue", "sourceQueueArns": ["not-an-arn"]},
        ],
    )
    def test_invalid(self, broker: Broker, policy: dict[str, object]) -> None:
        """Section 5: sourceQueueArns only with byQueue; permission is one of three."""
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("dlq", redrive_allow_policy=policy)


class TestStandardDeadLetter:
    def test_max_receive_count_one(self, broker: Broker) -> None:
        """Section 11 (AWS-obs): maxReceiveCount=1: the first receive returns the
        message, the second receive attempt moves it."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        src.send("m")
        assert [m.body for m in src.receive(visibility_timeout=0)] == ["m"]
        assert src.receive(visibility_timeout=0) == []
        assert counts(src) == (0, 0, 0)
        assert counts(dlq) == (1, 0, 0)
        check_all(broker)

    def test_max_receive_count_three(self, broker: Broker, clock: ManualClock) -> None:
        """Section 11: moved when the ReceiveCount exceeds maxReceiveCount, i.e.
        on the 4th receive attempt with maxReceiveCount=3."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", visibility_timeout=10, redrive_policy=redrive(dlq, 3))
        src.send("m")
        for n in range(1, 4):
            [m] = src.receive()
            assert m.attributes["ApproximateReceiveCount"] == str(n)
            clock.advance(10)
        assert src.receive() == []
        [d] = dlq.receive()
        assert d.body == "m"
        check_all(broker)

    def test_moved_message_keeps_identity(self, broker: Broker, clock: ManualClock) -> None:
        """Section 10 (AWS-obs): MessageId, body, message attributes and
        AWSTraceHeader preserved; ApproximateReceiveCount continues ("2" on the
        first DLQ receive after maxReceiveCount=1); DeadLetterQueueSourceArn added."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
        sent = src.send(
            "body",
            message_attributes={"colour": MessageAttributeValue("String", string_value="red")},
            trace_header=trace,
        )
        [first] = src.receive(visibility_timeout=0)
        clock.advance(5)
        assert src.receive() == []
        [moved] = dlq.receive()
        assert moved.message_id == sent.message_id == first.message_id
        assert moved.body == "body"
        assert moved.md5_of_body == sent.md5_of_body
        assert moved.message_attributes == {
            "colour": MessageAttributeValue("String", string_value="red")
        }
        assert moved.md5_of_message_attributes == sent.md5_of_message_attributes
        assert moved.attributes["AWSTraceHeader"] == trace
        assert moved.attributes["ApproximateReceiveCount"] == "2"
        assert moved.attributes["DeadLetterQueueSourceArn"] == src.arn
        assert moved.attributes["SentTimestamp"] == first.attributes["SentTimestamp"]
        assert moved.attributes["SenderId"] == first.attributes["SenderId"]
        assert "DeadLetterQueueSourceArn" not in first.attributes
        check_all(broker)

    def test_retention_counts_from_original_send(self, broker: Broker, clock: ManualClock) -> None:
        """Section 10: "the expiration of a message is always based on its
        original enqueue timestamp": sent at t0, moved at t0+100, DLQ retention
        120 s -> gone from the DLQ at t0+120."""
        dlq = broker.create_queue("dlq", message_retention_period=120)
        src = broker.create_queue("src", visibility_timeout=100, redrive_policy=redrive(dlq, 1))
        t0 = clock.now()
        src.send("m")
        src.receive()
        clock.advance_to(t0 + 100)
        assert src.receive() == []  # moved now
        assert counts(dlq) == (1, 0, 0)
        clock.advance_to(t0 + 119.999)
        assert counts(dlq) == (1, 0, 0)
        clock.advance_to(t0 + 120)
        assert counts(dlq) == (0, 0, 0)
        assert dlq.receive() == []
        check_all(broker)

    def test_only_exhausted_messages_move(self, broker: Broker) -> None:
        """Section 11: only messages whose receive count exceeds the limit move;
        fresh ones are still delivered by the same receive."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        src.send("old")
        src.receive(visibility_timeout=0)
        src.send("new")
        got = src.receive(10)
        assert [m.body for m in got] == ["new"]
        assert [m.body for m in dlq.receive(10)] == ["old"]
        check_all(broker)

    def test_deleted_dlq_delivers_normally(self, broker: Broker) -> None:
        """Section 11 (UNCONFIRMED, package choice): with the DLQ gone, messages
        are delivered rather than lost."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        src.send("m")
        src.receive(visibility_timeout=0)
        broker.delete_queue(dlq.url)
        assert [m.body for m in src.receive()] == ["m"]
        check_all(broker)

    def test_dlq_listed_source(self, broker: Broker) -> None:
        """Section 2.1: the source is listed by ListDeadLetterSourceQueues."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 1))
        assert broker.list_dead_letter_source_queues(dlq.url).queue_urls == (src.url,)


class TestFifoDeadLetter:
    def _pair(self, broker: Broker, count: int, **kwargs: object) -> tuple[FifoQueue, FifoQueue]:
        dlq = broker.create_queue("dlq.fifo", fifo_queue=True, **kwargs)
        src = broker.create_queue(
            "src.fifo", fifo_queue=True, visibility_timeout=10, redrive_policy=redrive(dlq, count)
        )
        assert isinstance(dlq, FifoQueue) and isinstance(src, FifoQueue)
        return dlq, src

    def test_group_continues_after_head_dead_lettered(
        self, broker: Broker, clock: ManualClock
    ) -> None:
        """Section 9 (AWS-obs): maxReceiveCount=2, two receives, the third moves
        it; a new message in the same group is then receivable."""
        dlq, src = self._pair(broker, 2)
        src.send("m1", group_id="g", deduplication_id="d1")
        for n in (1, 2):
            [m] = src.receive()
            assert m.body == "m1"
            assert m.attributes["ApproximateReceiveCount"] == str(n)
            clock.advance(10)
        assert src.receive() == []  # moved
        src.send("m2", group_id="g", deduplication_id="d2")
        [m2] = src.receive()
        assert m2.body == "m2"
        [d] = dlq.receive()
        assert d.body == "m1"
        assert d.attributes["ApproximateReceiveCount"] == "3"
        check_all(broker)

    def test_later_messages_of_group_follow_same_receive(
        self, broker: Broker, clock: ManualClock
    ) -> None:
        """Section 9: the group is unblocked when its head is moved: the next
        message of the group comes in that same receive."""
        dlq, src = self._pair(broker, 1)
        src.send("m1", group_id="g", deduplication_id="d1")
        src.send("m2", group_id="g", deduplication_id="d2")
        assert [m.body for m in src.receive()] == ["m1"]
        clock.advance(10)
        assert [m.body for m in src.receive(10)] == ["m2"]
        assert [m.body for m in dlq.receive(10)] == ["m1"]
        check_all(broker)

    def test_dedup_id_replaced_by_message_id(self, broker: Broker, clock: ManualClock) -> None:
        """Section 9: on a move to a FIFO DLQ the dedup id is replaced with the
        original MessageId; group id, body and message id are kept."""
        dlq, src = self._pair(broker, 1)
        sent = src.send("m1", group_id="g", deduplication_id="my-dedup")
        src.receive()
        clock.advance(10)
        src.receive()
        [d] = dlq.receive()
        assert d.message_id == sent.message_id
        assert d.attributes["MessageDeduplicationId"] == sent.message_id
        assert d.attributes["MessageGroupId"] == "g"
        assert d.attributes["DeadLetterQueueSourceArn"] == src.arn
        assert d.attributes["ApproximateReceiveCount"] == "2"
        assert "SequenceNumber" in d.attributes
        check_all(broker)

    def test_enqueue_time_reset(self, broker: Broker, clock: ManualClock) -> None:
        """Section 9: for FIFO the enqueue timestamp (retention clock) resets on
        the move: sent t0, moved t0+100, DLQ retention 120 -> kept until t0+220."""
        dlq, src = self._pair(broker, 1, message_retention_period=120)
        t0 = clock.now()
        src.send("m1", group_id="g", deduplication_id="d1")
        src.receive(visibility_timeout=100)
        clock.advance_to(t0 + 100)
        assert src.receive() == []
        clock.advance_to(t0 + 219.999)
        assert counts(dlq) == (1, 0, 0)
        clock.advance_to(t0 + 220)
        assert counts(dlq) == (0, 0, 0)
        check_all(broker)

    def test_other_groups_unaffected(self, broker: Broker, clock: ManualClock) -> None:
        """Section 9: moving one group's head does not disturb other groups."""
        dlq, src = self._pair(broker, 1)
        src.send("a1", group_id="a", deduplication_id="a1")
        src.send("b1", group_id="b", deduplication_id="b1")
        assert [m.body for m in src.receive()] == ["a1"]
        clock.advance(10)
        assert [m.body for m in src.receive(10)] == ["b1"]
        assert [m.body for m in dlq.receive(10)] == ["a1"]
        check_all(broker)


class TestStandaloneDeadLetter:
    def test_queue_with_dead_letter_queue(self, clock: ManualClock) -> None:
        """Section 11: a standalone Queue(dead_letter_queue=, max_receive_count=3)
        dead-letters without a broker."""
        dlq = Queue("dlq", clock=clock)
        src = Queue("src", clock=clock, dead_letter_queue=dlq, max_receive_count=3)
        policy = json.loads(src.get_attributes(["RedrivePolicy"])["RedrivePolicy"])
        assert policy == {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 3}
        sent = src.send("m")
        for _ in range(3):
            assert [m.body for m in src.receive(visibility_timeout=0)] == ["m"]
        assert src.receive(visibility_timeout=0) == []
        [d] = dlq.receive()
        assert d.message_id == sent.message_id
        assert d.attributes["ApproximateReceiveCount"] == "4"
        assert d.attributes["DeadLetterQueueSourceArn"] == src.arn
        src._check()
        dlq._check()

    def test_fifo_standalone(self, clock: ManualClock) -> None:
        """Section 9: the same for FIFO queues."""
        dlq = FifoQueue("dlq.fifo", clock=clock)
        src = FifoQueue(
            "src.fifo",
            clock=clock,
            dead_letter_queue=dlq,
            max_receive_count=1,
            content_based_deduplication=True,
        )
        src.send("m", group_id="g")
        src.receive(visibility_timeout=0)
        assert src.receive(visibility_timeout=0) == []
        assert [m.body for m in dlq.receive()] == ["m"]
        src._check()
        dlq._check()

    def test_standalone_type_mismatch(self, clock: ManualClock) -> None:
        """Section 5: DLQ type must match, standalone too."""
        with pytest.raises(errors.SQSError):
            Queue("src", clock=clock, dead_letter_queue=FifoQueue("d.fifo", clock=clock))

    @pytest.mark.parametrize("count", [0, 1001])
    def test_standalone_count_range(self, clock: ManualClock, count: int) -> None:
        """Section 4: maxReceiveCount 1..1000."""
        with pytest.raises(errors.InvalidAttributeValue):
            Queue(
                "src",
                clock=clock,
                dead_letter_queue=Queue("d", clock=clock),
                max_receive_count=count,
            )
