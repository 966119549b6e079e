"""A naive reference model of Amazon SQS standard and FIFO queues, for tests.

The model is meant to be *obviously* correct rather than fast: every message
ever sent stays in one plain list, in send order, and every question ("what is
receivable?", "how many are in flight?") is answered by scanning it. Times are
integer microseconds, so every deadline comparison is exact. Section numbers
refer to ``docs/aws-behaviour.md``.

How a test drives it (see ``tests/test_stateful_*.py``):

* Move time with :meth:`ModelQueue.advance` in step with the real queue's
  ``ManualClock``; retention is applied whenever time moves.
* Call the operation on the model first. An operation the model predicts to
  fail raises :class:`ModelError` naming the ``sqsqueue.errors`` class the real
  queue must raise, and it changes nothing before raising (sections 1.4, 3).
* Receipt handles are :class:`ModelReceipt` values; the test keeps the mapping
  between them and the real queue's opaque strings.

Extending it: a broker model (dead-letter queues, move tasks) subclasses these
classes. The lifecycle of a message is a :class:`Fate` (``DEAD_LETTERED`` is
reserved for that), the moment a stored message next becomes receivable is
:meth:`ModelQueue.ready_at`, and every state change goes through
:meth:`ModelQueue._deliver`, :meth:`ModelQueue._remove` or a direct write of
``ModelMessage.due`` in :meth:`ModelQueue.change_visibility`.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from sqsqueue import errors

__all__ = [
    "US",
    "Fate",
    "ModelAttempt",
    "ModelBroker",
    "ModelError",
    "ModelFifoQueue",
    "ModelMessage",
    "ModelMoveTask",
    "ModelQueue",
    "ModelReceipt",
    "ModelStandardQueue",
    "State",
]

#: Microseconds per second: the model's time unit.
US = 1_000_000
#: "The maximum visibility timeout is 12 hours from the time that Amazon SQS
#: receives the ReceiveMessage request" (sections 4, 8).
VISIBILITY_BUDGET_US = 43_200 * US
#: PurgeQueue: once per 60 s (section 4).
PURGE_INTERVAL_US = 60 * US
#: FIFO deduplication interval and ReceiveRequestAttemptId lifetime: 5 minutes (section 9).
DEDUP_WINDOW_US = 300 * US
ATTEMPT_WINDOW_US = 300 * US


class Fate(enum.Enum):
    """Where a message is. Every message ever sent has exactly one fate."""

    STORED = "stored"
    DELETED = "deleted"
    EXPIRED = "expired"
    PURGED = "purged"
    #: Moved to the dead-letter queue: the same message (same MessageId) lives
    #: on there as ``successor`` (sections 10, 11). Set by :class:`ModelBroker`.
    DEAD_LETTERED = "dead-lettered"
    #: Moved out of a dead-letter queue by a message move task: it lives on as a
    #: *new* message ``successor`` (new MessageId, section 11).
    MOVED = "moved"


class State(enum.Enum):
    """What a *stored* message counts as in GetQueueAttributes (section 5)."""

    DELAYED = "delayed"  # ApproximateNumberOfMessagesDelayed
    VISIBLE = "visible"  # ApproximateNumberOfMessages
    IN_FLIGHT = "in flight"  # ApproximateNumberOfMessagesNotVisible


class ModelError(Exception):
    """The model predicts that the real queue raises ``error``."""

    def __init__(self, error: type[errors.SQSError], reason: str = "") -> None:
        super().__init__(f"{error.__name__}: {reason}" if reason else error.__name__)
        self.error = error
        self.reason = reason


@dataclass(eq=False)
class ModelMessage:
    """One message ever sent, whatever became of it.

    ``due`` is the moment the message becomes receivable: the end of its delay
    before the first receive (standard queues; a FIFO queue computes that from
    the queue's current delay, see :meth:`ModelFifoQueue.ready_at`), the end of
    the visibility timeout of the latest receipt after.
    """

    key: int  # send order within its queue, from 1
    body: str
    sent: int
    group_id: str | None = None
    dedup_id: str | None = None
    due: int = 0
    receive_count: int = 0  # also the number of the latest receipt
    cap: int = 0  # end of the 12-hour budget of the latest receive
    changes: int = 0  # successful visibility changes since the latest receive
    fate: Fate = Fate.STORED
    fate_time: int | None = None
    #: Receives in the queue a dead letter came from: ApproximateReceiveCount
    #: continues from there (section 10). 0 for messages that were sent.
    receive_base: int = 0
    #: The source queue a dead letter came from (DeadLetterQueueSourceArn).
    dlq_source: str | None = None
    #: The same message in the queue it was dead-lettered from (broker model).
    previous: ModelMessage | None = None
    #: The message a move task created from this one (broker model).
    moved_from: ModelMessage | None = None
    #: Where this message lives on after DEAD_LETTERED or MOVED.
    successor: ModelMessage | None = None

    @property
    def received(self) -> bool:
        return self.receive_count > 0

    def __repr__(self) -> str:
        group = f"{self.group_id}:" if self.group_id is not None else ""
        return f"M{group}{self.key}"


@dataclass(frozen=True, eq=False)
class ModelReceipt:
    """A receipt handle as the model sees it.

    ``queue`` is the name of the queue that issued it (``None`` for a string
    no queue issued); ``message`` and ``receipt_no`` say which receive of which
    message it came from (``None``/``0`` for handles of queues the model does
    not know). ``forged`` marks a genuine handle whose secret part was altered.
    """

    queue: str | None
    message: ModelMessage | None
    receipt_no: int
    forged: bool = False

    def __repr__(self) -> str:
        if self.message is None:
            return f"<receipt of {self.queue}>"
        forged = " forged" if self.forged else ""
        return f"<receipt {self.message!r}#{self.receipt_no}{forged}>"


class ModelQueue:
    """What standard and FIFO queues share: time, retention, counts, receipts.

    ``now`` is integer microseconds (epoch). Subclasses define how a message
    becomes receivable (:meth:`ready_at`), which receipt may act
    (:meth:`_may_act`), sending, and receiving.
    """

    fifo: ClassVar[bool] = False

    def __init__(
        self,
        name: str,
        *,
        now: int,
        visibility_timeout: int = 30,
        delay_seconds: int = 0,
        retention: int = 345_600,
    ) -> None:
        self.name = name
        self.now = now
        self.visibility_timeout = visibility_timeout
        self.delay_seconds = delay_seconds
        self.retention = retention
        self.messages: list[ModelMessage] = []
        self.last_purge: int | None = None

    # -- time -------------------------------------------------------------------

    def advance(self, microseconds: int) -> None:
        """Let time pass; messages past their retention period expire."""
        assert microseconds >= 0
        self.now += microseconds
        self._expire()

    def _expire(self) -> None:
        # Retention counts from the enqueue time and applies in every state
        # (section 4, MessageRetentionPeriod); a message is gone at sent + retention.
        for m in self.stored():
            if self.now >= m.sent + self.retention * US:
                self._remove(m, Fate.EXPIRED)

    def _remove(self, m: ModelMessage, fate: Fate) -> None:
        assert m.fate is Fate.STORED and fate is not Fate.STORED
        m.fate = fate
        m.fate_time = self.now

    # -- configuration ----------------------------------------------------------

    def set_attributes(
        self, *, visibility_timeout: int | None = None, delay_seconds: int | None = None
    ) -> None:
        """SetQueueAttributes for the attributes the model knows."""
        if visibility_timeout is not None:
            self.visibility_timeout = visibility_timeout
        if delay_seconds is not None:
            self.delay_seconds = delay_seconds

    # -- where messages are -----------------------------------------------------

    def stored(self) -> list[ModelMessage]:
        """Messages still in the queue, in send order."""
        return [m for m in self.messages if m.fate is Fate.STORED]

    def ready_at(self, m: ModelMessage) -> int:
        """When a stored message is (or was) next receivable."""
        return m.due

    def state(self, m: ModelMessage) -> State:
        assert m.fate is Fate.STORED
        if self.ready_at(m) <= self.now:
            return State.VISIBLE
        return State.IN_FLIGHT if m.received else State.DELAYED

    def in_flight(self, m: ModelMessage) -> bool:
        return m.fate is Fate.STORED and self.state(m) is State.IN_FLIGHT

    def counts(self) -> tuple[int, int, int]:
        """(visible, in flight, delayed): the three Approximate* counts (section 5)."""
        states = [self.state(m) for m in self.stored()]
        return (
            states.count(State.VISIBLE),
            states.count(State.IN_FLIGHT),
            states.count(State.DELAYED),
        )

    def receivable(self) -> list[ModelMessage]:
        """Stored messages whose delay or visibility timeout has ended."""
        return [m for m in self.stored() if self.ready_at(m) <= self.now]

    def anything_receivable(self) -> bool:
        """Whether a receive now returns at least one message."""
        return bool(self.receivable())

    def deadlines(self) -> list[int]:
        """Every future moment at which something changes by itself: a delay or
        visibility timeout ends, a message expires, purging is allowed again.
        (For tests that want to land exactly on, or just before, a boundary.)"""
        times = {self.ready_at(m) for m in self.stored()}
        times |= {m.sent + self.retention * US for m in self.stored()}
        if self.last_purge is not None:
            times.add(self.last_purge + PURGE_INTERVAL_US)
        return sorted(t for t in times if t > self.now)

    def wait(self, wait_seconds: int) -> None:
        """The wait of a long poll (section 12) under a ``ManualClock`` that jumps
        time: time moves to the first moment a receive finds something, or to
        the end of the wait. Only a delay or visibility timeout ending, or a
        message expiring, can change what a receive finds."""
        deadline = self.now + wait_seconds * US
        while not self.anything_receivable() and self.now < deadline:
            events = [
                t
                for m in self.stored()
                for t in (self.ready_at(m), m.sent + self.retention * US)
                if self.now < t < deadline
            ]
            self.advance(min(events, default=deadline) - self.now)

    # -- transitions --------------------------------------------------------------

    def _new_message(self, body: str, group_id: str | None, due: int) -> ModelMessage:
        m = ModelMessage(len(self.messages) + 1, body, self.now, group_id=group_id, due=due)
        self.messages.append(m)
        return m

    def _deliver(self, m: ModelMessage, visibility_timeout: int) -> ModelReceipt:
        """VISIBLE -> IN FLIGHT with a new receipt (section 8)."""
        assert m.fate is Fate.STORED and self.ready_at(m) <= self.now
        m.receive_count += 1
        m.due = self.now + visibility_timeout * US
        m.cap = self.now + VISIBILITY_BUDGET_US
        m.changes = 0
        return ModelReceipt(self.name, m, m.receive_count)

    def _visibility(self, visibility_timeout: int | None) -> int:
        return self.visibility_timeout if visibility_timeout is None else visibility_timeout

    # -- receipts -------------------------------------------------------------------

    def _resolve(self, receipt: ModelReceipt) -> ModelMessage | None:
        """The stored message a handle names, None if that message is gone.

        A string this queue never issued, a handle of another queue, or a forged
        handle is ReceiptHandleIsInvalid (section 8,
        "Garbage handle"). Whether a genuine handle may act is :meth:`_may_act`.
        """
        if receipt.queue != self.name or receipt.message is None:
            raise ModelError(errors.ReceiptHandleIsInvalid, "not issued by this queue")
        if receipt.forged:
            # Refused whether or not the message still exists: a gone message's
            # handle is only honoured if this queue really issued it.
            raise ModelError(errors.ReceiptHandleIsInvalid, "forged")
        m = receipt.message
        assert m in self.messages
        if m.fate is not Fate.STORED:
            return None
        return m

    def _may_act(self, m: ModelMessage, receipt: ModelReceipt) -> bool:
        raise NotImplementedError

    def delete(self, receipt: ModelReceipt) -> None:
        """DeleteMessage. Deleting a message that is gone succeeds (section 8,
        "Deleted message": idempotent)."""
        m = self._resolve(receipt)
        if m is None:
            return
        if not self._may_act(m, receipt):
            raise ModelError(errors.InvalidParameterValue, "The receipt handle has expired.")
        self._remove(m, Fate.DELETED)

    def change_visibility(self, receipt: ModelReceipt, visibility_timeout: int) -> None:
        """ChangeMessageVisibility: the new timeout counts from now, within the
        12-hour budget of the receive (sections 4, 8)."""
        m = self._resolve(receipt)
        if m is None or not self._may_act(m, receipt):
            raise ModelError(
                errors.InvalidParameterValue,
                "Message does not exist or is not available for visibility timeout change.",
            )
        due = self.now + visibility_timeout * US
        if due > m.cap:
            raise ModelError(errors.InvalidParameterValue, "beyond the 12-hour budget")
        m.due = due
        m.changes += 1

    def purge(self) -> None:
        """PurgeQueue: every stored message goes, whatever its state; once per 60 s."""
        if self.last_purge is not None and self.now < self.last_purge + PURGE_INTERVAL_US:
            raise ModelError(errors.PurgeQueueInProgress)
        self.last_purge = self.now
        for m in self.stored():
            self._remove(m, Fate.PURGED)


class ModelStandardQueue(ModelQueue):
    """A standard queue (section 10).

    AWS may return any receivable messages, so the model does not pick: it says
    which messages are receivable (:meth:`receivable`) and how many a receive
    must return (:meth:`receive_count`), and the test applies the real queue's
    choice with :meth:`receive`, which checks that choice is legal.
    """

    def send(
        self, body: str, *, delay_seconds: int | None = None, group_id: str | None = None
    ) -> ModelMessage:
        """SendMessage. A per-message delay overrides the queue's; the queue
        delay is read now, so later changes to it do not apply (section 10)."""
        delay = self.delay_seconds if delay_seconds is None else delay_seconds
        return self._new_message(body, group_id, self.now + delay * US)

    def receive_count(self, max_messages: int) -> int:
        """How many messages a receive returns: as many as asked, if there are.

        (AWS's short poll may return fewer; sqsqueue, like long polling, does
        not: section 10.)
        """
        return min(max_messages, len(self.receivable()))

    def order_key(self, m: ModelMessage) -> tuple[int, int]:
        """Where a receivable message stands in sqsqueue's standard order: a
        never-received message by when it became receivable, a received one
        (visible again) by when it was sent, ties in send order. AWS keeps send
        order on a best-effort basis, so a message whose visibility timeout
        ended comes before visible messages sent after it (issue 12 §6)."""
        return (m.sent if m.received else self.ready_at(m), m.key)

    def oldest_first(self, max_messages: int) -> list[ModelMessage]:
        """sqsqueue's own choice (not AWS's rule): the receivable messages in
        :meth:`order_key` order."""
        ready = sorted(self.receivable(), key=self.order_key)
        return ready[:max_messages]

    def plan_receive(
        self, max_messages: int, threshold: int
    ) -> tuple[list[ModelMessage], list[ModelMessage]]:
        """sqsqueue's receive with a redrive policy: (to deliver, to dead-letter).

        Walks the receivable messages in :meth:`order_key` order; one already received
        ``threshold`` times is dead-lettered instead of delivered and does not
        count toward ``max_messages`` (section 11: "the next receive attempt
        moves the message"). Messages after the last one delivered are left
        alone.
        """
        deliver: list[ModelMessage] = []
        dead: list[ModelMessage] = []
        for m in sorted(self.receivable(), key=self.order_key):
            if threshold and m.receive_base + m.receive_count >= threshold:
                dead.append(m)
                continue
            deliver.append(m)
            if len(deliver) == max_messages:
                break
        return deliver, dead

    def receive(
        self,
        chosen: Sequence[ModelMessage],
        max_messages: int,
        visibility_timeout: int | None = None,
    ) -> list[ModelReceipt]:
        """Apply a receive that returned ``chosen``, after checking it was legal."""
        receivable = self.receivable()
        assert len(chosen) == self.receive_count(max_messages), (
            f"a receive of {max_messages} must return {self.receive_count(max_messages)} "
            f"of {receivable}, got {list(chosen)}"
        )
        assert len(set(map(id, chosen))) == len(chosen), f"duplicates in {list(chosen)}"
        for m in chosen:
            assert m in receivable, f"{m!r} is not receivable ({receivable})"
        vt = self._visibility(visibility_timeout)
        return [self._deliver(m, vt) for m in chosen]

    def _may_act(self, m: ModelMessage, receipt: ModelReceipt) -> bool:
        # Standard: every handle ever issued for the message acts on it, in
        # flight or not, latest or not (section 8, "Observed on real AWS").
        return True


@dataclass
class ModelAttempt:
    """A remembered ReceiveRequestAttemptId: what it returned, and when it lapses."""

    expires: int
    receipts: list[ModelReceipt]
    changes: list[int] = field(default_factory=list)


class ModelFifoQueue(ModelQueue):
    """A FIFO queue (section 9): groups, strict per-group order, deduplication.

    A receive is predicted exactly: the groups whose first stored message (the
    head) is receivable, ordered by when the head became receivable (ties: the
    head's send order), each contributing its *receivable prefix* (the leading
    run of its messages that are receivable: received messages visible again,
    then never-received messages whose delay ended; the first in-flight or
    still-delayed message ends it), up to ``max_messages`` in all.
    """

    fifo: ClassVar[bool] = True

    def __init__(
        self,
        name: str,
        *,
        now: int,
        visibility_timeout: int = 30,
        delay_seconds: int = 0,
        retention: int = 345_600,
        content_based_deduplication: bool = False,
        deduplication_scope: str = "queue",
    ) -> None:
        super().__init__(
            name,
            now=now,
            visibility_timeout=visibility_timeout,
            delay_seconds=delay_seconds,
            retention=retention,
        )
        assert deduplication_scope in ("queue", "messageGroup")
        self.content_based_deduplication = content_based_deduplication
        self.deduplication_scope = deduplication_scope
        #: deduplication key -> (end of its window, the message first sent with it)
        self.dedup: dict[object, tuple[int, ModelMessage]] = {}
        self.attempts: dict[str, ModelAttempt] = {}

    def ready_at(self, m: ModelMessage) -> int:
        # The queue delay of a FIFO queue applies retroactively to messages not
        # yet received (section 9, "Other FIFO rules").
        if m.received:
            return m.due
        return m.sent + self.delay_seconds * US

    # -- send -----------------------------------------------------------------------

    def dedup_key(self, body: str, group_id: str, dedup_id: str | None) -> object:
        """The deduplication key: explicit id, else SHA-256 of the body; per
        group when DeduplicationScope is messageGroup (section 9)."""
        if dedup_id is None:
            if not self.content_based_deduplication:
                raise ModelError(errors.InvalidParameterValue, "no deduplication id")
            dedup_id = hashlib.sha256(body.encode("utf-8")).hexdigest()
        if self.deduplication_scope == "messageGroup":
            return (group_id, dedup_id)
        return dedup_id

    def send(
        self, body: str, *, group_id: str, dedup_id: str | None = None
    ) -> tuple[ModelMessage, bool]:
        """SendMessage: (the message, whether the send was a duplicate).

        A duplicate within 5 minutes of the first send is accepted and not
        delivered, even if the first was deleted; it does not extend the window
        (section 9, "Deduplication").
        """
        key = self.dedup_key(body, group_id, dedup_id)
        entry = self.dedup.get(key)
        if entry is not None and self.now < entry[0]:
            return entry[1], True
        m = self._new_message(body, group_id, 0)
        m.dedup_id = dedup_id
        self.dedup[key] = (self.now + DEDUP_WINDOW_US, m)
        return m, False

    # -- receive ----------------------------------------------------------------------

    def groups(self) -> dict[str, list[ModelMessage]]:
        """Stored messages by group, each in send order."""
        out: dict[str, list[ModelMessage]] = {}
        for m in self.stored():
            assert m.group_id is not None
            out.setdefault(m.group_id, []).append(m)
        return out

    def receivable_prefix(self, chain: Iterable[ModelMessage]) -> list[ModelMessage]:
        """The leading run of receivable messages of a group (section 9: an
        in-flight message holds back itself and everything after it)."""
        out = []
        for m in chain:
            if self.ready_at(m) > self.now:
                break
            out.append(m)
        return out

    def anything_receivable(self) -> bool:
        return bool(self.select(1))

    def deadlines(self) -> list[int]:
        """Also the ends of deduplication windows and receive attempts."""
        times = set(super().deadlines())
        times |= {expires for expires, _m in self.dedup.values()}
        times |= {attempt.expires for attempt in self.attempts.values()}
        return sorted(t for t in times if t > self.now)

    def select(self, max_messages: int) -> list[ModelMessage]:
        """The messages a fresh receive returns, in order (see the class docstring)."""
        heads = sorted(
            (chain for chain in self.groups().values() if self.ready_at(chain[0]) <= self.now),
            key=lambda chain: (self.ready_at(chain[0]), chain[0].key),
        )
        out: list[ModelMessage] = []
        for chain in heads:
            for m in self.receivable_prefix(chain):
                out.append(m)
                if len(out) == max_messages:
                    return out
        return out

    def plan_receive(
        self, max_messages: int, threshold: int
    ) -> tuple[list[ModelMessage], list[ModelMessage]]:
        """:meth:`select` with a redrive policy: (to deliver, to dead-letter).

        A message of a receivable prefix already received ``threshold`` times
        is dead-lettered, does not count toward ``max_messages``, and the group
        goes on with its next message (section 9: "the next receive attempt
        moves the message to the DLQ ... and the group is unblocked").
        """
        heads = sorted(
            (chain for chain in self.groups().values() if self.ready_at(chain[0]) <= self.now),
            key=lambda chain: (self.ready_at(chain[0]), chain[0].key),
        )
        deliver: list[ModelMessage] = []
        dead: list[ModelMessage] = []
        for chain in heads:
            for m in self.receivable_prefix(chain):
                if threshold and m.receive_base + m.receive_count >= threshold:
                    dead.append(m)
                    continue
                deliver.append(m)
                if len(deliver) == max_messages:
                    return deliver, dead
        return deliver, dead

    def _replayable(self, attempt: ModelAttempt) -> bool:
        """A retry returns the same receipts "provided none of the messages were
        modified (deleted or visibility changed)" (section 9)."""
        for receipt, changes in zip(attempt.receipts, attempt.changes, strict=True):
            m = receipt.message
            assert m is not None
            if m.fate is not Fate.STORED or m.receive_count != receipt.receipt_no:
                return False
            if m.changes != changes:
                return False
        return True

    def receive(
        self,
        max_messages: int,
        visibility_timeout: int | None = None,
        attempt_id: str | None = None,
        wait_seconds: int = 0,
    ) -> tuple[list[ModelReceipt], bool]:
        """ReceiveMessage: (the receipts returned, in order; whether it was a replay).

        With an attempt id seen in the last 5 minutes whose messages are
        unmodified, the same receipts come back and their visibility timeout is
        reset ("If a retry occurs within the deduplication interval, it resets
        the visibility timeout", section 9). Otherwise it is a fresh receive,
        remembered under the attempt id if it returned anything (what happens
        after a modification is UNCONFIRMED; a fresh receive is the reading
        sqsqueue takes). A long poll (``wait_seconds``) that finds nothing waits
        as :meth:`ModelQueue.wait` says.
        """
        vt = self._visibility(visibility_timeout)
        if attempt_id is not None:
            attempt = self.attempts.get(attempt_id)
            if attempt is not None and self.now < attempt.expires:
                if self._replayable(attempt):
                    for receipt in attempt.receipts:
                        m = receipt.message
                        assert m is not None
                        m.due = min(self.now + vt * US, m.cap)
                    return list(attempt.receipts), True
                del self.attempts[attempt_id]
        self.wait(wait_seconds)
        receipts = [self._deliver(m, vt) for m in self.select(max_messages)]
        if attempt_id is not None and receipts:
            self.attempts[attempt_id] = ModelAttempt(
                self.now + ATTEMPT_WINDOW_US, receipts, [0] * len(receipts)
            )
        return receipts, False

    def _may_act(self, m: ModelMessage, receipt: ModelReceipt) -> bool:
        # FIFO: only the latest receipt, and only while the message is in flight
        # (section 8, "FIFO, handle used after its visibility expired").
        return receipt.receipt_no == m.receive_count and m.due > self.now

    def purge(self) -> None:
        """PurgeQueue also clears the deduplication history (section 9) and the
        remembered receive attempts."""
        super().purge()
        self.dedup.clear()
        self.attempts.clear()


# -- the broker: dead-letter queues and message move tasks (sections 10, 11) ---------


@dataclass(eq=False)
class ModelMoveTask:
    """A message move task (section 11), numbered in start order from 1.

    ``rate`` is MaxNumberOfMessagesPerSecond (None: as fast as possible). The
    task may move its n-th message once ``rate * elapsed >= n``: at
    :meth:`next_move`. At that moment it moves the first receivable message of
    its source (the dead-letter queue), or, if there is none, it is COMPLETED.
    """

    number: int
    source: str
    destination: str | None
    rate: int | None
    started: int
    to_move: int
    moved: int = 0
    status: str = "RUNNING"

    def next_move(self, now: int) -> int:
        """When the task may move its next message (``now`` when unlimited)."""
        if self.rate is None:
            return now
        # the first t with floor(rate * (t - started) / 1 s) >= moved + 1
        return self.started + -(-(self.moved + 1) * US // self.rate)


class ModelBroker:
    """Queues of one broker, their redrive policies and message move tasks.

    Obviously correct rather than fast, like the queue models: time moves
    through :meth:`advance`, which stops at every moment a running move task
    may move a message (so a task's progress depends only on virtual time,
    never on when somebody looks); a receive dead-letters what it touches that
    has used up its receives (:meth:`receive`).

    Every message ever sent lives in exactly one place: stored in one queue, or
    gone with a final fate (deleted, expired, purged), or moved on: DEAD_LETTERED
    (the same message continues in the dead-letter queue as ``successor``) or
    MOVED (a move task made a new message, ``successor``, from it).
    """

    def __init__(self, *, now: int) -> None:
        self.now = now
        self.queues: dict[str, ModelQueue] = {}
        #: source queue name -> (dead-letter queue name, maxReceiveCount)
        self.redrive: dict[str, tuple[str, int]] = {}
        self.tasks: list[ModelMoveTask] = []

    def add(self, queue: ModelQueue) -> ModelQueue:
        assert queue.now == self.now and queue.name not in self.queues
        self.queues[queue.name] = queue
        return queue

    def set_redrive(self, source: str, dlq: str, max_receive_count: int | None) -> None:
        """SetQueueAttributes(RedrivePolicy); None removes the policy."""
        if max_receive_count is None:
            self.redrive.pop(source, None)
        else:
            self.redrive[source] = (dlq, max_receive_count)

    def threshold(self, name: str) -> int:
        """maxReceiveCount of ``name``'s redrive policy, 0 without one."""
        return self.redrive[name][1] if name in self.redrive else 0

    # -- time -------------------------------------------------------------------

    def running(self) -> list[ModelMoveTask]:
        return [t for t in self.tasks if t.status == "RUNNING"]

    def _sync(self, t: int) -> None:
        for q in self.queues.values():
            q.advance(t - q.now)
        self.now = t

    def advance(self, microseconds: int) -> None:
        """Let time pass, stopping at each moment a move task may move a message."""
        assert microseconds >= 0
        end = self.now + microseconds
        while True:
            moves = [t.next_move(self.now) for t in self.running() if t.rate is not None]
            nxt = min(moves, default=None)
            if nxt is None or nxt > end:
                break
            assert nxt > self.now
            self._sync(nxt)
            self.drive()
        self._sync(end)
        self.drive()

    def deadlines(self) -> list[int]:
        """Every future moment at which something happens by itself."""
        times = {t for q in self.queues.values() for t in q.deadlines()}
        times |= {t.next_move(self.now) for t in self.running() if t.rate is not None}
        return sorted(t for t in times if t > self.now)

    # -- dead letters --------------------------------------------------------------

    def dead_letter(self, m: ModelMessage, source: str) -> ModelMessage:
        """Move ``m`` to ``source``'s dead-letter queue (sections 9, 10, 11): same
        message, ApproximateReceiveCount continues, DeadLetterQueueSourceArn set;
        a standard queue keeps the enqueue time (retention counts from the
        original send), a FIFO queue resets it."""
        dlq = self.queues[self.redrive[source][0]]
        self.queues[source]._remove(m, Fate.DEAD_LETTERED)
        new = ModelMessage(
            len(dlq.messages) + 1,
            m.body,
            self.now if dlq.fifo else m.sent,
            group_id=m.group_id,
            due=self.now,
        )
        if dlq.fifo:
            # "the dedup id is replaced with the original MessageId" (section 9):
            # any token unique to this message will do for the model.
            new.dedup_id = f"id:{source}:{m.key}"
        new.receive_base = m.receive_base + m.receive_count
        new.dlq_source = source
        new.previous = m
        m.successor = new
        dlq.messages.append(new)
        dlq._expire()  # a standard dead letter may be past the DLQ's retention already
        return new

    def receive(
        self,
        name: str,
        max_messages: int,
        visibility_timeout: int | None = None,
        wait_seconds: int = 0,
    ) -> tuple[list[ModelReceipt], list[ModelMessage]]:
        """ReceiveMessage on ``name``: (the receipts, in order; the messages it
        dead-lettered). A long poll attempts again at every moment something
        happens by itself, until it delivers or its wait ends (section 12)."""
        q = self.queues[name]
        deadline = self.now + wait_seconds * US
        dead_lettered: list[ModelMessage] = []
        while True:
            deliver, dead = q.plan_receive(max_messages, self.threshold(name))
            for m in dead:
                dead_lettered.append(self.dead_letter(m, name))
            if deliver or self.now >= deadline:
                vt = q._visibility(visibility_timeout)
                return [q._deliver(m, vt) for m in deliver], dead_lettered
            nxt = min((t for t in self.deadlines() if t < deadline), default=deadline)
            self.advance(nxt - self.now)

    # -- move tasks (section 11) ------------------------------------------------------

    def start_task(
        self, source: str, destination: str | None = None, rate: int | None = None
    ) -> ModelMoveTask:
        """StartMessageMoveTask. ApproximateNumberOfMessagesToMove is the
        source's visible backlog now; without a rate everything receivable
        moves at once."""
        if not any(dlq == source for dlq, _count in self.redrive.values()):
            raise ModelError(errors.InvalidParameterValue, "not a dead-letter queue")
        if destination == source:
            raise ModelError(errors.InvalidParameterValue, "destination is the source")
        if any(t.source == source for t in self.running()):
            raise ModelError(errors.InvalidParameterValue, "a task is already running")
        visible, _in_flight, _delayed = self.queues[source].counts()
        task = ModelMoveTask(len(self.tasks) + 1, source, destination, rate, self.now, visible)
        self.tasks.append(task)
        self.drive()
        return task

    def cancel_task(self, task: ModelMoveTask) -> int:
        """CancelMessageMoveTask: only a RUNNING task; moved messages stay moved."""
        if task.status != "RUNNING":
            raise ModelError(errors.InvalidParameterValue, f"task is {task.status}")
        task.status = "CANCELLED"
        return task.moved

    def listed(self, source: str, max_results: int = 1) -> list[ModelMoveTask]:
        """ListMessageMoveTasks: the most recent first."""
        tasks = [t for t in self.tasks if t.source == source]
        return list(reversed(tasks[-max_results:]))

    def drive(self) -> None:
        """Let every running task do what it may do by now."""
        for task in self.running():
            dlq = self.queues[task.source]
            while task.status == "RUNNING" and task.next_move(self.now) <= self.now:
                first = dlq.plan_receive(1, 0)[0]
                if not first:
                    task.status = "COMPLETED"
                    break
                self._move(first[0], task)
                if (
                    task.rate is not None
                    and task.moved >= task.to_move
                    and not dlq.plan_receive(1, 0)[0]
                ):
                    task.status = "COMPLETED"

    def _move(self, m: ModelMessage, task: ModelMoveTask) -> None:
        """A move task takes ``m`` out of its queue and sends it, as a new message,
        to the destination or back to the queue it was dead-lettered from
        (section 11: new MessageId, new enqueue time, receive count from 0)."""
        target_name = task.destination or m.dlq_source
        assert target_name is not None
        target = self.queues[target_name]
        self.queues[task.source]._remove(m, Fate.MOVED)
        duplicate = False
        if isinstance(target, ModelFifoQueue):
            token = m.dedup_id or f"moved:{task.source}:{m.key}"
            new, duplicate = target.send(m.body, group_id=m.group_id or token, dedup_id=token)
        else:
            assert isinstance(target, ModelStandardQueue)
            new = target.send(m.body)
        m.successor = new
        if not duplicate:
            new.moved_from = m
        task.moved += 1
