"""Model checking a Broker: a source queue, its dead-letter queue, a third queue
as a custom move destination, a RedrivePolicy, and message move tasks
(``docs/aws-behaviour.md`` §§4, 8, 9, 10, 11, 12).

Random sequences of send / receive (short and long polls, on any of the three
queues) / delete / change visibility (with handles from any queue, stale,
forged or garbage, sent to the right queue or the wrong one) / purge /
SetQueueAttributes (VisibilityTimeout, DelaySeconds, RedrivePolicy with
maxReceiveCount 1..3 or none) / StartMessageMoveTask (back to the source or to
the third queue, unlimited or 1..3 messages per second) / CancelMessageMoveTask
/ clock moves run against :class:`sqsqueue.Broker` and the naive
:class:`tests.model.ModelBroker`. Most operations may first let some time pass,
so that the engine has to catch up on due work (retention, move-task progress)
inside the operation itself.

After every step:

* every queue's ``_check()`` passes and its three counts equal the model's;
* every message ever sent is in exactly one place: stored in exactly one queue
  (same MessageId as in the model's lineage: a dead letter keeps its id, a
  moved message has a new one), or deleted, expired, purged, dead-lettered on
  or moved on; none is lost, none duplicated, and the engine's per-queue
  sequence numbers are the model's send order;
* each stored message's enqueue time is the model's (a standard dead letter
  keeps its original enqueue time, a FIFO one and a moved one start afresh),
  its receive count continues across a dead-letter move, its visibility
  deadline is the model's;
* ListMessageMoveTasks reports what the model's tasks did.

A handle only ever acts on the message it was issued for: an operation the
model predicts to fail must raise that very error and change nothing.

``SQSQUEUE_LONG=1`` runs at depth (``tests/_profiles.py``).
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Callable
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from sqsqueue import Broker, FifoQueue, ManualClock, Message, Queue
from sqsqueue._message import SEQ_BITS, SEQ_MASK, view
from sqsqueue.errors import SQSError
from tests import _mirror as mirror
from tests._helpers import counts
from tests._machines import (
    CHANGE_VT,
    MAX_MESSAGES,
    RETENTION,
    START,
    STEP,
    WAIT,
    forge,
    record,
    snapshot,
    to_us,
)
from tests._machines import Handle as QueueHandle
from tests._profiles import machine_settings
from tests.model import (
    US,
    Fate,
    ModelBroker,
    ModelError,
    ModelFifoQueue,
    ModelQueue,
    ModelReceipt,
    ModelStandardQueue,
)

ACCOUNT = "123456789012"
#: Time that passes right before an operation: mostly none.
DT = st.one_of(st.just(0), st.just(0), STEP)
QUEUE = st.sampled_from([0, 0, 0, 1, 1, 2])  # source, dead-letter queue, destination
MAX_RECEIVE_COUNT = st.integers(1, 3)
#: Receive visibility timeouts: often 0 (receive counts climb fast, so messages
#: reach their maxReceiveCount and get dead-lettered), else the queue's or 1..60 s.
VT = st.one_of(st.just(0), st.just(0), st.none(), st.integers(1, 60))
#: Rounds of receive-everything-with-visibility-0 right after the first sends:
#: enough rounds dead-letter them, so runs start with a populated DLQ.
ROUNDS = st.integers(0, 4)
RATE = st.none() | st.integers(1, 3)
FAILED = object()


class Handle(QueueHandle):
    """A queue machine's handle, shown with the queue it came from."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{self.receipt!r}@{self.receipt.queue}"


class BrokerMachine(RuleBasedStateMachine):
    """Rules and invariants shared by the standard and FIFO variants."""

    FIFO: ClassVar[bool] = False
    #: Keep the broker in a data directory, and restart it as a rule (issue 16).
    DURABLE: ClassVar[bool] = False
    SRC, DLQ, DEST = "src", "dlq", "dest"
    handles = Bundle("handles")

    def __init__(self) -> None:
        super().__init__()
        # Autojump: the model's long poll jumps to its next deadline, so the
        # machines check where the engine wakes (single-threaded, so sound).
        self.clock = ManualClock(start=START, autojump_threshold=0)
        self.data_dir = tempfile.mkdtemp(prefix="sqsqueue-machine-") if self.DURABLE else None
        self.restarts = 0
        self.broker = Broker(
            clock=self.clock, account_id=ACCOUNT, random=random.Random(1), data_dir=self.data_dir
        )
        self.model = ModelBroker(now=to_us(START))
        self.names = (self.SRC, self.DLQ, self.DEST)
        self.queues: dict[str, Queue | FifoQueue] = {}
        #: (queue, model key) -> MessageId, and back.
        self.ids: dict[tuple[str, int], str] = {}
        self.key_by_id: dict[tuple[str, str], int] = {}
        self.all_ids: set[str] = set()
        self.handle_text: dict[tuple[str, int, int], str] = {}
        self.task_handles: dict[int, str] = {}
        self.garbage = 0

    # -- set-up -------------------------------------------------------------------

    def make(self, name: str, retention: int, **attributes: Any) -> None:
        if self.FIFO:
            attributes["FifoQueue"] = "true"
        self.queues[name] = self.broker.create_queue(
            name, attributes={"MessageRetentionPeriod": str(retention), **attributes}
        )
        mirror.attach(self.queues[name])
        model: ModelQueue
        if self.FIFO:
            model = ModelFifoQueue(name, now=self.model.now, retention=retention)
        else:
            model = ModelStandardQueue(name, now=self.model.now, retention=retention)
        self.model.add(model)

    def setup(self, max_receive_count: int, retention: tuple[int, int, int]) -> None:
        self.make(self.DLQ, retention[1])
        self.make(self.DEST, retention[2])
        self.make(
            self.SRC,
            retention[0],
            RedrivePolicy=self.redrive_policy(max_receive_count),
        )
        self.model.set_redrive(self.SRC, self.DLQ, max_receive_count)

    def redrive_policy(self, max_receive_count: int) -> str:
        return json.dumps(
            {
                "deadLetterTargetArn": self.queues[self.DLQ].arn,
                "maxReceiveCount": max_receive_count,
            }
        )

    # -- bookkeeping --------------------------------------------------------------

    def tick(self, dt: float) -> None:
        """Let ``dt`` seconds pass on both sides (no operation in between)."""
        if dt:
            self.clock.advance(dt)
            self.model.advance(to_us(dt))

    def catch_up(self) -> None:
        """Have every engine queue apply what is due now, then bind the
        MessageIds of messages the model has and the test has not seen yet (sent,
        dead-lettered or moved since), checking each against the model's lineage."""
        for q in self.queues.values():
            len(q)  # applies retention and drives move tasks, at the current time
        for name, q in self.queues.items():
            model = self.model.queues[name]
            stored = model.stored()
            assert set(q._records) == {m.key for m in stored}, (
                f"{name}: engine holds seqs {sorted(q._records)}, model keys "
                f"{[m.key for m in stored]}"
            )
            for m in stored:
                message_id = view(q._realized(q._records[m.key])).message_id
                known = self.ids.get((name, m.key))
                if known is not None:
                    assert message_id == known, (name, m)
                    continue
                if m.previous is not None:
                    # A dead letter keeps its MessageId (section 10).
                    prev_queue = self.SRC
                    assert m.dlq_source == prev_queue
                    assert message_id == self.ids[(prev_queue, m.previous.key)], m
                    record("lineage: dead letter")
                else:
                    # A sent or moved message has a MessageId never seen before
                    # (section 11: "Redriven messages are new messages").
                    assert message_id not in self.all_ids, (name, m, message_id)
                    if m.moved_from is not None:
                        record("lineage: moved")
                self.ids[(name, m.key)] = message_id
                self.key_by_id[(name, message_id)] = m.key
                self.all_ids.add(message_id)

    def arn(self, name: str) -> str:
        return self.queues[name].arn

    def check_received(self, name: str, msgs: list[Message], receipts: list[ModelReceipt]) -> Any:
        self.catch_up()
        got = [self.key_by_id[(name, msg.message_id)] for msg in msgs]
        want = [r.message.key for r in receipts if r.message is not None]
        assert got == want, f"{name}: engine returned {got}, model {want}"
        new = []
        for msg, receipt in zip(msgs, receipts, strict=True):
            m = receipt.message
            assert m is not None
            assert msg.body == m.body
            # ApproximateReceiveCount continues across a dead-letter move (section 10).
            count = m.receive_base + receipt.receipt_no
            assert msg.attributes["ApproximateReceiveCount"] == str(count), (msg, m)
            assert msg.attributes["SentTimestamp"] == str(m.sent // 1000), (msg, m)
            if m.dlq_source is not None:
                assert msg.attributes["DeadLetterQueueSourceArn"] == self.arn(m.dlq_source)
            else:
                assert "DeadLetterQueueSourceArn" not in msg.attributes
            key = (name, m.key, receipt.receipt_no)
            assert key not in self.handle_text
            assert msg.receipt_handle not in self.handle_text.values()
            self.handle_text[key] = msg.receipt_handle
            new.append(Handle(msg.receipt_handle, receipt))
        return multiple(*new)

    def state(self) -> tuple[Any, ...]:
        tasks = sorted(
            (t.task_id, t.status, t.moved) for ts in self.broker._moves._tasks.values() for t in ts
        )
        return (*(snapshot(q) for q in self.queues.values()), tasks)

    def expect(self, model_call: Callable[[], Any], engine_call: Callable[[], Any]) -> Any:
        """Run one operation on both sides: (model result, engine result), or
        FAILED when the model predicted the very error the engine raised, in
        which case nothing changed (docs/design.md principle 6).

        A failing operation may still apply what time made due before it
        failed (retention, move-task progress), so the engine catches up before
        the "nothing changed" snapshot; a succeeding one must do that itself.
        """
        expected: ModelError | None = None
        try:
            predicted = model_call()
        except ModelError as err:
            expected = err
        if expected is not None:
            self.catch_up()
            before = self.state()
            raised: SQSError | None = None
            try:
                engine_call()
            except SQSError as err:
                raised = err
            assert raised is not None, f"engine succeeded; model predicted {expected}"
            assert type(raised) is expected.error, f"engine raised {raised!r}; model: {expected}"
            assert self.state() == before, f"{raised!r} changed something"
            record(f"refused: {expected.error.__name__}")
            return FAILED
        try:
            actual = engine_call()
        except SQSError as err:
            raise AssertionError(f"engine raised {err!r}; model predicted success") from err
        return predicted, actual

    def target_of(self, h: Handle, misroute: int) -> str:
        """The handle's own queue, or (misroute) another queue of the broker."""
        own = h.receipt.queue
        if own is None or misroute:
            others = [n for n in self.names if n != own]
            return others[misroute % len(others)]
        return own

    def churn(self, rounds: int) -> None:
        """Receive everything on the source with visibility 0, ``rounds`` times:
        whatever reaches its maxReceiveCount is dead-lettered on the next round."""
        for _ in range(rounds):
            for _ in range(3):
                self.receive(0, 10, 0, None, 0)

    # -- rules ----------------------------------------------------------------------

    @rule(seconds=STEP)
    def advance(self, seconds: float) -> None:
        self.tick(seconds)

    @rule(index=st.integers(0, 31), early=st.booleans())
    def advance_to_deadline(self, index: int, early: bool) -> None:
        """Land on (or a quarter second before) a moment at which the model says
        something happens by itself: a delay or visibility timeout ending, a
        message expiring, a move task's next move."""
        deadlines = self.model.deadlines()
        if deadlines:
            target = deadlines[index % len(deadlines)] - (US // 4 if early else 0)
            if target > self.model.now:
                self.tick((target - self.model.now) / US)

    @rule(
        target=handles,
        queue=QUEUE,
        max_messages=MAX_MESSAGES,
        visibility_timeout=VT,
        wait=WAIT,
        dt=DT,
    )
    def receive(
        self,
        queue: int,
        max_messages: int,
        visibility_timeout: int | None,
        wait: int | None,
        dt: float,
    ) -> Any:
        self.tick(dt)
        name = self.names[queue]
        receipts, dead = self.model.receive(name, max_messages, visibility_timeout, wait or 0)
        msgs = self.queues[name].receive(
            max_messages, visibility_timeout=visibility_timeout, wait_time_seconds=wait
        )
        record(f"receive {name}: {'some' if msgs else 'none'} delivered")
        if dead:
            record(f"receive {name}: dead-lettered")
        return self.check_received(name, msgs, receipts)

    @rule(h=handles, misroute=st.sampled_from([0, 0, 0, 1, 2]), dt=DT)
    def delete(self, h: Handle, misroute: int, dt: float) -> None:
        self.tick(dt)
        name = self.target_of(h, misroute)
        self.expect(
            lambda: self.model.queues[name].delete(h.receipt),
            lambda: self.queues[name].delete(h.text),
        )

    @rule(h=handles, visibility_timeout=CHANGE_VT, misroute=st.sampled_from([0, 0, 0, 1]), dt=DT)
    def change_visibility(
        self, h: Handle, visibility_timeout: int, misroute: int, dt: float
    ) -> None:
        self.tick(dt)
        name = self.target_of(h, misroute)
        self.expect(
            lambda: self.model.queues[name].change_visibility(h.receipt, visibility_timeout),
            lambda: self.queues[name].change_visibility(h.text, visibility_timeout),
        )

    @rule(target=handles, h=handles)
    def forge_handle(self, h: Handle) -> Any:
        """A genuine handle with one bit of its secret token flipped."""
        r = h.receipt
        if r.queue is None or r.forged:
            return multiple()
        return Handle(forge(h.text), ModelReceipt(r.queue, r.message, r.receipt_no, forged=True))

    @precondition(lambda self: self.garbage < 1)
    @rule(target=handles)
    def garbage_handle(self) -> Handle:
        self.garbage += 1
        return Handle("garbage", ModelReceipt(None, None, 0))

    @rule(queue=QUEUE, dt=DT)
    def purge(self, queue: int, dt: float) -> None:
        self.tick(dt)
        name = self.names[queue]
        self.expect(self.model.queues[name].purge, self.queues[name].purge)

    @rule(
        visibility_timeout=st.none() | st.integers(0, 60),
        delay_seconds=st.none() | st.integers(0, 30),
    )
    def set_attributes(self, visibility_timeout: int | None, delay_seconds: int | None) -> None:
        changes: dict[str, object] = {}
        if visibility_timeout is not None:
            changes["VisibilityTimeout"] = str(visibility_timeout)
        if delay_seconds is not None:
            changes["DelaySeconds"] = str(delay_seconds)
        if changes:
            self.queues[self.SRC].set_attributes(changes)
            self.model.queues[self.SRC].set_attributes(
                visibility_timeout=visibility_timeout, delay_seconds=delay_seconds
            )

    @rule(max_receive_count=st.none() | MAX_RECEIVE_COUNT, dt=DT)
    def set_redrive_policy(self, max_receive_count: int | None, dt: float) -> None:
        """Section 5: a new maxReceiveCount applies to the next receive; an empty
        RedrivePolicy removes it (messages are then delivered, never moved)."""
        self.tick(dt)
        policy = "" if max_receive_count is None else self.redrive_policy(max_receive_count)
        self.queues[self.SRC].set_attributes({"RedrivePolicy": policy})
        self.model.set_redrive(self.SRC, self.DLQ, max_receive_count)

    @rule(to_destination=st.booleans(), rate=RATE, dt=DT)
    def start_task(self, to_destination: bool, rate: int | None, dt: float) -> None:
        self.tick(dt)
        destination = self.DEST if to_destination else None
        result = self.expect(
            lambda: self.model.start_task(self.DLQ, destination, rate),
            lambda: self.broker.start_message_move_task(
                self.arn(self.DLQ),
                destination_arn=self.arn(destination) if destination else None,
                max_number_of_messages_per_second=rate,
            ),
        )
        if result is not FAILED:
            task, handle = result
            self.task_handles[task.number] = handle
            record(
                f"task started: {'unlimited' if rate is None else 'rate-limited'}, "
                f"{'backlog' if task.to_move else 'nothing visible'}"
            )

    @precondition(
        lambda self: self.model.queues[self.DLQ].counts()[0] > 0 and not self.model.running()
    )
    @rule(to_destination=st.booleans(), rate=RATE)
    def start_task_on_backlog(self, to_destination: bool, rate: int | None) -> None:
        """StartMessageMoveTask when the DLQ has visible messages to move."""
        self.start_task(to_destination, rate, 0)

    @precondition(lambda self: bool(self.model.tasks))
    @rule(index=st.integers(0, 9), dt=DT)
    def cancel_task(self, index: int, dt: float) -> None:
        self.tick(dt)
        task = self.model.tasks[-1 - index % len(self.model.tasks)]
        result = self.expect(
            lambda: self.model.cancel_task(task),
            lambda: self.broker.cancel_message_move_task(self.task_handles[task.number]),
        )
        if result is not FAILED:
            moved, engine_moved = result
            assert moved == engine_moved
            record("task cancelled")

    # -- restart (durable variants) ---------------------------------------------------

    @precondition(lambda self: self.DURABLE and bool(self.queues))
    @rule(dt=DT)
    def restart(self, dt: float) -> None:
        """Close the broker and open its data directory again: the model does not
        notice. A new seed, or the seeded ids would start over (the store keeps
        each queue's receipt key, not the random source)."""
        self.tick(dt)
        self.broker.close()
        self._reopen()
        record("restart")

    @precondition(lambda self: self.DURABLE and bool(self.queues))
    @rule(dt=DT)
    def crash(self, dt: float) -> None:
        """As a SIGKILL would: the store lets go of its files without close()'s
        last commit, so the reopened broker holds only what each call committed
        before it returned."""
        self.tick(dt)
        store = self.broker._store
        assert store is not None
        assert not store.dirty  # every call committed on its way out
        store.close()
        self._reopen()
        record("crash")

    def _reopen(self) -> None:
        self.restarts += 1
        self.broker = Broker(
            clock=self.clock,
            account_id=ACCOUNT,
            random=random.Random(1 + self.restarts),
            data_dir=self.data_dir,
        )
        for name in self.queues:
            self.queues[name] = self.broker.get_queue(name)
            mirror.attach(self.queues[name], restored=True)

    def teardown(self) -> None:
        self.broker.close()
        if self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # -- invariants -------------------------------------------------------------------

    @invariant()
    def engine_invariants(self) -> None:
        for q in self.queues.values():
            q._check()
            mirror.check(q)

    @invariant()
    def agrees_with_model(self) -> None:
        assert to_us(self.clock.now()) == self.model.now
        self.catch_up()
        seen: set[str] = set()
        for name, q in self.queues.items():
            model = self.model.queues[name]
            engine = counts(q)
            assert engine == model.counts(), f"{name}: engine {engine}, model {model.counts()}"
            for m in model.stored():
                rec = view(q._realized(q._records[m.key]))
                # Not lost, not duplicated: each MessageId is stored once, broker-wide.
                assert rec.message_id not in seen, f"{rec.message_id} stored twice"
                seen.add(rec.message_id)
                assert rec.receive_count == m.receive_count, (name, m, rec)
                assert rec.receive_base == m.receive_base, (name, m, rec)
                assert rec.skey >> SEQ_BITS == m.sent, f"{name}: enqueue time of {m!r}"
                assert rec.vkey & SEQ_MASK == m.key
                if m.received:
                    assert rec.vkey >> SEQ_BITS == m.due, (name, m, rec)
        # Every message in exactly one place: follow each lineage to its end. A
        # dead letter carries its MessageId on; any other fate ends it, and then
        # no queue may still hold that id.
        for name, model in self.model.queues.items():
            for m in model.messages:
                message_id = self.ids.get((name, m.key))
                if message_id is None:
                    assert m.fate is not Fate.STORED
                    continue  # e.g. a dead letter already past the DLQ's retention
                end = m
                while end.fate is Fate.DEAD_LETTERED:
                    assert end.successor is not None and end.successor.previous is end
                    end = end.successor
                if end.fate is Fate.STORED:
                    assert message_id in seen
                else:
                    assert message_id not in seen, (
                        f"{m!r} is {end.fate.value} but its MessageId is still stored"
                    )
                if end.fate is Fate.MOVED:
                    assert end.successor is not None
                    assert end.successor.moved_from is end, "a move was deduplicated away"

    @invariant()
    def move_tasks_agree(self) -> None:
        listed = self.broker.list_message_move_tasks(self.arn(self.DLQ), max_results=10)
        model = self.model.listed(self.DLQ, 10)
        assert len(listed) == len(model)
        for got, want in zip(listed, model, strict=True):
            assert self.task_handles.get(want.number) is not None
            assert got["Status"] == want.status, (got, want)
            assert got["ApproximateNumberOfMessagesMoved"] == want.moved, (got, want)
            assert got["ApproximateNumberOfMessagesToMove"] == want.to_move, (got, want)
            assert got["StartedTimestamp"] == want.started // 1000
            assert got.get("MaxNumberOfMessagesPerSecond") == want.rate
            dest = self.arn(want.destination) if want.destination else None
            assert got.get("DestinationArn") == dest
            assert ("TaskHandle" in got) == (want.status == "RUNNING")


class StandardBrokerMachine(BrokerMachine):
    """Standard source, DLQ and destination (section 10: a dead letter keeps its
    enqueue time)."""

    @initialize(
        max_receive_count=MAX_RECEIVE_COUNT,
        retention=st.tuples(RETENTION, RETENTION, RETENTION),
        initial=st.lists(st.sampled_from(["a", "b", "c"]), min_size=2, max_size=12),
        rounds=ROUNDS,
    )
    def create(
        self,
        max_receive_count: int,
        retention: tuple[int, int, int],
        initial: list[str],
        rounds: int,
    ) -> None:
        self.setup(max_receive_count, retention)
        for body in initial:
            self.send(body, None, 0)
        self.churn(rounds)

    @rule(
        body=st.sampled_from(["a", "b", "c"]),
        delay=st.none() | st.none() | st.integers(0, 30),
        dt=DT,
    )
    def send(self, body: str, delay: int | None, dt: float) -> None:
        self.tick(dt)
        q = self.model.queues[self.SRC]
        assert isinstance(q, ModelStandardQueue)
        result = self.queues[self.SRC].send(body, delay_seconds=delay)
        m = q.send(body, delay_seconds=delay)
        self.catch_up()
        assert self.ids[(self.SRC, m.key)] == result.message_id


class FifoBrokerMachine(BrokerMachine):
    """FIFO source, DLQ and destination (section 9: a dead letter's enqueue time
    resets; groups stay in order across the move)."""

    FIFO = True
    SRC, DLQ, DEST = "src.fifo", "dlq.fifo", "dest.fifo"

    @initialize(
        max_receive_count=MAX_RECEIVE_COUNT,
        retention=st.tuples(RETENTION, RETENTION, RETENTION),
        initial=st.lists(st.integers(1, 3), min_size=2, max_size=12),
        rounds=ROUNDS,
    )
    def create(
        self,
        max_receive_count: int,
        retention: tuple[int, int, int],
        initial: list[int],
        rounds: int,
    ) -> None:
        self.setup(max_receive_count, retention)
        for i, group in enumerate(initial):
            self.send(f"b{i}", group, f"init-{i}", 0)
        self.churn(rounds)

    @rule(
        body=st.sampled_from(["a", "b", "c"]),
        group=st.integers(1, 3),
        dedup=st.integers(0, 9).map(lambda i: f"d{i}"),
        dt=DT,
    )
    def send(self, body: str, group: int, dedup: str, dt: float) -> None:
        self.tick(dt)
        q = self.model.queues[self.SRC]
        assert isinstance(q, ModelFifoQueue)
        result = self.queues[self.SRC].send(body, group_id=f"g{group}", deduplication_id=dedup)
        m, duplicate = q.send(body, group_id=f"g{group}", dedup_id=dedup)
        if duplicate:
            record("send: duplicate")
        self.catch_up()
        assert self.ids[(self.SRC, m.key)] == result.message_id


class DurableStandardBrokerMachine(StandardBrokerMachine):
    """The standard machine on a durable broker, restarted at random (issue 16)."""

    DURABLE = True


class DurableFifoBrokerMachine(FifoBrokerMachine):
    """The FIFO machine on a durable broker, restarted at random (issue 16)."""

    DURABLE = True


StandardBrokerMachine.TestCase.settings = machine_settings(max_examples=400, stateful_step_count=50)
FifoBrokerMachine.TestCase.settings = machine_settings(max_examples=400, stateful_step_count=50)
DurableStandardBrokerMachine.TestCase.settings = machine_settings(
    max_examples=100, stateful_step_count=50
)
DurableFifoBrokerMachine.TestCase.settings = machine_settings(
    max_examples=100, stateful_step_count=50
)
TestStandardBrokerMachine = StandardBrokerMachine.TestCase
TestFifoBrokerMachine = FifoBrokerMachine.TestCase
TestDurableStandardBrokerMachine = DurableStandardBrokerMachine.TestCase
TestDurableFifoBrokerMachine = DurableFifoBrokerMachine.TestCase


# -- what the machine found, kept as regression tests ---------------------------------


def _dead_letters(n: int = 3) -> tuple[ManualClock, Broker, Queue | FifoQueue, Queue | FifoQueue]:
    """A broker whose DLQ holds ``n`` dead letters from "src" (maxReceiveCount 1)."""
    clock = ManualClock(start=START, autojump_threshold=0)
    broker = Broker(clock=clock, account_id=ACCOUNT)
    dlq = broker.create_queue("dlq")
    src = broker.create_queue(
        "src",
        attributes={"RedrivePolicy": {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}},
    )
    src.send_batch([f"m{i}" for i in range(n)])
    src.receive(10, visibility_timeout=0)
    assert src.receive(10) == []
    return clock, broker, dlq, src


def test_move_task_progress_does_not_depend_on_who_looks() -> None:
    """Section 11: a task with MaxNumberOfMessagesPerSecond 1 moves its n-th
    message at start + n seconds of the clock. It used to move messages only when
    some operation happened to look, enqueued at that later time, and whether the
    DLQ message in flight until +5 s was moved depended on when that was. Now the
    outcome is the same whether or not anything looks in between: two moves at
    +1 s and +2 s, then COMPLETED (nothing receivable at +2 s)."""
    outcomes = []
    for look in (False, True):
        clock, broker, dlq, src = _dead_letters()
        dlq.receive(1, visibility_timeout=5)
        broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
        for _ in range(10):
            clock.advance(1)
            if look:
                len(src)
        [task] = broker.list_message_move_tasks(dlq.arn)
        moved_at = sorted(info.sent_at - START for info in src.inspect())
        outcomes.append((task["Status"], task["ApproximateNumberOfMessagesMoved"], moved_at))
        src._check()
        dlq._check()
    assert outcomes == [("COMPLETED", 2, [1.0, 2.0])] * 2


def test_purge_applies_moves_due_before_it() -> None:
    """Sections 2.1 and 11: PurgeQueue first does what time made due. A DLQ
    purged 2 s into a 1-per-second task has already handed 2 messages back (at +1
    s and +2 s); only the third is purged. The purge used to ignore the moves due
    and wipe all three."""
    clock, broker, dlq, src = _dead_letters()
    broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
    clock.advance(2)
    dlq.purge()
    assert sorted(info.sent_at - START for info in src.inspect()) == [1.0, 2.0]
    assert len(dlq) == 0


def test_long_poll_wakes_when_a_move_task_brings_a_message() -> None:
    """Section 12: a long poll returns as soon as a message is receivable. With a
    1-per-second move task feeding the source, a 20 s poll returns at +1 s with
    the first moved message; it used to sleep through to its deadline."""
    clock, broker, dlq, src = _dead_letters()
    broker.start_message_move_task(dlq.arn, max_number_of_messages_per_second=1)
    [m] = src.receive(10, wait_time_seconds=20)
    assert clock.now() == START + 1
    assert m.body == "m0"
