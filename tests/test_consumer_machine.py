"""The reusable consumer state machine (``sqsqueue.testing.stateful.ConsumerMachine``):
correct consumers pass it, broken ones are caught (docs/aws-behaviour.md §§8,
9, 10, 11 and 13).

Section 10: standard queues are at-least-once, "consumers must be idempotent";
section 8: an undeleted message comes back after its visibility timeout;
section 11: a message received more than maxReceiveCount times goes to the DLQ.
The machine checks that nothing sent is ever lost; subclasses add what their
consumer promises.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import invariant, run_state_machine_as_test

from sqsqueue import Faults, Message
from sqsqueue.testing.stateful import ConsumerMachine
from tests._profiles import machine_settings

PASSING = machine_settings(max_examples=30, stateful_step_count=50)


def hunting(max_examples: int = 300) -> settings:
    """Settings that must find a bug: deterministic, no example database, no
    shrinking (the first failure is the evidence)."""
    return settings(
        max_examples=max_examples,
        phases=(Phase.explicit, Phase.generate),
        stateful_step_count=30,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


# -- correct consumers ------------------------------------------------------------------


class IdempotentConsumer(ConsumerMachine):
    """Applies each message's effect once, keyed by message id, even when
    faults deliver it again after a lost delete (section 10), reorder it or
    return partial short polls (section 13); fails the first attempt of about
    a third of the messages (they come back after the visibility timeout,
    section 8)."""

    faults = Faults(seed=1, duplicate_rate=0.3, partial_short_polls=True, reorder=True)

    def __init__(self) -> None:
        super().__init__()
        self.applied: dict[str, str] = {}
        self.effects: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()

    def handle(self, message: Message) -> None:
        self.attempts[message.message_id] += 1
        if len(message.body) % 3 == 0 and self.attempts[message.message_id] == 1:
            raise RuntimeError("transient failure")
        if message.message_id in self.applied:
            return  # already applied: a duplicate delivery
        self.applied[message.message_id] = message.body
        self.effects[message.message_id] += 1

    @invariant()
    def effects_applied_once(self) -> None:
        assert all(n == 1 for n in self.effects.values())
        for message_id, body in self.applied.items():
            assert self.sent[message_id] == body
        assert set(self.handled) <= set(self.applied)


class TestIdempotentConsumer(IdempotentConsumer.TestCase):  # type: ignore[misc,valid-type]
    """Sections 10 and 13: an idempotent consumer passes under every standard-queue fault."""

    settings = PASSING


class FifoOrderedConsumer(ConsumerMachine):
    """Handles every message; on a FIFO queue each group's messages arrive in
    sequence-number order and never twice (section 9)."""

    fifo = True

    def __init__(self) -> None:
        super().__init__()
        self.last_sequence: dict[str, int] = defaultdict(int)

    def handle(self, message: Message) -> None:
        group = message.attributes["MessageGroupId"]
        sequence = int(message.attributes["SequenceNumber"])
        assert sequence > self.last_sequence[group], "FIFO order broken"
        self.last_sequence[group] = sequence

    @invariant()
    def exactly_once(self) -> None:
        assert all(n == 1 for n in self.handled.values())


class TestFifoOrderedConsumer(FifoOrderedConsumer.TestCase):  # type: ignore[misc,valid-type]
    """Section 9: a FIFO consumer sees group order and exactly-once delivery."""

    settings = PASSING


class PoisonMessages(ConsumerMachine):
    """A consumer that always fails: every message is dead-lettered after
    maxReceiveCount receives (section 11) and still counts as not lost."""

    max_receive_count = 2

    def handle(self, message: Message) -> None:
        raise RuntimeError("poison message")

    @invariant()
    def nothing_handled(self) -> None:
        assert not self.handled

    def teardown(self) -> None:
        """Drain: past each visibility timeout, receive until every message has
        been dead-lettered; the DLQ then holds exactly what was sent, each
        received maxReceiveCount times (the count carries over, section 10)."""
        assert self.dead_letters is not None
        for _ in range(10 * (self.max_receive_count or 1) + 10):
            if not len(self.queue):
                break
            self.clock.advance(self.visibility_timeout)
            while self.queue.receive(10):
                pass
        assert len(self.queue) == 0
        stored = {i.message_id: i for i in self.dead_letters.inspect()}
        assert set(stored) == set(self.sent)
        assert {i.receive_count for i in stored.values()} <= {self.max_receive_count}
        for message_id in self.sent:
            assert self.queue.history(message_id)[-1].event == "dead_lettered"


class TestPoisonMessages(PoisonMessages.TestCase):  # type: ignore[misc,valid-type]
    """Section 11: failing consumers lose nothing; messages end in the DLQ."""

    settings = PASSING


class FifoPoisonMessages(PoisonMessages):
    """Section 9 and 11: the same on FIFO, with maxReceiveCount 1 (the group is
    unblocked when its head is dead-lettered)."""

    fifo = True
    max_receive_count = 1


class TestFifoPoisonMessages(FifoPoisonMessages.TestCase):  # type: ignore[misc,valid-type]
    """Sections 9 and 11: FIFO poison messages move to the FIFO DLQ, nothing lost."""

    settings = PASSING


# -- broken consumers: the machine must catch them ------------------------------------------


class SideChannelDelete(ConsumerMachine):
    """Deletes the message through a side channel, then reports failure: the
    message is gone, yet was never handled successfully (lost work)."""

    def handle(self, message: Message) -> None:
        self.queue.delete(message.receipt_handle)
        raise RuntimeError("claims it did not handle the message")


class DeleteFirstThenCrash(ConsumerMachine):
    """The classic bug: acknowledge (delete) before processing, then crash
    while processing every other message."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def handle(self, message: Message) -> None:
        self.queue.delete(message.receipt_handle)
        self.calls += 1
        if self.calls % 2 == 0:
            raise RuntimeError("crashed after acknowledging")


class PurgesTheQueue(ConsumerMachine):
    """A consumer that 'cleans up' by purging the queue it consumes from."""

    def handle(self, message: Message) -> None:
        if message.body.startswith("0"):
            self.queue.purge()


class NotIdempotent(ConsumerMachine):
    """Applies every delivery: under duplicate faults (section 10) a message's
    effect is applied twice, which its invariant forbids."""

    faults: Faults | None = Faults(seed=5, duplicate_rate=0.5)

    def __init__(self) -> None:
        super().__init__()
        self.effects: Counter[str] = Counter()

    def handle(self, message: Message) -> None:
        self.effects[message.message_id] += 1

    @invariant()
    def applied_once(self) -> None:
        assert all(n == 1 for n in self.effects.values()), "effect applied twice"


@pytest.mark.parametrize("machine", [SideChannelDelete, DeleteFirstThenCrash])
def test_lost_messages_are_caught(machine: type[ConsumerMachine]) -> None:
    """Sections 8 and 10: a message must stay stored until handled; a consumer
    that deletes without having handled it loses it, and ``nothing_is_lost``
    fails with an AssertionError naming the lost message."""
    with pytest.raises(AssertionError, match="was lost"):
        run_state_machine_as_test(machine, settings=hunting())


def test_purging_consumer_is_caught() -> None:
    """Section 2.1 (PurgeQueue deletes every message): purging from a consumer
    loses the other stored messages, and the machine says so."""
    with pytest.raises(AssertionError, match="was lost"):
        run_state_machine_as_test(PurgesTheQueue, settings=hunting(500))


def test_non_idempotent_consumer_is_caught() -> None:
    """Sections 10 and 13: duplicate-delivery faults expose a consumer that is
    not idempotent through the subclass's own invariant."""
    with pytest.raises(AssertionError, match="effect applied twice"):
        run_state_machine_as_test(NotIdempotent, settings=hunting())


def test_same_consumer_passes_without_faults() -> None:
    """Section 13 (faults off by default): without duplicate faults the
    non-idempotent consumer is never delivered a deleted message, so it passes:
    it is the faults that make the bug visible."""

    class Exact(NotIdempotent):
        faults = None

    run_state_machine_as_test(Exact, settings=hunting(50))
