"""Atomicity: an operation that fails changes nothing; a batch changes exactly
what its successful entries say (``docs/design.md`` principle 6; ``docs/aws-behaviour.md``
sections 1.4, 2.1, 3, 8, 13).

* Batches: a batch with bad entries among good ones leaves exactly the state
  the naive model of ``tests/model.py`` predicts: every good entry applied, in
  order, every bad one reported with AWS's code and without effect; a batch
  refused as a whole (no entries, more than 10, repeated or bad ids, more than
  1 MiB, a FIFO entry without a group) changes nothing at all.
* The clock: a ``Clock`` whose ``now()`` raises on its N-th call is injected
  under every operation that reads time (receive, long poll, send, send_batch,
  delete, delete_batch, change_visibility_batch, purge, set_attributes,
  create_queue, delete_queue, move-task start, cancel, listing and progress),
  for every N the operation reaches. Each time the exception escapes, nothing
  a caller or the engine can see has changed; afterwards the operation works.
* User callbacks: a consumer whose handler raises
  (:class:`sqsqueue.testing.stateful.ConsumerMachine`) leaves the message in
  flight, and it is delivered again when its visibility timeout ends. (The
  Spark ``QueueBatch`` body is covered by ``tests/spark/test_failures.py``.)
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant

from sqsqueue import (
    Broker,
    DeleteEntry,
    FifoQueue,
    ManualClock,
    Message,
    Queue,
    SendEntry,
    errors,
)
from sqsqueue.testing.stateful import ConsumerMachine
from tests._machines import forge, snapshot
from tests._profiles import LONG, machine_settings
from tests.model import US, ModelError, ModelReceipt, ModelStandardQueue

START = 1_700_000_000.0
ACCOUNT = "123456789012"
EXAMPLES = settings(max_examples=1_000 if LONG else 100, deadline=None)


# -- batches with bad entries ----------------------------------------------------------

#: Kinds of SendMessageBatch entries and the error each bad one gets (section 2.1).
SEND_KINDS: dict[str, str | None] = {
    "good": None,
    "empty body": "MissingParameter",
    "invalid character": "InvalidMessageContents",
    "too big": "InvalidParameterValue",
    "delay over 900": "InvalidParameterValue",
    "11 attributes": "InvalidParameterValue",
    "bad attribute name": "InvalidParameterValue",
}


def send_entry(i: int, kind: str) -> SendEntry:
    body = f"m{i}"
    if kind == "empty body":
        return SendEntry(str(i), "")
    if kind == "invalid character":
        return SendEntry(str(i), "bad\x00body")
    if kind == "too big":
        return SendEntry(str(i), "x" * 2_000)  # the queue's MaximumMessageSize is 1,024
    if kind == "delay over 900":
        return SendEntry(str(i), body, delay_seconds=901)
    if kind == "11 attributes":
        return SendEntry(str(i), body, message_attributes={f"a{k}": "v" for k in range(11)})
    if kind == "bad attribute name":
        return SendEntry(str(i), body, message_attributes={"AWS.reserved": "v"})
    return SendEntry(str(i), body, message_attributes={"n": i})


class TestBatchEntries:
    """Per-entry outcomes of batches (section 2.1: "an invalid entry is reported
    in Failed and the others are processed")."""

    @EXAMPLES
    @given(kinds=st.lists(st.sampled_from(sorted(SEND_KINDS)), min_size=1, max_size=10))
    def test_send_batch_sends_exactly_the_good_entries(self, kinds: list[str]) -> None:
        """Section 2.1: each good entry is sent, in order, and reported in
        Successful with its MessageId; each bad one is reported in Failed with
        AWS's code and sends nothing; the queue then holds exactly the model's
        messages."""
        clock = ManualClock(start=START)
        q = Queue("q", clock=clock, maximum_message_size=1_024, random=random.Random(1))
        model = ModelStandardQueue("q", now=round(START * US))
        result = q.send_batch([send_entry(i, k) for i, k in enumerate(kinds)])
        failed = {f.id: f for f in result.failed}
        ids = []
        for i, kind in enumerate(kinds):
            code = SEND_KINDS[kind]
            if code is None:
                sent = result.successful[str(i)]
                assert sent is not None and str(i) not in failed
                model.send(f"m{i}")
                ids.append(sent.message_id)
            else:
                assert str(i) not in result.successful
                assert failed[str(i)].code == code, (kind, failed[str(i)])
                assert failed[str(i)].sender_fault
        stored = q.inspect()
        assert [info.body for info in stored] == [m.body for m in model.stored()]
        assert [info.message_id for info in stored] == ids
        assert all(info.state == "visible" for info in stored)
        q._check()

    @pytest.mark.parametrize(
        ("entries", "error"),
        [
            ([], errors.EmptyBatchRequest),
            ([f"m{i}" for i in range(11)], errors.TooManyEntriesInBatchRequest),
            ([SendEntry("a", "x"), SendEntry("a", "y")], errors.BatchEntryIdsNotDistinct),
            ([SendEntry("a", "x"), SendEntry("b c", "y")], errors.InvalidBatchEntryId),
            ([SendEntry(str(i), "x" * 120_000) for i in range(9)], errors.BatchRequestTooLong),
            ([SendEntry("a", "x"), SendEntry("b", "")], None),  # per entry: not whole-request
        ],
    )
    def test_whole_request_errors_send_nothing(self, entries: list[Any], error: Any) -> None:
        """Section 2.1: request-level problems (no entries, more than 10, repeated
        or malformed ids, more than 1 MiB in all) refuse the whole batch and
        send nothing; the queue is exactly as before."""
        q = Queue("q", clock=ManualClock(start=START))
        q.send("before")
        before = snapshot(q)
        if error is None:
            result = q.send_batch(entries)
            assert [f.id for f in result.failed] == ["b"] and list(result.successful) == ["a"]
            return
        with pytest.raises(error):
            q.send_batch(entries)
        assert snapshot(q) == before
        q._check()

    def test_fifo_entry_without_group_fails_the_whole_batch(self) -> None:
        """Section 2.1: a FIFO batch entry without MessageGroupId fails the whole
        request with InvalidParameterValue; the good entries before it are not
        sent either, and the deduplication history is untouched."""
        q = FifoQueue("q.fifo", clock=ManualClock(start=START), content_based_deduplication=True)
        before = snapshot(q)
        with pytest.raises(errors.InvalidParameterValue):
            q.send_batch([SendEntry("a", "x", group_id="g"), SendEntry("b", "y")])
        assert snapshot(q) == before
        assert q.send("x", group_id="g").message_id  # not deduplicated: nothing was sent
        q._check()

    @EXAMPLES
    @given(
        picks=st.lists(
            st.tuples(st.integers(0, 5), st.sampled_from(["own", "forged", "foreign", "junk"])),
            min_size=1,
            max_size=10,
        )
    )
    def test_delete_batch_deletes_exactly_the_valid_handles(
        self, picks: list[tuple[int, str]]
    ) -> None:
        """Section 8: each genuine handle deletes its own message (a repeated one
        succeeds again: DeleteMessage is idempotent); a forged handle, another
        queue's handle or garbage fails with ReceiptHandleIsInvalid and deletes
        nothing; the queue then holds exactly the model's messages."""
        clock = ManualClock(start=START)
        q = Queue("q", clock=clock, random=random.Random(1))
        other = Queue("other", clock=clock, random=random.Random(2))
        other.send("x")
        [foreign] = other.receive()
        model = ModelStandardQueue("q", now=round(START * US))
        for i in range(6):
            q.send(f"m{i}")
            model.send(f"m{i}")
        received = q.receive(6)
        receipts = model.receive(model.oldest_first(6), 6)
        handles = [m.receipt_handle for m in received]
        entries, predicted = [], []
        for n, (i, kind) in enumerate(picks):
            text, receipt = handles[i], receipts[i]
            if kind == "forged":
                text = forge(text)
                receipt = ModelReceipt("q", receipt.message, receipt.receipt_no, forged=True)
            elif kind == "foreign":
                text, receipt = foreign.receipt_handle, ModelReceipt("other", None, 0)
            elif kind == "junk":
                text, receipt = "garbage", ModelReceipt(None, None, 0)
            entries.append(DeleteEntry(str(n), text))
            try:
                model.delete(receipt)
            except ModelError as err:
                predicted.append(err.error.code)
            else:
                predicted.append(None)
        result = q.delete_batch(entries)
        failed = {f.id: f.code for f in result.failed}
        for n, code in enumerate(predicted):
            assert failed.get(str(n)) == code, (n, picks[n], failed)
            assert (str(n) in result.successful) == (code is None)
        assert sorted(info.body for info in q.inspect()) == sorted(m.body for m in model.stored())
        q._check()

    @EXAMPLES
    @given(
        picks=st.lists(
            st.tuples(st.integers(0, 3), st.sampled_from([0, 10, 43_201, 43_200, -1])),
            min_size=1,
            max_size=10,
        )
    )
    def test_change_visibility_batch_applies_exactly_the_valid_entries(
        self, picks: list[tuple[int, int]]
    ) -> None:
        """Section 8: each valid entry sets its message's visibility from now; an
        out-of-range or over-budget timeout fails with InvalidParameterValue and
        leaves that message's deadline as it was; deadlines then equal the
        model's."""
        clock = ManualClock(start=START)
        q = Queue("q", clock=clock)
        model = ModelStandardQueue("q", now=round(START * US))
        for i in range(4):
            q.send(f"m{i}")
            model.send(f"m{i}")
        received = q.receive(4)
        receipts = model.receive(model.oldest_first(4), 4)
        clock.advance(5)
        model.advance(5 * US)
        predicted = []
        for i, vt in picks:
            try:
                if not 0 <= vt <= 43_200:
                    raise ModelError(errors.InvalidParameterValue, "range")
                model.change_visibility(receipts[i], vt)
            except ModelError as err:
                predicted.append(err.error.code)
            else:
                predicted.append(None)
        result = q.change_visibility_batch(
            [
                {"Id": str(n), "ReceiptHandle": received[i].receipt_handle, "VisibilityTimeout": vt}
                for n, (i, vt) in enumerate(picks)
            ]
        )
        failed = {f.id: f.code for f in result.failed}
        assert [failed.get(str(n)) for n in range(len(picks))] == predicted
        due = {info.body: info.visible_at for info in q.inspect()}
        assert due == {m.body: m.due / US for m in model.stored()}
        q._check()


# -- a clock that breaks -----------------------------------------------------------------


class ClockBroke(Exception):
    """What the injected clock raises (deliberately not an SQSError)."""


class BreakingClock(ManualClock):
    """A ManualClock whose ``now()`` raises on its ``fail_at``-th call once armed."""

    def __init__(self, start: float) -> None:
        super().__init__(start=start)
        self.fail_at: int | None = None
        self.calls = 0

    def arm(self, n: int) -> None:
        self.fail_at, self.calls = n, 0

    def disarm(self) -> None:
        self.fail_at = None

    def now(self) -> float:
        if self.fail_at is not None:
            self.calls += 1
            if self.calls == self.fail_at:
                raise ClockBroke(f"clock read {self.calls} failed")
        return super().now()


class World:
    """A broker with a standard source queue (maxReceiveCount 2), its DLQ holding
    dead letters, a FIFO queue, messages in every state, message histories on,
    and optionally a move task running at 1 message per second."""

    def __init__(self, task: bool = False) -> None:
        self.clock = BreakingClock(START)
        self.broker = Broker(
            clock=self.clock, account_id=ACCOUNT, random=random.Random(5), keep_history=True
        )
        self.dlq = self.broker.create_queue("dlq")
        self.src = self.broker.create_queue(
            "src",
            attributes={
                "RedrivePolicy": {"deadLetterTargetArn": self.dlq.arn, "maxReceiveCount": 2}
            },
        )
        self.fifo = self.broker.create_queue(
            "f.fifo", fifo_queue=True, content_based_deduplication=True
        )
        for i in range(3):  # dead letters
            self.src.send(f"dead{i}")
        for _ in range(2):
            self.src.receive(10, visibility_timeout=0)
        assert self.src.receive(10) == []
        for i in range(6):
            self.src.send(f"m{i}", delay_seconds=5 * (i % 2))
            self.fifo.send(f"f{i}", group_id=f"g{i % 2}")
        self.handles = [m.receipt_handle for m in self.src.receive(3, visibility_timeout=7)]
        self.fifo_handles = [m.receipt_handle for m in self.fifo.receive(2)]
        self.src.tag({"team": "a"})
        self.waiting = self.broker.create_queue("waiting")  # all in flight until +5 s
        self.waiting.send_batch(["w0", "w1"])
        self.waiting.receive(10, visibility_timeout=5)
        self.task_handle = ""
        if task:
            self.task_handle = self.broker.start_message_move_task(
                self.dlq.arn, max_number_of_messages_per_second=1
            )
        self.clock.advance(2.5)
        self.queues = [self.src, self.dlq, self.fifo, self.waiting]

    def catch_up(self) -> None:
        """Apply what is due now (retention, move-task progress) on every queue."""
        for q in self.queues:
            len(q)

    def state(self) -> Any:
        """Everything an operation could change, read without reading the clock."""
        queues = []
        for q in self.broker._queues.values():
            queues.append(
                (
                    q.name,
                    q._deleted,
                    snapshot(q),
                    dict(q._tags),
                    repr(q._history() and q._history().events),
                )
            )
        tasks = sorted(
            (t.task_id, t.status, t.moved) for ts in self.broker._moves._tasks.values() for t in ts
        )
        return queues, tasks, dict(self.broker._deleted_at)

    def check(self) -> None:
        for q in self.queues:
            q._check()


#: Each operation that reads the clock, as (name, world with a task?, operation).
OPERATIONS: list[tuple[str, bool, Callable[[World], object]]] = [
    ("receive", False, lambda w: w.src.receive(10)),
    ("receive dead-lettering", False, lambda w: w.src.receive(10, visibility_timeout=0)),
    ("long poll", False, lambda w: w.fifo.receive(10, wait_time_seconds=20)),
    ("long poll that waits", False, lambda w: w.waiting.receive(10, wait_time_seconds=20)),
    ("fifo receive attempt", False, lambda w: w.fifo.receive(3, receive_request_attempt_id="r")),
    ("send", False, lambda w: w.src.send("new")),
    ("send_batch", False, lambda w: w.src.send_batch(["a", "b", "c"])),
    (
        "fifo send_batch",
        False,
        lambda w: w.fifo.send_batch([SendEntry(str(i), f"n{i}", group_id="g9") for i in range(3)]),
    ),
    ("delete", False, lambda w: w.src.delete(w.handles[0])),
    ("delete_batch", False, lambda w: w.src.delete_batch(w.handles)),
    ("fifo delete_batch", False, lambda w: w.fifo.delete_batch(w.fifo_handles)),
    (
        "change_visibility_batch",
        False,
        lambda w: w.src.change_visibility_batch(
            [
                {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 60}
                for i, h in enumerate(w.handles)
            ]
        ),
    ),
    ("purge", False, lambda w: w.src.purge()),
    (
        "set_attributes",
        False,
        lambda w: w.src.set_attributes(
            {"VisibilityTimeout": "5", "MessageRetentionPeriod": "60", "RedrivePolicy": ""}
        ),
    ),
    ("get_attributes", False, lambda w: w.src.get_attributes()),
    ("create_queue", False, lambda w: w.broker.create_queue("new", visibility_timeout=9)),
    ("create_queue existing", False, lambda w: w.broker.create_queue("src")),
    ("delete_queue", False, lambda w: w.broker.delete_queue("f.fifo")),
    ("start move task", False, lambda w: w.broker.start_message_move_task(w.dlq.arn)),
    (
        "start rate-limited move task",
        False,
        lambda w: w.broker.start_message_move_task(w.dlq.arn, max_number_of_messages_per_second=2),
    ),
    ("move task progress", True, lambda w: w.src.get_attributes()),
    ("move task progress on receive", True, lambda w: w.src.receive(10)),
    ("list move tasks", True, lambda w: w.broker.list_message_move_tasks(w.dlq.arn)),
    (
        "cancel move task",
        True,
        lambda w: w.broker.cancel_message_move_task(w.task_handle),
    ),
]


class TestClockFailure:
    """An exception from the clock escapes an operation that changed nothing
    (lifecycle docstring: "every public operation reads the clock once, before
    changing anything, so an exception from the clock changes nothing")."""

    @pytest.mark.parametrize(
        ("task", "operation"),
        [(task, op) for _name, task, op in OPERATIONS],
        ids=[name for name, _task, _op in OPERATIONS],
    )
    def test_nothing_changes(self, task: bool, operation: Callable[[World], object]) -> None:
        """Design principle 6: for every N, a clock failing on its N-th read
        during the operation makes the operation raise that very exception and
        leaves every queue, message, history, tag and move task as it was; once
        N passes the number of reads the operation makes, it succeeds. With a
        move task due to move messages, nothing moves if the clock fails, and
        the moves happen at their own moments once it works again."""
        reached = 0
        for n in itertools.count(1):
            world = World(task=task)
            if not task:
                world.catch_up()  # nothing due: only the operation may change things
            before = world.state()
            world.clock.arm(n)
            try:
                operation(world)
            except ClockBroke:
                world.clock.disarm()
                assert world.state() == before, f"clock failure on read {n} changed something"
                world.check()
                reached = n
                continue
            world.clock.disarm()
            world.check()
            break
        assert reached >= 1, "the operation never read the clock"

    def test_moves_resume_at_their_own_moments(self) -> None:
        """Section 11: after a clock failure stopped an operation that would have
        driven a move task, the next operation moves the messages, each enqueued
        at the moment its move was due (1 per second from the task's start)."""
        world = World(task=True)
        started = world.broker.list_message_move_tasks(world.dlq.arn)[0]["StartedTimestamp"]
        world.clock.arm(1)
        with pytest.raises(ClockBroke):
            world.src.get_attributes()
        world.clock.disarm()
        world.clock.advance(10)
        moved = sorted(i.sent_at for i in world.src.inspect() if i.body.startswith("dead"))
        assert moved == [started / 1000 + 1, started / 1000 + 2, started / 1000 + 3]
        world.check()


# -- exceptions from user code -------------------------------------------------------------


class TestConsumerCallbackFailure:
    """A handler that raises leaves the message to be delivered again (section 8:
    a message not deleted becomes visible when its visibility timeout ends)."""

    def test_failed_message_is_redelivered(self) -> None:
        """Section 8: ConsumerMachine.consume calls handle(); when it raises the
        message is not deleted, and after the visibility timeout it is received
        again with ApproximateReceiveCount 2."""

        class Failing(ConsumerMachine):
            def handle(self, message: Message) -> None:
                raise RuntimeError("handler bug")

        machine = Failing()
        machine.send("job", "g1")
        machine.consume(10)
        assert machine.handled.total() == 0
        [info] = machine.queue.inspect()
        assert info.state == "in_flight"
        machine.wait_out_visibility()
        [again] = machine.queue.receive()
        assert again.body == "job"
        assert again.attributes["ApproximateReceiveCount"] == "2"
        machine.nothing_is_lost()
        machine.queue_is_consistent()
        machine.teardown()


class FlakyConsumer(ConsumerMachine):
    """A handler that fails the first attempt at every message and raises a
    different exception type each time: nothing it fails on is ever lost."""

    visibility_timeout = 20

    def __init__(self) -> None:
        super().__init__()
        self.attempts: dict[str, int] = {}
        self.failed: set[str] = set()

    def handle(self, message: Message) -> None:
        n = self.attempts.get(message.message_id, 0) + 1
        self.attempts[message.message_id] = n
        if n == 1:
            self.failed.add(message.message_id)
            raise [ValueError, KeyError, RuntimeError, ZeroDivisionError][len(self.failed) % 4]()

    @invariant()
    def failures_are_redeliverable(self) -> None:
        """A message whose handling failed is still stored (in flight until its
        timeout ends, then receivable) unless a later attempt succeeded."""
        stored = {info.message_id: info for info in self.queue.inspect()}
        for message_id in self.failed:
            assert message_id in stored or self.handled[message_id] == 1
            if message_id in stored:
                assert stored[message_id].receive_count >= 1


FlakyConsumer.TestCase.settings = machine_settings(max_examples=60, stateful_step_count=40)
TestFlakyConsumer = FlakyConsumer.TestCase


class FlakyFifoConsumer(FlakyConsumer):
    """The same on a FIFO queue: a failed message also keeps its group waiting."""

    fifo = True


FlakyFifoConsumer.TestCase.settings = machine_settings(max_examples=60, stateful_step_count=40)
TestFlakyFifoConsumer = FlakyFifoConsumer.TestCase
