"""Model-based testing of the FIFO queue (``docs/aws-behaviour.md`` §§4, 5, 8, 9, 12).

Random sequences of send / send_batch (six groups, repeated deduplication ids
and bodies, content-based deduplication on or off, either deduplication scope)
/ receive (short and long polls, ReceiveRequestAttemptId retries from a small
pool) / delete / delete_batch / change_visibility / change_visibility_batch /
purge / SetQueueAttributes (a retroactive queue delay) / clock moves run against
:class:`sqsqueue.FifoQueue` and :class:`tests.model.ModelFifoQueue`, which
predicts exactly which messages each receive returns, in order.

Besides agreeing with the model after every step, the queue must keep two
rules of its own, checked without the model's help:

* order within a group: a message is returned only if every earlier stored
  message of its group was returned before it in the same response;
* group lock: a group's in-flight messages all come from one receive, except
  when a ChangeMessageVisibility made an earlier message visible again while
  later ones stayed in flight, and a later receive returned the group's head
  (section 9: "extend visibility of the message at position p ... next receive
  returns only the group messages before p"; "terminating visibility of the
  first message of a locked group makes that message ... available
  immediately"). Then later receives hold earlier messages, and a visibility
  change on the group happened between the receives involved.

``SQSQUEUE_LONG=1`` runs at depth (``tests/_profiles.py``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, multiple, rule

from sqsqueue import FifoQueue, SendEntry
from sqsqueue._message import SEQ_BITS, view
from tests import _mirror as mirror
from tests._machines import (
    FAILED,
    MAX_MESSAGES,
    RECEIVE_VT,
    RETENTION,
    START,
    WAIT,
    QueueMachine,
    record,
    to_us,
)
from tests._profiles import machine_settings
from tests.model import Fate, ModelFifoQueue, ModelMessage, ModelReceipt

#: Group numbers; a run uses 1..6 groups and number n means group
#: ``g{(n - 1) % groups + 1}`` (:meth:`FifoMachine.group`), so that few-group
#: runs, where locks matter most, are as common as many-group ones.
GROUP = st.integers(1, 6)
BODY = st.integers(0, 29).map(lambda i: f"b{i}")
#: Deduplication ids, repeated often enough to meet within the 5-minute
#: window; None (now and then) means "no explicit id": content-based
#: deduplication, or an error when the queue does not have it.
DEDUP = st.integers(0, 19).map(lambda i: f"d{i}") | st.integers(0, 5).map(
    lambda i: None if i == 0 else f"d{i}"
)
ATTEMPT = st.none() | st.sampled_from(["r1", "r2", "r3"])


class FifoMachine(QueueMachine):
    """A FIFO queue against :class:`ModelFifoQueue`."""

    NAME = "machine.fifo"
    queue: FifoQueue
    model: ModelFifoQueue

    def __init__(self) -> None:
        super().__init__()
        self.sequence_number: dict[int, str] = {}  # model key -> SequenceNumber
        self.last_sequence = 0
        self.receive_op: dict[str, int] = {}  # handle -> number of the receive that issued it
        self.change_ops: dict[str, list[int]] = {}  # group -> numbers of visibility changes
        self.current_receive = 0
        self.groups = 6

    @initialize(
        content_based=st.booleans(),
        scope=st.sampled_from(["queue", "messageGroup"]),
        retention=RETENTION,
        groups=st.integers(1, 6),
        initial=st.lists(st.tuples(BODY, GROUP), max_size=20),
    )
    def create(
        self,
        content_based: bool,
        scope: str,
        retention: int,
        groups: int,
        initial: list[tuple[str, int]],
    ) -> None:
        self.groups = groups
        self.queue = FifoQueue(
            self.NAME,
            clock=self.clock,
            message_retention_period=retention,
            content_based_deduplication=content_based,
            deduplication_scope=scope,
            random=random.Random(1),
        )
        mirror.attach(self.queue)
        self.model = ModelFifoQueue(
            self.NAME,
            now=to_us(START),
            retention=retention,
            content_based_deduplication=content_based,
            deduplication_scope=scope,
        )
        for i, (body, group) in enumerate(initial):
            self.send(body, group, f"initial-{i}")

    # -- bookkeeping ------------------------------------------------------------

    def group(self, number: int) -> str:
        return f"g{(number - 1) % self.groups + 1}"

    def sent(self, m: ModelMessage, duplicate: bool, message_id: str, sequence: str | None) -> None:
        assert sequence is not None
        if duplicate:
            # A duplicate answers with the original message's id and number
            # (sqsqueue's choice; UNCONFIRMED for AWS, section 9).
            assert message_id == self.message_id[m.key]
            assert sequence == self.sequence_number[m.key]
            record("send: duplicate")
            return
        self.bind(m, message_id)
        assert int(sequence) > self.last_sequence, "sequence numbers increase (section 4)"
        self.last_sequence = int(sequence)
        self.sequence_number[m.key] = sequence

    def on_new_handle(self, handle: str, receipt: ModelReceipt) -> None:
        self.receive_op[handle] = self.current_receive

    def on_visibility_changed(self, receipt: ModelReceipt) -> None:
        assert receipt.message is not None and receipt.message.group_id is not None
        self.change_ops.setdefault(receipt.message.group_id, []).append(next(self.ops))

    # -- rules ------------------------------------------------------------------

    @rule(body=BODY, group_no=GROUP, dedup=DEDUP)
    def send(self, body: str, group_no: int, dedup: str | None) -> None:
        group = self.group(group_no)
        result = self.expect(
            lambda: self.model.send(body, group_id=group, dedup_id=dedup),
            lambda: self.queue.send(body, group_id=group, deduplication_id=dedup),
        )
        if result is not FAILED:
            (m, duplicate), sent = result
            self.sent(m, duplicate, sent.message_id, sent.sequence_number)

    @rule(entries=st.lists(st.tuples(BODY, GROUP, DEDUP), min_size=1, max_size=10))
    def send_batch(self, entries: list[tuple[str, int, str | None]]) -> None:
        named = [(body, self.group(n), dedup) for body, n, dedup in entries]

        def model_call() -> list[tuple[ModelMessage, bool]]:
            # A FIFO entry without a deduplication id fails the whole request
            # (section 2.1), so nothing is sent.
            for body, group, dedup in named:
                self.model.dedup_key(body, group, dedup)
            return [
                self.model.send(body, group_id=group, dedup_id=dedup)
                for body, group, dedup in named
            ]

        result = self.expect(
            model_call,
            lambda: self.queue.send_batch(
                [
                    SendEntry(str(i), body, group_id=group, deduplication_id=dedup)
                    for i, (body, group, dedup) in enumerate(named)
                ]
            ),
        )
        if result is FAILED:
            return
        predicted, batch = result
        assert batch.ok and len(batch.successful) == len(entries)
        for i, (m, duplicate) in enumerate(predicted):
            sent = batch.successful[str(i)]
            assert sent is not None
            self.sent(m, duplicate, sent.message_id, sent.sequence_number)

    @rule(
        target=QueueMachine.handles,
        max_messages=MAX_MESSAGES,
        visibility_timeout=RECEIVE_VT,
        wait=WAIT,
        attempt=ATTEMPT,
    )
    def receive(
        self,
        max_messages: int,
        visibility_timeout: int | None,
        wait: int | None,
        attempt: str | None,
    ) -> Any:
        self.current_receive = next(self.ops)
        receipts, replay = self.model.receive(
            max_messages, visibility_timeout, attempt, wait_seconds=wait or 0
        )
        messages = self.queue.receive(
            max_messages,
            visibility_timeout=visibility_timeout,
            wait_time_seconds=wait,
            receive_request_attempt_id=attempt,
        )
        new = self.issued(messages, receipts)
        record(f"receive: {'replay' if replay else len(messages)}")
        # Order within a group, checked on what the queue returned: every
        # earlier message of the group still stored was returned before it.
        returned: list[ModelMessage] = []
        for msg in messages:
            m = self.by_id[msg.message_id]
            for earlier in self.model.messages[: m.key - 1]:
                if earlier.group_id == m.group_id and earlier.fate is Fate.STORED:
                    assert earlier in returned, f"{m!r} returned before {earlier!r}"
            returned.append(m)
        return multiple(*new)

    # -- invariants -------------------------------------------------------------

    def check_all(self) -> None:
        super().check_all()
        self.group_lock()
        self.deduplication_window()

    @invariant()
    def group_lock(self) -> None:
        """A group's in-flight messages come from one receive, but for the
        documented visibility-change exception (see the module docstring)."""
        now = to_us(self.clock.now())
        in_flight: dict[str, list[int]] = {}
        for _seq, rec in sorted((s, view(r)) for s, r in self.queue._records.items()):
            if rec.receive_count and rec.vkey >> SEQ_BITS > now:
                m = self.by_id[rec.message_id]
                handle = self.handle_text[(m.key, rec.receipt_no)]
                assert rec.group_id is not None
                in_flight.setdefault(rec.group_id, []).append(self.receive_op[handle])
        for group, ops in in_flight.items():
            if len(set(ops)) > 1:
                record("group lock: in flight from several receives")
                assert ops == sorted(ops, reverse=True), (group, ops)
                assert any(min(ops) < c < max(ops) for c in self.change_ops.get(group, ())), (
                    f"group {group} has messages in flight from receives {ops} "
                    "without a visibility change between them"
                )

    @invariant()
    def deduplication_window(self) -> None:
        """The engine remembers exactly the deduplication ids the model does."""
        model = {key: entry for key, entry in self.model.dedup.items() if self.model.now < entry[0]}
        engine = {key: e for key, e in self.queue._dedup.entries.items() if e[0] > self.model.now}
        assert set(model) == set(engine)
        for key, (expires, m) in model.items():
            assert engine[key][0] == expires  # DedupEntry: (expires, message id, number)
            assert engine[key][1] == self.message_id[m.key]


FifoMachine.TestCase.settings = machine_settings(max_examples=400, stateful_step_count=50)
TestFifoQueueMachine = FifoMachine.TestCase


# -- sequences the machine found, kept as regression tests --------------------------


def _machine(groups: int = 1, initial: list[tuple[str, int]] | None = None) -> FifoMachine:
    machine = FifoMachine()
    machine.create(
        content_based=False, scope="queue", retention=600, groups=groups, initial=initial or []
    )
    machine.check_all()
    return machine


def test_attempt_not_replayed_after_visibility_change_to_same_deadline() -> None:
    """Section 9: a ReceiveRequestAttemptId retry returns the same messages
    "provided none of the messages were modified (deleted or visibility
    changed)". A ChangeMessageVisibility that happens to set the same deadline
    is still a change, so the retry is a fresh receive of a locked group."""
    machine = _machine(initial=[("b0", 1), ("b1", 1)])
    [handle] = machine.receive(
        max_messages=1, visibility_timeout=None, wait=None, attempt="r1"
    ).values
    machine.check_all()
    machine.change_visibility(handle, 30)  # the queue default: same deadline
    machine.check_all()
    assert (
        machine.receive(max_messages=1, visibility_timeout=None, wait=None, attempt="r1").values
        == ()
    )
    machine.check_all()


def test_long_poll_wakes_when_retention_unlocks_a_group() -> None:
    """Section 12: a long poll returns as soon as a message is receivable. The
    in-flight head of a group leaving by retention makes the next message of
    the group receivable at that moment, not at the end of the wait."""
    machine = _machine(initial=[("b0", 1)])
    machine.advance(100)
    machine.send("b1", 1, "d1")
    machine.advance(490)
    machine.receive(max_messages=1, visibility_timeout=60, wait=None, attempt=None)
    machine.advance(5)
    machine.check_all()
    machine.receive(max_messages=1, visibility_timeout=None, wait=20, attempt=None)
    machine.check_all()  # the clock stopped at 600 s (b0's retention), not 615 s
    assert machine.clock.now() == START + 600
