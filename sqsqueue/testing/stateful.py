"""A reusable hypothesis state machine for checking *your* consumer.

Subclass :class:`ConsumerMachine`, implement :meth:`~ConsumerMachine.handle`
with your consumer's logic (raise to signal a failed attempt), and hypothesis
will interleave sends, receives, consumer crashes, failed handling and clock
jumps past visibility timeouts, checking after every step that no message was
lost and that the queue's own invariants hold. Add your own ``@invariant``
methods to state what your consumer promises (for instance, that each message's
effect was applied exactly once even when faults deliver it twice)::

    from sqsqueue.testing.stateful import ConsumerMachine
    from sqsqueue import Faults

    class IdempotentConsumer(ConsumerMachine):
        faults = Faults(seed=1, duplicate_rate=0.2)
        def __init__(self):
            super().__init__()
            self.applied = {}
        def handle(self, message):
            self.applied[message.message_id] = message.body   # idempotent
        @invariant()
        def applied_once(self):
            assert set(self.applied) <= set(self.sent)

    TestIdempotentConsumer = IdempotentConsumer.TestCase
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from sqsqueue._broker import Broker
from sqsqueue._clock import ManualClock
from sqsqueue._faults import Faults
from sqsqueue._fifo import FifoQueue
from sqsqueue._message import Message
from sqsqueue._standard import Queue
from sqsqueue.testing.strategies import message_bodies

__all__ = ["ConsumerMachine"]


class ConsumerMachine(RuleBasedStateMachine):
    """Drive a consumer against a queue under random interleavings.

    Class attributes configure the world: ``fifo``, ``visibility_timeout``,
    ``faults`` (standard queues only), ``max_receive_count`` (adds a DLQ).
    After each step: nothing sent is lost (it is stored, or was handled
    successfully, or sits in the DLQ), and ``queue._check()`` passes.
    """

    fifo: bool = False
    visibility_timeout: int = 30
    faults: Faults | None = None
    max_receive_count: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock(start=1_700_000_000.0)
        self.broker = Broker(clock=self.clock, keep_history=True, faults=self.faults)
        self.dead_letters: Queue | FifoQueue | None = None
        self.queue = self.make_queue(self.broker)
        #: message id -> body of everything sent (duplicates collapse on FIFO).
        self.sent: dict[str, str] = {}
        #: message id -> number of successful handlings (more than 1 = duplicate).
        self.handled: Counter[str] = Counter()

    # -- hooks ----------------------------------------------------------------------

    def make_queue(self, broker: Broker[Any]) -> Queue | FifoQueue:
        """Create the queue under test; override to configure it further."""
        attributes: dict[str, Any] = {"VisibilityTimeout": str(self.visibility_timeout)}
        if self.fifo:
            attributes.update({"FifoQueue": "true", "ContentBasedDeduplication": "false"})
        if self.max_receive_count is not None:
            self.dead_letters = broker.create_queue(
                "dead-letters.fifo" if self.fifo else "dead-letters",
                attributes={"FifoQueue": "true"} if self.fifo else None,
            )
            attributes["RedrivePolicy"] = {
                "deadLetterTargetArn": self.dead_letters.arn,
                "maxReceiveCount": self.max_receive_count,
            }
        return broker.create_queue("work.fifo" if self.fifo else "work", attributes=attributes)

    def handle(self, message: Message) -> None:
        """Your consumer's work for one message. Raise to fail this attempt (the
        message is not deleted and comes back after its visibility timeout)."""
        raise NotImplementedError

    # -- rules ----------------------------------------------------------------------

    @rule(body=message_bodies(max_size=40), group=st.sampled_from(["g1", "g2", "g3"]))
    def send(self, body: str, group: str) -> None:
        if self.fifo:
            result = self.queue.send(
                body, group_id=group, deduplication_id=f"d{len(self.sent)}-{len(body)}"
            )
        else:
            result = self.queue.send(body)
        self.sent[result.message_id] = body

    @rule(max_messages=st.integers(1, 10))
    def consume(self, max_messages: int) -> None:
        for message in self.queue.receive(max_messages):
            try:
                self.handle(message)
            except Exception:  # noqa: S112 - the consumer failed: leave it in flight
                continue
            self.handled[message.message_id] += 1
            self.queue.delete(message.receipt_handle)

    @rule(max_messages=st.integers(1, 10))
    def crash(self, max_messages: int) -> None:
        """A consumer receives and dies before deleting anything."""
        self.queue.receive(max_messages)

    @rule(seconds=st.integers(0, 90))
    def advance(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @precondition(lambda self: bool(self.sent))
    @rule()
    def wait_out_visibility(self) -> None:
        self.clock.advance(self.visibility_timeout)

    # -- invariants -----------------------------------------------------------------

    @invariant()
    def queue_is_consistent(self) -> None:
        self.queue._check()
        if self.dead_letters is not None:
            self.dead_letters._check()

    @invariant()
    def nothing_is_lost(self) -> None:
        stored = {info.message_id for info in self.queue.inspect()}
        if self.dead_letters is not None:
            stored |= {info.message_id for info in self.dead_letters.inspect()}
        for message_id in self.sent:
            assert message_id in stored or self.handled[message_id] > 0, (
                f"message {message_id} was lost: {self.queue.history(message_id)}"
            )
