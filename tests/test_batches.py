"""SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch (section 2.1)."""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import (
    BatchFailure,
    ChangeVisibilityEntry,
    DeleteEntry,
    ManualClock,
    Queue,
    SendEntry,
    errors,
)
from sqsqueue._message import md5_of_body
from tests._helpers import counts, refused

START = 1_700_000_000.0


@pytest.fixture
def received(queue: Queue) -> list[str]:
    """Three messages received (in flight); their receipt handles."""
    for body in ("a", "b", "c"):
        queue.send(body)
    return [m.receipt_handle for m in queue.receive(3)]


class TestBatchRequestErrors:
    """Whole-request errors: nothing is done (section 2.1)."""

    def test_empty_send(self, queue: Queue) -> None:
        """Section 2.1: 0 entries -> EmptyBatchRequest with AWS's text."""
        refused(
            queue,
            errors.EmptyBatchRequest,
            lambda: queue.send_batch([]),
            "There should be at least one SendMessageBatchRequestEntry in the request.",
        )

    def test_empty_delete(self, queue: Queue) -> None:
        """Section 2.1: 0 entries -> EmptyBatchRequest (DeleteMessageBatch text)."""
        refused(
            queue,
            errors.EmptyBatchRequest,
            lambda: queue.delete_batch([]),
            "There should be at least one DeleteMessageBatchRequestEntry in the request.",
        )

    def test_empty_change(self, queue: Queue) -> None:
        """Section 3.1: 0 entries -> EmptyBatchRequest (ChangeMessageVisibility text)."""
        refused(
            queue,
            errors.EmptyBatchRequest,
            lambda: queue.change_visibility_batch([]),
            "There should be at least one ChangeMessageVisibilityBatchRequestEntry in the request.",
        )

    def test_too_many_send(self, queue: Queue) -> None:
        """Section 2.1: 11 entries -> TooManyEntriesInBatchRequest, nothing sent."""
        refused(
            queue,
            errors.TooManyEntriesInBatchRequest,
            lambda: queue.send_batch([SendEntry(str(i), "x") for i in range(11)]),
            "Maximum number of entries per request are 10. You have sent 11.",
        )

    def test_too_many_delete_and_change(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: more than 10 entries fails Delete and ChangeVisibility batches too."""
        handles = (received * 4)[:12]
        refused(
            queue,
            errors.TooManyEntriesInBatchRequest,
            lambda: queue.delete_batch([DeleteEntry(f"d{i}", h) for i, h in enumerate(handles)]),
            "Maximum number of entries per request are 10. You have sent 12.",
        )
        refused(
            queue,
            errors.TooManyEntriesInBatchRequest,
            lambda: queue.change_visibility_batch(
                [ChangeVisibilityEntry(f"c{i}", h, 0) for i, h in enumerate(handles)]
            ),
        )

    def test_ten_is_allowed(self, queue: Queue) -> None:
        """Section 4: 10 entries is the maximum and is accepted."""
        result = queue.send_batch([SendEntry(str(i), "x") for i in range(10)])
        assert result.ok and len(result.successful) == 10
        assert len(queue) == 10
        queue._check()

    @pytest.mark.parametrize("bad_id", ["", "a b", "a.b", "x" * 81, "\u00e9", 5, None])
    def test_invalid_entry_id(self, queue: Queue, bad_id: object) -> None:
        """Section 2.1: an Id not [A-Za-z0-9_-]{1,80} -> InvalidBatchEntryId, nothing sent."""
        refused(
            queue,
            errors.InvalidBatchEntryId,
            lambda: queue.send_batch([SendEntry("ok", "x"), SendEntry(bad_id, "y")]),  # type: ignore[arg-type]
            "A batch entry id can only contain alphanumeric characters, hyphens and "
            "underscores. It can be at most 80 letters long.",
        )

    def test_valid_entry_ids(self, queue: Queue) -> None:
        """Section 4: up to 80 alphanumerics, hyphens and underscores are valid Ids."""
        ids = ["a", "A-b_9", "x" * 80, "0"]
        result = queue.send_batch([SendEntry(i, "x") for i in ids])
        assert sorted(result.successful) == sorted(ids)

    def test_repeated_ids_send_nothing(self, queue: Queue) -> None:
        """Section 2.1: duplicate Ids -> BatchEntryIdsNotDistinct 'Id x repeated.', nothing sent."""
        refused(
            queue,
            errors.BatchEntryIdsNotDistinct,
            lambda: queue.send_batch(
                [SendEntry("x", "1"), SendEntry("y", "2"), SendEntry("x", "3")]
            ),
            "Id x repeated.",
        )

    def test_only_first_repeated_id_reported(self, queue: Queue) -> None:
        """Section 2.1: only the first repeated Id is reported."""
        refused(
            queue,
            errors.BatchEntryIdsNotDistinct,
            lambda: queue.send_batch(
                [SendEntry("b", "1"), SendEntry("a", "2"), SendEntry("a", "3"), SendEntry("b", "4")]
            ),
            "Id a repeated.",
        )

    def test_repeated_ids_delete_nothing(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: a duplicate-Id DeleteMessageBatch deletes nothing (AWS-observed)."""
        refused(
            queue,
            errors.BatchEntryIdsNotDistinct,
            lambda: queue.delete_batch(
                [DeleteEntry("x", received[0]), DeleteEntry("x", received[1])]
            ),
            "Id x repeated.",
        )
        assert len(queue) == 3

    def test_repeated_ids_change_nothing(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: a duplicate-Id ChangeMessageVisibilityBatch changes nothing."""
        refused(
            queue,
            errors.BatchEntryIdsNotDistinct,
            lambda: queue.change_visibility_batch(
                [
                    ChangeVisibilityEntry("x", received[0], 0),
                    ChangeVisibilityEntry("x", received[1], 0),
                ]
            ),
        )
        assert counts(queue) == (0, 3, 0)

    def test_batch_request_too_long(self, queue: Queue) -> None:
        """Section 2.1: more than 1,048,576 bytes in all -> BatchRequestTooLong, nothing sent."""
        size = 1_048_576 // 10  # 104,857 each: ten of them total 1,048,570
        refused(
            queue,
            errors.BatchRequestTooLong,
            lambda: queue.send_batch([SendEntry(str(i), "x" * (size + 1)) for i in range(10)]),
            "Batch requests cannot be longer than 1048576 bytes. You have sent 1048580 bytes.",
        )

    def test_batch_exactly_at_limit(self, queue: Queue) -> None:
        """Section 4: a batch totalling exactly 1,048,576 bytes is accepted."""
        sizes = [104_857] * 9 + [1_048_576 - 9 * 104_857]
        result = queue.send_batch([SendEntry(str(i), "x" * n) for i, n in enumerate(sizes)])
        assert result.ok
        assert len(queue) == 10

    def test_attributes_count_toward_batch_size(self, queue: Queue) -> None:
        """Section 2.1: the batch total includes attribute bytes (sum of body + attributes)."""
        sizes = [104_857] * 9 + [1_048_576 - 9 * 104_857 - 10]
        entries = [SendEntry(str(i), "x" * n) for i, n in enumerate(sizes)]
        entries[0] = SendEntry("0", "x" * sizes[0], message_attributes={"ab": "cd"})  # 2+6+2=10
        assert queue.send_batch(entries).ok
        entries[0] = SendEntry("0", "x" * sizes[0], message_attributes={"ab": "cde"})  # 11
        queue.purge()
        refused(queue, errors.BatchRequestTooLong, lambda: queue.send_batch(entries))

    @pytest.mark.parametrize("entries", ["abc", 5, None, b"xx"])
    def test_entries_not_a_list(self, queue: Queue, entries: object) -> None:
        """Section 1.2: entries that are not a list -> an SQSError, never a TypeError."""
        refused(queue, errors.SQSError, lambda: queue.send_batch(entries))  # type: ignore[arg-type]
        refused(queue, errors.SQSError, lambda: queue.delete_batch(entries))  # type: ignore[arg-type]
        refused(
            queue,
            errors.SQSError,
            lambda: queue.change_visibility_batch(entries),  # type: ignore[arg-type]
        )

    @pytest.mark.parametrize("entry", [5, None, ["x"], object()])
    def test_entry_of_wrong_type(self, queue: Queue, entry: object) -> None:
        """Section 1.2: an entry that is not an entry -> an SQSError, nothing done."""
        refused(queue, errors.SQSError, lambda: queue.send_batch(["ok", entry]))  # type: ignore[list-item]
        refused(queue, errors.SQSError, lambda: queue.delete_batch([entry]))  # type: ignore[list-item]


class TestSendBatch:
    """Per-entry results of SendMessageBatch (section 2.1)."""

    def test_all_succeed(self, queue: Queue) -> None:
        """Section 2.1: each entry gets MessageId and MD5OfMessageBody; all are enqueued."""
        result = queue.send_batch(
            [SendEntry("a", "alpha"), SendEntry("b", "beta", delay_seconds=5)]
        )
        assert result.ok and result.failed == ()
        a, b = result.successful["a"], result.successful["b"]
        assert a is not None and b is not None
        assert a.md5_of_body == md5_of_body("alpha")
        assert b.md5_of_body == md5_of_body("beta")
        assert a.message_id != b.message_id
        assert a.sequence_number is None
        assert counts(queue) == (1, 0, 1)
        [m] = queue.receive(10)
        assert m.message_id == a.message_id
        queue._check()

    def test_plain_bodies_and_dicts(self, queue: Queue) -> None:
        """Section 1.2: Entries may be plain bodies (ids '0', '1', ...) or boto3-shaped dicts."""
        result = queue.send_batch(["x", "y"])
        assert sorted(result.successful) == ["0", "1"]
        result = queue.send_batch(
            [
                {
                    "Id": "d",
                    "MessageBody": "z",
                    "DelaySeconds": 0,
                    "MessageAttributes": {"Foo": {"DataType": "String", "StringValue": "Bar"}},
                    "MessageSystemAttributes": {
                        "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}
                    },
                }
            ]
        )
        d = result.successful["d"]
        assert d is not None
        assert d.md5_of_message_attributes == "ae7155c6026991b6d54b11589678bf9c"
        assert d.md5_of_message_system_attributes is not None
        assert len(queue) == 3
        queue._check()

    def test_oversized_entry_fails_others_succeed(self, clock: ManualClock) -> None:
        """Section 2.1: an entry over MaximumMessageSize fails with AWS's batch text; the
        others are sent."""
        q = Queue("small", clock=clock, maximum_message_size=1024)
        result = q.send_batch(
            [SendEntry("ok1", "x"), SendEntry("big", "x" * 1025), SendEntry("ok2", "y" * 1024)]
        )
        assert sorted(result.successful) == ["ok1", "ok2"]
        assert result.failed == (
            BatchFailure(
                "big",
                "InvalidParameterValue",
                "One or more parameters cannot be validated. Reason: Message must be shorter "
                "than 1024 bytes.",
                True,
            ),
        )
        assert not result.ok
        assert len(q) == 2
        q._check()

    def test_invalid_characters_entry(self, queue: Queue) -> None:
        """Section 2.1: an entry with invalid characters fails with InvalidMessageContents."""
        result = queue.send_batch([SendEntry("bad", "a\x00b"), SendEntry("good", "ok")])
        assert list(result.successful) == ["good"]
        [failure] = result.failed
        assert failure.id == "bad"
        assert failure.code == "InvalidMessageContents"
        assert failure.sender_fault is True
        assert failure.to_aws() == {
            "Id": "bad",
            "SenderFault": True,
            "Code": "InvalidMessageContents",
            "Message": failure.message,
        }
        assert len(queue) == 1

    def test_other_entry_errors(self, queue: Queue) -> None:
        """Section 2.1: each invalid entry is reported with its own code; valid ones are sent."""
        result = queue.send_batch(
            [
                SendEntry("empty", ""),
                SendEntry("delay", "x", delay_seconds=901),
                SendEntry("attr", "x", message_attributes={"AWS.x": "v"}),
                SendEntry("dedup", "x", deduplication_id="d"),
                SendEntry("good", "x"),
            ]
        )
        codes = {f.id: f.code for f in result.failed}
        assert codes == {
            "empty": "MissingParameter",
            "delay": "InvalidParameterValue",
            "attr": "InvalidParameterValue",
            "dedup": "InvalidParameterValue",
        }
        assert list(result.successful) == ["good"]
        assert len(queue) == 1
        queue._check()

    def test_all_entries_fail(self, queue: Queue) -> None:
        """Section 2.1: a batch whose every entry fails sends nothing, and is not an error."""
        result = queue.send_batch([SendEntry("a", ""), SendEntry("b", "\x01")])
        assert result.successful == {}
        assert [f.id for f in result.failed] == ["a", "b"]
        assert len(queue) == 0


class TestDeleteBatch:
    """Per-entry results of DeleteMessageBatch (section 2.1)."""

    def test_all_succeed(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: every valid handle is deleted; successes are keyed by Id."""
        result = queue.delete_batch([DeleteEntry(f"d{i}", h) for i, h in enumerate(received)])
        assert result.ok
        assert result.successful == {"d0": None, "d1": None, "d2": None}
        assert len(queue) == 0
        queue._check()

    def test_invalid_handles_reported(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: invalid handles -> per-entry ReceiptHandleIsInvalid with AWS's text,
        the valid entries are deleted."""
        result = queue.delete_batch(
            [
                DeleteEntry("good", received[0]),
                DeleteEntry("bad", "fake-receipt-handle-1"),
                DeleteEntry("good2", received[1]),
            ]
        )
        assert sorted(result.successful) == ["good", "good2"]
        assert result.failed == (
            BatchFailure(
                "bad",
                "ReceiptHandleIsInvalid",
                'The input receipt handle "fake-receipt-handle-1" is not a valid receipt handle.',
                True,
            ),
        )
        assert len(queue) == 1
        queue._check()

    def test_foreign_handle_reported(
        self, clock: ManualClock, queue: Queue, received: list[str]
    ) -> None:
        """Section 2.1: a handle from another queue -> 'The receipt handle "..." is not valid
        for this queue.'"""
        other = Queue("other", clock=clock)
        other.send("x")
        [m] = other.receive()
        result = queue.delete_batch([DeleteEntry("f", m.receipt_handle)])
        [failure] = result.failed
        assert failure.code == "ReceiptHandleIsInvalid"
        assert (
            failure.message
            == f'The receipt handle "{m.receipt_handle}" is not valid for this queue.'
        )
        assert len(other) == 1 and len(queue) == 3

    def test_already_deleted_succeeds(self, queue: Queue, received: list[str]) -> None:
        """Section 8: deleting an already deleted message succeeds in a batch too."""
        queue.delete(received[0])
        result = queue.delete_batch([DeleteEntry("again", received[0])])
        assert result.ok
        assert len(queue) == 2

    def test_plain_handles_and_dicts(self, queue: Queue, received: list[str]) -> None:
        """Section 1.2: Entries may be plain handles (ids '0', '1', ...) or boto3-shaped dicts."""
        result = queue.delete_batch([received[0], received[1]])
        assert sorted(result.successful) == ["0", "1"]
        result = queue.delete_batch([{"Id": "x", "ReceiptHandle": received[2]}])
        assert result.ok
        assert len(queue) == 0


class TestChangeVisibilityBatch:
    """Per-entry results of ChangeMessageVisibilityBatch (section 2.1)."""

    def test_all_succeed(self, clock: ManualClock, queue: Queue, received: list[str]) -> None:
        """Section 8: each entry's timeout counts from the call."""
        result = queue.change_visibility_batch(
            [
                ChangeVisibilityEntry("now", received[0], 0),
                ChangeVisibilityEntry("soon", received[1], 10),
                {"Id": "later", "ReceiptHandle": received[2], "VisibilityTimeout": 100},
            ]
        )
        assert result.ok and sorted(result.successful) == ["later", "now", "soon"]
        assert counts(queue) == (1, 2, 0)
        clock.advance(10)
        assert counts(queue) == (2, 1, 0)
        clock.advance(90)
        assert counts(queue) == (3, 0, 0)
        queue._check()

    def test_per_entry_failures(self, queue: Queue, received: list[str]) -> None:
        """Section 2.1: bad handles and bad timeouts fail per entry; others apply."""
        queue.delete(received[2])
        result = queue.change_visibility_batch(
            [
                ChangeVisibilityEntry("ok", received[0], 0),
                ChangeVisibilityEntry("garbage", "garbage", 0),
                ChangeVisibilityEntry("range", received[1], 43_201),
                ChangeVisibilityEntry("deleted", received[2], 0),
            ]
        )
        assert list(result.successful) == ["ok"]
        by_id = {f.id: f for f in result.failed}
        assert by_id["garbage"].code == "ReceiptHandleIsInvalid"
        assert by_id["garbage"].message == (
            'The input receipt handle "garbage" is not a valid receipt handle.'
        )
        assert by_id["range"].code == "InvalidParameterValue"
        assert by_id["deleted"].code == "InvalidParameterValue"
        assert by_id["deleted"].message == (
            f"Value {received[2]} for parameter ReceiptHandle is invalid. Reason: Message does "
            "not exist or is not available for visibility timeout change."
        )
        assert counts(queue) == (1, 1, 0)
        queue._check()

    def test_default_timeout_is_zero(self, queue: Queue, received: list[str]) -> None:
        """Section 8: A ChangeVisibilityEntry without a timeout makes the message visible at
        once."""
        result = queue.change_visibility_batch([ChangeVisibilityEntry("a", received[0])])
        assert result.ok
        assert counts(queue) == (1, 2, 0)


def _entry_dicts(n: int) -> list[dict[str, Any]]:
    return [{"Id": f"e{i}", "MessageBody": f"body {i}"} for i in range(n)]


class TestBatchOrderAndResults:
    """Batch results line up with the request."""

    def test_successful_in_request_order(self, queue: Queue) -> None:
        """Section 2.1: SendMessageBatch's successful entries keep the request order."""
        result = queue.send_batch(_entry_dicts(10))
        assert list(result.successful) == [f"e{i}" for i in range(10)]
        ids = {r.message_id for r in result.successful.values() if r is not None}
        assert len(ids) == 10
        assert sorted(m.body for m in queue.receive(10)) == sorted(f"body {i}" for i in range(10))
