"""Receipt handles, DeleteMessage and ChangeMessageVisibility on a standard queue (section 8)."""

from __future__ import annotations

import base64

import pytest

from sqsqueue import ManualClock, Queue, errors
from sqsqueue._message import R_RECEIPT, R_TOKEN
from sqsqueue._receipts import _HANDLE
from tests._helpers import counts

START = 1_700_000_000.0


def mutations(handle: str) -> list[str]:
    """Every handle that differs from ``handle`` in exactly one character."""
    out = []
    for i, ch in enumerate(handle):
        for repl in ("A", "B", "-", "_", "z"):
            if repl != ch:
                out.append(handle[:i] + repl + handle[i + 1 :])
                break
    return out


class TestDelete:
    """DeleteMessage on a standard queue."""

    def test_delete_removes_message(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: deleting with the current handle removes the message for good."""
        queue.send("a")
        [m] = queue.receive()
        queue.delete(m.receipt_handle)
        assert len(queue) == 0
        assert counts(queue) == (0, 0, 0)
        clock.advance(3_600)
        assert queue.receive() == []
        queue._check()

    def test_delete_twice_succeeds(self, queue: Queue) -> None:
        """Section 8: DeleteMessage again with the same handle -> success (idempotent)."""
        queue.send("a")
        queue.send("b")
        [m] = queue.receive()
        queue.delete(m.receipt_handle)
        queue.delete(m.receipt_handle)
        assert len(queue) == 1
        queue._check()

    def test_delete_with_expired_handle_deletes(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: on a standard queue a handle whose visibility expired still deletes."""
        queue.send("a")
        [m] = queue.receive()
        clock.advance(31)
        assert counts(queue) == (1, 0, 0)
        queue.delete(m.receipt_handle)
        assert len(queue) == 0
        assert queue.receive() == []
        queue._check()

    def test_delete_with_old_handle_after_re_receive(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Section 8: an old handle keeps working after the message was received again."""
        queue.send("a")
        [first] = queue.receive()
        clock.advance(30)
        [second] = queue.receive()
        assert first.receipt_handle != second.receipt_handle
        queue.delete(first.receipt_handle)
        assert len(queue) == 0
        # ... and the newer handle now finds nothing to do, successfully.
        queue.delete(second.receipt_handle)
        queue._check()

    def test_delete_in_flight_message_of_other_consumer(self, queue: Queue) -> None:
        """Section 2.1: SQS deletes a message even while it is locked by another consumer
        (any handle ever issued for it works)."""
        queue.send("a")
        [first] = queue.receive(visibility_timeout=0)
        [second] = queue.receive()  # now in flight for "another consumer"
        queue.delete(first.receipt_handle)
        assert len(queue) == 0
        assert second.message_id == first.message_id
        queue._check()


class TestChangeVisibilityHandles:
    """Which handles ChangeMessageVisibility accepts (section 8)."""

    def test_expired_handle_re_hides(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: after the timeout expired (nobody re-received), the old handle re-hides."""
        queue.send("a")
        [m] = queue.receive()
        clock.advance(40)
        assert counts(queue) == (1, 0, 0)
        queue.change_visibility(m.receipt_handle, 60)
        assert counts(queue) == (0, 1, 0)
        clock.advance(59)
        assert queue.receive() == []
        clock.advance(1)
        assert len(queue.receive()) == 1
        queue._check()

    def test_old_handle_after_re_receive(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: ChangeMessageVisibility(old handle, 0) still makes the message visible."""
        queue.send("a")
        [first] = queue.receive()
        clock.advance(30)
        queue.receive()
        assert counts(queue) == (0, 1, 0)
        queue.change_visibility(first.receipt_handle, 0)
        assert counts(queue) == (1, 0, 0)
        queue._check()

    def test_deleted_message(self, queue: Queue) -> None:
        """Section 8: on a deleted message -> InvalidParameterValue with AWS's text."""
        queue.send("a")
        [m] = queue.receive()
        queue.delete(m.receipt_handle)
        h = m.receipt_handle
        with pytest.raises(errors.InvalidParameterValue) as info:
            queue.change_visibility(h, 10)
        assert info.value.message == (
            f"Value {h} for parameter ReceiptHandle is invalid. Reason: Message does not exist "
            "or is not available for visibility timeout change."
        )
        queue._check()


class TestInvalidHandles:
    """Malformed, foreign and forged handles -> ReceiptHandleIsInvalid (section 8)."""

    def test_garbage(self, queue: Queue) -> None:
        """Section 8: 'garbage' -> ReceiptHandleIsInvalid with AWS's text, for both calls."""
        queue.send("a")
        text = 'The input receipt handle "garbage" is not a valid receipt handle.'
        with pytest.raises(errors.ReceiptHandleIsInvalid) as info:
            queue.delete("garbage")
        assert info.value.message == text
        assert info.value.http_status == 404
        with pytest.raises(errors.ReceiptHandleIsInvalid) as info:
            queue.change_visibility("garbage", 10)
        assert info.value.message == text
        assert len(queue) == 1
        queue._check()

    @pytest.mark.parametrize(
        "handle",
        ["x", "A" * 48, "=" * 48, "\u00e9" * 48, "A" * 47 + "!", "AQ" * 24, "A" * 1024],
    )
    def test_malformed(self, queue: Queue, handle: str) -> None:
        """Section 8: a handle this queue could never have issued is refused."""
        queue.send("a")
        queue.receive()
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            queue.delete(handle)
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            queue.change_visibility(handle, 0)
        assert counts(queue) == (0, 1, 0)
        queue._check()

    def test_handle_from_another_queue(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: a well-formed handle from another queue -> ReceiptHandleIsInvalid."""
        other = Queue("other", clock=clock)
        other.send("theirs")
        [theirs] = other.receive()
        queue.send("ours")
        queue.receive()
        with pytest.raises(errors.ReceiptHandleIsInvalid) as info:
            queue.delete(theirs.receipt_handle)
        assert info.value.message == (
            f'The receipt handle "{theirs.receipt_handle}" is not valid for this queue.'
        )
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            queue.change_visibility(theirs.receipt_handle, 0)
        assert len(other) == 1 and len(queue) == 1
        assert counts(queue) == (0, 1, 0)
        queue._check()
        other._check()

    def test_handle_from_same_named_queue(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: a queue re-created with the same name does not accept the old queue's
        handles."""
        queue.send("a")
        [m] = queue.receive()
        twin = Queue("jobs", clock=clock)
        twin.send("a")
        twin.receive()
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            twin.delete(m.receipt_handle)
        assert len(twin) == 1

    def test_every_single_character_mutation_is_refused(self, queue: Queue) -> None:
        """Section 8: flipping any one character of a real handle gives an invalid handle,
        for a live message."""
        queue.send("a")
        [m] = queue.receive()
        for forged in mutations(m.receipt_handle):
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.delete(forged)
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.change_visibility(forged, 0)
        assert counts(queue) == (0, 1, 0)
        queue._check()

    def test_mutations_refused_after_delete(self, queue: Queue) -> None:
        """Section 8: a forged handle is refused even when the message it imitates is gone
        (it must not pass for the idempotent delete of a deleted message)."""
        queue.send("a")
        [m] = queue.receive()
        queue.delete(m.receipt_handle)
        for forged in mutations(m.receipt_handle):
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.delete(forged)
        queue.delete(m.receipt_handle)  # the genuine one is still fine

    def test_mutation_pointing_at_another_message(self, queue: Queue) -> None:
        """Section 8: a forged handle naming another stored message does not delete it."""
        for body in "abc":
            queue.send(body)
        received = queue.receive(3)
        assert len(received) == 3
        raw = bytearray(base64.urlsafe_b64decode(received[0].receipt_handle))
        raw[15] ^= 1  # the low byte of the message's sequence number
        forged = base64.urlsafe_b64encode(bytes(raw)).decode()
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            queue.delete(forged)
        assert len(queue) == 3
        queue._check()


class TestHandleEntropy:
    """Each receive issues a new, unguessable handle (sections 2.1 and 8, docs/design.md)."""

    def test_new_handle_per_receive(self, queue: Queue) -> None:
        """Section 2.1: each receive issues a new ReceiptHandle for the same message."""
        queue.send("a")
        handles = {m.receipt_handle for _ in range(50) for m in queue.receive(visibility_timeout=0)}
        assert len(handles) == 50
        queue._check()

    def test_handles_carry_at_least_128_bits(self, queue: Queue) -> None:
        """docs/design.md principle 8: handles carry >= 128 unguessable bits: two handles for the
        same message differ in at least 128 bits' worth of their bytes."""
        queue.send("a")
        [a] = queue.receive(visibility_timeout=0)
        [b] = queue.receive(visibility_timeout=0)
        ra = base64.urlsafe_b64decode(a.receipt_handle)
        rb = base64.urlsafe_b64decode(b.receipt_handle)
        assert len(ra) == len(rb) and len(ra) * 8 >= 128
        # At least 16 bytes of the handle change unpredictably between receives.
        assert sum(x != y for x, y in zip(ra[-16:], rb[-16:], strict=True)) >= 12

    def test_handles_differ_between_queues_with_the_same_seed(self, clock: ManualClock) -> None:
        """docs/design.md principle 8: handles are not predictable from the message alone: two
        queues issue different handles for their first message."""
        q1 = Queue("a", clock=clock)
        q2 = Queue("a", clock=clock)
        q1.send("x")
        q2.send("x")
        assert q1.receive()[0].receipt_handle != q2.receive()[0].receipt_handle

    def test_handle_is_short_ascii(self, queue: Queue) -> None:
        """Section 4: a receipt handle is at most 1,024 characters; ours are base64 ASCII,
        like AWS's."""
        queue.send("a")
        [m] = queue.receive()
        h = m.receipt_handle
        assert 0 < len(h) <= 1024
        assert h.isascii()
        assert all(c.isalnum() or c in "+/=" for c in h)

    def test_tokens_of_one_mac_block_are_independent(self, queue: Queue) -> None:
        """Section 8: four consecutive messages share one BLAKE2b-512 computation,
        but each handle carries only its own 16 bytes of it: the handles of a
        receive of consecutive messages all have different tokens, and each one
        deletes its own message only."""
        queue.send_batch([f"m{i}" for i in range(8)])
        got = queue.receive(10)
        tokens = [base64.b64decode(m.receipt_handle)[-16:] for m in got]
        assert len(set(tokens)) == 8
        queue.delete(got[5].receipt_handle)
        assert sorted(m.body for m in queue.inspect()) == [f"m{i}" for i in range(8) if i != 5]
        queue._check()


def version_1(queue: Queue, seq: int, receipt_no: int) -> str:
    """The version 1 handle of receipt ``receipt_no`` of message ``seq``: what
    the queue issued before version 2 (and a durable broker keeps)."""
    r = queue._receipts
    token = r.token(seq, receipt_no, 1)
    return base64.b64encode(_HANDLE.pack(1, r._tag, seq, receipt_no, token)).decode()


class TestVersion1Handles:
    """Handles issued before version 2 (one BLAKE2b-128 per receipt) still act
    (docs/guarantees.md: a handle from before a restart still deletes its
    message), and changing a handle's version makes it a forgery."""

    def test_latest_version_1_receipt_deletes(self, queue: Queue) -> None:
        """Section 8: a record restored with a version 1 token is deleted by its
        version 1 handle, alone and in a batch."""
        queue.send_batch(["a", "b"])
        queue.receive(10)
        handles = []
        for seq, rec in list(queue._records.items()):
            # As a store restores it: the record, with a version 1 token, in
            # the place of the one issued (records are tuples, replaced whole).
            receipt_no = rec[R_RECEIPT]
            token = queue._receipts.token(seq, receipt_no, 1)
            new = (*rec[:R_TOKEN], token, *rec[R_TOKEN + 1 :])
            queue._records[seq] = queue._lane[seq] = new
            handles.append(version_1(queue, seq, receipt_no))
        queue.delete(handles[0])
        assert queue.delete_batch(handles).ok
        assert len(queue) == 0
        queue._check()

    def test_older_version_1_receipt_acts(self, clock: ManualClock, queue: Queue) -> None:
        """Section 8: an older version 1 receipt still deletes its message on a
        standard queue, and is verified by its own MAC after the message is gone."""
        queue.send("a")
        queue.receive(visibility_timeout=0)
        assert len(queue.receive()) == 1  # receipt 2 is the latest
        old = version_1(queue, 1, 1)
        queue.change_visibility(old, 0)
        queue.delete(old)
        assert len(queue) == 0
        queue.delete(old)  # deleted: still a valid handle
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            queue.delete(version_1(queue, 1, 1)[:-4] + "AAAA")

    def test_a_handle_with_its_version_changed_is_refused(self, queue: Queue) -> None:
        """Section 8: the version is authenticated with the token: a version 2
        handle relabelled version 1, or the reverse, acts on nothing."""
        queue.send("a")
        [m] = queue.receive()
        raw = bytearray(base64.b64decode(m.receipt_handle))
        raw[0] = 1
        relabelled = base64.b64encode(bytes(raw)).decode()
        old = bytearray(base64.b64decode(version_1(queue, 1, 1)))
        old[0] = 2
        for handle in (relabelled, base64.b64encode(bytes(old)).decode()):
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.delete(handle)
            assert not queue.delete_batch([handle]).ok
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.change_visibility(handle, 0)
        assert len(queue) == 1
        queue._check()
