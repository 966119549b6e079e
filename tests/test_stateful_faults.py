"""Model checking a standard queue with fault emulation on
(``docs/aws-behaviour.md`` §§10 and 13; ``sqsqueue/_faults.py``).

The machine of ``tests/test_stateful_standard.py`` runs with
``Faults(seed, duplicate_rate, partial_short_polls, reorder)`` drawn at random,
and the model allows exactly the extra behaviours AWS's standard queues are
allowed, and no others:

* a DeleteMessage may be acknowledged while the message survives (section 10:
  "a copy on an unavailable server may survive a delete and be delivered
  again"): the message stays in flight with its receipt and deadline
  untouched, and is redelivered after its visibility timeout. Only with
  ``duplicate_rate > 0``;
* a short poll (WaitTimeSeconds 0) on a queue holding fewer than 1,000
  messages may return fewer messages than it could, even none (section 10:
  "you most likely get fewer messages than you requested ... you might not
  receive any messages"). Only with ``partial_short_polls``; long polls still
  return as many as are receivable, up to the maximum;
* receivable messages may come back in any order (section 10, "best-effort
  ordering"), drawn from sqsqueue's documented window of the oldest
  ``REORDER_WINDOW`` x MaxNumberOfMessages. Only with ``reorder``; without it
  the oldest due come first.

Whatever the faults: a receive returns only messages that are stored and
receivable, each once (nothing invented, nothing in flight handed out twice);
after every step the queue holds exactly the messages the model holds, with
the same receive counts and deadlines (nothing lost); errors are the model's
and change nothing.

``SQSQUEUE_LONG=1`` runs at depth (``tests/_profiles.py``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, multiple, precondition, rule

from sqsqueue import Faults, Queue
from sqsqueue._faults import REORDER_WINDOW, SMALL_QUEUE
from sqsqueue._message import SEQ_BITS, view
from tests import _mirror as mirror
from tests._machines import MAX_MESSAGES, RECEIVE_VT, RETENTION, START, WAIT, Handle, record, to_us
from tests._profiles import machine_settings
from tests.model import Fate, ModelError, ModelMessage, ModelStandardQueue
from tests.test_stateful_standard import BODY, DELAY, StandardMachine

FAULTS = st.builds(
    Faults,
    seed=st.integers(0, 2**32 - 1),
    duplicate_rate=st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0]),
    partial_short_polls=st.booleans(),
    reorder=st.booleans(),
)


class FaultsMachine(StandardMachine):
    """A standard queue with fault emulation against :class:`ModelStandardQueue`."""

    faults: Faults

    @initialize(
        faults=FAULTS,
        retention=RETENTION,
        initial=st.lists(st.tuples(BODY, DELAY), max_size=20),
    )
    def create(  # type: ignore[override]
        self, faults: Faults, retention: int, initial: list[tuple[str, int | None]]
    ) -> None:
        self.faults = faults
        self.queue = Queue(
            self.NAME,
            clock=self.clock,
            message_retention_period=retention,
            random=random.Random(1),
            faults=faults,
        )
        mirror.attach(self.queue)
        self.model = ModelStandardQueue(self.NAME, now=to_us(START), retention=retention)
        for body, delay in initial:
            self.send(body, delay)

    @rule(
        target=StandardMachine.handles,
        max_messages=MAX_MESSAGES,
        visibility_timeout=RECEIVE_VT,
        wait=WAIT,
    )
    def receive(self, max_messages: int, visibility_timeout: int | None, wait: int | None) -> Any:
        short = not wait
        small = len(self.model.stored()) < SMALL_QUEUE
        messages = self.queue.receive(
            max_messages, visibility_timeout=visibility_timeout, wait_time_seconds=wait
        )
        if wait:
            self.model.wait(wait)
        assert all(m.message_id in self.by_id for m in messages), "a message was invented"
        chosen = [self.by_id[m.message_id] for m in messages]
        receivable = self.model.receivable()
        assert len(set(map(id, chosen))) == len(chosen), f"delivered twice at once: {chosen}"
        assert all(m in receivable for m in chosen), f"{chosen} not all receivable: {receivable}"
        could = min(max_messages, len(receivable))
        if self.faults.partial_short_polls and short and small:
            assert len(chosen) <= could
            record("short poll: partial" if len(chosen) < could else "short poll: complete")
        else:
            assert len(chosen) == could, f"returned {len(chosen)}, {could} were receivable"
        if self.faults.reorder:
            window = self.model.oldest_first(max_messages * REORDER_WINDOW)
            assert all(m in window for m in chosen), (chosen, window)
            if chosen != self.model.oldest_first(max_messages)[: len(chosen)]:
                record("receive: reordered")
        else:
            assert chosen == self.model.oldest_first(max_messages)[: len(chosen)]
        vt = self.model._visibility(visibility_timeout)
        receipts = [self.model._deliver(m, vt) for m in chosen]
        return multiple(*self.issued(messages, receipts))

    # -- deletes that may be lost -------------------------------------------------------

    def settle_delete(self, m: ModelMessage, due: int, receipts: int) -> None:
        """After an acknowledged delete of stored message ``m``: either it is gone
        (the model deletes it too) or a copy survived, untouched."""
        rec = next(
            (
                r
                for r in map(view, self.queue._records.values())
                if r.message_id == self.message_id[m.key]
            ),
            None,
        )
        if rec is None:
            self.model._remove(m, Fate.DELETED)
            return
        assert self.faults.duplicate_rate > 0, f"{m!r} survived a delete without faults"
        assert rec.receipt_no == receipts and rec.vkey >> SEQ_BITS == due, "a lost delete acted"
        record("delete lost: redelivered after its visibility timeout")

    @rule(h=StandardMachine.handles)
    def delete(self, h: Handle) -> None:
        try:
            m = self.model._resolve(h.receipt)
        except ModelError:
            # Foreign, garbage or forged: refused with the model's error, no change.
            self.expect(lambda: self.model.delete(h.receipt), lambda: self.queue.delete(h.text))
            return
        due, receipts = (m.due, m.receive_count) if m is not None else (0, 0)
        self.queue.delete(h.text)
        if m is not None:
            self.settle_delete(m, due, receipts)

    @precondition(lambda self: bool(self.bundle("handles")))
    @rule(hs=st.lists(StandardMachine.handles, min_size=1, max_size=10))
    def delete_batch(self, hs: list[Handle]) -> None:
        targets: dict[int, tuple[ModelMessage, int, int]] = {}
        expected: list[type | None] = []
        for h in hs:
            try:
                m = self.model._resolve(h.receipt)
            except ModelError as err:
                expected.append(err.error)
                continue
            expected.append(None)
            if m is not None:
                targets.setdefault(m.key, (m, m.due, m.receive_count))
        result = self.queue.delete_batch([h.text for h in hs])
        failed = {f.id: f for f in result.failed}
        for i, error in enumerate(expected):
            if error is None:
                assert str(i) in result.successful, failed.get(str(i))
            else:
                assert failed[str(i)].code == error.code  # type: ignore[attr-defined]
        for m, due, receipts in targets.values():
            self.settle_delete(m, due, receipts)


FaultsMachine.TestCase.settings = machine_settings(max_examples=400, stateful_step_count=50)
TestFaultsMachine = FaultsMachine.TestCase
