"""Queue operations: what a caller can do with one queue, and where each lives.

:class:`_BaseQueue` is the base of :class:`~sqsqueue.Queue` and
:class:`~sqsqueue.FifoQueue`: its constructor (the keywords, declared here as
TypedDicts), shutdown, and the public operations, each a method that hands
the queue to the module of its concern (``send`` and ``delete``, the hottest,
are that module's function itself, bound as the method: no call between):

* send, send_batch: ``_send.py``;
* receive, receive_async (and the adapters' ``_receive_as``): ``_receive.py``,
  the request planned once into a ``ReceivePlan``;
* delete, change_visibility and their batches: ``_acknowledge.py``;
* purge, remove, DeleteQueue's retire, and the state a durable store keeps
  and restores: ``_state.py``.

Batch requests' entries are read by ``_batches.py``. Each operation validates
everything first, then takes the queue's lock, reads the clock once
(``_begin``: an exception from the clock changes nothing), applies the
deadlines that passed and calls the lifecycle's transitions
(``_lifecycle.py``). The queue type adds its send rules (``_check_ids``,
``_commit``) and picks its :class:`~sqsqueue._lifecycle.Ordering`.

Locking: one lock per queue (a :class:`~sqsqueue.Broker` shares one among its
queues so that dead-letter moves are atomic). Long polls wait outside the lock
(``_polling.py``).
"""

from __future__ import annotations

import abc
import os
import random as _random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self, TypedDict, TypeVar, Unpack

from sqsqueue import _acknowledge, _attributes, _deadletter, _receive, _send, _state, _validate
from sqsqueue._clock import Clock, SystemClock
from sqsqueue._faults import Faults
from sqsqueue._lifecycle import Ordering
from sqsqueue._limits import MAX_RECEIVE_COUNT_DEFAULT, US
from sqsqueue._message import (
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    Message,
    SendEntry,
    SendResult,
    _Record,
)
from sqsqueue._receipts import Receipts
from sqsqueue._receive import Attempts, Views
from sqsqueue._send import Prepared
from sqsqueue._settings import ALL, QueueSettings, attribute_map
from sqsqueue._state import QueueState
from sqsqueue._validate import show
from sqsqueue._views import message_views
from sqsqueue.errors import InvalidAttributeName, InvalidAttributeValue, InvalidParameterValue

T = TypeVar("T")


# -- the constructor's keywords ---------------------------------------------------
#
# Declared once, as TypedDicts: ``Queue(name, **options: Unpack[QueueOptions])``
# and ``FifoQueue(name, **options: Unpack[FifoQueueOptions])``, so type
# checkers and IDEs see each keyword with its type, and ``_BaseQueue.__init__``
# reads them. The attribute keywords are the Pythonic names of
# ``_attributes.ATTRIBUTES`` (a test holds the two together); the groups are
# applied in this order, which decides the error raised for several bad ones.


class _QueueSetup(TypedDict, total=False):
    """What a queue is made with, besides its attributes."""

    #: The clock every deadline is measured on (default: a SystemClock; a
    #: queue given a ``dead_letter_queue`` and no clock runs on the DLQ's).
    clock: Clock | None
    #: Queue attributes by AWS name, with AWS's string values.
    attributes: Mapping[str, object] | None
    #: A seeded ``random.Random`` makes message ids and receipt handles
    #: reproducible (and so guessable: for tests).
    random: _random.Random | None
    #: The queue's region and account (default us-east-1; the account is
    #: ``MOTO_ACCOUNT_ID`` when set, else 123456789012).
    region: str
    account_id: str | None
    #: Standalone redrive: this queue's dead-letter queue, and after how many
    #: receives a message moves there (default 10).
    dead_letter_queue: _BaseQueue | None
    max_receive_count: int | None
    #: Fault emulation (standard queues; FIFO queues accept it and stay exact).
    faults: Faults | None
    #: A Broker's queues: its shared lock, and its lookup of a queue by ARN.
    _lock: threading.RLock | None
    _resolver: Callable[[str], _BaseQueue | None] | None


class _AttributeKeywords(TypedDict, total=False):
    """The attributes every queue reads on each operation, as keywords
    (seconds, bytes); applied after a FIFO queue's own, in this order."""

    visibility_timeout: int | None
    delay_seconds: int | None
    message_retention_period: int | None
    maximum_message_size: int | None
    receive_message_wait_time_seconds: int | None


class _PolicyKeywords(TypedDict, total=False):
    """The policy and encryption attributes, as keywords (a policy as a dict
    or its JSON text); applied after the others, in the caller's order."""

    policy: Mapping[str, Any] | str | None
    redrive_policy: Mapping[str, Any] | str | None
    redrive_allow_policy: Mapping[str, Any] | str | None
    kms_master_key_id: str | None
    kms_data_key_reuse_period_seconds: int | None
    sqs_managed_sse_enabled: bool | None


class _FifoKeywords(TypedDict, total=False):
    """A FIFO queue's own attributes, as keywords: applied first, in this order."""

    content_based_deduplication: bool | None
    deduplication_scope: str | None
    fifo_throughput_limit: str | None


class QueueOptions(_QueueSetup, _AttributeKeywords, _PolicyKeywords, total=False):
    """The keywords of :class:`~sqsqueue.Queue`: ``Queue(name, **options)``."""


class FifoQueueOptions(QueueOptions, _FifoKeywords, total=False):
    """The keywords of :class:`~sqsqueue.FifoQueue`: a Queue's and FIFO's own."""

    #: Accepted for symmetry with CreateQueue: a FIFO queue is one.
    fifo_queue: bool | None


_SETUP = frozenset(_QueueSetup.__optional_keys__)
#: The attribute keywords applied first, in order, by queue type (FIFO or not).
_FIRST = {
    False: tuple(_AttributeKeywords.__annotations__),
    True: (*_FifoKeywords.__annotations__, *_AttributeKeywords.__annotations__),
}


def _attribute_keywords(options: Mapping[str, object], fifo: bool) -> dict[str, object]:
    """The attributes given as keywords among a constructor's ``options``, in
    the order they are applied: the first group, then the rest as given."""
    first = _FIRST[fifo]
    order = [key for key in first if key in options]
    order += [key for key in options if key not in _SETUP and key not in first]
    requested = {}
    for key in order:
        if _attributes.canonical_name(key) is None or key in _attributes.ATTRIBUTES:
            raise InvalidAttributeName(f"Unknown Attribute {key}.")
        value = options[key]
        if value is not None:
            requested[key] = value
    return requested


def _same_time(a: Clock, b: Clock) -> bool:
    """Whether two clocks tell one time: the same object, or two wall clocks."""
    return a is b or (type(a) is SystemClock and type(b) is SystemClock)


class _BaseQueue(QueueSettings, abc.ABC):
    """State and operations shared by :class:`Queue` and :class:`FifoQueue`.

    The queue type gives its send rules (:meth:`_check_ids`, :meth:`_commit`,
    abstract here) and its ordering policy (``_ORDERING``).
    """

    #: The queue type's ordering policy (``_ordering.py``).
    _ORDERING: ClassVar[type[Ordering]]
    #: ReceiveRequestAttemptIds remembered for replay (FIFO queues only).
    _attempts: Attempts | None = None

    # -- identity ------------------------------------------------------------

    def __init__(self, name: str, **options: Unpack[FifoQueueOptions]) -> None:
        self._name = _validate.queue_name(name, fifo=self.FIFO)
        clock = options.get("clock")
        region = options.get("region", "us-east-1")
        account_id = options.get("account_id")
        random = options.get("random")
        dead_letter_queue = options.get("dead_letter_queue")
        max_receive_count = options.get("max_receive_count")
        _lock = options.get("_lock")
        _resolver = options.get("_resolver")
        _validate.instance("clock", clock, Clock, "a Clock")
        if clock is None and isinstance(dead_letter_queue, _BaseQueue):
            clock = dead_letter_queue._clock  # a source runs on its DLQ's clock
        self._clock: Clock = clock if clock is not None else SystemClock()
        # The ARN and URL are built from these: the Broker's rules (_broker.py).
        _validate.region(region)
        if account_id is None:  # MOTO_ACCOUNT_ID, else moto's 123456789012
            account_id = _validate.default_account_id()
        _validate.account_id(account_id)
        _validate.instance("random", random, _random.Random, "a random.Random")
        self._region = region
        self._account_id = account_id
        requested = attribute_map(options.get("attributes"))
        requested.update(_attribute_keywords(options, self.FIFO))
        values = _attributes.defaults(fifo=self.FIFO)
        update = _attributes.parse(requested, fifo=self.FIFO, creating=True, current=values)
        values.update(update)
        _attributes.apply_sse(values, update)
        if dead_letter_queue is not None:
            # Standalone redrive: the DLQ object stands in for a Broker's lookup
            # by ARN, and the two queues share one lock so moves are atomic.
            if not isinstance(dead_letter_queue, _BaseQueue):
                raise InvalidParameterValue(
                    f"Value {show(dead_letter_queue)} for parameter dead_letter_queue is "
                    "invalid. Reason: must be a Queue or FifoQueue."
                )
            if not _same_time(dead_letter_queue._clock, self._clock):
                # A dead letter keeps its deadlines (retention from its first
                # send): measured on another clock they would be meaningless, and
                # a DLQ whose clock runs ahead would expire it at once.
                raise InvalidParameterValue(
                    f"Value {dead_letter_queue!r} for parameter dead_letter_queue is invalid. "
                    "Reason: it must run on the same clock as this queue (pass clock=)."
                )
            redrive = {
                "deadLetterTargetArn": dead_letter_queue.arn,
                "maxReceiveCount": (
                    MAX_RECEIVE_COUNT_DEFAULT if max_receive_count is None else max_receive_count
                ),
            }
            if max_receive_count is not None and (
                isinstance(max_receive_count, bool) or not isinstance(max_receive_count, int)
            ):
                # An int, as every integer parameter of the Python API (AWS's
                # integer members are JSON numbers: docs/aws-behaviour.md §1.2);
                # "3" is for the RedrivePolicy JSON text, not for this keyword.
                raise InvalidAttributeValue(
                    f"Value {_attributes.render('RedrivePolicy', redrive)} for parameter "
                    "RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: "
                    f"{show(max_receive_count)}, valid values are from 1 to 1000 both inclusive."
                )
            update.update(
                _attributes.parse(
                    {"RedrivePolicy": redrive}, fifo=self.FIFO, creating=True, current=values
                )
            )
            values.update(update)
            if _resolver is None:
                _resolver = {dead_letter_queue.arn: dead_letter_queue}.get
            if _lock is None:
                _lock = dead_letter_queue._lock
        self._resolver: Callable[[str], _BaseQueue | None] = (
            _resolver if _resolver is not None else _no_queue
        )
        self._values = values
        self._lock: threading.RLock = _lock if _lock is not None else threading.RLock()
        self._rng = random if random is not None else _random.Random(os.urandom(16))
        # The handle tag and MAC key: 256 unguessable bits from os.urandom (or
        # from a seeded ``random``, reproducible and so guessable: for tests).
        seed = random.randbytes(32) if random is not None else os.urandom(32)
        self._receipts_seed = seed  # kept by a durable broker (_durable.py)
        self._receipts = Receipts(seed, self.arn)
        self._tags: dict[str, str] = {}
        self._last_now = 0
        #: The next moment after ``now`` a move task acts (a long poll wakes then).
        self._next_tick: Callable[[int], int | None] | None = None
        self._last_purge: int | None = None
        #: Dead-letter target and threshold, resolved by the owner (Broker).
        self._max_receive_count = 0
        self._deleted = False
        self._closed = False
        self._apply_config()
        self._init_lifecycle(self._ORDERING)
        _deadletter.check_redrive_policy(self, update)
        self._apply_update(update)
        now = self._now_us()
        self._created = now // US
        self._modified = now // US

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    def __len__(self) -> int:
        """Number of stored messages (visible, in flight and delayed). O(k log n)."""
        with self._lock:
            self._advance(self._now_us())
            return len(self._records)

    # -- shutdown ------------------------------------------------------------

    def close(self) -> None:
        """Close the queue: every blocked long poll returns ``[]`` at once, and
        every later call raises :class:`~sqsqueue.errors.ServiceClosed` (a
        ServiceUnavailable) instead of blocking. Idempotent; safe from any thread.

        Runtime complexity: O(w) for w blocked long polls.
        """
        with self._lock:
            self._closed = True
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.wake()

    # closed, __enter__ and __exit__ as Broker has them: three lines each, not worth a base.
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (directly or by the broker)."""
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- send (``_send.py``) --------------------------------------------------

    @abc.abstractmethod
    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]:
        """Queue-type rules for delay, MessageGroupId and MessageDeduplicationId.
        In a batch entry, an error that fails the whole request is raised
        wrapped in :class:`~sqsqueue._batches.FailsWholeBatch`."""

    @abc.abstractmethod
    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        """Store a draft record (under the lock) and say what was stored."""

    def _commit_all(
        self, prepared: Sequence[Prepared], now: int, sender_id: str
    ) -> list[SendResult]:
        """:meth:`_commit` each validated send, in order (a send batch)."""
        commit = self._commit
        return [commit(rec, delay, now, sender_id) for rec, delay in prepared]

    #: SendMessage: the function of ``_send`` is the method itself, its first
    #: argument the queue (the single send is the hottest path: no call between).
    send = _send.send

    def send_batch(
        self,
        entries: Iterable[SendEntry | str | Mapping[str, Any]],
        *,
        sender_id: str | None = None,
        principal: str | None = None,
    ) -> BatchResult:
        """Send up to 10 messages (SendMessageBatch), reporting each entry.

        Entries are :class:`SendEntry`, plain bodies (ids ``"0"``, ``"1"``, ...) or
        boto3-shaped dicts. Request-level problems (no entries, more than 10,
        bad or repeated ids, more than 1 MiB in all) raise and send nothing;
        an invalid entry is reported in ``failed`` and the others are sent.

        Runtime complexity: O(k log n) for k entries.
        """
        return _send.send_batch(self, entries, sender_id, principal)

    # -- receive (``_receive.py``) ----------------------------------------------
    #
    # The four entries repeat ReceiveMessage's parameters on purpose (duplicates
    # lists them): two public signatures and the adapters' positional one; each
    # plans the request once (``_receive.plan``) and hands on only the plan.

    def receive(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        attribute_names: Sequence[str] = ALL,
        message_attribute_names: Sequence[str] = ALL,
        receive_request_attempt_id: str | None = None,
        principal: str | None = None,
    ) -> list[Message]:
        """Receive up to ``max_messages`` (1..10) messages (ReceiveMessage).

        ``wait_time_seconds`` (0..20; the queue's ReceiveMessageWaitTimeSeconds
        when None) makes it a long poll: it blocks until at least one message is
        receivable (a send, or a delay or visibility timeout ending during the
        wait) and returns at once with what is there, or returns ``[]`` at the
        deadline. ``attribute_names`` and ``message_attribute_names`` choose the
        system and user attributes returned (default: all); see AWS's rules.

        Runtime complexity: O(log n + k log n) for k messages returned; a long
        poll repeats that once per wake-up.
        """
        plan = _receive.plan(
            self,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )
        return _receive.receive(self, message_views, plan)

    async def receive_async(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        attribute_names: Sequence[str] = ALL,
        message_attribute_names: Sequence[str] = ALL,
        receive_request_attempt_id: str | None = None,
        principal: str | None = None,
    ) -> list[Message]:
        """:meth:`receive` for asyncio: a long poll suspends the task, never the loop.

        Runtime complexity: as :meth:`receive`.
        """
        plan = _receive.plan(
            self,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )
        return await _receive.receive_async(self, message_views, plan)

    def _receive_as(
        self,
        views: Views[T],
        max_messages: object,
        visibility_timeout: object,
        wait_time_seconds: object,
        attribute_names: object,
        message_attribute_names: object,
        receive_request_attempt_id: object,
        principal: str | None,
    ) -> list[T]:
        """:meth:`receive` (its arguments, in its order) answering with what
        ``views`` makes of the delivered records: an adapter that writes its
        own answer from them (``sqsqueue.aws``) skips the Message views.
        Every check, transition, count and error is :meth:`receive`'s."""
        plan = _receive.plan(
            self,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )
        return _receive.receive(self, views, plan)

    async def _receive_as_async(
        self,
        views: Views[T],
        max_messages: object,
        visibility_timeout: object,
        wait_time_seconds: object,
        attribute_names: object,
        message_attribute_names: object,
        receive_request_attempt_id: object,
        principal: str | None,
    ) -> list[T]:
        """:meth:`receive_async` answering with what ``views`` makes of the
        delivered records (see :meth:`_receive_as`)."""
        plan = _receive.plan(
            self,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )
        return await _receive.receive_async(self, views, plan)

    # -- delete and change visibility (``_acknowledge.py``) -----------------------

    #: DeleteMessage: the function of ``_acknowledge`` is the method itself, as
    #: for :meth:`send`.
    delete = _acknowledge.delete

    def change_visibility(
        self, receipt_handle: str, visibility_timeout: int, *, principal: str | None = None
    ) -> None:
        """Set a received message's visibility timeout, counted from now
        (ChangeMessageVisibility). ``0`` makes it receivable at once.

        The new timeout applies to this receipt only; the 12-hour budget of the
        receive that issued it is never exceeded (section 8).
        Runtime complexity: O(log n).
        """
        _acknowledge.change_visibility(self, receipt_handle, visibility_timeout, principal)

    def delete_batch(
        self,
        entries: Iterable[DeleteEntry | str | Mapping[str, Any]],
        *,
        principal: str | None = None,
    ) -> BatchResult:
        """Delete up to 10 messages (DeleteMessageBatch), reporting each entry.

        Entries are :class:`DeleteEntry`, plain receipt handles (ids ``"0"``,
        ``"1"``, ...) or boto3-shaped dicts. Runtime complexity: O(k log n).
        """
        return _acknowledge.delete_batch(self, entries, principal)

    def change_visibility_batch(
        self,
        entries: Iterable[ChangeVisibilityEntry | Mapping[str, Any]],
        *,
        principal: str | None = None,
    ) -> BatchResult:
        """Change up to 10 visibility timeouts (ChangeMessageVisibilityBatch).

        Runtime complexity: O(k log n).
        """
        return _acknowledge.change_visibility_batch(self, entries, principal)

    # -- purge, remove, retire and restore (``_state.py``) --------------------------

    def purge(self, *, principal: str | None = None) -> None:
        """Delete every message, in flight and delayed included (PurgeQueue).

        Allowed once per 60 seconds (unless the broker's leniency
        ``purge-interval`` is on: then a purge within the 60 seconds purges
        too, is counted, and the 60 seconds still run from the last purge AWS
        would have accepted). Purging a FIFO queue also clears its
        deduplication history. Runtime complexity: O(1) (the old messages are
        freed afterwards).
        """
        _state.purge(self, principal)

    def remove(self, position: int, message_id: str, *, principal: str | None = None) -> bool:
        """Delete the stored message at ``position`` (``MessageInfo.position``,
        from :meth:`browse`) whatever its state, without a receipt handle: for
        consoles and tests. ``message_id`` must be that message's, so a stale
        page deletes nothing else. Reported and counted as a DeleteMessage.
        Returns False when no such message is stored. O(log n)."""
        return _state.remove(self, position, message_id, principal)

    def _retire(self, now: int) -> None:
        """The queue was deleted (DeleteQueue): see ``_state.retire``."""
        _state.retire(self, now)

    def _check(self) -> None:
        """Assert every internal invariant, changing nothing; for tests. O(n)."""
        with self._lock:
            self._check_indexes()

    # The store writes and restores a queue through these methods only (with
    # ``Lifecycle._add_observer``, the queue's ``name`` and ``_deleted``, and
    # FifoQueue's windows): ``_durable.StoredQueue`` lists them.

    def _stored_state(self) -> QueueState:
        """The queue's own state, for a store to write (``_state.stored_state``)."""
        return _state.stored_state(self)

    def _restore_state(self, state: QueueState, records: Iterable[_Record]) -> None:
        """Become the queue a store kept (``_state.restore_state``)."""
        _state.restore_state(self, state, records)


def _no_queue(arn: str) -> Any:
    return None
