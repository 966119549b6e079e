"""Message move tasks: StartMessageMoveTask, ListMessageMoveTasks,
CancelMessageMoveTask (docs/aws-behaviour.md §§2, 3.1, 4, 11)."""

from __future__ import annotations

import base64
import json
import threading

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, errors

ACCOUNT = "123456789012"
START_MS = 1_700_000_000_000


def check_all(broker: Broker) -> None:
    for q in broker:
        q._check()


def redrive(dlq: Queue | FifoQueue, count: int = 1) -> dict[str, object]:
    return {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": count}


def visible(q: Queue | FifoQueue) -> int:
    return int(q.get_attributes(["ApproximateNumberOfMessages"])["ApproximateNumberOfMessages"])


def dead_letter(src: Queue | FifoQueue, bodies: list[str], **send: str) -> None:
    """Send ``bodies`` to ``src`` (maxReceiveCount=1) and push them to its DLQ."""
    for body in bodies:
        src.send(body, **send)
    while True:
        got = src.receive(10, visibility_timeout=0)
        if not got:
            break
    assert visible(src) == 0


@pytest.fixture
def setup(broker: Broker) -> tuple[Queue | FifoQueue, Queue | FifoQueue, Queue | FifoQueue]:
    """A DLQ with two sources, and 3 messages from "src-a" and 2 from "src-b"
    dead-lettered into it."""
    dlq = broker.create_queue("dlq")
    a = broker.create_queue("src-a", redrive_policy=redrive(dlq))
    b = broker.create_queue("src-b", redrive_policy=redrive(dlq))
    dead_letter(a, ["a1", "a2", "a3"])
    dead_letter(b, ["b1", "b2"])
    assert visible(dlq) == 5
    return dlq, a, b


def bodies(q: Queue | FifoQueue) -> list[str]:
    out = []
    while True:
        got = q.receive(10)
        if not got:
            return sorted(out)
        out.extend(m.body for m in got)


class TestStart:
    def test_back_to_original_sources(self, broker: Broker, setup: tuple) -> None:
        """Section 11: DestinationArn omitted -> each message returns to the
        queue it was dead-lettered from."""
        dlq, a, b = setup
        broker.start_message_move_task(dlq.arn)
        assert visible(dlq) == 0
        assert bodies(a) == ["a1", "a2", "a3"]
        assert bodies(b) == ["b1", "b2"]
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "COMPLETED"
        assert task["ApproximateNumberOfMessagesMoved"] == 5
        assert task["ApproximateNumberOfMessagesToMove"] == 5
        check_all(broker)

    def test_to_destination(self, broker: Broker, setup: tuple) -> None:
        """Section 11: a custom DestinationArn receives every message."""
        dlq, a, b = setup
        dest = broker.create_queue("dest")
        broker.start_message_move_task(dlq.arn, destination_arn=dest.arn)
        assert bodies(dest) == ["a1", "a2", "a3", "b1", "b2"]
        assert visible(a) == visible(b) == visible(dlq) == 0
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["DestinationArn"] == dest.arn
        check_all(broker)

    def test_moved_messages_are_new(self, broker: Broker, clock: ManualClock) -> None:
        """Section 11: redriven messages are new messages: new MessageId,
        ApproximateReceiveCount starts again, new enqueue time, no
        DeadLetterQueueSourceArn; body and attributes kept."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq))
        sent = src.send("m", message_attributes={"k": "v"})
        src.receive(visibility_timeout=0)
        clock.advance(30)
        src.receive()
        [in_dlq] = dlq.receive(visibility_timeout=0)
        assert in_dlq.message_id == sent.message_id
        clock.advance(30)
        broker.start_message_move_task(dlq.arn)
        [back] = src.receive()
        assert back.message_id != sent.message_id
        assert back.body == "m"
        assert back.attributes["ApproximateReceiveCount"] == "1"
        assert back.attributes["SentTimestamp"] == str(START_MS + 60_000)
        assert "DeadLetterQueueSourceArn" not in back.attributes
        assert back.message_attributes.keys() == {"k"}
        assert back.md5_of_message_attributes == sent.md5_of_message_attributes
        check_all(broker)

    def test_moved_message_gets_full_max_receive_count(
        self, broker: Broker, clock: ManualClock
    ) -> None:
        """Section 11: the receive count restarts, so a redriven message is
        delivered maxReceiveCount times again before it is dead-lettered."""
        dlq = broker.create_queue("dlq")
        src = broker.create_queue("src", redrive_policy=redrive(dlq, 2))
        src.send("m")
        for _ in range(2):
            src.receive(visibility_timeout=0)
        assert src.receive(visibility_timeout=0) == []
        broker.start_message_move_task(dlq.arn)
        assert [m.body for m in src.receive(visibility_timeout=0)] == ["m"]
        assert [m.body for m in src.receive(visibility_timeout=0)] == ["m"]
        assert src.receive(visibility_timeout=0) == []
        assert visible(dlq) == 1
        check_all(broker)

    def test_in_flight_messages_not_moved(self, broker: Broker, setup: tuple) -> None:
        """Section 11: ApproximateNumberOfMessagesToMove is the visible backlog;
        messages in flight in the DLQ stay there."""
        dlq, _, _ = setup
        held = dlq.receive(2, visibility_timeout=300)
        assert len(held) == 2
        broker.start_message_move_task(dlq.arn)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["ApproximateNumberOfMessagesToMove"] == 3
        assert task["ApproximateNumberOfMessagesMoved"] == 3
        assert dlq.get_attributes(["ApproximateNumberOfMessagesNotVisible"]) == {
            "ApproximateNumberOfMessagesNotVisible": "2"
        }
        check_all(broker)

    def test_fifo_to_fifo(self, broker: Broker) -> None:
        """Section 11: FIFO DLQ redrive goes to a FIFO queue, in group order."""
        dlq = broker.create_queue("dlq.fifo", fifo_queue=True)
        src = broker.create_queue(
            "src.fifo",
            fifo_queue=True,
            content_based_deduplication=True,
            redrive_policy=redrive(dlq),
        )
        dead_letter(src, ["m1", "m2", "m3"], group_id="g")
        assert visible(dlq) == 3
        broker.start_message_move_task(dlq.arn)
        got = src.receive(10)
        assert [m.body for m in got] == ["m1", "m2", "m3"]
        assert {m.attributes["MessageGroupId"] for m in got} == {"g"}
        check_all(broker)

    def test_fifo_to_standard_destination_refused(self, broker: Broker) -> None:
        """Section 11: "FIFO DLQ redrive must target a FIFO queue"."""
        dlq = broker.create_queue("dlq.fifo", fifo_queue=True)
        broker.create_queue("src.fifo", fifo_queue=True, redrive_policy=redrive(dlq))
        dest = broker.create_queue("dest")
        with pytest.raises(errors.InvalidParameterValue):
            broker.start_message_move_task(dlq.arn, destination_arn=dest.arn)
        assert broker.list_message_move_tasks(dlq.arn) == []

    def test_destination_same_as_source_refused(self, broker: Broker, setup: tuple) -> None:
        """Section 11: a move task moves a DLQ's messages *to another* queue;
        the DLQ itself as destination is refused (it would never finish)."""
        dlq, _, _ = setup
        with pytest.raises(errors.InvalidParameterValue):
            broker.start_message_move_task(dlq.arn, destination_arn=dlq.arn)
        assert visible(dlq) == 5
        assert broker.list_message_move_tasks(dlq.arn) == []

    def test_source_not_a_dlq(self, broker: Broker) -> None:
        """Section 11 (AWS-obs): a source no queue points at ->
        InvalidParameterValue "Source queue must be configured as a Dead Letter Queue."."""
        q = broker.create_queue("plain")
        with pytest.raises(errors.InvalidParameterValue) as info:
            broker.start_message_move_task(q.arn)
        assert info.value.message == "Source queue must be configured as a Dead Letter Queue."

    def test_unknown_source(self, broker: Broker) -> None:
        """Section 11/3.1 (AWS-obs): unknown source -> ResourceNotFoundException
        (404) naming SourceArn."""
        with pytest.raises(errors.ResourceNotFoundException) as info:
            broker.start_message_move_task(f"arn:aws:sqs:us-east-1:{ACCOUNT}:missing")
        assert info.value.http_status == 404
        assert info.value.message == (
            "The resource that you specified for the SourceArn parameter doesn't exist."
        )

    def test_unknown_destination(self, broker: Broker, setup: tuple) -> None:
        """Section 11 (AWS-obs): missing destination -> ResourceNotFoundException
        naming DestinationArn; nothing moves."""
        dlq, _, _ = setup
        with pytest.raises(errors.ResourceNotFoundException) as info:
            broker.start_message_move_task(
                dlq.arn, destination_arn=f"arn:aws:sqs:us-east-1:{ACCOUNT}:missing"
            )
        assert info.value.http_status == 404
        assert info.value.message == (
            "The resource that you specified for the DestinationArn parameter doesn't exist."
        )
        assert visible(dlq) == 5
        assert broker.list_message_move_tasks(dlq.arn) == []

    def test_only_one_active_task_per_source(self, broker: Broker, setup: tuple) -> None:
        """Section 11 (AWS-obs): a second start while one runs is refused."""
        dlq, _, _ = setup
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
        with pytest.raises(errors.InvalidParameterValue) as info:
            broker.start_message_move_task(dlq.arn)
        assert info.value.message == (
            "There is already a task running. Only one active task is allowed for a "
            "source queue arn at a given time."
        )
        assert len(broker.list_message_move_tasks(dlq.arn, max_results=10)) == 1

    def test_new_task_after_completion(self, broker: Broker, setup: tuple) -> None:
        """Section 11: the limit is on *active* tasks; a finished task frees it."""
        dlq, a, _ = setup
        sink = broker.create_queue("sink")
        broker.start_message_move_task(dlq.arn, destination_arn=sink.arn)
        dead_letter(a, ["a4"])
        broker.start_message_move_task(dlq.arn)
        tasks = broker.list_message_move_tasks(dlq.arn, max_results=10)
        assert [t["Status"] for t in tasks] == ["COMPLETED", "COMPLETED"]
        assert [t["ApproximateNumberOfMessagesMoved"] for t in tasks] == [1, 5]
        assert bodies(a) == ["a4"]

    @pytest.mark.parametrize("rate", [0, 501, -1])
    def test_rate_out_of_range(self, broker: Broker, setup: tuple, rate: int) -> None:
        """Section 4: MaxNumberOfMessagesPerSecond max 500."""
        dlq, _, _ = setup
        with pytest.raises(errors.InvalidParameterValue):
            broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=rate)
        assert visible(dlq) == 5

    def test_task_handle_decodes(self, broker: Broker, setup: tuple) -> None:
        """Section 11 (AWS-obs): TaskHandle is base64 of {"taskId", "sourceArn"}."""
        dlq, _, _ = setup
        handle = broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
        decoded = json.loads(base64.b64decode(handle))
        assert set(decoded) == {"taskId", "sourceArn"}
        assert decoded["sourceArn"] == dlq.arn
        assert isinstance(decoded["taskId"], str) and decoded["taskId"]
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["TaskHandle"] == handle


class TestRetention:
    def test_expired_dlq_messages_not_redriven(self, broker: Broker, clock: ManualClock) -> None:
        """Section 10: expiry counts from the original enqueue time; a message
        that expired in the DLQ (even if nothing touched the DLQ since) is
        neither counted nor moved back to life."""
        dlq = broker.create_queue("dlq", message_retention_period=60)
        src = broker.create_queue("src", redrive_policy=redrive(dlq))
        dead_letter(src, ["old"])
        clock.advance(200)
        broker.start_message_move_task(dlq.arn)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["ApproximateNumberOfMessagesToMove"] == 0
        assert task["ApproximateNumberOfMessagesMoved"] == 0
        assert src.receive(10) == []
        check_all(broker)

    def test_messages_expiring_during_task_not_moved(
        self, broker: Broker, clock: ManualClock
    ) -> None:
        """Section 10: a rate-limited task does not move messages that expired
        in the DLQ while it ran. The task moves one message per second of the
        clock whether or not anyone looks; here the DLQ's 60 s retention (counted
        from the original send) ends at 60 s, before the second move is due."""
        dlq = broker.create_queue("dlq", message_retention_period=60)
        src = broker.create_queue("src", redrive_policy=redrive(dlq))
        dead_letter(src, ["m1", "m2", "m3"])
        clock.advance(58)
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
        other = broker.create_queue("other")
        clock.advance(1)
        other.send("tick")  # drives the task: one moved at 59 s
        assert len(src._records) == 1
        clock.advance(100)  # the other two expired at 60 s, when the next move was due
        other.send("tick")
        assert len(src._records) == 1
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "COMPLETED"
        assert task["ApproximateNumberOfMessagesMoved"] == 1
        check_all(broker)


class TestRateAndLaziness:
    def test_rate_two_per_second(self, broker: Broker, clock: ManualClock, setup: tuple) -> None:
        """Section 11: at most MaxNumberOfMessagesPerSecond per second of the
        broker's clock: 2 after 1 s, 3 after 1.5 s, 4 after 2 s, all 5 by 3 s."""
        dlq, a, b = setup
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=2)
        assert visible(dlq) == 5
        clock.advance(1)
        assert visible(dlq) == 3
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["ApproximateNumberOfMessagesMoved"] == 2
        assert task["Status"] == "RUNNING"
        assert task["MaxNumberOfMessagesPerSecond"] == 2
        clock.advance(0.25)  # 1.25 s: 2.5 allowed, still 2 moved
        assert visible(dlq) == 3
        clock.advance(0.25)  # 1.5 s: 3 allowed
        assert visible(dlq) == 2
        clock.advance(0.5)  # 2 s: 4
        assert visible(dlq) == 1
        clock.advance(1)  # 3 s: all 5
        assert visible(dlq) == 0
        assert visible(a) + visible(b) == 5
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "COMPLETED"
        assert task["ApproximateNumberOfMessagesMoved"] == 5
        assert "TaskHandle" not in task
        check_all(broker)

    def test_lazy_without_threads(self, broker: Broker, clock: ManualClock, setup: tuple) -> None:
        """Design principle 2 / section 11: moving happens lazily inside broker
        and queue operations; with no operation, nothing moves."""
        dlq, a, b = setup
        threads = threading.active_count()
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=2)
        assert threading.active_count() == threads
        clock.advance(10)
        # Nothing has run since: the DLQ's records are still there.
        assert len(dlq._records) == 5
        assert len(a._records) == len(b._records) == 0
        # Any operation on any queue of the broker drives the task.
        other = broker.create_queue("other")
        other.send("x")
        assert len(dlq._records) == 0
        assert len(a._records) + len(b._records) == 5
        check_all(broker)

    def test_operation_on_unrelated_queue_drives(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11: a receive on any queue of the broker advances the task."""
        dlq, _, _ = setup
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=2)
        other = broker.create_queue("other")
        clock.advance(1)
        assert other.receive() == []
        assert len(dlq._records) == 3

    def test_started_timestamp_ms(self, broker: Broker, clock: ManualClock, setup: tuple) -> None:
        """Section 11: StartedTimestamp in epoch milliseconds."""
        dlq, _, _ = setup
        clock.advance(1.5)
        broker.start_message_move_task(dlq.arn)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["StartedTimestamp"] == START_MS + 1500


class TestList:
    def test_most_recent_first_default_one(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11: up to 10 most recent (default 1); TaskHandle only for
        RUNNING; DestinationArn/MaxNumberOfMessagesPerSecond only if given."""
        dlq, a, _ = setup
        dest = broker.create_queue("dest")
        broker.start_message_move_task(dlq.arn, destination_arn=dest.arn)  # completes
        dead_letter(a, ["a4", "a5"])
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
        [latest] = broker.list_message_move_tasks(dlq.arn)
        assert latest["Status"] == "RUNNING"
        assert "TaskHandle" in latest
        assert "DestinationArn" not in latest
        assert latest["MaxNumberOfMessagesPerSecond"] == 1
        assert latest["ApproximateNumberOfMessagesToMove"] == 2
        assert latest["SourceArn"] == dlq.arn
        assert "FailureReason" not in latest
        both = broker.list_message_move_tasks(dlq.arn, max_results=10)
        assert [t["Status"] for t in both] == ["RUNNING", "COMPLETED"]
        older = both[1]
        assert "TaskHandle" not in older
        assert older["DestinationArn"] == dest.arn
        assert "MaxNumberOfMessagesPerSecond" not in older

    def test_at_most_ten(self, broker: Broker, setup: tuple) -> None:
        """Section 4: ListMessageMoveTasks returns at most 10; MaxResults 1..10."""
        dlq, a, _ = setup
        sink = broker.create_queue("sink")
        broker.start_message_move_task(dlq.arn, destination_arn=sink.arn)  # moves 5
        for i in range(11):
            dead_letter(a, ["x"] * (i + 1))
            broker.start_message_move_task(dlq.arn, destination_arn=sink.arn)
        tasks = broker.list_message_move_tasks(dlq.arn, max_results=10)
        assert [t["ApproximateNumberOfMessagesMoved"] for t in tasks] == list(range(11, 1, -1))
        for bad in (0, 11):
            with pytest.raises(errors.InvalidParameterValue):
                broker.list_message_move_tasks(dlq.arn, max_results=bad)

    def test_no_tasks(self, broker: Broker, setup: tuple) -> None:
        """Section 11: a queue without tasks lists none."""
        dlq, _, _ = setup
        assert broker.list_message_move_tasks(dlq.arn, max_results=10) == []

    def test_unknown_source(self, broker: Broker) -> None:
        """Section 2: ListMessageMoveTasks models ResourceNotFoundException."""
        with pytest.raises(errors.ResourceNotFoundException):
            broker.list_message_move_tasks(f"arn:aws:sqs:us-east-1:{ACCOUNT}:missing")


class TestCancel:
    def test_cancel_returns_moved_and_lists_cancelled(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11 (AWS-obs): cancel returns ApproximateNumberOfMessagesMoved;
        the task then lists as CANCELLED; moved messages stay moved."""
        dlq, a, b = setup
        handle = broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=2)
        clock.advance(1)
        assert broker.cancel_message_move_task(handle) == 2
        clock.advance(10)
        assert visible(dlq) == 3
        assert visible(a) + visible(b) == 2
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "CANCELLED"
        assert task["ApproximateNumberOfMessagesMoved"] == 2
        assert "TaskHandle" not in task
        broker.start_message_move_task(dlq.arn)  # the source is free again
        assert visible(dlq) == 0
        check_all(broker)

    @pytest.mark.parametrize(
        "handle",
        [
            "garbage",
            "",
            base64.b64encode(b"not json").decode(),
            base64.b64encode(b"[1, 2]").decode(),
            base64.b64encode(json.dumps({"taskId": "x"}).encode()).decode(),
        ],
    )
    def test_garbage_handle(self, broker: Broker, handle: str) -> None:
        """Section 11 (AWS-obs): InvalidParameterValue "Value for parameter
        TaskHandle is invalid."."""
        with pytest.raises(errors.InvalidParameterValue) as info:
            broker.cancel_message_move_task(handle)
        assert info.value.message == "Value for parameter TaskHandle is invalid."

    def test_unknown_task_id(self, broker: Broker, setup: tuple) -> None:
        """Section 11 (AWS-obs): well-formed handle, unknown task id ->
        ResourceNotFoundException "Task does not exist."."""
        dlq, _, _ = setup
        raw = json.dumps({"taskId": "00000000-0000-4000-8000-000000000000", "sourceArn": dlq.arn})
        with pytest.raises(errors.ResourceNotFoundException) as info:
            broker.cancel_message_move_task(base64.b64encode(raw.encode()).decode())
        assert info.value.message == "Task does not exist."
        assert info.value.http_status == 404

    def test_unknown_source_in_handle(self, broker: Broker) -> None:
        """Section 11 (AWS-obs): valid-format handle, unknown source ->
        ResourceNotFoundException naming SourceArn."""
        raw = json.dumps({"taskId": "t", "sourceArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:missing"})
        with pytest.raises(errors.ResourceNotFoundException) as info:
            broker.cancel_message_move_task(base64.b64encode(raw.encode()).decode())
        assert info.value.message == (
            "The resource that you specified for the SourceArn parameter doesn't exist."
        )

    def test_cancel_finished_task_refused(self, broker: Broker, setup: tuple) -> None:
        """Section 11: cancel only while RUNNING (message text UNCONFIRMED)."""
        dlq, _, _ = setup
        handle = broker.start_message_move_task(dlq.arn)
        with pytest.raises(errors.SQSError):
            broker.cancel_message_move_task(handle)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "COMPLETED"


class TestFailure:
    def test_destination_deleted_mid_task(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11 (AWS-obs): destination deleted mid-task -> FAILED with
        FailureReason AWS.SimpleQueueService.NonExistentQueue; the rest stays
        in the DLQ."""
        dlq, _, _ = setup
        dest = broker.create_queue("dest")
        broker.start_message_move_task(
            dlq.arn, destination_arn=dest.arn, max_number_of_messages_per_second=1
        )
        clock.advance(2)
        assert visible(dest) == 2
        broker.delete_queue(dest.url)
        clock.advance(5)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "FAILED"
        assert task["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
        assert task["ApproximateNumberOfMessagesMoved"] == 2
        assert "TaskHandle" not in task
        assert visible(dlq) == 3
        check_all(broker)

    def test_original_source_deleted(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11: with DestinationArn omitted, a deleted original source
        fails the task the same way."""
        dlq, a, b = setup
        broker.delete_queue(a.url)
        broker.delete_queue(b.url)
        # The DLQ is no longer anyone's DLQ.
        with pytest.raises(errors.InvalidParameterValue):
            broker.start_message_move_task(dlq.arn)
        c = broker.create_queue("src-c", redrive_policy=redrive(dlq))
        broker.start_message_move_task(dlq.arn)
        [task] = broker.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "FAILED"
        assert task["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
        assert visible(dlq) == 5
        assert visible(c) == 0

    def test_source_deleted_mid_task(
        self, broker: Broker, clock: ManualClock, setup: tuple
    ) -> None:
        """Section 11: a task whose DLQ is deleted stops (FAILED) and no longer
        runs."""
        dlq, _, _ = setup
        dest = broker.create_queue("dest")
        broker.start_message_move_task(
            dlq.arn, destination_arn=dest.arn, max_number_of_messages_per_second=1
        )
        clock.advance(1)
        assert visible(dest) == 1
        broker.delete_queue(dlq.url)
        clock.advance(10)
        assert visible(dest) == 1
        assert broker._moves._running == []
        check_all(broker)
