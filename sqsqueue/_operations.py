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
import os
import random as _random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, Self

from sqsqueue import _attributes, _batches, _deadletter, _faults, _policy, _validate
from sqsqueue import _limits as L
from sqsqueue._admin import QueueAdmin
from sqsqueue._batches import FailsWholeBatch
from sqsqueue._clock import Clock, SystemClock, Waiter
from sqsqueue._faults import Faults
from sqsqueue._lifecycle import Lifecycle, Ordering
from sqsqueue._message import (
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
from sqsqueue._polling import LongPolling, run_async, run_sync
from sqsqueue._receipts import Receipts
from sqsqueue._settings import ALL, QueueSettings, attribute_map, names_of
from sqsqueue._validate import show
from sqsqueue._views import message_view
from sqsqueue.errors import (
    BatchRequestTooLong,
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameterValue,
    OverLimit,
    PurgeQueueInProgress,
    QueueDoesNotExist,
    ServiceClosed,
    SQSError,
)

US = L.US
#: ``Message(...)`` and ``SendResult(...)`` without the named tuple's
#: Python-level ``__new__``: half the cost, and one is built for every message
#: sent or received. The tuple must list every field, in order.
new_send_result: Callable[[tuple[Any, ...]], SendResult] = partial(tuple.__new__, SendResult)
#: A validated send: the draft record and its DelaySeconds (None: the queue's).
Prepared = tuple[_Record, int | None]


class Attempts(Protocol):
    """What a receive needs of the FIFO queue's ReceiveRequestAttemptIds."""

    def remember(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None: ...

    def replay(
        self,
        attempt_id: str,
        now: int,
        visibility_us: int,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[Message] | None: ...


def _same_time(a: Clock, b: Clock) -> bool:
    """Whether two clocks tell one time: the same object, or two wall clocks."""
    return a is b or (type(a) is SystemClock and type(b) is SystemClock)


class _BaseQueue(QueueSettings, LongPolling, QueueAdmin, abc.ABC):
    """State and operations shared by :class:`Queue` and :class:`FifoQueue`."""

    FIFO: bool = False
    #: The queue type's ordering policy (``_ordering.py``).
    _ORDERING: Callable[[Lifecycle], Ordering]
    #: ReceiveRequestAttemptIds remembered for replay (FIFO queues only).
    _attempts: Attempts | None = None
    #: Fault emulation (standard queues only; see Queue.faults). Checked before
    #: the fault hooks are called, so an exact queue pays nothing for them.
    _faults: Faults | None = None

    # -- identity ------------------------------------------------------------

    def __init__(
        self,
        name: str,
        *,
        clock: Clock | None = None,
        attributes: Mapping[str, object] | None = None,
        random: _random.Random | None = None,
        region: str = "us-east-1",
        account_id: str | None = None,
        dead_letter_queue: _BaseQueue | None = None,
        max_receive_count: int | None = None,
        _lock: threading.RLock | None = None,
        _resolver: Callable[[str], _BaseQueue | None] | None = None,
        **kwargs: object,
    ) -> None:
        self._name = _validate.queue_name(name, fifo=self.FIFO)
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
        requested = attribute_map(attributes)
        for key, value in kwargs.items():
            if _attributes.canonical_name(key) is None or key in _attributes.ATTRIBUTES:
                raise InvalidAttributeName(f"Unknown Attribute {key}.")
            if value is not None:
                requested[key] = value
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
                    L.MAX_RECEIVE_COUNT_DEFAULT if max_receive_count is None else max_receive_count
                ),
            }
            if max_receive_count is not None and (
                isinstance(max_receive_count, bool) or not isinstance(max_receive_count, int)
            ):
                # An int, as every integer parameter of the Python API (issue 12
                # §5); "3" is for the RedrivePolicy JSON text, not for this keyword.
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
        self._waiters: dict[Waiter, None] = {}  # in the order they began to wait
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

    # -- operations' common steps --------------------------------------------

    def _now_us(self) -> int:
        # Queue time never runs backwards, even if a SystemClock is stepped
        # back: deadlines already issued keep their meaning.
        now = round(self._clock.now() * US)
        if now < self._last_now:
            return self._last_now
        self._last_now = now
        return now

    def _check_alive(self) -> None:
        if self._deleted:
            raise QueueDoesNotExist()
        if self._closed:
            raise ServiceClosed(f"The queue {self._name} is closed.")

    def _begin(self) -> int:
        """Start an operation, under the lock: the queue must exist and be open,
        and every deadline up to now is applied first. Returns now."""
        if self._deleted or self._closed:
            self._check_alive()
        now = self._now_us()
        self._advance(now)
        return now

    def _authorize(
        self, principal: str | None, action: str, sender_id: str | None = None
    ) -> str | None:
        """Refuse ``action`` unless ``principal`` owns the queue or a policy
        statement grants it (see ``_policy.py``). Returns the SenderId to record."""
        if principal is None:
            return sender_id
        account = _policy.caller_account(principal)
        if account != self._account_id:
            with self._lock:
                doc = self._values.get("Policy")
            if not _policy.is_allowed(doc, account, action, self.arn):  # type: ignore[arg-type]
                raise _policy.access_denied(self.url)
        return sender_id if sender_id is not None else account

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

    def _send_prepared(
        self, prepared: Sequence[Prepared], sender_id: str | None
    ) -> list[SendResult]:
        sender = sender_id if sender_id is not None else self._account_id
        with self._lock:
            now = self._begin()
            commit = self._commit
            results = [commit(rec, delay, now, sender) for rec, delay in prepared]
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
        items = _batches.entries_of(entries, "SendMessageBatchRequestEntry", _batches.coerce_send)
        prepared: dict[str, Prepared] = {}
        failed: list[BatchFailure] = []
        total = 0
        for _, (entry,) in items:
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
        if total > L.BATCH_PAYLOAD_MAX:
            raise BatchRequestTooLong(
                f"Batch requests cannot be longer than {L.BATCH_PAYLOAD_MAX} bytes. "
                f"You have sent {total} bytes."
            )
        results = self._send_prepared(list(prepared.values()), sender_id)
        successful: dict[str, SendResult | None] = dict(zip(prepared, results, strict=True))
        return BatchResult(successful, tuple(failed))

    # -- receive -------------------------------------------------------------

    def _receive_now(
        self,
        now: int,
        limit: int,
        visibility_us: int,
        long_poll: bool,
        attempt_id: str | None,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[Message]:
        """One non-blocking receive attempt under the lock."""
        self._check_alive()
        self._advance(now)
        if attempt_id is not None:
            assert self._attempts is not None  # attempt ids are kept on FIFO queues only
            replay = self._attempts.replay(
                attempt_id, now, visibility_us, attribute_names, message_attribute_names
            )
            if replay is not None:
                return replay
        if not self._records:
            return []
        # In flight <= lane + received: only a receive that could cross the limit
        # needs the exact count (section 4).
        if len(self._lane) + len(self._received) + limit > L.IN_FLIGHT_MAX:
            room = L.IN_FLIGHT_MAX - self._in_flight(now)
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
        handles = [self._deliver(rec, now, visibility_us) for rec in deliver]
        if attempt_id is not None:
            assert self._attempts is not None
            self._attempts.remember(attempt_id, now, deliver, handles)
        view = message_view
        return [
            view(rec, handle, attribute_names, message_attribute_names)
            for rec, handle in zip(deliver, handles, strict=True)
        ]

    def _at_in_flight_limit(self, long_poll: bool) -> list[Message]:
        """Standard queues: short polls raise OverLimit, long polls find nothing.
        FIFO queues: no error at the in-flight limit (section 4)."""
        if long_poll or self.FIFO:
            return []
        # Message text UNCONFIRMED (section 4 gives the code only).
        raise OverLimit(
            "The maximum number of in flight messages is reached: "
            f"{L.IN_FLIGHT_MAX} messages are in flight."
        )

    def _receive_args(
        self,
        max_messages: object,
        visibility_timeout: object,
        wait_time_seconds: object,
        attribute_names: object,
        message_attribute_names: object,
        receive_request_attempt_id: object,
    ) -> tuple[int, int | None, int, tuple[str, ...], tuple[str, ...], str | None]:
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
        if principal is not None:
            self._authorize(principal, "ReceiveMessage")
        limit, vt, wait, names, user_names, attempt = self._receive_args(
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
        )
        if wait == 0:
            with self._lock:
                now = self._now_us()
                vis = self._visibility_us if vt is None else vt * US
                return self._receive_now(now, limit, vis, False, attempt, names, user_names)
        return run_sync(self._poll(None, limit, vt, wait, names, user_names, attempt), self._clock)

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
        if principal is not None:
            self._authorize(principal, "ReceiveMessage")
        limit, vt, wait, names, user_names, attempt = self._receive_args(
            max_messages,
            visibility_timeout,
            wait_time_seconds,
            attribute_names,
            message_attribute_names,
            receive_request_attempt_id,
        )
        loop = asyncio.get_running_loop()
        poll = self._poll(loop, limit, vt, wait, names, user_names, attempt)
        return await run_async(poll, self._clock)

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
        seq, receipt_no, token = receipts.parse(handle)
        rec = receipts.verify(handle, self._records.get(seq), receipt_no, seq, token)  # type: ignore[arg-type]
        if rec is None or not self._ordering.LATEST_RECEIPT_ONLY:
            return rec, True
        return rec, receipt_no == rec.receipt_no and key_time(rec.vkey) > now

    def _delete_one(self, handle: object, now: int) -> None:
        # _acting, inlined: the delete path runs once per message.
        receipts = self._receipts
        seq, receipt_no, token = receipts.parse(handle)
        rec = receipts.verify(handle, self._records.get(seq), receipt_no, seq, token)  # type: ignore[arg-type]
        if rec is None:
            return  # already deleted: DeleteMessage is idempotent (section 8)
        if self._ordering.LATEST_RECEIPT_ONLY and not (
            receipt_no == rec.receipt_no and key_time(rec.vkey) > now
        ):
            raise self._expired_handle(handle)  # type: ignore[arg-type]
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
        with self._lock:
            now = self._begin()
            self._delete_one(receipt_handle, now)
            if self._waiters:
                self._notify()

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
        items = _batches.entries_of(
            entries, "DeleteMessageBatchRequestEntry", _batches.coerce_delete
        )
        with self._lock:
            now = self._begin()
            result = _batches.each(items, self._delete_one, now)
            if self._waiters:
                self._notify()
        return result

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

        Allowed once per 60 seconds. Purging a FIFO queue also clears its
        deduplication history. Runtime complexity: O(1) (the old messages are
        freed afterwards).
        """
        self._authorize(principal, "PurgeQueue")
        with self._lock:
            self._check_alive()
            now = self._now_us()
            if self._last_purge is not None and now < self._last_purge + L.PURGE_INTERVAL * US:
                raise PurgeQueueInProgress(
                    f"Only one PurgeQueue operation on {self._name} is allowed every 60 seconds."
                )
            # What was due first happens first (a move task's moves by now).
            self._advance(now)
            self._last_purge = now
            self._purge(now, "purged")
            for window in self._windows:
                window.clear()
            self._queue_changed("purged")
            self._notify()

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


def _no_queue(arn: str) -> Any:
    return None
