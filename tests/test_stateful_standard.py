"""Model-based testing of the standard queue (``docs/aws-behaviour.md`` §§4, 5, 8, 10, 12).

Random sequences of send / send_batch / receive (short and long polls) /
delete / delete_batch / change_visibility / change_visibility_batch / purge /
SetQueueAttributes / clock moves run against :class:`sqsqueue.Queue` and
:class:`tests.model.ModelStandardQueue`; after every step the queue's own
``_check()`` passes and its counts and contents equal the model's.

AWS may return any receivable messages; the model checks that a receive
returns only receivable messages, as many as asked for if there are, and
sqsqueue's documented choice (the oldest due first) on top.

``SQSQUEUE_LONG=1`` runs at depth (``tests/_profiles.py``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, multiple, rule

from sqsqueue import Queue, SendEntry
from tests import _mirror as mirror
from tests._machines import (
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
from tests.model import ModelStandardQueue

BODY = st.sampled_from(["a", "b", "c"])
#: Per-message delay: none (the queue's), 0..60 s, or the maximum (past retention).
DELAY = st.none() | st.integers(0, 60) | st.just(900)


class StandardMachine(QueueMachine):
    """A standard queue against :class:`ModelStandardQueue`."""

    queue: Queue
    model: ModelStandardQueue

    @initialize(retention=RETENTION, initial=st.lists(st.tuples(BODY, DELAY), max_size=20))
    def create(self, retention: int, initial: list[tuple[str, int | None]]) -> None:
        self.queue = Queue(
            self.NAME,
            clock=self.clock,
            message_retention_period=retention,
            random=random.Random(1),
        )
        mirror.attach(self.queue)
        self.model = ModelStandardQueue(self.NAME, now=to_us(START), retention=retention)
        for body, delay in initial:
            self.send(body, delay)

    @rule(body=BODY, delay=DELAY)
    def send(self, body: str, delay: int | None) -> None:
        result = self.queue.send(body, delay_seconds=delay)
        self.bind(self.model.send(body, delay_seconds=delay), result.message_id)

    @rule(entries=st.lists(st.tuples(BODY, DELAY), min_size=1, max_size=10))
    def send_batch(self, entries: list[tuple[str, int | None]]) -> None:
        result = self.queue.send_batch(
            [SendEntry(str(i), body, delay) for i, (body, delay) in enumerate(entries)]
        )
        assert result.ok and len(result.successful) == len(entries)
        for i, (body, delay) in enumerate(entries):
            sent = result.successful[str(i)]
            assert sent is not None
            self.bind(self.model.send(body, delay_seconds=delay), sent.message_id)

    @rule(
        target=QueueMachine.handles,
        max_messages=MAX_MESSAGES,
        visibility_timeout=RECEIVE_VT,
        wait=WAIT,
    )
    def receive(self, max_messages: int, visibility_timeout: int | None, wait: int | None) -> Any:
        messages = self.queue.receive(
            max_messages, visibility_timeout=visibility_timeout, wait_time_seconds=wait
        )
        if wait:
            self.model.wait(wait)
        chosen = [self.by_id[m.message_id] for m in messages]
        receivable = self.model.receivable()
        # AWS's rule: only receivable messages, each once, as many as asked if there are.
        assert len(chosen) == min(max_messages, len(receivable)), (chosen, receivable)
        assert len(set(map(id, chosen))) == len(chosen), chosen
        assert all(m in receivable for m in chosen), (chosen, receivable)
        # sqsqueue's own policy (_standard.py): oldest due first.
        assert chosen == self.model.oldest_first(max_messages)
        receipts = self.model.receive(chosen, max_messages, visibility_timeout)
        record(f"receive: {len(receipts)}")
        return multiple(*self.issued(messages, receipts))


StandardMachine.TestCase.settings = machine_settings(max_examples=400, stateful_step_count=50)
TestStandardQueueMachine = StandardMachine.TestCase
