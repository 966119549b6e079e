"""Security: receipt handles that cannot be guessed or forged, permissions on
every operation that takes a principal, resource limits enforced before
anything changes, and no code execution on user data
(``docs/design.md`` principles 6 and 8; ``docs/aws-behaviour.md`` §§2.1, 3, 4, 8).
"""

from __future__ import annotations

import ast
import asyncio
import base64
import binascii
import hashlib
import inspect
import json
import random
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import (
    Broker,
    ChangeVisibilityEntry,
    DeleteEntry,
    FifoQueue,
    ManualClock,
    Queue,
    SendEntry,
    errors,
)
from sqsqueue import _limits as L
from sqsqueue._policy import OWNER_ONLY
from sqsqueue.aws._client import OPERATIONS
from tests._machines import snapshot

START = 1_700_000_000.0
OWNER = "123456789012"
OTHER = "210987654321"
PACKAGE = Path(__file__).resolve().parent.parent / "sqsqueue"
#: The handle layout (_lifecycle.py): version, queue tag, seq, receipt no, token.
HANDLE = struct.Struct(">B7sQI16s")


def unpack(handle: str) -> tuple[int, bytes, int, int, bytes]:
    fields: tuple[int, bytes, int, int, bytes] = HANDLE.unpack(base64.b64decode(handle))
    return fields


def pack(version: int, tag: bytes, seq: int, receipt_no: int, token: bytes) -> str:
    return base64.b64encode(HANDLE.pack(version, tag, seq, receipt_no, token)).decode()


def state(*queues: Queue | FifoQueue) -> Any:
    return [snapshot(q) for q in queues]


# -- receipt handles -------------------------------------------------------------------


class TestHandleEntropy:
    """Receipt handles carry at least 128 unguessable bits (docs/design.md principle 8)."""

    def test_ten_thousand_receives_give_distinct_handles_and_tokens(self) -> None:
        """Section 8 / principle 8: 10,000 receives (many of the same messages)
        issue 10,000 distinct handles whose 128-bit tokens are all distinct, and
        every token bit is set in about half of them (a bias of 6 standard
        deviations would be a failure: a 1-in-500-million event for fair bits)."""
        q = Queue("q", clock=ManualClock(start=START), visibility_timeout=0)
        q.send_batch([f"m{i}" for i in range(10)])
        handles = [m.receipt_handle for _ in range(1_000) for m in q.receive(10)]
        assert len(handles) == 10_000 == len(set(handles))
        tokens = [unpack(h)[4] for h in handles]
        assert len(set(tokens)) == 10_000
        assert all(len(t) * 8 == 128 for t in tokens)
        ones = Counter()
        for token in tokens:
            n = int.from_bytes(token, "big")
            for bit in range(128):
                ones[bit] += (n >> bit) & 1
        sigma = (10_000 * 0.25) ** 0.5
        assert all(abs(ones[bit] - 5_000) < 6 * sigma for bit in range(128)), ones
        q._check()

    def test_tokens_are_not_derived_from_the_numbers(self) -> None:
        """Principle 8: the token is a keyed MAC under a per-queue secret, not a
        function of the visible numbers: two queues with the same name and the
        same history issue handles with the same (seq, receipt no) but
        unrelated tokens, and no token equals an unkeyed hash of the numbers."""
        clock = ManualClock(start=START)
        issued = []
        for _ in range(2):
            q = Queue("same-name", clock=clock, visibility_timeout=0)
            q.send_batch(["a", "b", "c"])
            issued.append([m.receipt_handle for _ in range(5) for m in q.receive(3)])
        first, second = ([unpack(h) for h in hs] for hs in issued)
        assert [(f[2], f[3]) for f in first] == [(s[2], s[3]) for s in second]
        assert all(f[4] != s[4] for f, s in zip(first, second, strict=True))
        for _version, _tag, seq, receipt_no, token in first:
            numbers = struct.pack(">QI", seq, receipt_no)
            assert token != hashlib.blake2b(numbers, digest_size=16).digest()
            assert token != hashlib.md5(numbers, usedforsecurity=False).digest()
            assert numbers not in token

    def test_queues_never_share_a_handle_key(self) -> None:
        """Principle 8: with the default random source (os.urandom) every queue,
        even one of the same name, gets its own 256-bit handle key and tag."""
        clock = ManualClock(start=START)
        queues = [Queue("same", clock=clock) for _ in range(200)]
        queues += [FifoQueue("same.fifo", clock=clock) for _ in range(200)]
        broker = Broker(clock=clock)
        queues += [broker.create_queue(f"q{i}") for i in range(200)]
        # The key itself is sealed inside a keyed BLAKE2b state; distinct keys
        # show as distinct MACs of the same (seq, receipt no).
        assert len({q._receipts.token(1, 1) for q in queues}) == len(queues)
        assert len({q._receipts._tag for q in queues}) == len(queues)

    def test_seeded_queues_of_different_names_do_not_share_keys(self) -> None:
        """Principle 8: a seeded random source makes handles reproducible (for
        deterministic tests), yet the key is bound to the queue's ARN, so two
        queues seeded alike still refuse each other's handles."""
        clock = ManualClock(start=START)
        a = Queue("a", clock=clock, random=random.Random(1))
        b = Queue("b", clock=clock, random=random.Random(1))
        assert a._receipts.token(1, 1) != b._receipts.token(1, 1)
        a.send("x")
        [m] = a.receive()
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            b.delete(m.receipt_handle)


@pytest.fixture(params=["standard", "fifo"])
def queue(request: pytest.FixtureRequest) -> Queue | FifoQueue:
    """A queue holding three messages, two of them received (in flight)."""
    clock = ManualClock(start=START)
    q: Queue | FifoQueue
    if request.param == "fifo":
        q = FifoQueue("q.fifo", clock=clock, content_based_deduplication=True)
        for body in ("a", "b", "c"):
            q.send(body, group_id="g")
    else:
        q = Queue("q", clock=clock)
        q.send_batch(["a", "b", "c"])
    return q


def refused(q: Queue | FifoQueue, handle: str, error: type[errors.SQSError]) -> str:
    """Both DeleteMessage and ChangeMessageVisibility refuse ``handle`` with
    ``error``, and neither changes anything. Returns the delete's message."""
    before = snapshot(q)
    with pytest.raises(error) as deleted:
        q.delete(handle)
    with pytest.raises(error):
        q.change_visibility(handle, 0)
    result = q.delete_batch([DeleteEntry("0", handle)])
    assert [f.code for f in result.failed] == [error.code]
    result = q.change_visibility_batch([ChangeVisibilityEntry("0", handle, 0)])
    assert [f.code for f in result.failed] == [error.code]
    assert snapshot(q) == before
    q._check()
    return deleted.value.message


class TestForgedHandles:
    """Handles not issued by this queue for this receipt act on nothing (section 8,
    "Garbage handle": ReceiptHandleIsInvalid)."""

    def test_handle_of_another_queue(self, queue: Queue | FifoQueue) -> None:
        """Section 8: a genuine handle of another queue (same name, same account)
        is ReceiptHandleIsInvalid here, and changes nothing."""
        other = type(queue)(queue.name, clock=queue.clock)
        ids = {"group_id": "g", "deduplication_id": "d"} if isinstance(other, FifoQueue) else {}
        other.send("x", **ids)  # type: ignore[arg-type]
        [m] = other.receive()
        queue.receive(2)
        refused(queue, m.receipt_handle, errors.ReceiptHandleIsInvalid)

    def test_random_bytes_in_the_right_format(self, queue: Queue | FifoQueue) -> None:
        """Section 8: 2,000 handles of the right length and layout, with this
        queue's real tag and real sequence and receipt numbers (all visible in
        any handle an attacker holds) but random tokens, are all refused."""
        [m, _] = queue.receive(2)
        version, tag, seq, receipt_no, _token = unpack(m.receipt_handle)
        rng = random.Random(99)
        for _ in range(2_000):
            forged = pack(version, tag, seq, receipt_no, rng.randbytes(16))
            before = snapshot(queue)
            with pytest.raises(errors.ReceiptHandleIsInvalid):
                queue.delete(forged)
            assert snapshot(queue) == before
        for _ in range(200):
            garbage = base64.b64encode(rng.randbytes(36)).decode()
            refused(queue, garbage, errors.ReceiptHandleIsInvalid)

    def test_every_single_character_mutation(self, queue: Queue | FifoQueue) -> None:
        """Section 8: replacing any one character of a real handle by any other
        character (base64 or not) yields a handle that is refused with
        ReceiptHandleIsInvalid by both delete and change visibility, and changes
        nothing; the real handle still works afterwards."""
        [m, _] = queue.receive(2)
        handle = m.receipt_handle
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=.~ "
        count = 0
        for i, original in enumerate(handle):
            for c in alphabet:
                if c == original:
                    continue
                mutated = handle[:i] + c + handle[i + 1 :]
                message = refused(queue, mutated, errors.ReceiptHandleIsInvalid)
                assert "is not a valid receipt handle" in message or "not valid for this queue" in (
                    message
                )
                count += 1
        assert count == len(handle) * (len(alphabet) - 1)
        queue.delete(handle)  # untouched by all of that
        assert m.message_id not in {i.message_id for i in queue.inspect()}

    def test_truncated_and_extended_handles(self, queue: Queue | FifoQueue) -> None:
        """Section 8: a real handle cut short, lengthened, or with its padding or
        case changed is refused with ReceiptHandleIsInvalid."""
        [m, _] = queue.receive(2)
        h = m.receipt_handle
        for bad in (h[:-1], h + "A", h + "==", h[1:], h.swapcase(), h[:24], " " + h):
            refused(queue, bad, errors.ReceiptHandleIsInvalid)


class TestStaleHandles:
    """Genuine but old handles, where AWS refuses them (section 8)."""

    def test_fifo_handle_after_visibility_expired(self) -> None:
        """Section 8: "FIFO, handle used after its visibility expired": DeleteMessage
        -> InvalidParameterValue "The receipt handle has expired."; the message
        stays, and a re-receive's handle works."""
        clock = ManualClock(start=START)
        q = FifoQueue("q.fifo", clock=clock, content_based_deduplication=True)
        q.send("a", group_id="g")
        [m] = q.receive(visibility_timeout=10)
        clock.advance(10)
        message = refused(q, m.receipt_handle, errors.InvalidParameterValue)
        assert message.endswith("Reason: The receipt handle has expired.")
        [again] = q.receive()
        clock.advance(5)
        refused(q, m.receipt_handle, errors.InvalidParameterValue)  # an older receipt
        q.delete(again.receipt_handle)
        assert len(q) == 0

    def test_handle_of_deleted_queue_recreated_with_same_name(self) -> None:
        """Sections 2.1 and 8: after DeleteQueue and a CreateQueue of the same name
        (60 s later), handles issued by the old queue are ReceiptHandleIsInvalid
        on the new one and change nothing, even with a seeded random source."""
        for seed in (None, 3):
            clock = ManualClock(start=START)
            broker = Broker(
                clock=clock, account_id=OWNER, random=None if seed is None else random.Random(seed)
            )
            old = broker.create_queue("jobs")
            old.send_batch(["a", "b"])
            handles = [m.receipt_handle for m in old.receive(2)]
            broker.delete_queue("jobs")
            clock.advance(60)
            new = broker.create_queue("jobs")
            new.send_batch(["a", "b"])
            new.receive(2)  # same sequence and receipt numbers as the old handles
            for h in handles:
                message = refused(new, h, errors.ReceiptHandleIsInvalid)
                assert "not valid for this queue" in message
            with pytest.raises(errors.QueueDoesNotExist):
                old.delete(handles[0])


# -- permissions --------------------------------------------------------------------------


class World:
    """A broker with a standard queue "q" (and its DLQ "dlq") and a FIFO queue."""

    def __init__(self) -> None:
        self.clock = ManualClock(start=START)
        self.broker = Broker(clock=self.clock, account_id=OWNER)
        self.dlq = self.broker.create_queue("dlq")
        self.q = self.broker.create_queue(
            "q",
            attributes={
                "RedrivePolicy": {"deadLetterTargetArn": self.dlq.arn, "maxReceiveCount": 5}
            },
            tags={"team": "a"},
        )
        self.fifo = self.broker.create_queue(
            "f.fifo", fifo_queue=True, content_based_deduplication=True
        )
        self.q.send_batch(["a", "b", "c"])
        self.fifo.send("a", group_id="g")
        self.handles = [m.receipt_handle for m in self.q.receive(3)]
        self.q.add_permission("existing", [OWNER], ["SendMessage"])
        # A running move task (rate 1/s on a clock that stands still) to cancel.
        self.dlq2 = self.broker.create_queue("dlq2")
        self.broker.create_queue(
            "q2",
            attributes={
                "RedrivePolicy": {"deadLetterTargetArn": self.dlq2.arn, "maxReceiveCount": 5}
            },
        )
        self.dlq2.send_batch(["a", "b"])
        self.task = self.broker.start_message_move_task(
            self.dlq2.arn, destination_arn=self.q.arn, max_number_of_messages_per_second=1
        )

    def state(self) -> Any:
        return (
            [(snapshot(q), dict(q._tags)) for q in (self.q, self.dlq, self.fifo)],
            list(self.broker._queues),
        )


#: Every public method that takes ``principal=``, with a valid call for it, and
#: the SQS action a policy has to grant for someone other than the owner.
PRINCIPAL_CALLS: dict[str, tuple[str, Callable[[World, str | None], object]]] = {
    "Queue.send": ("SendMessage", lambda w, p: w.q.send("x", principal=p)),
    "Queue.send_batch": ("SendMessageBatch", lambda w, p: w.q.send_batch(["x"], principal=p)),
    "Queue.receive": ("ReceiveMessage", lambda w, p: w.q.receive(principal=p)),
    "Queue.receive_async": (
        "ReceiveMessage",
        lambda w, p: asyncio.run(w.q.receive_async(principal=p)),
    ),
    "Queue.delete": ("DeleteMessage", lambda w, p: w.q.delete(w.handles[0], principal=p)),
    "Queue.remove": (
        "DeleteMessage",
        lambda w, p: w.q.remove(
            w.q.inspect()[0].position, w.q.inspect()[0].message_id, principal=p
        ),
    ),
    "Queue.browse": ("ReceiveMessage", lambda w, p: w.q.browse(principal=p)),
    "Queue.delete_batch": (
        "DeleteMessageBatch",
        lambda w, p: w.q.delete_batch([w.handles[1]], principal=p),
    ),
    "Queue.change_visibility": (
        "ChangeMessageVisibility",
        lambda w, p: w.q.change_visibility(w.handles[0], 5, principal=p),
    ),
    "Queue.change_visibility_batch": (
        "ChangeMessageVisibilityBatch",
        lambda w, p: w.q.change_visibility_batch(
            [ChangeVisibilityEntry("0", w.handles[2], 5)], principal=p
        ),
    ),
    "Queue.purge": ("PurgeQueue", lambda w, p: w.q.purge(principal=p)),
    "Queue.get_attributes": ("GetQueueAttributes", lambda w, p: w.q.get_attributes(principal=p)),
    "Queue.set_attributes": (
        "SetQueueAttributes",
        lambda w, p: w.q.set_attributes({"DelaySeconds": "3"}, principal=p),
    ),
    "Queue.tag": ("TagQueue", lambda w, p: w.q.tag({"k": "v"}, principal=p)),
    "Queue.untag": ("UntagQueue", lambda w, p: w.q.untag(["team"], principal=p)),
    "Queue.list_tags": ("ListQueueTags", lambda w, p: w.q.list_tags(principal=p)),
    "Queue.add_permission": (
        "AddPermission",
        lambda w, p: w.q.add_permission("new", [OTHER], ["ReceiveMessage"], principal=p),
    ),
    "Queue.remove_permission": (
        "RemovePermission",
        lambda w, p: w.q.remove_permission("existing", principal=p),
    ),
    "FifoQueue.send": (
        "SendMessage",
        lambda w, p: w.fifo.send("y", group_id="g", principal=p),
    ),
    "Broker.get_queue_url": ("GetQueueUrl", lambda w, p: w.broker.get_queue_url("q", principal=p)),
    "Broker.delete_queue": ("DeleteQueue", lambda w, p: w.broker.delete_queue("q", principal=p)),
    "Broker.list_dead_letter_source_queues": (
        "ListDeadLetterSourceQueues",
        lambda w, p: w.broker.list_dead_letter_source_queues("dlq", principal=p),
    ),
    "Broker.tag_queue": ("TagQueue", lambda w, p: w.broker.tag_queue("q", {"k": "v"}, principal=p)),
    "Broker.untag_queue": (
        "UntagQueue",
        lambda w, p: w.broker.untag_queue("q", ["team"], principal=p),
    ),
    "Broker.list_queue_tags": (
        "ListQueueTags",
        lambda w, p: w.broker.list_queue_tags("q", principal=p),
    ),
    "Broker.add_permission": (
        "AddPermission",
        lambda w, p: w.broker.add_permission("q", "new", [OTHER], ["SendMessage"], principal=p),
    ),
    "Broker.remove_permission": (
        "RemovePermission",
        lambda w, p: w.broker.remove_permission("q", "existing", principal=p),
    ),
    "Broker.start_message_move_task": (
        "StartMessageMoveTask",
        lambda w, p: w.broker.start_message_move_task(w.dlq.arn, principal=p),
    ),
    "Broker.list_message_move_tasks": (
        "ListMessageMoveTasks",
        lambda w, p: w.broker.list_message_move_tasks(w.dlq2.arn, principal=p),
    ),
    "Broker.cancel_message_move_task": (
        "CancelMessageMoveTask",
        lambda w, p: w.broker.cancel_message_move_task(w.task, principal=p),
    ),
}


def methods_taking_principal() -> set[str]:
    out = set()
    for cls in (Queue, FifoQueue, Broker):
        for name, member in inspect.getmembers(cls, callable):
            if name.startswith("_"):
                continue
            if "principal" in inspect.signature(member).parameters:
                out.add(f"{cls.__name__}.{name}")
    return out


def policy(effect: str, actions: list[str] | str, account: str = OTHER) -> dict[str, Any]:
    return {
        "Effect": effect,
        "Principal": {"AWS": f"arn:aws:iam::{account}:root"},
        "Action": actions,
        "Resource": "*",
    }


class TestPermissions:
    """Access control on every operation that takes ``principal=`` (section 2.1,
    AddPermission; ``_policy.py``)."""

    def test_every_principal_method_is_covered(self) -> None:
        """The table above names every public method with a ``principal``
        parameter (Queue methods are checked on FifoQueue through Queue's), so a
        method added later cannot escape these tests."""
        covered = set(PRINCIPAL_CALLS) | {
            f"FifoQueue.{n.split('.')[1]}" for n in PRINCIPAL_CALLS if n.startswith("Queue.")
        }
        assert methods_taking_principal() - {"Broker.client"} <= covered

    @pytest.mark.parametrize("method", sorted(PRINCIPAL_CALLS))
    def test_other_account_without_grant_is_denied(self, method: str) -> None:
        """AccessDenied for another account with no policy statement granting the
        action; the refused call changes nothing (a queue, its messages, tags,
        policy and the broker's queue list are as before)."""
        _action, call = PRINCIPAL_CALLS[method]
        world = World()
        before = world.state()
        with pytest.raises(errors.AccessDenied):
            call(world, OTHER)
        assert world.state() == before

    @pytest.mark.parametrize("method", sorted(PRINCIPAL_CALLS))
    def test_owner_and_no_principal_are_allowed(self, method: str) -> None:
        """The queue owner (and a caller without a principal, who acts as the
        owner) may do anything."""
        _action, call = PRINCIPAL_CALLS[method]
        for principal in (OWNER, f"arn:aws:iam::{OWNER}:user/alice", None):
            call(World(), principal)

    @pytest.mark.parametrize("method", sorted(PRINCIPAL_CALLS))
    def test_grant_allows_and_deny_wins(self, method: str) -> None:
        """A policy statement allowing the action (by name, by ``sqs:*`` or a
        wildcard) lets the other account in; an applicable Deny statement wins
        over any Allow; a grant to a third account or for another action does
        not help."""
        action, call = PRINCIPAL_CALLS[method]
        base = {"SendMessageBatch": "SendMessage", "DeleteMessageBatch": "DeleteMessage"}.get(
            action, action
        )
        base = {"ChangeMessageVisibilityBatch": "ChangeMessageVisibility"}.get(base, base)

        def grant(world: World, statements: list[dict[str, Any]]) -> None:
            """Set the Policy of the queue ``method`` acts on, keeping the
            statement labelled "existing" that RemovePermission looks for."""
            target = {
                "Broker.list_dead_letter_source_queues": world.dlq,
                "Broker.start_message_move_task": world.dlq,
                "Broker.list_message_move_tasks": world.dlq2,
                "Broker.cancel_message_move_task": world.dlq2,
            }.get(method, world.q)
            if method.startswith("FifoQueue."):
                target = world.fifo
            existing = {**policy("Allow", "sqs:SendMessage", account=OWNER), "Sid": "existing"}
            doc = {"Statement": [existing, *statements]}
            target.set_attributes({"Policy": json.dumps(doc)})

        for allowed in (f"SQS:{base}", "sqs:*", f"sqs:{base[:3]}*"):
            world = World()
            grant(world, [policy("Allow", allowed)])
            if base in OWNER_ONLY:
                # "Cross-account permissions don't apply to this action" [BM]:
                # no grant lets another account in.
                before = world.state()
                with pytest.raises(errors.AccessDenied):
                    call(world, OTHER)
                assert world.state() == before
            else:
                call(world, OTHER)
        for statements in (
            [policy("Allow", "sqs:*"), policy("Deny", f"sqs:{base}")],
            [policy("Allow", "sqs:*", account="999999999999")],
            [policy("Allow", "sqs:NoSuchAction")],
        ):
            world = World()
            grant(world, statements)
            before = world.state()
            with pytest.raises(errors.AccessDenied):
                call(world, OTHER)
            assert world.state() == before

    def test_add_permission_grants_exactly_its_actions(self) -> None:
        """Section 2.1, AddPermission: granting SendMessage lets the account send
        (singly and in batches) and nothing else; RemovePermission takes it back."""
        world = World()
        world.q.add_permission("send", [OTHER], ["SendMessage"])
        world.q.send("x", principal=OTHER)
        world.q.send_batch(["y"], principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            world.q.receive(principal=OTHER)
        world.q.remove_permission("send")
        with pytest.raises(errors.AccessDenied):
            world.q.send("x", principal=OTHER)

    @pytest.mark.parametrize("principal", ["", "12345", "root", "arn:aws:iam::12:root", 42])
    def test_malformed_principal_refused(self, principal: Any) -> None:
        """A principal that is neither a 12-digit account nor an IAM ARN is
        InvalidParameterValue, never treated as the owner."""
        world = World()
        before = world.state()
        with pytest.raises(errors.InvalidParameterValue):
            world.q.send("x", principal=principal)
        assert world.state() == before

    def test_client_principal_applies_to_every_queue_operation(self) -> None:
        """``broker.client(principal=...)`` makes every call on behalf of that
        account: each of the 23 operations that names a queue is AccessDenied
        for another account without a grant, and changes nothing."""
        world = World()
        sqs = world.broker.client(principal=OTHER)
        url = world.q.url
        calls = {
            "AddPermission": {
                "QueueUrl": url,
                "Label": "l",
                "AWSAccountIds": [OTHER],
                "Actions": ["SendMessage"],
            },
            "ChangeMessageVisibility": {
                "QueueUrl": url,
                "ReceiptHandle": world.handles[0],
                "VisibilityTimeout": 1,
            },
            "ChangeMessageVisibilityBatch": {
                "QueueUrl": url,
                "Entries": [{"Id": "0", "ReceiptHandle": world.handles[0], "VisibilityTimeout": 1}],
            },
            "DeleteMessage": {"QueueUrl": url, "ReceiptHandle": world.handles[0]},
            "DeleteMessageBatch": {
                "QueueUrl": url,
                "Entries": [{"Id": "0", "ReceiptHandle": world.handles[0]}],
            },
            "DeleteQueue": {"QueueUrl": url},
            "GetQueueAttributes": {"QueueUrl": url, "AttributeNames": ["All"]},
            "GetQueueUrl": {"QueueName": "q"},
            "ListDeadLetterSourceQueues": {"QueueUrl": world.dlq.url},
            "ListQueueTags": {"QueueUrl": url},
            "PurgeQueue": {"QueueUrl": url},
            "ReceiveMessage": {"QueueUrl": url},
            "RemovePermission": {"QueueUrl": url, "Label": "existing"},
            "SendMessage": {"QueueUrl": url, "MessageBody": "x"},
            "SendMessageBatch": {"QueueUrl": url, "Entries": [{"Id": "0", "MessageBody": "x"}]},
            "SetQueueAttributes": {"QueueUrl": url, "Attributes": {"DelaySeconds": "1"}},
            "TagQueue": {"QueueUrl": url, "Tags": {"k": "v"}},
            "UntagQueue": {"QueueUrl": url, "TagKeys": ["team"]},
        }
        not_queue_scoped = {
            "CreateQueue",
            "ListQueues",
            "StartMessageMoveTask",
            "CancelMessageMoveTask",
            "ListMessageMoveTasks",
        }
        assert set(calls) | not_queue_scoped == set(OPERATIONS)
        for operation, params in calls.items():
            before = world.state()
            with pytest.raises(errors.AccessDenied):
                sqs.call(operation, params)
            assert world.state() == before, operation


# -- resource limits --------------------------------------------------------------------------


class TestLimits:
    """Section 4's quotas are checked before anything changes."""

    @pytest.mark.parametrize("fifo", [False, True])
    def test_message_size(self, fifo: bool) -> None:
        """Section 4: a body (plus attributes) larger than MaximumMessageSize is
        refused and nothing is stored, nor (FIFO) remembered for deduplication;
        exactly the maximum is accepted."""
        clock = ManualClock(start=START)
        q: Queue | FifoQueue = (
            FifoQueue("q.fifo", clock=clock, maximum_message_size=1_024)
            if fifo
            else Queue("q", clock=clock, maximum_message_size=1_024)
        )
        ids = {"group_id": "g", "deduplication_id": "d"} if fifo else {}
        before = snapshot(q)
        with pytest.raises(errors.InvalidParameterValue):
            q.send("x" * 1_025, **ids)  # type: ignore[arg-type]
        with pytest.raises(errors.InvalidParameterValue):
            q.send("x" * 1_000, message_attributes={"a": "y" * 30}, **ids)  # type: ignore[arg-type]
        assert snapshot(q) == before
        q.send("x" * 1_024, **ids)  # type: ignore[arg-type]
        assert len(q) == 1

    def test_one_mebibyte_default_and_multibyte_bodies(self) -> None:
        """Section 4: the default maximum is 1,048,576 bytes of UTF-8: a body of
        that many bytes is accepted, one byte more (or the same number of
        characters in 2-byte UTF-8) is refused without storing anything."""
        q = Queue("q", clock=ManualClock(start=START))
        q.send("x" * L.MESSAGE_SIZE_MAX)
        before = snapshot(q)
        for body in ("x" * (L.MESSAGE_SIZE_MAX + 1), "é" * (L.MESSAGE_SIZE_MAX // 2 + 1)):
            with pytest.raises(errors.InvalidParameterValue):
                q.send(body)
        assert snapshot(q) == before

    def test_attribute_count(self) -> None:
        """Section 4: at most 10 message attributes; 11 are refused, nothing stored."""
        q = Queue("q", clock=ManualClock(start=START))
        q.send("ok", message_attributes={f"a{i}": "v" for i in range(10)})
        before = snapshot(q)
        with pytest.raises(errors.InvalidParameterValue):
            q.send("no", message_attributes={f"a{i}": "v" for i in range(11)})
        assert snapshot(q) == before

    @pytest.mark.parametrize(
        ("entries", "error"),
        [
            ([f"m{i}" for i in range(11)], errors.TooManyEntriesInBatchRequest),
            ([SendEntry(str(i), "x" * 262_145) for i in range(4)], errors.BatchRequestTooLong),
            ([SendEntry(str(i), "é" * 131_073) for i in range(4)], errors.BatchRequestTooLong),
        ],
    )
    def test_batch_size_and_payload(self, entries: list[Any], error: Any) -> None:
        """Section 4: at most 10 entries and 1,048,576 bytes per batch in all;
        a larger batch is refused whole, nothing is sent. (4 x 262,144 bytes is
        exactly 1 MiB and passes.)"""
        q = Queue("q", clock=ManualClock(start=START))
        q.send_batch([SendEntry(str(i), "x" * 262_144) for i in range(4)])
        before = snapshot(q)
        with pytest.raises(error):
            q.send_batch(entries)
        assert snapshot(q) == before
        for many in (
            [DeleteEntry(str(i), "h") for i in range(11)],
            [ChangeVisibilityEntry(str(i), "h", 0) for i in range(11)],
        ):
            method = (
                q.delete_batch if isinstance(many[0], DeleteEntry) else q.change_visibility_batch
            )
            with pytest.raises(errors.TooManyEntriesInBatchRequest):
                method(many)  # type: ignore[operator]
        assert snapshot(q) == before

    @pytest.mark.parametrize("fifo", [False, True])
    def test_in_flight_limit(self, fifo: bool) -> None:
        """Section 4: 120,000 messages in flight (the real limit). At the limit a
        standard short poll raises OverLimit, a standard long poll and any FIFO
        receive return nothing, and none of them changes anything; a receive
        just below the limit returns only what fits; deleting one makes room."""
        clock = ManualClock(start=START)
        q: Queue | FifoQueue
        if fifo:
            q = FifoQueue("q.fifo", clock=clock, visibility_timeout=43_200)
            for i in range(12_000):
                q.send_batch(
                    [
                        SendEntry(f"{k}", "m", group_id=f"g{i}-{k}", deduplication_id=f"{i}-{k}")
                        for k in range(10)
                    ]
                )
            q.send_batch(
                [
                    SendEntry(f"{k}", "m", group_id=f"x{k}", deduplication_id=f"x{k}")
                    for k in range(10)
                ]
            )
        else:
            q = Queue("q", clock=clock, visibility_timeout=43_200)
            for _ in range(12_001):
                q.send_batch(["m"] * 10)
        got = 0
        while got < L.IN_FLIGHT_MAX - 3:
            got += len(q.receive(min(10, L.IN_FLIGHT_MAX - 3 - got)))
        last = q.receive(10)
        assert len(last) == 3  # only what fits under the limit
        before = snapshot(q)
        if fifo:
            assert q.receive(10) == []
        else:
            with pytest.raises(errors.OverLimit):
                q.receive(10)
        assert q.receive(10, wait_time_seconds=1) == []
        assert snapshot(q) == before
        q.delete(last[0].receipt_handle)
        assert len(q.receive(10)) == 1
        q._check()


# -- no code execution on user data ------------------------------------------------------------

#: Names that would execute or deserialise arbitrary data if fed user input.
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "importlib"}
FORBIDDEN_ATTRIBUTE_CALLS = {
    ("importlib", "import_module"),
    ("os", "system"),
    ("os", "popen"),
    ("yaml", "load"),
    ("yaml", "unsafe_load"),
}
#: Legitimate uses, reviewed: (file, what) -> why it is safe.
ALLOWED: dict[tuple[str, str], str] = {
    ("errors.py", "globals"): (
        "builds the code -> exception class table from the module's own classes at "
        "import time; no user data involved"
    ),
    ("_imports.py", "import importlib.abc"): (
        "sqsqueue.moto's import hook: patches three named moto modules after moto's "
        "own loader ran them; it loads nothing else and sees no user data"
    ),
    ("_imports.py", "import importlib.machinery"): (
        "the same hook finds moto's own files with the standard PathFinder"
    ),
}


def scan(path: Path) -> list[tuple[str, int, str]]:
    """Every forbidden import or call in one module, as (file, line, what)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append((path.name, node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if module in FORBIDDEN_MODULES:
                found.append((path.name, node.lineno, f"from {node.module} import"))
            for alias in node.names:
                if alias.name in FORBIDDEN_CALLS | {"import_module", "system", "popen"}:
                    found.append((path.name, node.lineno, f"import of {alias.name}"))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                found.append((path.name, node.lineno, f"{func.id}()"))
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id, func.attr) in FORBIDDEN_ATTRIBUTE_CALLS
            ):
                found.append((path.name, node.lineno, f"{func.value.id}.{func.attr}()"))
            if (
                isinstance(func, ast.Name)
                and func.id in {"getattr", "setattr"}
                and len(node.args) >= 2
                and not isinstance(node.args[1], ast.Constant)
            ):
                # getattr(obj, <name>) with a non-literal name is dynamic dispatch:
                # allowed only on names the code itself chose (reviewed below).
                found.append((path.name, node.lineno, f"{func.id}() with a computed name"))
        elif isinstance(node, ast.Name) and node.id in {"__builtins__", "globals", "locals"}:
            found.append((path.name, node.lineno, node.id))
    return found


#: Dynamic attribute lookups that exist, each reviewed: the name comes from a
#: fixed table, never from the caller unchecked.
REVIEWED_DYNAMIC = {
    # Client.call: the operation name is checked against OPERATIONS (the 23 SQS
    # operations) before getattr(self, snake_case(name)) picks the method.
    "_client.py",
    # mock_sqs's class decorator: setattr(klass, name, wrapper) on the names of
    # the decorated class's own test methods (dir(klass), "test*") and on a fixed
    # tuple of hook names; nothing comes from a request.
    "_mock.py",
}


def test_no_code_execution_on_user_data() -> None:
    """No module of sqsqueue imports pickle, marshal, shelve, dill, cloudpickle or
    importlib, nor calls eval, exec, compile, __import__,
    importlib.import_module, os.system, os.popen or yaml.load: user data (message
    bodies, attributes, policies, handles, task handles, tokens) is only ever
    parsed as JSON, base64 or text. Dynamic getattr/setattr with a computed name
    appears only where reviewed (REVIEWED_DYNAMIC)."""
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) >= 20
    found = [f for path in files for f in scan(path)]
    dynamic = [f for f in found if "computed name" in f[2]]
    assert {(f[0], f[2]) for f in found} >= set(ALLOWED), "a reviewed use is gone: update ALLOWED"
    unexpected = [f for f in found if f not in dynamic and (f[0], f[2]) not in ALLOWED]
    assert unexpected == [], unexpected
    assert {f[0] for f in dynamic} <= REVIEWED_DYNAMIC, dynamic


def test_scanner_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The scanner itself works: a module full of forbidden things is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle\nimport importlib\nfrom marshal import loads\n"
        "eval('1')\nexec('x = 1')\ncompile('1', 'f', 'eval')\n__import__('os')\n"
        "importlib.import_module('os')\nimport os\nos.system('true')\n"
        "getattr(object, input())\n",
        encoding="utf-8",
    )
    what = {f[2] for f in scan(bad)}
    assert what >= {
        "import pickle",
        "import importlib",
        "from marshal import",
        "eval()",
        "exec()",
        "compile()",
        "__import__()",
        "importlib.import_module()",
        "os.system()",
        "getattr() with a computed name",
    }


def test_task_handles_and_tokens_are_parsed_as_data() -> None:
    """Section 11: a move-task handle and a ListQueues token are base64 JSON,
    decoded with json.loads only: crafted ones (Python literals, pickles, huge or
    deeply nested JSON) are refused with AWS's errors."""
    broker = Broker(clock=ManualClock(start=START), account_id=OWNER)
    broker.create_queue("q")
    crafted = [
        base64.b64encode(b"__import__('os').system('true')").decode(),
        base64.b64encode(b"\x80\x04\x95\x00").decode(),  # a pickle header
        base64.b64encode(("[" * 100_000).encode()).decode(),
        base64.b64encode(json.dumps({"taskId": 1, "sourceArn": []}).encode()).decode(),
        "not base64!",
    ]
    for token in crafted:
        with pytest.raises(errors.InvalidParameterValue):
            broker.cancel_message_move_task(token)
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_queues(next_token=token)
    bad_url = base64.urlsafe_b64encode(binascii.unhexlify("80049500")).decode()
    with pytest.raises(errors.InvalidParameterValue):
        broker.list_queues(next_token=bad_url)
