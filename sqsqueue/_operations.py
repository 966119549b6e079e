"""Queue operations: what a caller can do with one queue, on top of the lifecycle.

:class:`_BaseQueue` is the base of :class:`~sqsqueue.Queue` and
:class:`~sqsqueue.FifoQueue`: construction checks, authorization, the send,
receive, delete and change-visibility operations with their batches, purge and
close. Each operation validates everything first, then takes the queue's lock,
reads the clock once (``_begin``: an exception from the clock changes nothing),
applies the deadlines that passed and calls the lifecycle's transitions
(``_lifecycle.py``). The queue type adds its send rules (``_check_ids``,
``_commit``) and picks its :class:`~sqsqueue._lifecycle.Ordering`.

Locking: one lock per queue (a :class:`~sqsqueue.Broker` shares one among its
queues so that dead-letter moves are atomic). Long polls wait outside the lock
(``_polling.py``).
"""

from __future__ import annotations

import abc
import asyncio
import itertools
import os
import random as _random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, NotRequired, Protocol, Self, TypedDict, TypeVar, Unpack

from sqsqueue import _attributes, _batches, _deadletter, _faults, _lenient, _limits, _validate
from sqsqueue._batches import FailsWholeBatch
from sqsqueue._clock import Clock, SystemClock
from sqsqueue._faults import Faults
from sqsqueue._lifecycle import Ordering
from sqsqueue._limits import (
    BATCH_PAYLOAD_MAX,
    MAX_MESSAGES_MAX,
    MAX_RECEIVE_COUNT_DEFAULT,
    PURGE_INTERVAL,
    US,
)
from sqsqueue._message import (
    SEQ_BITS,
    SEQ_MASK,
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    Message,
    SendEntry,
    SendResult,
    _Record,
    draft,
    key_time,
    md5_of_attributes,
)
from sqsqueue._polling import Poll, long_poll, run_async, run_sync
from sqsqueue._receipts import Receipts
from sqsqueue._settings import ALL, QueueSettings, attribute_map, names_of
from sqsqueue._validate import ASCII_KEEP, show
from sqsqueue._views import message_views
from sqsqueue.errors import (
    BatchRequestTooLong,
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameterValue,
    OverLimit,
    PurgeQueueInProgress,
    SQSError,
)

#: ``Message(...)`` and ``SendResult(...)`` without the named tuple's
#: Python-level ``__new__``: half the cost, and one is built for every message
#: sent or received. The tuple must list every field, in order.
new_send_result: Callable[[tuple[Any, ...]], SendResult] = partial(tuple.__new__, SendResult)
#: Nones for the optional fields of the SendResults of plain bodies.
_NONES = itertools.repeat(None)
#: A validated send: the draft record and its DelaySeconds (None: the queue's).
Prepared = tuple[_Record, int | None]
T = TypeVar("T")


class Attempts(Protocol):
    """What a receive needs of the FIFO queue's ReceiveRequestAttemptIds."""

    def remember(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None: ...

    def replay(
        self, attempt_id: str, now: int, visibility_us: int
    ) -> tuple[list[_Record], list[str]] | None: ...


#: What a receive makes of the records it delivered and their receipt
#: handles, under the queue's lock, given the system and message attribute
#: names asked for: the :class:`Message` views (``_views.message_views``), or
#: an adapter's answer written from the records (``sqsqueue.aws._wire``). It
#: must return an empty list exactly when there are no records: a long poll
#: waits on, and NumberOfEmptyReceives counts, an empty answer.
Views = Callable[[list[_Record], list[str], Sequence[str], Sequence[str]], list[T]]


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


class QueueState(TypedDict):
    """A queue's own state, as a durable store keeps it (``_durable.py``):
    everything but its messages and its FIFO windows."""

    values: dict[str, object]
    tags: dict[str, str]
    created: int
    modified: int
    last_purge: int | None
    seq: int
    last_now: int
    #: The secret its receipt handles' key is derived from.
    seed: bytes
    #: FIFO queues: the DeduplicationScope they were created with.
    dedup_by_group: NotRequired[bool]


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

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (directly or by the broker)."""
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- send ----------------------------------------------------------------

    def _prepare(
        self,
        body: object,
        delay_seconds: object,
        message_attributes: object,
        trace_header: object,
        group_id: object,
        deduplication_id: object,
        *,
        batch: bool,
    ) -> Prepared:
        """Validate one message (no state read or changed except settings)."""
        text, size = _validate.body(body)
        attributes_md5 = None
        if message_attributes is None:
            attributes = None
        else:
            attributes, attributes_size = _validate.message_attributes(message_attributes)
            size += attributes_size
            if attributes:
                attributes_md5 = md5_of_attributes(attributes)
        if size > self._max_size:
            raise _validate.too_big(self._max_size, batch=batch)
        delay = None if delay_seconds is None else _validate.delay_seconds(delay_seconds)
        trace = None if trace_header is None else _validate.trace_header(trace_header)
        if group_id is None and deduplication_id is None and not self.FIFO:
            group = dedup = None  # what a standard queue's _check_ids answers, uncalled
        else:
            group, dedup = self._check_ids(delay, group_id, deduplication_id, batch=batch)
        return draft(text, size, attributes, attributes_md5, trace, group, dedup), delay

    @abc.abstractmethod
    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]:
        """Queue-type rules for delay, MessageGroupId and MessageDeduplicationId.
        In a batch entry, an error that fails the whole request is raised
        wrapped in :class:`FailsWholeBatch`."""

    @abc.abstractmethod
    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        """Store a draft record (under the lock) and say what was stored."""

    def _commit_all(
        self, prepared: Sequence[Prepared], now: int, sender_id: str
    ) -> list[SendResult]:
        """:meth:`_commit` each validated send, in order (a send batch)."""
        commit = self._commit
        return [commit(rec, delay, now, sender_id) for rec, delay in prepared]

    def _send_prepared(
        self, prepared: Sequence[Prepared], sender_id: str | None
    ) -> list[SendResult]:
        sender = sender_id if sender_id is not None else self._account_id
        with self._lock:
            now = self._begin()
            results = self._commit_all(prepared, now, sender)
            if self._waiters:
                self._notify(len(results))
        return results

    def send(
        self,
        body: str,
        *,
        delay_seconds: int | None = None,
        message_attributes: Mapping[str, object] | None = None,
        trace_header: str | Mapping[str, Any] | None = None,
        group_id: str | None = None,
        deduplication_id: str | None = None,
        sender_id: str | None = None,
        principal: str | None = None,
    ) -> SendResult:
        """Send one message (SendMessage).

        ``message_attributes`` maps names to :class:`MessageAttributeValue`,
        boto3-shaped dicts (``{"DataType": "String", "StringValue": "x"}``) or
        plain values (``str`` -> String, ``bytes`` -> Binary, ``int``/``float``/
        ``Decimal`` -> Number). ``trace_header`` is the ``AWSTraceHeader`` system
        attribute. ``group_id`` on a standard queue makes it a fair queue.

        Runtime complexity: O(log n).
        """
        if principal is not None:
            sender_id = self._authorize(principal, "SendMessage", sender_id)
        if (
            type(body) is str
            and body
            and delay_seconds is None
            and message_attributes is None
            and trace_header is None
            and group_id is None
            and deduplication_id is None
            and not self.FIFO
            and body.isascii()
            and (encoded := body.encode("ascii")).translate(ASCII_KEEP) == encoded  # ascii_allowed
            and len(body) <= self._max_size
        ):
            # _prepare's answer for a plain ASCII body on a standard queue,
            # without its calls (as send_batch does for a batch of them), and
            # the standard queue's _commit of it, its record built at once.
            sender = sender_id if sender_id is not None else self._account_id
            lock = self._lock
            # `with self._lock` in two calls: a with statement also looks up __enter__
            # and __exit__ (twice the cost). A DurableLock's acquire and release are its
            # __enter__ and __exit__.
            lock.acquire()
            try:
                now = self._begin()
                message_id = self._admit_body(body, now, sender)
                if self._waiters:
                    self._notify(1)
            finally:
                lock.release()
            return new_send_result((message_id, body, None, None, None))
        else:
            rec, delay = self._prepare(
                body,
                delay_seconds,
                message_attributes,
                trace_header,
                group_id,
                deduplication_id,
                batch=False,
            )
        # What _send_prepared does for a batch, for one message: this is the
        # single-send hot path, and the batch's tuple, list and comprehension
        # cost about 5% of a send+receive+delete cycle (RESULTS.md §2).
        sender = sender_id if sender_id is not None else self._account_id
        with self._lock:
            now = self._begin()
            result = self._commit(rec, delay, now, sender)
            if self._waiters:
                self._notify(1)
        return result

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
        if principal is not None:
            sender_id = self._authorize(principal, "SendMessageBatch", sender_id)
        entry_ids, send_entries = _batches.send_entries_of(entries)
        bodies = None if self.FIFO else _batches.plain_bodies(send_entries, self._max_size)
        if bodies is not None:
            # The common batch: every entry valid, the standard queue's _commit
            # of each, their records built at once (_admit_bodies).
            total = sum(map(len, bodies))  # ASCII: a body's size is its length
            if total > BATCH_PAYLOAD_MAX:
                raise BatchRequestTooLong(
                    f"Batch requests cannot be longer than {BATCH_PAYLOAD_MAX} bytes. "
                    f"You have sent {total} bytes."
                )
            sender = sender_id if sender_id is not None else self._account_id
            with self._lock:
                now = self._begin()
                message_ids = self._admit_bodies(bodies, now, sender)
                if self._waiters:
                    self._notify(len(message_ids))
            # SendResult(message_id, body), built in C (the Nones are endless).
            fields = zip(message_ids, bodies, _NONES, _NONES, _NONES, strict=False)
            return BatchResult(dict(zip(entry_ids, map(new_send_result, fields), strict=True)))
        prepared: dict[str, Prepared] = {}
        failed: list[BatchFailure] = []
        total = 0
        for entry in send_entries:
            try:
                p = self._prepare(
                    entry.body,
                    entry.delay_seconds,
                    entry.message_attributes,
                    entry.trace_header,
                    entry.group_id,
                    entry.deduplication_id,
                    batch=True,
                )
            except FailsWholeBatch as whole:
                raise whole.error from None
            except SQSError as err:
                failed.append(BatchFailure(entry.id, err.code, err.message, err.sender_fault))
                total += _batches.rough_size(entry)
                continue
            prepared[entry.id] = p
            total += p[0].size
        if total > BATCH_PAYLOAD_MAX:
            raise BatchRequestTooLong(
                f"Batch requests cannot be longer than {BATCH_PAYLOAD_MAX} bytes. "
                f"You have sent {total} bytes."
            )
        results = self._send_prepared(list(prepared.values()), sender_id)
        successful: dict[str, SendResult | None] = dict(zip(prepared, results, strict=True))
        return BatchResult(successful, tuple(failed))

    # -- receive -------------------------------------------------------------

    def _receive_now(
        self,
        views: Views[T],
        now: int,
        limit: int,
        visibility_us: int,
        long_poll: bool,
        attempt_id: str | None,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[T]:
        """One non-blocking receive attempt under the lock."""
        self._check_alive()
        self._advance(now)
        return self._receive_begun(
            views,
            now,
            limit,
            visibility_us,
            long_poll,
            attempt_id,
            attribute_names,
            message_attribute_names,
        )

    def _receive_begun(
        self,
        views: Views[T],
        now: int,
        limit: int,
        visibility_us: int,
        long_poll: bool,
        attempt_id: str | None,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[T]:
        """:meth:`_receive_now` once the queue was found open and the deadlines
        up to ``now`` were applied (``_begin``); ``views`` makes the answer."""
        if attempt_id is not None:
            assert self._attempts is not None  # attempt ids are kept on FIFO queues only
            replay = self._attempts.replay(attempt_id, now, visibility_us)
            if replay is not None:
                if self._tally is not None:
                    self._tally.received += len(replay[0])
                return views(*replay, attribute_names, message_attribute_names)
        if not self._records:
            return []
        # In flight <= lane + received: only a receive that could cross the limit
        # needs the exact count (section 4).
        # The limit is read from its module at each receive: tests lower it.
        in_flight_max = _limits.IN_FLIGHT_MAX
        if len(self._lane) + self._received._len + limit > in_flight_max:  # SortedList length
            room = in_flight_max - self._in_flight(now)
            if room <= 0:
                return self._at_in_flight_limit(long_poll)
            limit = min(limit, room)
        target = _deadletter.redrive_target(self) if self._max_receive_count else None
        threshold = self._max_receive_count if target is not None else 0
        deliver, dead = self._ordering.select(now, limit, threshold)
        if self._faults is not None:
            deliver = _faults.partial_poll(
                self._faults, self._fault_rng, deliver, long_poll, len(self._records)
            )
        if dead:
            assert target is not None
            _deadletter.dead_letter(self, dead, target, now)
        handles = self._deliver_all(deliver, now, visibility_us)
        if attempt_id is not None:
            assert self._attempts is not None
            self._attempts.remember(attempt_id, now, deliver, handles)
        return views(deliver, handles, attribute_names, message_attribute_names)

    def _at_in_flight_limit(self, long_poll: bool) -> list[T]:
        """Standard queues: short polls raise OverLimit, long polls find nothing.
        FIFO queues: no error at the in-flight limit (section 4)."""
        if long_poll or self.FIFO:
            return []
        # Message text UNCONFIRMED (section 4 gives the code only).
        raise OverLimit(
            "The maximum number of in flight messages is reached: "
            f"{_limits.IN_FLIGHT_MAX} messages are in flight."
        )

    def _receive_args(
        self,
        principal: str | None,
        max_messages: object,
        visibility_timeout: object,
        wait_time_seconds: object,
        attribute_names: object,
        message_attribute_names: object,
        receive_request_attempt_id: object,
    ) -> tuple[int, int | None, int, tuple[str, ...], tuple[str, ...], str | None]:
        """Check a ReceiveMessage's caller and parameters: (limit, its visibility
        timeout or None, wait, attribute names, message attribute names, attempt id)."""
        if principal is not None:
            self._authorize(principal, "ReceiveMessage")
        limit = _validate.max_messages(max_messages)
        vt = (
            None if visibility_timeout is None else _validate.visibility_timeout(visibility_timeout)
        )
        wait = self._wait_s if wait_time_seconds is None else _validate.wait_time(wait_time_seconds)
        names = names_of("AttributeNames", attribute_names)
        # Unknown system attribute names are ignored, as unknown message
        # attribute names are (section 2.1; UNCONFIRMED for system names).
        user_names = names_of("MessageAttributeNames", message_attribute_names)
        attempt = self._check_attempt_id(receive_request_attempt_id)
        return limit, vt, wait, names, user_names, attempt

    def _check_attempt_id(self, value: object) -> str | None:
        if value is None:
            return None
        # ReceiveRequestAttemptId applies to FIFO queues only [BM]; a standard
        # queue ignores it (UNCONFIRMED) after validating its format.
        attempt = _validate.fifo_id("ReceiveRequestAttemptId", value)
        return attempt if self.FIFO else None

    def _long_poll(
        self,
        views: Views[T],
        loop: asyncio.AbstractEventLoop | None,
        limit: int,
        vt: int | None,
        wait: int,
        names: Sequence[str],
        user_names: Sequence[str],
        attempt: str | None,
    ) -> Poll[T]:
        """A receive that waits up to ``wait`` seconds (``_polling.long_poll``),
        for the thread's driver (``loop`` None) or asyncio's."""
        waits = wait > 0

        def receive_at(now: int) -> list[T]:
            vis = self._visibility_us if vt is None else vt * US
            return self._receive_now(views, now, limit, vis, waits, attempt, names, user_names)

        return long_poll(self, loop, receive_at, wait)

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
        return self._receive_as(
            message_views,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )

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
        limit, vt, wait, names, user_names, attempt = self._receive_plan(
            principal,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
        )
        if wait == 0:
            return self._short_poll(views, limit, vt, names, user_names, attempt)
        polling = self._long_poll(views, None, limit, vt, wait, names, user_names, attempt)
        got = run_sync(polling, self._clock)
        if not got:
            self._count_empty_receive()
        return got

    def _receive_plan(
        self,
        principal: str | None,
        max_messages: object,
        visibility_timeout: object,
        wait_time_seconds: object,
        attribute_names: object,
        message_attribute_names: object,
        receive_request_attempt_id: object,
    ) -> tuple[int, int | None, int, Sequence[str], Sequence[str], str | None]:
        """:meth:`_receive_args`, whose answer for the defaults (the most
        common call) is given without its calls."""
        if (
            type(max_messages) is int
            and 0 < max_messages <= MAX_MESSAGES_MAX
            and visibility_timeout is None
            and wait_time_seconds is None
            and attribute_names is ALL
            and message_attribute_names is ALL
            and receive_request_attempt_id is None
            and principal is None
        ):
            return max_messages, None, self._wait_s, ALL, ALL, None
        return self._receive_args(
            principal,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
        )

    def _short_poll(
        self,
        views: Views[T],
        limit: int,
        vt: int | None,
        names: Sequence[str],
        user_names: Sequence[str],
        attempt: str | None,
    ) -> list[T]:
        """A receive that never waits (WaitTimeSeconds 0): what a long poll's
        first attempt does, without the poll's generator and driver."""
        lock = self._lock
        # `with self._lock` in two calls: a with statement also looks up __enter__
        # and __exit__ (twice the cost). A DurableLock's acquire and release are its
        # __enter__ and __exit__.
        lock.acquire()
        try:
            now = self._begin()
            vis = self._visibility_us if vt is None else vt * US
            got = self._receive_begun(views, now, limit, vis, False, attempt, names, user_names)
            if not got and self._tally is not None:
                self._tally.empty_receives += 1  # NumberOfEmptyReceives: one per call
            return got
        finally:
            lock.release()

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
        return await self._receive_as_async(
            message_views,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
            principal,
        )

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
        limit, vt, wait, names, user_names, attempt = self._receive_plan(
            principal,
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
        )
        if wait == 0:
            return self._short_poll(views, limit, vt, names, user_names, attempt)
        loop = asyncio.get_running_loop()
        polling = self._long_poll(views, loop, limit, vt, wait, names, user_names, attempt)
        got = await run_async(polling, self._clock)
        if not got:
            self._count_empty_receive()
        return got

    def _count_empty_receive(self) -> None:
        """NumberOfEmptyReceives: a ReceiveMessage call that returned nothing."""
        with self._lock:
            if self._tally is not None:
                self._tally.empty_receives += 1

    # -- delete and change visibility ----------------------------------------

    def _expired_handle(self, handle: str) -> SQSError:
        return InvalidParameterValue(
            f"Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt "
            "handle has expired."
        )

    def _acting(self, handle: object, now: int) -> tuple[_Record | None, bool]:
        """The record a handle acts on (None if the message is gone) and whether
        the handle may still act: on a standard queue any handle ever issued for
        it; on a FIFO queue only the latest, while in flight: "DeleteMessage
        operations will fail if the request is received outside of the
        visibility timeout window" (section 8). Refuses forged handles."""
        receipts = self._receipts
        seq, receipt_no, token, version = receipts.parse(handle)
        rec = receipts.verify(handle, self._records.get(seq), receipt_no, seq, token, version)  # type: ignore[arg-type]
        if rec is None or not self._ordering.LATEST_RECEIPT_ONLY:
            return rec, True
        return rec, receipt_no == rec.receipt_no and key_time(rec.vkey) > now

    def _delete_one(self, handle: object, now: int) -> None:
        rec = self._receipts.latest(handle, self._records)
        if (
            rec is not None
            and self._faults is None
            and (not self._ordering.LATEST_RECEIPT_ONLY or rec.vkey >> SEQ_BITS > now)
        ):
            # The common case: the latest receipt of a stored message, which
            # may act (a FIFO one while in flight; key_time, inlined).
            if self._tally is not None:
                self._tally.deleted += 1
            self._drop(rec, "deleted", now)
            return
        # _acting, inlined: every other handle, refused or not.
        receipts = self._receipts
        seq, receipt_no, token, version = receipts.parse(handle)
        rec = receipts.verify(handle, self._records.get(seq), receipt_no, seq, token, version)  # type: ignore[arg-type]
        tally = self._tally
        if rec is None:
            # Already deleted: DeleteMessage is idempotent (section 8), and
            # CloudWatch counts "every successful deletion operation that uses
            # a valid receipt handle, including duplicate deletions" (DG:
            # sqs-available-cloudwatch-metrics).
            if tally is not None:
                tally.deleted += 1
            return
        if self._ordering.LATEST_RECEIPT_ONLY and not (
            receipt_no == rec.receipt_no and key_time(rec.vkey) > now
        ):
            raise self._expired_handle(handle)  # type: ignore[arg-type]
        if tally is not None:
            tally.deleted += 1
        if self._faults is not None and _faults.lose_delete(self._faults, self._fault_rng):
            return  # fault emulation: acknowledged, but the message survives
        # The operation's own ``now``: a history stamp must not read the clock
        # again halfway through a batch (a failing clock would leave it half done).
        self._drop(rec, "deleted", now)

    def delete(self, receipt_handle: str, *, principal: str | None = None) -> None:
        """Delete a received message (DeleteMessage).

        Standard queues accept any handle ever issued for the message, even
        after its visibility timeout ended; deleting a deleted message succeeds
        (section 8). Runtime complexity: O(log n).
        """
        if principal is not None:
            self._authorize(principal, "DeleteMessage")
        lock = self._lock
        # `with self._lock` in two calls: a with statement also looks up __enter__
        # and __exit__ (twice the cost). A DurableLock's acquire and release are its
        # __enter__ and __exit__.
        lock.acquire()
        try:
            now = self._begin()
            if (
                self._faults is not None
                or self._ordering.LATEST_RECEIPT_ONLY
                or not self._delete_latest(receipt_handle, now)
            ):
                # Any other handle, or a FIFO queue's, or with faults emulated.
                self._delete_one(receipt_handle, now)
            if self._waiters:
                self._notify()
        finally:
            lock.release()

    def _change_one(self, handle: object, timeout: object, now: int) -> None:
        self._receipts.parse(handle)
        vt = _validate.visibility_timeout(timeout)
        rec, may_act = self._acting(handle, now)
        if rec is None or not may_act:
            raise InvalidParameterValue(
                f"Value {handle} for parameter ReceiptHandle is invalid. Reason: Message "
                "does not exist or is not available for visibility timeout change."
            )
        due = now + vt * US
        if due > rec.receive_cap:
            # "Extending the visibility timeout does not reset the 12 hour
            # maximum"; no clamping (section 4). Message text UNCONFIRMED.
            raise InvalidParameterValue(
                f"Value {vt} for parameter VisibilityTimeout is invalid. Reason: Total "
                "VisibilityTimeout for the message is beyond the limit [43200 seconds]."
            )
        self._rehide(rec, due, now)

    def change_visibility(
        self, receipt_handle: str, visibility_timeout: int, *, principal: str | None = None
    ) -> None:
        """Set a received message's visibility timeout, counted from now
        (ChangeMessageVisibility). ``0`` makes it receivable at once.

        The new timeout applies to this receipt only; the 12-hour budget of the
        receive that issued it is never exceeded (section 8).
        Runtime complexity: O(log n).
        """
        if principal is not None:
            self._authorize(principal, "ChangeMessageVisibility")
        with self._lock:
            now = self._begin()
            self._change_one(receipt_handle, visibility_timeout, now)
            self._notify()

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
        if principal is not None:
            self._authorize(principal, "DeleteMessageBatch")
        entry_ids, handles = _batches.delete_entries_of(entries)
        with self._lock:
            now = self._begin()
            result = self._delete_all(entry_ids, handles, now)
            if self._waiters:
                self._notify()
        return result

    def _delete_all(self, entry_ids: list[str], handles: list[Any], now: int) -> BatchResult:
        """``_batches.each(items, self._delete_one, now)``, in one pass: the
        handles are checked in one call, and an entry holding the latest receipt
        of a stored message is deleted without the calls of ``_delete_one``.
        Every other entry goes through ``_delete_one`` at its turn, so the
        entries act in order, as each would alone."""
        if self._faults is not None or self._ordering.LATEST_RECEIPT_ONLY:
            return _batches.each(
                list(zip(entry_ids, zip(handles), strict=True)), self._delete_one, now
            )
        records = self._records
        found = self._receipts.latest_all(handles, records)
        tally = self._tally
        if None not in found:
            # The common batch: every entry the latest receipt of a stored
            # message (one named twice is deleted once, and the second entry
            # succeeds and counts as a duplicate deletion does, see _delete_one).
            if tally is not None:
                tally.deleted += len(found)
            self._drop_all(found, "deleted", now)  # type: ignore[arg-type]
            return BatchResult(dict.fromkeys(entry_ids))
        drop = self._drop
        successful: dict[str, SendResult | None] = {}
        failed: list[BatchFailure] = []
        for entry_id, handle, rec in zip(entry_ids, handles, found, strict=True):
            # Still stored: an earlier entry of the batch may have deleted it.
            if rec is not None and records.get(rec.skey & SEQ_MASK) is rec:  # key_seq, inlined
                if tally is not None:
                    tally.deleted += 1
                drop(rec, "deleted", now)
                successful[entry_id] = None
                continue
            try:
                self._delete_one(handle, now)
            except SQSError as err:
                failed.append(BatchFailure(entry_id, err.code, err.message, err.sender_fault))
            else:
                successful[entry_id] = None
        return BatchResult(successful, tuple(failed))

    def change_visibility_batch(
        self,
        entries: Iterable[ChangeVisibilityEntry | Mapping[str, Any]],
        *,
        principal: str | None = None,
    ) -> BatchResult:
        """Change up to 10 visibility timeouts (ChangeMessageVisibilityBatch).

        Runtime complexity: O(k log n).
        """
        if principal is not None:
            self._authorize(principal, "ChangeMessageVisibilityBatch")
        items = _batches.entries_of(
            entries, "ChangeMessageVisibilityBatchRequestEntry", _batches.coerce_change
        )
        with self._lock:
            now = self._begin()
            result = _batches.each(items, self._change_one, now)
            self._notify()
        return result

    # -- purge and invariants ------------------------------------------------

    def purge(self, *, principal: str | None = None) -> None:
        """Delete every message, in flight and delayed included (PurgeQueue).

        Allowed once per 60 seconds (unless the broker's leniency
        ``purge-interval`` is on: then a purge within the 60 seconds purges
        too, is counted, and the 60 seconds still run from the last purge AWS
        would have accepted). Purging a FIFO queue also clears its
        deduplication history. Runtime complexity: O(1) (the old messages are
        freed afterwards).
        """
        self._authorize(principal, "PurgeQueue")
        relaxed = False
        with self._lock:
            self._check_alive()
            now = self._now_us()
            if self._last_purge is not None and now < self._last_purge + PURGE_INTERVAL * US:
                if not self._leniency.allows(_lenient.PURGE_INTERVAL):
                    raise PurgeQueueInProgress(
                        f"Only one PurgeQueue operation on {self._name} is allowed every 60 "
                        "seconds."
                    )
                relaxed = True
            # What was due first happens first (a move task's moves by now).
            self._advance(now)
            if not relaxed:
                self._last_purge = now
            self._purge(now, "purged")
            for window in self._windows:
                window.clear()
            self._queue_changed("purged")
            self._notify()
        if relaxed:
            self._leniency.count(_lenient.PURGE_INTERVAL)

    def remove(self, position: int, message_id: str, *, principal: str | None = None) -> bool:
        """Delete the stored message at ``position`` (``MessageInfo.position``,
        from :meth:`browse`) whatever its state, without a receipt handle: for
        consoles and tests. ``message_id`` must be that message's, so a stale
        page deletes nothing else. Reported and counted as a DeleteMessage.
        Returns False when no such message is stored. O(log n)."""
        self._authorize(principal, "DeleteMessage")
        if isinstance(position, bool) or not isinstance(position, int):
            raise InvalidParameterValue(
                f"Value {show(position)} for parameter position is invalid. Reason: must be "
                "an integer."
            )
        with self._lock:
            now = self._begin()
            rec = self._records.get(position)
            if rec is None or rec.message_id != message_id:
                return False
            if self._tally is not None:
                self._tally.deleted += 1
            self._drop(rec, "deleted", now)
            self._notify()
            return True

    def _retire(self, now: int) -> None:
        """The queue was deleted (DeleteQueue): its messages go at once, as
        ``queue_deleted`` reports, its long polls wake and every later call
        raises QueueDoesNotExist. Under the broker's lock."""
        self._deleted = True
        self._purge(now, "queue_deleted")
        for window in self._windows:
            window.clear()
        self._notify()

    def _check(self) -> None:
        """Assert every internal invariant, changing nothing; for tests. O(n)."""
        with self._lock:
            self._check_indexes()

    # -- what a durable store uses (``_durable.py``) ----------------------------
    #
    # The store writes and restores a queue through these methods only (with
    # ``Lifecycle._add_observer``, the queue's ``name`` and ``_deleted``, and
    # FifoQueue's windows): ``_durable.StoredQueue`` lists them.

    def _stored_state(self) -> QueueState:
        """The queue's own state, for a store to write. O(1): it shares the
        queue's dicts, so it is written before the lock is released."""
        return {
            "values": self._values,
            "tags": self._tags,
            "created": self._created,
            "modified": self._modified,
            "last_purge": self._last_purge,
            "seq": self._seq,
            "last_now": self._last_now,
            "seed": self._receipts_seed,
        }

    def _restore_state(self, state: QueueState, records: Iterable[_Record]) -> None:
        """Become the queue a store kept: a queue just made (with no attributes
        given, before any use) takes ``state`` and ``records`` (in sequence
        order) back, reporting nothing: nothing changes. O(n log n)."""
        self._values = dict(state["values"])
        self._apply_config()
        self._apply_update(self._values)
        self._tags = dict(state["tags"])
        self._created = state["created"]
        self._modified = state["modified"]
        self._last_purge = state["last_purge"]
        self._last_now = state["last_now"]
        self._receipts_seed = state["seed"]
        self._receipts = Receipts(state["seed"], self.arn)
        self._restore(records, state["seq"])


def _no_queue(arn: str) -> Any:
    return None
