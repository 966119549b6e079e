"""What the queue state machines share: rules, invariants and bookkeeping.

:class:`QueueMachine` runs every operation against a real queue (on a
``ManualClock``) and against the naive model of ``tests/model.py``, and checks
after every step that the two agree (``docs/design.md``, "Invariants are code").
``tests/test_stateful_standard.py`` and ``tests/test_stateful_fifo.py`` add the
queue-type rules (send, receive).

Receipt handles live in the ``handles`` bundle: every handle a receive ever
issued (hypothesis prefers recent ones, so current and stale handles both get
used), handles of another queue, a string no queue issued, and genuine handles
with their secret part altered. A handle must act on its own message only.

Time moves by random steps, and also lands exactly on (or just before) the next
moments the model says something happens by itself, where off-by-one errors hide.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import random
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import event
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
)

from sqsqueue import FifoQueue, ManualClock, Message, Queue
from sqsqueue._message import SEQ_BITS, view
from sqsqueue.errors import SQSError
from tests import _mirror as mirror
from tests._helpers import counts
from tests.model import US, Fate, ModelError, ModelMessage, ModelQueue, ModelReceipt

T = TypeVar("T")

START = 1_700_000_000.0
#: Short retention periods (600 s, or the 60 s minimum now and then), so that
#: messages expire during a run.
RETENTION = st.sampled_from([600, 600, 120, 60])

#: Clock steps: mostly 0..90 s (quarter seconds now and then), sometimes up
#: to the retention period.
SMALL_STEP = st.integers(0, 90) | st.sampled_from([0.25, 0.5, 1.75])
LARGE_STEP = st.integers(91, 600)
STEP = st.integers(0, 9).flatmap(lambda k: LARGE_STEP if k == 0 else SMALL_STEP)
#: Receive arguments.
MAX_MESSAGES = st.integers(1, 10)
RECEIVE_VT = st.none() | st.integers(0, 60)
WAIT = st.none() | st.none() | st.integers(1, 20)
#: ChangeMessageVisibility: 0..120 s, or right at the 12-hour budget (section 4).
CHANGE_VT = st.integers(0, 120) | st.sampled_from([43_199, 43_200])

FAILED = object()  # what QueueMachine.expect returns when both sides failed alike


def record(value: str) -> None:
    """``hypothesis.event`` (see ``--hypothesis-show-statistics``), also
    callable from step sequences run by hand, outside a hypothesis test."""
    with contextlib.suppress(InvalidArgument):
        event(value)


def to_us(seconds: float) -> int:
    return round(seconds * US)


def forge(handle: str) -> str:
    """The same handle with one bit of its last byte (part of the secret token) flipped."""
    raw = bytearray(base64.urlsafe_b64decode(handle + "=" * (-len(handle) % 4)))
    raw[-1] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii").rstrip("=")


def snapshot(queue: Queue | FifoQueue) -> tuple[Any, ...]:
    """Everything an operation could change, read from the engine's internals."""
    records = sorted(
        (seq, r.skey, r.vkey, r.receipt_no, r.receive_count, r.rehides, r.token)
        for seq, r in ((seq, view(queue._realized(rec))) for seq, rec in queue._records.items())
    )
    state: tuple[Any, ...] = (records, queue._last_purge, repr(queue._values))
    if isinstance(queue, FifoQueue):
        state += (
            sorted((repr(k), e[0], e[1]) for k, e in queue._dedup.entries.items()),
            sorted((k, a.expires, repr(a.items)) for k, a in queue._attempt_ids.entries.items()),
        )
    return state


class Handle:
    """A receipt handle string and what the model knows about it."""

    __slots__ = ("receipt", "text")

    def __init__(self, text: str, receipt: ModelReceipt) -> None:
        self.text = text
        self.receipt = receipt

    def __repr__(self) -> str:
        return repr(self.receipt)


class QueueMachine(RuleBasedStateMachine):
    """Rules and invariants common to standard and FIFO queues.

    Subclasses create ``self.queue`` and ``self.model`` in an ``@initialize``
    rule.
    """

    handles = Bundle("handles")
    NAME = "machine"

    queue: Queue | FifoQueue
    model: ModelQueue

    def __init__(self) -> None:
        super().__init__()
        # Autojump: the model's long poll jumps to its next deadline, so the
        # machines check where the engine wakes (single-threaded, so sound).
        self.clock = ManualClock(start=START, autojump_threshold=0)
        self.message_id: dict[int, str] = {}  # model key -> MessageId
        self.by_id: dict[str, ModelMessage] = {}
        self.handle_text: dict[tuple[int, int], str] = {}  # (key, receipt no) -> handle
        self.ops = itertools.count(1)  # numbers receives and visibility changes
        self.foreign = 0  # foreign handles in the bundle

    # -- bookkeeping ------------------------------------------------------------

    def bind(self, m: ModelMessage, message_id: str) -> None:
        assert m.key not in self.message_id, f"{m!r} sent twice"
        assert message_id not in self.by_id, f"message id {message_id} reused"
        self.message_id[m.key] = message_id
        self.by_id[message_id] = m

    def issued(self, messages: list[Message], receipts: list[ModelReceipt]) -> list[Handle]:
        """Check what a receive returned against the model's receipts; the new handles."""
        got = [self.by_id[m.message_id] for m in messages]
        assert got == [r.message for r in receipts], f"queue returned {got}, model {receipts}"
        new = []
        for msg, receipt in zip(messages, receipts, strict=True):
            m = receipt.message
            assert m is not None
            assert msg.body == m.body
            assert msg.attributes["ApproximateReceiveCount"] == str(receipt.receipt_no)
            assert msg.attributes["SentTimestamp"] == str(m.sent // 1000)
            if m.group_id is not None:
                assert msg.attributes["MessageGroupId"] == m.group_id
            key = (m.key, receipt.receipt_no)
            if key in self.handle_text:
                # A ReceiveRequestAttemptId replay returns the same handle (section 9).
                assert msg.receipt_handle == self.handle_text[key]
                continue
            assert msg.receipt_handle not in self.handle_text.values()
            self.handle_text[key] = msg.receipt_handle
            self.on_new_handle(msg.receipt_handle, receipt)
            new.append(Handle(msg.receipt_handle, receipt))
        return new

    def on_new_handle(self, handle: str, receipt: ModelReceipt) -> None:
        """Hook: a receive issued a new handle."""

    def on_visibility_changed(self, receipt: ModelReceipt) -> None:
        """Hook: a ChangeMessageVisibility succeeded."""

    def expect(self, model_call: Callable[[], T], engine_call: Callable[[], Any]) -> Any:
        """Run one operation on both sides. Returns (model result, engine result),
        or FAILED when the model predicted the very error the engine raised, in
        which case the engine's state must be unchanged (docs/design.md principle 6)."""
        before = snapshot(self.queue)
        expected: ModelError | None = None
        try:
            predicted = model_call()
        except ModelError as err:
            expected = err
        if expected is not None:
            raised: SQSError | None = None
            try:
                engine_call()
            except SQSError as err:
                raised = err
            assert raised is not None, f"engine succeeded; model predicted {expected}"
            assert type(raised) is expected.error, f"engine raised {raised!r}; model: {expected}"
            assert snapshot(self.queue) == before, f"{raised!r} changed the queue"
            record(f"{engine_call.__qualname__.split('.')[1]}: {expected}")
            return FAILED
        try:
            actual = engine_call()
        except SQSError as err:
            raise AssertionError(f"engine raised {err!r}; model predicted success") from err
        return predicted, actual

    def expect_batch(
        self, model_calls: list[Callable[[], object]], engine_call: Callable[[], Any]
    ) -> None:
        """A batch: entry ``str(i)`` fails exactly when model call ``i`` fails."""
        outcomes: list[ModelError | None] = []
        for call in model_calls:
            try:
                call()
            except ModelError as err:
                outcomes.append(err)
            else:
                outcomes.append(None)
        result = engine_call()
        failed = {f.id: f for f in result.failed}
        assert len(failed) + len(result.successful) == len(model_calls)
        for i, expected in enumerate(outcomes):
            record(f"batch entry: {expected}")
            if expected is None:
                assert str(i) in result.successful, f"entry {i} failed: {failed.get(str(i))}"
            else:
                assert str(i) in failed, f"entry {i} succeeded; model: {expected}"
                assert failed[str(i)].code == expected.error.code, (failed[str(i)], expected)

    # -- rules ------------------------------------------------------------------

    @rule(seconds=STEP)
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.model.advance(to_us(seconds))

    @rule(index=st.integers(0, 31), early=st.booleans())
    def advance_to_deadline(self, index: int, early: bool) -> None:
        """Land exactly on (or a quarter second before) one of the next moments
        at which the model says something changes by itself: boundaries are
        where off-by-one bugs live."""
        deadlines = self.model.deadlines()
        if not deadlines:
            return
        target = deadlines[index % len(deadlines)] - (US // 4 if early else 0)
        if target > self.model.now:
            microseconds = target - self.model.now
            self.clock.advance(microseconds / US)
            self.model.advance(microseconds)

    @rule(
        visibility_timeout=st.none() | st.integers(0, 60),
        delay_seconds=st.none() | st.integers(0, 30),
    )
    def set_attributes(self, visibility_timeout: int | None, delay_seconds: int | None) -> None:
        changes: dict[str, object] = {}
        if visibility_timeout is not None:
            changes["VisibilityTimeout"] = str(visibility_timeout)
        if delay_seconds is not None:
            changes["DelaySeconds"] = delay_seconds
        if changes:
            self.queue.set_attributes(changes)
            self.model.set_attributes(
                visibility_timeout=visibility_timeout, delay_seconds=delay_seconds
            )

    @rule(h=handles)
    def delete(self, h: Handle) -> None:
        self.expect(lambda: self.model.delete(h.receipt), lambda: self.queue.delete(h.text))

    @precondition(lambda self: bool(self.bundle("handles")))
    @rule(hs=st.lists(handles, min_size=1, max_size=10))
    def delete_batch(self, hs: list[Handle]) -> None:
        self.expect_batch(
            [lambda h=h: self.model.delete(h.receipt) for h in hs],  # type: ignore[misc]
            lambda: self.queue.delete_batch([h.text for h in hs]),
        )

    @rule(h=handles, visibility_timeout=CHANGE_VT)
    def change_visibility(self, h: Handle, visibility_timeout: int) -> None:
        result = self.expect(
            lambda: self.model.change_visibility(h.receipt, visibility_timeout),
            lambda: self.queue.change_visibility(h.text, visibility_timeout),
        )
        if result is not FAILED:
            self.on_visibility_changed(h.receipt)

    @precondition(lambda self: bool(self.bundle("handles")))
    @rule(entries=st.lists(st.tuples(handles, CHANGE_VT), min_size=1, max_size=10))
    def change_visibility_batch(self, entries: list[tuple[Handle, int]]) -> None:
        def model_call(h: Handle, vt: int) -> None:
            self.model.change_visibility(h.receipt, vt)
            self.on_visibility_changed(h.receipt)

        self.expect_batch(
            [lambda h=h, vt=vt: model_call(h, vt) for h, vt in entries],  # type: ignore[misc]
            lambda: self.queue.change_visibility_batch(
                [
                    {"Id": str(i), "ReceiptHandle": h.text, "VisibilityTimeout": vt}
                    for i, (h, vt) in enumerate(entries)
                ]
            ),
        )

    @precondition(lambda self: bool(self.model.stored()))
    @rule()
    def purge(self) -> None:
        self.expect(self.model.purge, self.queue.purge)

    @precondition(lambda self: self.foreign < 2)
    @rule(target=handles, garbage=st.booleans())
    def foreign_handle(self, garbage: bool) -> Handle:
        """A handle this queue never issued: another queue's, or garbage."""
        self.foreign += 1
        if garbage:
            return Handle("garbage", ModelReceipt(None, None, 0))
        other = Queue("other", clock=self.clock, random=random.Random(2))
        other.send("x")
        [m] = other.receive(visibility_timeout=0)
        return Handle(m.receipt_handle, ModelReceipt("other", None, 0))

    @rule(target=handles, h=handles)
    def forge_handle(self, h: Handle) -> Any:
        r = h.receipt
        if r.queue != self.NAME or r.forged:
            return multiple()
        return Handle(forge(h.text), ModelReceipt(r.queue, r.message, r.receipt_no, forged=True))

    # -- invariants -------------------------------------------------------------

    def check_all(self) -> None:
        """Every invariant, now: for step sequences written by hand."""
        self.engine_invariants()
        self.agrees_with_model()

    @invariant()
    def engine_invariants(self) -> None:
        self.queue._check()
        mirror.check(self.queue)

    @invariant()
    def agrees_with_model(self) -> None:
        queue, model = self.queue, self.model
        assert to_us(self.clock.now()) == model.now, (
            f"clock at {self.clock.now() - START:+} s, model at {(model.now / US) - START:+} s"
        )
        engine = counts(queue)
        assert engine == model.counts(), f"engine {engine}, model {model.counts()}"
        # Every message ever sent is in exactly one place: stored in both, or
        # deleted / expired / purged in the model and absent from the engine.
        assert len(self.message_id) == len(model.messages)
        stored = {self.message_id[m.key] for m in model.stored()}
        engine = {view(queue._realized(r)).message_id for r in queue._records.values()}
        assert engine == stored, (
            f"engine has {sorted((self.by_id[i] for i in engine - stored), key=repr)!r} extra, "
            f"lacks {sorted((self.by_id[i] for i in stored - engine), key=repr)!r}"
        )
        for m in model.messages:
            assert (m.fate is Fate.STORED) == (self.message_id[m.key] in engine)
        assert len(queue) == len(stored)
        # Each stored message's receive count, and visibility deadline once received.
        for rec in map(view, map(queue._realized, queue._records.values())):
            m = self.by_id[rec.message_id]
            assert rec.receive_count == m.receive_count
            if m.received:
                assert rec.vkey >> SEQ_BITS == m.due, (m, rec)
