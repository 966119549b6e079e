"""The message lifecycle: everything that changes a message's state lives here.

States and legal transitions (``docs/design.md`` principle 3)::

                send                    receive                delete
    (none) ---------> DELAYED ---------> VISIBLE ---------> IN FLIGHT ---------> (deleted)
                        |   delay ends    ^   |    receive       |  |
                        |                 |   +------------------+  | change visibility
                        |                 +--- visibility ends -----+ (re-hides, counts
                        |                                             from the call)
                        +--> (expired)   retention ends, from any state
                             (dead-lettered)  a receive finds receive count >= maxReceiveCount
                             (purged)         PurgeQueue, from any state

A message's state is derived, never stored: a record is *fresh* until its first
receive (DELAYED while its delay runs, VISIBLE after) and *received* after (IN
FLIGHT while its visibility timeout runs, VISIBLE after). Both kinds sit in a
sorted index keyed by the time they next become receivable (``_Record.vkey``),
so a receive simply takes from the front of the index, and the exact counts of
visible, in-flight and delayed messages are bisections.

Two lanes keep the common case off the sorted indexes (benchmarks/RESULTS.md
§2): the standard queue's *ready deque* of fresh messages sent without delay
(they arrive in key order), and the *in-flight lane*, an OrderedDict of
received messages whose deadlines arrive in order (every receive with the same
visibility timeout). A lane record whose deadline passes moves to the sorted
index in ``_settle``, before anything reads the indexes, once per deadline.

Deadlines are applied lazily: each operation first drops whatever expired by
``now`` (retention, FIFO deduplication entries), in O(k log n) for k expired
messages, and settles the lane.

Which receivable message a receive returns is the ordering policy's business:
:class:`sqsqueue.Queue` (``_standard.py``) takes the oldest due messages,
:class:`sqsqueue.FifoQueue` (``_fifo.py``) walks per-group chains, extending the
transitions defined here to keep them: :meth:`_BaseQueue._enqueue`,
:meth:`_BaseQueue._deliver`, :meth:`_BaseQueue._rehide`,
:meth:`_BaseQueue._drop`.

Locking: one lock per queue (a :class:`~sqsqueue.Broker` shares one among its
queues so that dead-letter moves are atomic). Every public operation reads the
clock once, before changing anything, so an exception from the clock changes
nothing. Long polls wait outside the lock (see ``_clock.py``).
"""

from __future__ import annotations

import abc
import asyncio
import binascii
import contextlib
import hashlib
import hmac
import itertools
import os
import random as _random
import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Any, ClassVar, NoReturn, Self

from sortedcontainers import SortedKeyList

from sqsqueue import _attributes, _policy, _validate
from sqsqueue import _limits as L
from sqsqueue._admin import QueueAdmin
from sqsqueue._clock import Clock, SystemClock, Waiter
from sqsqueue._faults import Faults
from sqsqueue._message import (
    SEQ_BITS,
    SEQ_MASK,
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    HistoryEvent,
    Message,
    MessageInfo,
    SendEntry,
    SendResult,
    StoredAttribute,
    _Record,
    md5_of_attributes,
    to_value,
)
from sqsqueue._validate import show
from sqsqueue.errors import (
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    EmptyBatchRequest,
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidBatchEntryId,
    InvalidParameterValue,
    MissingParameter,
    OverLimit,
    PurgeQueueInProgress,
    QueueDoesNotExist,
    ReceiptHandleIsInvalid,
    ServiceUnavailable,
    SQSError,
    TooManyEntriesInBatchRequest,
)

US = L.US
_VKEY = attrgetter("vkey")
_SKEY = attrgetter("skey")
_HANDLE = struct.Struct(">B7sQI16s")  # version, queue tag, seq, receipt no, token
_HANDLE_VERSION = 1
_HANDLE_LEN = 48  # base64 of the 36 packed bytes, no padding
#: What a handle's token authenticates: (seq, receipt no). The token is a keyed
#: BLAKE2b MAC of it under a per-queue 256-bit secret, so a forged or mutated
#: handle is refused even after its message is gone (section 8).
_TOKEN_INPUT = struct.Struct(">QI")

_ALL = ("All",)
_NEVER = 1 << 200  # a vkey later than any (time < 2**63 us, shifted by SEQ_BITS)
_BUDGET_US = L.RECEIVE_VISIBILITY_BUDGET * US
_b2a = binascii.b2a_base64
#: ``Message(...)`` and ``SendResult(...)`` without the named tuple's
#: Python-level ``__new__``: half the cost, and one is built for every message
#: sent or received. The tuple must list every field, in order.
_new_message: Callable[[tuple[Any, ...]], Message] = partial(tuple.__new__, Message)
_new_send_result: Callable[[tuple[Any, ...]], SendResult] = partial(tuple.__new__, SendResult)


def _uuid4(rng: _random.Random) -> str:
    """A version-4 UUID string drawn from ``rng``.

    Message ids must be unique, not secret, and this is 4x faster than
    ``str(uuid.uuid4())`` on the send path.
    """
    h = rng.getrandbits(128).to_bytes(16, "big").hex()
    # Version nibble 4 and RFC 4122 variant bits 10xx, set while formatting.
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def _draft(
    body: str,
    size: int,
    attributes: tuple[StoredAttribute, ...] | None,
    attributes_md5: str | None,
    trace_header: str | None,
    group_id: str | None,
    dedup_id: str | None,
) -> _Record:
    """A validated message ready to send: a record without sequence number, id,
    sender or times yet (``_BaseQueue._sequence`` gives them, under the lock).
    The send path builds the record it will store right away rather than an
    intermediate object: one allocation per message fewer."""
    rec = _Record(0, 0, "", body, size, attributes, attributes_md5, "")
    if trace_header is not None:
        rec.trace_header = trace_header
    if group_id is not None:
        rec.group_id = group_id
    if dedup_id is not None:
        rec.dedup_id = dedup_id
    return rec


#: A validated send: the draft record and its DelaySeconds (None: the queue's).
_Prepared = tuple[_Record, int | None]


class FailsWholeBatch(Exception):
    """Raised by an entry's validation for an error that fails the whole batch
    request rather than that entry (FIFO, section 2.1): send_batch raises
    ``error``, the AWS error, instead of reporting it in ``failed``."""

    def __init__(self, error: SQSError) -> None:
        super().__init__(error)
        self.error = error


class _BaseQueue(QueueAdmin, abc.ABC):
    """State and operations shared by :class:`Queue` and :class:`FifoQueue`."""

    FIFO: ClassVar[bool] = False
    #: Whether a subclass restricts which receipts may act (overrides _may_act):
    #: set by __init_subclass__, so the hot path can skip the call otherwise.
    _LATEST_RECEIPT_ONLY: ClassVar[bool] = False
    #: Fault emulation (standard queues only; see Queue.faults). Checked before
    #: the fault hooks are called, so an exact queue pays nothing for them.
    _faults: Faults | None = None

    def __init__(
        self,
        name: str,
        *,
        clock: Clock | None = None,
        attributes: Mapping[str, object] | None = None,
        random: _random.Random | None = None,
        region: str = "us-east-1",
        account_id: str = "000000000000",
        dead_letter_queue: _BaseQueue | None = None,
        max_receive_count: int | None = None,
        _lock: threading.RLock | None = None,
        _resolver: Callable[[str], _BaseQueue | None] | None = None,
        **kwargs: object,
    ) -> None:
        self._name = _validate.queue_name(name, fifo=self.FIFO)
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidParameterValue(
                f"Value {show(clock)} for parameter clock is invalid. Reason: must be a Clock."
            )
        self._clock: Clock = clock if clock is not None else SystemClock()
        # The ARN and URL are built from these: the Broker's rules (_broker.py).
        if not isinstance(region, str) or not re.fullmatch(r"[a-z0-9-]{1,32}", region):
            raise InvalidParameterValue(f"Value {show(region)} for parameter region is invalid.")
        if not isinstance(account_id, str) or not re.fullmatch(r"[0-9]{12}", account_id):
            raise InvalidParameterValue(
                f"Value {show(account_id)} for parameter account_id is invalid. Reason: an "
                "AWS account id is 12 digits."
            )
        if random is not None and not isinstance(random, _random.Random):
            raise InvalidParameterValue(
                f"Value {show(random)} for parameter random is invalid. Reason: must be a "
                "random.Random."
            )
        self._region = region
        self._account_id = account_id
        requested = _attribute_map(attributes)
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
            if dead_letter_queue._clock is not self._clock:
                # A dead letter keeps its deadlines (retention from its first
                # send): measured on another clock they would be meaningless, and
                # a DLQ whose clock runs ahead would expire it at once.
                raise InvalidParameterValue(
                    f"Value {dead_letter_queue!r} for parameter dead_letter_queue is invalid. "
                    "Reason: it must run on the same clock as this queue (pass clock=)."
                )
            redrive = {
                "deadLetterTargetArn": dead_letter_queue.arn,
                "maxReceiveCount": 10 if max_receive_count is None else max_receive_count,
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
        # from a seeded ``random``, reproducible and so guessable: for tests),
        # bound to the ARN so two queues seeded alike refuse each other's handles.
        seed = random.randbytes(32) if random is not None else os.urandom(32)
        secret = hashlib.blake2b(seed + self.arn.encode(), digest_size=39).digest()
        self._tag = secret[:7]
        # A keyed BLAKE2b state, copied per token: cheaper than keying anew.
        self._mac = hashlib.blake2b(key=secret[7:], digest_size=16)
        self._seq = 0
        self._waiters: set[Waiter] = set()
        self._tags: dict[str, str] = {}
        self._last_now = 0
        self._history: dict[str, list[HistoryEvent]] | None = None
        #: Called with ``now`` by every operation (a Broker drives move tasks).
        self._tick: Callable[[int], None] | None = None
        #: The next moment after ``now`` a move task acts (a long poll wakes then).
        self._next_tick: Callable[[int], int | None] | None = None
        self._last_purge: int | None = None
        #: Dead-letter target and threshold, resolved by the owner (Broker).
        self._max_receive_count = 0
        self._deleted = False
        self._closed = False
        self._reset_messages()
        self._apply_config()
        self._validate_update(update)
        self._apply_update(update)
        now = self._now_us()
        self._created = now // US
        self._modified = now // US

    # -- identity ---------------------------------------------------------------

    @property
    def name(self) -> str:
        """The queue name."""
        return self._name

    @property
    def arn(self) -> str:
        """``arn:aws:sqs:<region>:<account>:<name>``."""
        return f"arn:aws:sqs:{self._region}:{self._account_id}:{self._name}"

    @property
    def url(self) -> str:
        """``https://sqs.<region>.amazonaws.com/<account>/<name>``."""
        return f"https://sqs.{self._region}.amazonaws.com/{self._account_id}/{self._name}"

    @property
    def clock(self) -> Clock:
        """The clock every deadline of this queue is measured on."""
        return self._clock

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    def __len__(self) -> int:
        """Number of stored messages (visible, in flight and delayed). O(k log n)."""
        with self._lock:
            self._advance(self._now_us())
            return len(self._records)

    # -- shutdown -------------------------------------------------------------------

    def close(self) -> None:
        """Close the queue: every blocked long poll returns ``[]`` at once, and
        every later call raises :class:`~sqsqueue.errors.ServiceUnavailable`
        instead of blocking. Idempotent; safe from any thread.

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

    # -- configuration ------------------------------------------------------------

    def _apply_config(self) -> None:
        """Copy attribute values into the fields the hot path reads."""
        v = self._values
        self._visibility_us: int = _int(v["VisibilityTimeout"]) * US
        self._delay_s: int = _int(v["DelaySeconds"])
        self._retention_us: int = _int(v["MessageRetentionPeriod"]) * US
        self._max_size: int = _int(v["MaximumMessageSize"])
        self._wait_s: int = _int(v["ReceiveMessageWaitTimeSeconds"])

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
            raise ServiceUnavailable(f"The queue {self._name} is closed.")

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

    # -- storage and the transitions ---------------------------------------------

    def _reset_messages(self) -> None:
        """Empty the queue: O(1) here, the old structures are freed by refcounting."""
        self._records: dict[int, _Record] = {}
        # Retention index. Records enqueued in time order (all sends: queue time
        # never runs backwards) expire in sequence order, so a pointer to the
        # lowest live sequence number finds the oldest one: it only moves
        # forward, skipping each deleted number once (amortised O(1), no index
        # upkeep on the hot path). Dead letters that keep an older enqueue time
        # (standard DLQs) are "out of order" and go to a sorted index instead.
        self._oldest_seq = self._seq + 1
        self._last_skey = 0
        self._out_of_order: SortedKeyList = SortedKeyList(key=_SKEY)
        self._fresh: SortedKeyList = SortedKeyList(key=_VKEY)
        # Received records, by vkey. The in-flight lane holds those received
        # with a deadline later than the lane's tail when received (the usual case:
        # each receive uses the same visibility timeout, so deadlines arrive in
        # order): an OrderedDict, so receive and delete cost O(1) instead of a
        # sorted-index insert and removal each. ``_settle`` moves lane records
        # whose deadline passed into ``_received``, the sorted index that holds
        # every other received record. ``_lane_min`` is a lower bound of the
        # lane's smallest vkey (exact when set; deletions only raise the true
        # minimum), so checking for due lane records is one comparison. The
        # price is memory: an OrderedDict entry costs about 100 bytes more per
        # message in flight than a sorted-index slot (at most 120,000 are in
        # flight, section 4: about 12 MB).
        self._received: SortedKeyList = SortedKeyList(key=_VKEY)
        # Received records visible again, by enqueue time (``skey``): the
        # standard policy moves them here from ``_received`` once their deadline
        # passed, so it can deliver them in send order (see _standard.py). FIFO
        # queues leave it empty. Every received record is in exactly one of
        # the lane, ``_received`` and ``_revisible``.
        self._revisible: SortedKeyList = SortedKeyList(key=_SKEY)
        self._lane: OrderedDict[int, _Record] = OrderedDict()
        self._lane_min = _NEVER
        self._reset_policy()

    @abc.abstractmethod
    def _reset_policy(self) -> None:
        """Reset the ordering policy's own structures."""

    @abc.abstractmethod
    def _select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        """Choose up to ``limit`` receivable records, in delivery order, without
        changing any message's state (it may settle the in-flight lane, which
        changes no state). Returns (to deliver, to dead-letter): with a
        ``threshold`` > 0, a record already received ``threshold`` times is
        dead-lettered instead of delivered (section 11)."""

    @abc.abstractmethod
    def _next_due(self, now: int) -> int | None:
        """The earliest time after ``now`` when a receive could find something."""

    def _fresh_bound(self, now: int) -> int:
        """Largest ``vkey`` of a fresh record that is receivable at ``now``."""
        return (now << SEQ_BITS) | SEQ_MASK

    def _add_fresh(self, rec: _Record) -> None:
        """Index a never-received record (the standard queue has a fast lane)."""
        self._fresh.add(rec)

    def _remove_fresh(self, rec: _Record) -> None:
        self._fresh.remove(rec)

    def _fresh_count(self) -> int:
        return len(self._fresh)

    def _is_fresh_indexed(self, rec: _Record) -> bool:
        return rec in self._fresh

    def _enqueue(self, rec: _Record, event: str = "sent", at: int | None = None) -> None:
        """(none) -> DELAYED or VISIBLE. ``at``: the event time, when it is not the
        enqueue time (a standard dead letter keeps its original enqueue time)."""
        self._records[rec.skey & SEQ_MASK] = rec
        if rec.skey >= self._last_skey:
            self._last_skey = rec.skey
        else:
            self._out_of_order.add(rec)
        self._add_fresh(rec)
        if self._history is not None:
            t = rec.skey >> SEQ_BITS if at is None else at
            # As in inspect(): a FIFO fresh vkey excludes the queue delay.
            shift = t - (self._fresh_bound(t) >> SEQ_BITS)
            self._log(rec, event, t, visible_at=((rec.vkey >> SEQ_BITS) + shift) / US)

    def _deliver(self, rec: _Record, now: int, visibility_us: int) -> str:
        """VISIBLE -> IN FLIGHT, issuing a new receipt. Returns the receipt handle."""
        # Runs once per message received, so locals stand in for repeated
        # attribute reads.
        seq = rec.skey & SEQ_MASK
        if rec.receive_count == 0:
            self._remove_fresh(rec)
            if not rec.first_receive:
                rec.first_receive = now
        else:
            self._unindex_received(rec)
        vkey = rec.vkey = ((now + visibility_us) << SEQ_BITS) | seq
        lane = self._lane
        if not lane:
            self._lane_min = vkey
            lane[seq] = rec
        elif vkey > lane[next(reversed(lane))].vkey:  # after the lane's tail: O(1)
            lane[seq] = rec
        else:
            self._received.add(rec)
        rec.receive_count += 1
        rec.receive_cap = now + _BUDGET_US
        receipt_no = rec.receipt_no = rec.receipt_no + 1
        token = rec.token = self._token(seq, receipt_no)
        if self._history is not None:
            visible_at = (rec.vkey >> SEQ_BITS) / US
            self._log(rec, "received", now, receipt=receipt_no, visible_at=visible_at)
        # binascii directly: base64.b64encode's pure-Python wrapper costs as much
        # as the encoding on this hot path.
        return _b2a(
            _HANDLE.pack(_HANDLE_VERSION, self._tag, seq, receipt_no, token), newline=False
        ).decode("ascii")

    def _rehide(self, rec: _Record, due: int, now: int) -> None:
        """IN FLIGHT or VISIBLE (received) -> IN FLIGHT until ``due`` (or VISIBLE if due <= now)."""
        self._unindex_received(rec)
        rec.vkey = (due << SEQ_BITS) | (rec.skey & SEQ_MASK)
        rec.rehides += 1
        # A changed deadline goes to the sorted index: the lane is for the
        # in-order deadlines of receives (a re-hide past the lane's tail is rare
        # enough not to need it).
        self._received.add(rec)
        if self._history is not None:
            self._log(rec, "visibility_changed", now, visible_at=due / US)

    def _drop(
        self, rec: _Record, reason: str = "deleted", now: int | None = None, **detail: object
    ) -> None:
        """Any state -> deleted, expired, dead-lettered, moved or purged."""
        if self._history is not None:
            self._log(rec, reason, self._now_us() if now is None else now, **detail)
        seq = rec.skey & SEQ_MASK
        del self._records[seq]
        if seq == self._oldest_seq:
            # Consumers mostly delete oldest first: step the retention pointer
            # past the deleted number, so that _advance mostly stays on its fast
            # path (the next number may be gone too: _oldest walks on from there).
            self._oldest_seq = seq + 1
        # Out of order: mostly standard dead letters (they keep their enqueue
        # time), but also a message sent on a queue whose clock is behind the
        # times its dead letters brought with them (a standalone DLQ on another
        # clock). Empty, the check costs nothing.
        if self._out_of_order and rec in self._out_of_order:
            self._out_of_order.remove(rec)
        if rec.receive_count == 0:
            self._remove_fresh(rec)
        else:
            self._unindex_received(rec)

    def _unindex_received(self, rec: _Record) -> None:
        if self._lane.pop(rec.skey & SEQ_MASK, None) is None:
            if self._revisible and rec in self._revisible:
                self._revisible.remove(rec)
            else:
                self._received.remove(rec)

    def _settle(self, now: int) -> None:
        """Move lane records whose visibility timeout ended by ``now`` into the
        sorted index (IN FLIGHT -> VISIBLE). Amortised O(log n) per record moved,
        O(1) when none is due. Every reader of the received indexes calls it
        first, so the lane only ever holds records in flight at the time read."""
        bound = (now << SEQ_BITS) | SEQ_MASK
        if self._lane_min > bound:
            return
        lane = self._lane
        while lane:
            rec = next(iter(lane.values()))
            if rec.vkey > bound:
                self._lane_min = rec.vkey
                return
            lane.popitem(last=False)
            self._received.add(rec)
        self._lane_min = _NEVER

    def _advance(self, now: int) -> None:
        """Apply every deadline that passed by ``now``: retention, ended
        visibility timeouts. O(k log n)."""
        if self._tick is not None:
            # Move tasks first: each acts at its own moments up to ``now``, on the
            # messages as they were then (a Broker's, see Broker._drive).
            self._tick(now)
        bound = ((now - self._retention_us) << SEQ_BITS) | SEQ_MASK
        records = self._records
        head = records.get(self._oldest_seq)
        # Fast path, taken by almost every call: the queue is empty, or the
        # pointer's record is live, in order and not yet due, so nothing can
        # have expired.
        if records and (head is None or head.skey <= bound or self._out_of_order):
            while True:
                rec = self._oldest()
                if rec is None or rec.skey > bound:
                    break
                # Stamp the moment retention ran out, not when it was noticed.
                expired_at = min(now, (rec.skey >> SEQ_BITS) + self._retention_us)
                self._drop(rec, "expired", expired_at)
        if self._lane_min <= ((now << SEQ_BITS) | SEQ_MASK):
            self._settle(now)

    def _oldest(self) -> _Record | None:
        """The stored record with the earliest enqueue time (the next to expire).

        Amortised O(1): the in-order pointer moves past each deleted sequence
        number once; out-of-order dead letters are looked up in their index.
        """
        records = self._records
        seq = self._oldest_seq
        last = self._seq
        rec = records.get(seq)
        odd = self._out_of_order
        while rec is None or (odd and rec in odd):
            if seq >= last:
                rec = None
                break
            seq += 1
            rec = records.get(seq)
        self._oldest_seq = seq
        if odd and (rec is None or odd._keys[0][0] < rec.skey):
            # ``_keys[0][0]`` is a SortedKeyList's smallest key (sortedcontainers 2.x).
            return odd[0]  # type: ignore[no-any-return]
        return rec

    def _notify(self) -> None:
        """Wake every long poll so it looks again."""
        if self._waiters:
            for waiter in self._waiters:
                waiter.wake()

    # -- counts -------------------------------------------------------------------

    def _counts(self, now: int) -> tuple[int, int, int]:
        """(visible, in flight, delayed), exact. O(log n)."""
        in_flight = self._in_flight(now)
        fresh = self._fresh
        delayed = len(fresh) - fresh.bisect_key_right(self._fresh_bound(now))
        return len(self._records) - in_flight - delayed, in_flight, delayed

    def _in_flight(self, now: int) -> int:
        """Messages in flight at ``now``. O(log n)."""
        self._settle(now)
        received = self._received
        index: int = received.bisect_key_right((now << SEQ_BITS) | SEQ_MASK)
        return len(self._lane) + len(received) - index

    # -- send ---------------------------------------------------------------------

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
    ) -> _Prepared:
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
        return _draft(text, size, attributes, attributes_md5, trace, group, dedup), delay

    @abc.abstractmethod
    def _check_ids(
        self, delay: int | None, group_id: object, deduplication_id: object, *, batch: bool
    ) -> tuple[str | None, str | None]:
        """Queue-type rules for delay, MessageGroupId and MessageDeduplicationId.
        In a batch entry, an error that fails the whole request is raised
        wrapped in :class:`FailsWholeBatch`."""

    def _sequence(self, rec: _Record, now: int, due: int, sender_id: str) -> None:
        """Give a draft record its sequence number, id, sender and times."""
        self._seq = seq = self._seq + 1
        rec.skey = (now << SEQ_BITS) | seq
        rec.vkey = (due << SEQ_BITS) | seq
        rec.message_id = _uuid4(self._rng)
        rec.sender_id = sender_id

    @abc.abstractmethod
    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult:
        """Store a draft record (under the lock) and say what was stored."""

    def _send_prepared(
        self, prepared: Sequence[_Prepared], sender_id: str | None
    ) -> list[SendResult]:
        sender = sender_id if sender_id is not None else self._account_id
        with self._lock:
            now = self._begin()
            commit = self._commit
            results = [commit(rec, delay, now, sender) for rec, delay in prepared]
            if self._waiters:
                self._notify()
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
                self._notify()
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
        items = _batch_entries(entries, "SendMessageBatchRequestEntry", _coerce_send)
        prepared: dict[str, _Prepared] = {}
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
                total += _rough_size(entry)
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

    # -- receive ------------------------------------------------------------------

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
            replay = self._replay_attempt(
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
        target = self._redrive_target()
        threshold = self._max_receive_count if target is not None else 0
        deliver, dead = self._select(now, limit, threshold)
        if self._faults is not None:
            deliver = self._filter_delivery(deliver, long_poll)
        if dead:
            assert target is not None
            for rec in dead:
                self._drop(rec, "dead_lettered", now)
                target._accept_dead_letter(rec, self.arn, now)
        handles = [self._deliver(rec, now, visibility_us) for rec in deliver]
        if attempt_id is not None:
            self._remember_attempt(attempt_id, now, deliver, handles)
        view = self._view
        return [
            view(rec, handle, attribute_names, message_attribute_names)
            for rec, handle in zip(deliver, handles, strict=True)
        ]

    def _at_in_flight_limit(self, long_poll: bool) -> list[Message]:
        """Standard queues: short polls raise OverLimit, long polls find nothing."""
        if long_poll:
            return []
        # Message text UNCONFIRMED (section 4 gives the code only).
        raise OverLimit(
            "The maximum number of in flight messages is reached: "
            f"{L.IN_FLIGHT_MAX} messages are in flight."
        )

    def _remember_attempt(
        self, attempt_id: str, now: int, records: list[_Record], handles: list[str]
    ) -> None:
        """FIFO only: remember a ReceiveRequestAttemptId."""

    def _replay_attempt(
        self,
        attempt_id: str,
        now: int,
        visibility_us: int,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> list[Message] | None:
        """FIFO only: the messages of an earlier attempt, if it can be replayed."""
        return None

    # -- dead-letter queues (section 10, 11) ------------------------------------

    def _redrive_target(self) -> _BaseQueue | None:
        """The queue that takes this queue's dead letters now, if any.

        Resolved at each receive, so a DLQ deleted (or re-created) later is
        seen. If the DLQ is gone or its RedriveAllowPolicy no longer admits
        this queue, messages are delivered normally rather than lost
        (UNCONFIRMED: AWS does not document this case).
        """
        policy = self._values.get("RedrivePolicy")
        if policy is None:
            return None
        assert isinstance(policy, dict)
        target = self._resolver(policy["deadLetterTargetArn"])
        if target is None or target._deleted or target.FIFO != self.FIFO or target is self:
            # A queue may name itself as its DLQ: real AWS accepted that
            # RedrivePolicy (issue 12 §6). Moving a message into the queue it is
            # in would change nothing but its place, so it is delivered normally
            # (what AWS then does is UNCONFIRMED).
            return None
        return target if target._admits_source(self.arn) else None

    def _admits_source(self, source_arn: str) -> bool:
        """RedriveAllowPolicy: may ``source_arn`` use this queue as its DLQ?"""
        allow = self._values.get("RedriveAllowPolicy")
        if allow is None:
            return True  # allowAll is the default (section 5)
        assert isinstance(allow, dict)
        permission = allow["redrivePermission"]
        if permission == "allowAll":
            return True
        if permission == "denyAll":
            return False
        return source_arn in allow.get("sourceQueueArns", ())

    def _accept_dead_letter(self, rec: _Record, source_arn: str, now: int) -> None:
        """Store a message dead-lettered from ``source_arn`` (sections 9, 10, 11).

        Message id, body, attributes, trace header, sender and group id are
        kept, ApproximateReceiveCount continues, DeadLetterQueueSourceArn is
        added; the enqueue time is kept on standard queues (retention counts
        from the original send) and reset on FIFO queues.
        """
        self._advance(now)
        self._seq += 1
        seq = self._seq
        sent = self._dead_letter_enqueue_time(rec, now)
        new = _Record(
            (sent << SEQ_BITS) | seq,
            (now << SEQ_BITS) | seq,
            rec.message_id,
            rec.body,
            rec.size,
            rec.attributes,
            rec.attributes_md5,
            rec.sender_id,
        )
        new.trace_header = rec.trace_header
        new.group_id = rec.group_id
        new.dedup_id = rec.dedup_id
        new.dlq_source_arn = source_arn
        new.receive_base = rec.receive_base + rec.receive_count
        new.first_receive = rec.first_receive
        self._adopt_dead_letter(new, now)
        self._enqueue(new, "dead_letter_arrived", now)
        self._notify()

    def _dead_letter_enqueue_time(self, rec: _Record, now: int) -> int:
        return rec.skey >> SEQ_BITS

    def _adopt_dead_letter(self, rec: _Record, now: int) -> None:
        """Policy hook: FIFO gives the moved message a new sequence number."""

    def _view(
        self,
        rec: _Record,
        handle: str,
        attribute_names: Sequence[str],
        message_attribute_names: Sequence[str],
    ) -> Message:
        """The Message a receive returns: only the attributes asked for."""
        system = self._system_attributes(rec, attribute_names) if attribute_names else {}
        stored = rec.attributes
        if stored and message_attribute_names:
            chosen = _filter_attributes(stored, message_attribute_names)
            if chosen:
                user = {a[0]: to_value(a) for a in chosen}
                user_md5 = (
                    rec.attributes_md5 if len(chosen) == len(stored) else md5_of_attributes(chosen)
                )
                return _new_message((rec.message_id, handle, rec.body, system, user, user_md5))
        return _new_message((rec.message_id, handle, rec.body, system, {}, None))

    def _system_attributes(self, rec: _Record, names: Sequence[str]) -> dict[str, str]:
        if "All" in names:
            # The common case, built in one go (this runs once per message received).
            out = {
                "SenderId": rec.sender_id,
                "SentTimestamp": str((rec.skey >> SEQ_BITS) // 1000),
                "ApproximateReceiveCount": str(rec.receive_base + rec.receive_count),
                "ApproximateFirstReceiveTimestamp": str(rec.first_receive // 1000),
            }
            if rec.sequence_number is not None:
                out["SequenceNumber"] = str(rec.sequence_number)
            if rec.dedup_id is not None:
                out["MessageDeduplicationId"] = rec.dedup_id
            if rec.group_id is not None:
                out["MessageGroupId"] = rec.group_id
            if rec.trace_header is not None:
                out["AWSTraceHeader"] = rec.trace_header
            if rec.dlq_source_arn is not None:
                out["DeadLetterQueueSourceArn"] = rec.dlq_source_arn
            return out
        out = {}

        def want(name: str) -> bool:
            return name in names

        if want("SenderId"):
            out["SenderId"] = rec.sender_id
        if want("SentTimestamp"):
            out["SentTimestamp"] = str((rec.skey >> SEQ_BITS) // 1000)
        if want("ApproximateReceiveCount"):
            out["ApproximateReceiveCount"] = str(rec.receive_base + rec.receive_count)
        if want("ApproximateFirstReceiveTimestamp"):
            out["ApproximateFirstReceiveTimestamp"] = str(rec.first_receive // 1000)
        if rec.sequence_number is not None and want("SequenceNumber"):
            out["SequenceNumber"] = str(rec.sequence_number)
        if rec.dedup_id is not None and want("MessageDeduplicationId"):
            out["MessageDeduplicationId"] = rec.dedup_id
        if rec.group_id is not None and want("MessageGroupId"):
            out["MessageGroupId"] = rec.group_id
        if rec.trace_header is not None and want("AWSTraceHeader"):
            out["AWSTraceHeader"] = rec.trace_header
        if rec.dlq_source_arn is not None and want("DeadLetterQueueSourceArn"):
            out["DeadLetterQueueSourceArn"] = rec.dlq_source_arn
        return out

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
        names = _names("AttributeNames", attribute_names)
        # Unknown system attribute names are ignored, as unknown message
        # attribute names are (section 2.1; UNCONFIRMED for system names).
        user_names = _names("MessageAttributeNames", message_attribute_names)
        attempt = self._check_attempt_id(receive_request_attempt_id)
        return limit, vt, wait, names, user_names, attempt

    def _check_attempt_id(self, value: object) -> str | None:
        if value is None:
            return None
        # ReceiveRequestAttemptId applies to FIFO queues only [BM]; a standard
        # queue ignores it (UNCONFIRMED) after validating its format.
        _validate.fifo_id("ReceiveRequestAttemptId", value)
        return None

    def receive(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        attribute_names: Sequence[str] = _ALL,
        message_attribute_names: Sequence[str] = _ALL,
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
        with contextlib.closing(
            self._poll(None, limit, vt, wait, names, user_names, attempt)
        ) as poll:
            try:
                waiter, wake_at = next(poll)
                while True:
                    woken = self._clock.wait(waiter, wake_at / US)
                    waiter, wake_at = poll.send(woken)
            except StopIteration as done:
                msgs: list[Message] = done.value
                return msgs

    async def receive_async(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        attribute_names: Sequence[str] = _ALL,
        message_attribute_names: Sequence[str] = _ALL,
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
        with contextlib.closing(
            self._poll(asyncio.get_running_loop(), limit, vt, wait, names, user_names, attempt)
        ) as poll:
            try:
                waiter, wake_at = next(poll)
                while True:
                    woken = await self._clock.wait_async(waiter, wake_at / US)
                    waiter, wake_at = poll.send(woken)
            except StopIteration as done:
                msgs: list[Message] = done.value
                return msgs

    def _poll(
        self,
        loop: asyncio.AbstractEventLoop | None,
        limit: int,
        vt: int | None,
        wait: int,
        names: Sequence[str],
        user_names: Sequence[str],
        attempt: str | None,
    ) -> Generator[tuple[Waiter, int], bool, list[Message]]:
        """A receive with its long poll, written once for both drivers.

        Yields ``(waiter, wake_at)`` (microseconds on the queue's clock) for the
        driver to wait on, the thread's way or asyncio's, and is sent whether
        the waiter was woken. Returns the messages: as soon as any is receivable,
        ``[]`` at the poll's deadline, what is receivable when the clock gives
        up waiting (a frozen ManualClock with nobody else acting), and ``[]``
        when the queue is closed during the wait.
        """
        deadline: int | None = None
        last_try = False
        while True:
            with self._lock:
                if deadline is not None and self._closed:
                    return []
                now = self._now_us()
                vis = self._visibility_us if vt is None else vt * US
                msgs = self._receive_now(now, limit, vis, wait > 0, attempt, names, user_names)
                if deadline is None:
                    deadline = now + wait * US
                if msgs or last_try or now >= deadline:
                    return msgs
                wake_at = self._wake_time(now, deadline)
                waiter = Waiter(loop)
                self._waiters.add(waiter)
            try:
                woken = yield waiter, wake_at
            finally:
                with self._lock:
                    self._waiters.discard(waiter)
            # Not woken, and time has not reached wake_at: the clock gave up
            # waiting. One last attempt, then the poll returns what it found.
            last_try = not woken and round(self._clock.now() * US) < wake_at

    def _wake_time(self, now: int, deadline: int) -> int:
        due = self._next_due(now)
        if self._next_tick is not None:
            # A move task may send a message here before then (section 12: a
            # long poll returns as soon as a message is receivable).
            moves = self._next_tick(now)
            if moves is not None and (due is None or moves < due):
                due = moves
        return deadline if due is None else min(deadline, due)

    # -- delete and change visibility -------------------------------------------

    def _parse_handle(self, handle: object) -> tuple[int, int, bytes]:
        """(seq, receipt number, token) of a handle issued by this queue."""
        if not isinstance(handle, str) or not handle:
            if handle is None or handle == "":
                raise MissingParameter("The request must contain the parameter ReceiptHandle.")
            raise ReceiptHandleIsInvalid(
                f'The input receipt handle "{show(handle)}" is not a valid receipt handle.'
            )
        try:
            if len(handle) != _HANDLE_LEN:
                raise ValueError
            raw = binascii.a2b_base64(handle, strict_mode=True)
            version, tag, seq, receipt_no, token = _HANDLE.unpack(raw)
        except (ValueError, binascii.Error, struct.error, UnicodeEncodeError):
            raise ReceiptHandleIsInvalid(
                f'The input receipt handle "{handle}" is not a valid receipt handle.'
            ) from None
        if version != _HANDLE_VERSION:
            raise ReceiptHandleIsInvalid(
                f'The input receipt handle "{handle}" is not a valid receipt handle.'
            )
        if tag != self._tag:
            raise ReceiptHandleIsInvalid(
                f'The receipt handle "{handle}" is not valid for this queue.'
            )
        return seq, receipt_no, token

    def _token(self, seq: int, receipt_no: int) -> bytes:
        """The 128-bit token that authenticates receipt ``receipt_no`` of ``seq``:
        a BLAKE2b MAC under the queue's secret key."""
        mac = self._mac.copy()
        mac.update(_TOKEN_INPUT.pack(seq, receipt_no))
        return mac.digest()

    def _lookup(self, handle: str, seq: int, receipt_no: int, token: bytes) -> _Record | None:
        """The record a verified handle acts on; None when the message is gone.

        A handle whose token does not match what this queue issued is forged or
        mutated: ReceiptHandleIsInvalid.
        """
        rec = self._records.get(seq)
        if rec is not None and receipt_no == rec.receipt_no and rec.token is not None:
            # The latest receipt: the token stored at issue time is the MAC.
            if hmac.compare_digest(rec.token, token):
                return rec
        elif hmac.compare_digest(token, self._token(seq, receipt_no)):
            # An older receipt, or a message that is gone: recompute the MAC.
            # Never issued by this queue (forged or mutated) fails either way.
            return rec
        raise ReceiptHandleIsInvalid(
            f'The input receipt handle "{handle}" is not a valid receipt handle.'
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._LATEST_RECEIPT_ONLY = cls._may_act is not _BaseQueue._may_act

    def _may_act(self, rec: _Record, receipt_no: int, now: int) -> bool:
        """Whether a verified handle with ``receipt_no`` may still act on ``rec``:
        on a standard queue, any handle ever issued for it (section 8). A queue
        type that overrides this is checked on every delete and change."""
        return True

    def _expired_handle(self, handle: str) -> SQSError:
        return InvalidParameterValue(
            f"Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt "
            "handle has expired."
        )

    def _delete_one(self, handle: object, now: int) -> None:
        seq, receipt_no, token = self._parse_handle(handle)
        assert isinstance(handle, str)
        rec = self._lookup(handle, seq, receipt_no, token)
        if rec is None:
            return  # already deleted: DeleteMessage is idempotent (section 8)
        if self._LATEST_RECEIPT_ONLY and not self._may_act(rec, receipt_no, now):
            raise self._expired_handle(handle)
        if self._faults is not None and self._lose_delete(rec):
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
        seq, receipt_no, token = self._parse_handle(handle)
        assert isinstance(handle, str)
        vt = _validate.visibility_timeout(timeout)
        rec = self._lookup(handle, seq, receipt_no, token)
        if rec is None or (self._LATEST_RECEIPT_ONLY and not self._may_act(rec, receipt_no, now)):
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
        items = _batch_entries(entries, "DeleteMessageBatchRequestEntry", _coerce_delete)
        with self._lock:
            now = self._begin()
            result = _each(items, self._delete_one, now)
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
        items = _batch_entries(entries, "ChangeMessageVisibilityBatchRequestEntry", _coerce_change)
        with self._lock:
            now = self._begin()
            result = _each(items, self._change_one, now)
            self._notify()
        return result

    # -- queue-level operations ---------------------------------------------------

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
            if self._history is not None:
                for rec in self._records.values():
                    self._log(rec, "purged", now)
            self._reset_messages()
            self._notify()

    def get_attributes(
        self, names: Iterable[str] = _ALL, *, principal: str | None = None
    ) -> dict[str, str]:
        """Queue attributes as AWS's strings (GetQueueAttributes).

        ``names`` may hold ``"All"``; no names gives ``{}``. Unknown names raise
        InvalidAttributeName. Runtime complexity: O(log n).
        """
        self._authorize(principal, "GetQueueAttributes")
        wanted = _names("AttributeNames", names)
        with self._lock:
            now = self._begin()
            if not wanted:
                return {}
            everything = "All" in wanted
            for name in wanted:
                if name == "All":
                    continue
                if name not in _attributes.READ_ONLY and name not in self._values:
                    raise InvalidAttributeName(f"Unknown Attribute {name}.")
            visible, in_flight, delayed = self._counts(now)
            computed = {
                "ApproximateNumberOfMessages": visible,
                "ApproximateNumberOfMessagesNotVisible": in_flight,
                "ApproximateNumberOfMessagesDelayed": delayed,
                "CreatedTimestamp": self._created,
                "LastModifiedTimestamp": self._modified,
                "QueueArn": self.arn,
            }
            out: dict[str, str] = {}
            for name in _attributes.ALL_NAMES:
                if not everything and name not in wanted:
                    continue
                value = computed[name] if name in computed else self._values.get(name)
                if value is None:
                    continue  # Policy, RedrivePolicy, Kms* are absent until set
                out[name] = _attributes.render(name, value)
            return out

    def set_attributes(
        self,
        attributes: Mapping[str, object] | None = None,
        /,
        *,
        principal: str | None = None,
        **kwargs: object,
    ) -> None:
        """Change queue attributes (SetQueueAttributes).

        Accepts AWS names (``{"VisibilityTimeout": "60"}``) or keywords
        (``visibility_timeout=60``). Everything is validated before anything
        changes. A shorter retention period applies to stored messages at once;
        a new DelaySeconds applies to stored messages on FIFO queues only.
        Runtime complexity: O(1), plus the messages it expires.
        """
        self._authorize(principal, "SetQueueAttributes")
        requested = _attribute_map(attributes)
        requested.update(kwargs)
        with self._lock:
            self._check_alive()
            now = self._now_us()
            update = _attributes.parse(
                requested, fifo=self.FIFO, creating=False, current=self._values
            )
            self._validate_update(update)
            self._advance(now)
            self._values.update(update)
            _attributes.apply_sse(self._values, update)
            self._apply_config()
            self._apply_update(update)
            self._modified = now // US
            self._notify()

    def _validate_update(self, update: Mapping[str, object]) -> None:
        """Cross-queue checks before an update applies: the DLQ must exist, be
        of the same type and admit this queue (section 5). Texts UNCONFIRMED."""
        policy = update.get("RedrivePolicy")
        if policy is None:
            return
        assert isinstance(policy, dict)
        arn = policy["deadLetterTargetArn"]
        text = _attributes.render("RedrivePolicy", policy)
        target = self._resolver(arn)
        reason = None
        if target is None or target._deleted:
            reason = "Dead letter target does not exist."
        elif target.FIFO != self.FIFO:
            reason = "Dead-letter queue must be the same type of queue as the source queue."
        elif not target._admits_source(self.arn):
            reason = (
                f"Queue {self.arn} is not allowed as a source by the dead-letter "
                "queue's RedriveAllowPolicy."
            )
        if reason:
            raise InvalidParameterValue(
                f"Value {text} for parameter RedrivePolicy is invalid. Reason: {reason}"
            )

    def _apply_update(self, update: Mapping[str, object]) -> None:
        """Effects of an applied update beyond the stored values."""
        if "RedrivePolicy" in update:
            policy = update["RedrivePolicy"]
            self._max_receive_count = policy["maxReceiveCount"] if isinstance(policy, dict) else 0

    @property
    def attributes(self) -> dict[str, str]:
        """All queue attributes (``get_attributes(["All"])``)."""
        return self.get_attributes()

    # -- fault emulation hooks (standard queues override) ------------------------------

    def _filter_delivery(self, deliver: list[_Record], long_poll: bool) -> list[_Record]:
        return deliver

    def _lose_delete(self, rec: _Record) -> bool:
        return False

    # -- inspection for tests ---------------------------------------------------------

    @property
    def keep_history(self) -> bool:
        """Record every message's history (see :meth:`history`); off by default
        because it costs memory per message."""
        return self._history is not None

    @keep_history.setter
    def keep_history(self, value: bool) -> None:
        with self._lock:
            if value and self._history is None:
                self._history = {}
            elif not value:
                self._history = None

    def _log(self, rec: _Record, event: str, at: int, **detail: object) -> None:
        assert self._history is not None
        self._history.setdefault(rec.message_id, []).append(HistoryEvent(at / US, event, detail))

    def history(self, message_id: str) -> list[HistoryEvent]:
        """What happened to one message in this queue, oldest first: ``sent``,
        ``received``, ``visibility_changed``, ``deleted``, ``expired``,
        ``dead_lettered``, ``dead_letter_arrived``, ``moved``, ``purged``.
        Needs :attr:`keep_history`. O(e) for e events."""
        with self._lock:
            if self._history is None:
                raise InvalidParameterValue(
                    "History is not recorded for this queue: set keep_history = True first."
                )
            if not isinstance(message_id, str):
                raise InvalidParameterValue(
                    f"Value {show(message_id)} for parameter message_id is invalid. "
                    "Reason: must be a MessageId string."
                )
            self._advance(self._now_us())
            return list(self._history.get(message_id, ()))

    def inspect(self) -> list[MessageInfo]:
        """Every stored message with its state, receive count and deadlines,
        without receiving or changing anything. For tests and debugging: this
        one call is O(n log n) in the queue's depth, as it must list it all."""
        with self._lock:
            now = self._begin()
            fresh_bound = self._fresh_bound(now)
            bound = (now << SEQ_BITS) | SEQ_MASK
            out = []
            for rec in sorted(self._records.values(), key=_SKEY):
                if rec.receive_count == 0:
                    state = "delayed" if rec.vkey > fresh_bound else "visible"
                    # fresh_bound is shifted back by the FIFO queue delay, if any.
                    shift = now - (fresh_bound >> SEQ_BITS)
                    visible_at = ((rec.vkey >> SEQ_BITS) + shift) / US
                else:
                    state = "in_flight" if rec.vkey > bound else "visible"
                    visible_at = (rec.vkey >> SEQ_BITS) / US
                out.append(
                    MessageInfo(
                        message_id=rec.message_id,
                        body=rec.body,
                        state=state,
                        receive_count=rec.receive_base + rec.receive_count,
                        sent_at=(rec.skey >> SEQ_BITS) / US,
                        visible_at=visible_at,
                        group_id=rec.group_id,
                        deduplication_id=rec.dedup_id,
                        sequence_number=None
                        if rec.sequence_number is None
                        else str(rec.sequence_number),
                    )
                )
            return out

    # -- invariants ---------------------------------------------------------------

    def _check(self) -> None:
        """Assert every internal invariant; for tests. O(n log n)."""
        with self._lock:
            self._out_of_order._check()
            oldest = self._oldest()
            if oldest is not None:
                assert oldest.skey == min(r.skey for r in self._records.values())
            for seq in range(1, self._oldest_seq):
                rec = self._records.get(seq)
                assert rec is None or rec in self._out_of_order, "the pointer passed a live record"
            for rec in self._out_of_order:
                assert self._records.get(rec.skey & SEQ_MASK) is rec
            self._fresh._check()
            self._received._check()
            lane = list(self._lane.values())
            assert all(a.vkey < b.vkey for a, b in itertools.pairwise(lane))
            assert not lane or self._lane_min <= lane[0].vkey
            assert all(self._lane[r.skey & SEQ_MASK] is r for r in lane)
            assert not any(r in self._received for r in lane)
            self._revisible._check()
            now = self._now_us()
            assert all(r.vkey >> SEQ_BITS <= now for r in self._revisible), "visible only"
            assert not any(
                r in self._received or r.skey & SEQ_MASK in self._lane for r in self._revisible
            )
            received = len(self._lane) + len(self._received) + len(self._revisible)
            assert self._fresh_count() + received == len(self._records)
            for seq, rec in self._records.items():
                assert rec.skey & SEQ_MASK == seq
                assert rec.vkey & SEQ_MASK == seq
                assert seq <= self._seq
                if rec.receive_count == 0:
                    assert rec.token is None and rec.receipt_no == 0
                    assert self._is_fresh_indexed(rec)
                else:
                    assert rec.token is not None and rec.receipt_no == rec.receive_count
                    assert (
                        rec in self._received
                        or self._lane.get(seq) is rec
                        or rec in self._revisible
                    )
            now = self._now_us()
            visible, in_flight, delayed = self._counts(now)
            assert visible >= 0 and in_flight >= 0 and delayed >= 0
            self._check_policy()

    @abc.abstractmethod
    def _check_policy(self) -> None:
        """Assert the ordering policy's invariants."""


# -- helpers ----------------------------------------------------------------------


def _no_queue(arn: str) -> _BaseQueue | None:
    return None


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _names(param: str, value: object) -> tuple[str, ...]:
    if value is _ALL or value is None:
        return _ALL if value is _ALL else ()  # the defaults: nothing to check
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        out = tuple(value)
        if all(isinstance(v, str) for v in out):
            return out
    raise InvalidParameterValue(
        f"Value {show(value)} for parameter {param} is invalid. Reason: must be a list of strings."
    )


def _attribute_map(value: object) -> dict[str, object]:
    """A queue-attribute request: a mapping (or None), never a bare TypeError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter Attributes is invalid. Reason: must be a "
            "mapping of attribute name to value."
        )
    return dict(value)


def _filter_attributes(
    stored: tuple[StoredAttribute, ...], names: Sequence[str]
) -> tuple[StoredAttribute, ...]:
    """The attributes a MessageAttributeNames list selects (section 2.1):
    names, ``All``, ``.*``, ``*`` or a prefix ``X.*``; others are ignored.

    ``X.*`` selects every name that starts with ``X`` (the ``.*`` is a
    wildcard, not part of the prefix): recorded against real AWS, ``Hel.*``
    returned both ``Hello`` and ``Help.Me`` (issue 12, section 6).
    """
    if "All" in names or ".*" in names or "*" in names:
        return stored
    exact = set()
    prefixes = []
    for n in names:
        if n.endswith(".*"):
            prefixes.append(n[:-2])
        else:
            exact.add(n)
    return tuple(a for a in stored if a[0] in exact or any(a[0].startswith(p) for p in prefixes))


def _rough_size(entry: SendEntry) -> int:
    """Size of an invalid batch entry toward the 1 MiB batch total."""
    body = entry.body if isinstance(entry.body, str) else ""
    return len(body.encode("utf-8", "surrogatepass"))


def _fail(message: str) -> NoReturn:
    raise InvalidParameterValue(message)


#: Member types of boto3-shaped batch entries; a wrong type fails the whole
#: request, as botocore's own parameter validation does.
_ENTRY_TYPES: dict[str, type] = {
    "Id": str,
    "MessageBody": str,
    "DelaySeconds": int,
    "MessageAttributes": Mapping,
    "MessageSystemAttributes": Mapping,
    "MessageDeduplicationId": str,
    "MessageGroupId": str,
    "ReceiptHandle": str,
    "VisibilityTimeout": int,
}
#: The members that describe a message in SendMessage and in a
#: SendMessageBatchRequestEntry (the entry adds Id, the request QueueUrl).
MESSAGE_MEMBERS = (
    "MessageBody",
    "DelaySeconds",
    "MessageAttributes",
    "MessageSystemAttributes",
    "MessageDeduplicationId",
    "MessageGroupId",
)
_SEND_KEYS = ("Id", *MESSAGE_MEMBERS)


def _aws_entry(raw: Mapping[str, Any], allowed: tuple[str, ...]) -> Mapping[str, Any]:
    """Check a boto3-shaped batch entry: known members of the right types."""
    unknown = [k for k in raw if k not in allowed]
    if unknown:
        _fail(f"Unknown parameter {unknown[0]} in a batch entry.")
    for key, value in raw.items():
        kind = _ENTRY_TYPES[key]
        if value is not None and (
            not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        ):
            wanted = "a structure" if kind is Mapping else kind.__name__
            _fail(f"Value {show(value)} for parameter {key} is invalid. Reason: must be {wanted}.")
        if isinstance(value, Mapping):
            for name, item in value.items():
                if not isinstance(item, Mapping):
                    _fail(
                        f"Value {show(item)} for parameter {key}.{name} is invalid. Reason: "
                        "must be a structure."
                    )
    return raw


def system_trace(system: Mapping[str, Any] | None) -> Any:
    """The AWSTraceHeader of a MessageSystemAttributes map, the only key SQS
    accepts (section 2.1)."""
    if not system:
        return None
    unknown = set(system) - {"AWSTraceHeader"}
    if unknown:
        _fail(
            f"Value {sorted(unknown)[0]} for parameter MessageSystemAttributes is invalid. "
            "Reason: only AWSTraceHeader is supported."
        )
    return system.get("AWSTraceHeader")


#: A batch entry as the batch operations use it: (Id, the arguments of the
#: per-entry action). Plain tuples: building an attrs entry per item would cost
#: more than the action on the hot path.
_Item = tuple[Any, tuple[Any, ...]]


def _not_an_entry(raw: object) -> NoReturn:
    _fail(f"Value {show(raw)} for parameter Entries is invalid. Reason: not a batch entry.")


def _coerce_send(index: int, raw: object) -> _Item:
    if isinstance(raw, SendEntry):
        return raw.id, (raw,)
    if isinstance(raw, str):
        return str(index), (SendEntry(str(index), raw),)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, _SEND_KEYS)
        entry = SendEntry(
            e.get("Id"),  # type: ignore[arg-type]
            e.get("MessageBody"),  # type: ignore[arg-type]
            e.get("DelaySeconds"),
            e.get("MessageAttributes"),
            e.get("MessageGroupId"),
            e.get("MessageDeduplicationId"),
            system_trace(e.get("MessageSystemAttributes")),
        )
        return entry.id, (entry,)
    _not_an_entry(raw)


def _coerce_delete(index: int, raw: object) -> _Item:
    if isinstance(raw, str):
        return str(index), (raw,)
    if isinstance(raw, DeleteEntry):
        return raw.id, (raw.receipt_handle,)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, ("Id", "ReceiptHandle"))
        return e.get("Id"), (e.get("ReceiptHandle"),)
    _not_an_entry(raw)


def _coerce_change(index: int, raw: object) -> _Item:
    if isinstance(raw, ChangeVisibilityEntry):
        return raw.id, (raw.receipt_handle, raw.visibility_timeout)
    if isinstance(raw, Mapping):
        e = _aws_entry(raw, ("Id", "ReceiptHandle", "VisibilityTimeout"))
        return e.get("Id"), (e.get("ReceiptHandle"), e.get("VisibilityTimeout", 0))
    _not_an_entry(raw)


def _batch_entries(entries: object, entry_name: str, coerce: Any) -> list[_Item]:
    """Whole-request batch checks (section 2.1): nothing is done if one fails."""
    if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        _fail(f"Value {show(entries)} for parameter Entries is invalid. Reason: must be a list.")
    raw = list(entries)
    if not raw:
        raise EmptyBatchRequest(f"There should be at least one {entry_name} in the request.")
    if len(raw) > L.BATCH_ENTRIES_MAX:
        raise TooManyEntriesInBatchRequest(
            f"Maximum number of entries per request are 10. You have sent {len(raw)}."
        )
    items: list[_Item] = [coerce(i, e) for i, e in enumerate(raw)]
    ids = [item[0] for item in items]
    if not _validate.batch_entry_ids(ids):
        raise InvalidBatchEntryId()
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for entry_id in ids:
            if entry_id in seen:
                raise BatchEntryIdsNotDistinct(f"Id {entry_id} repeated.")
            seen.add(entry_id)
    return items


def _each(items: list[_Item], action: Callable[..., None], now: int) -> BatchResult:
    """``action(*args, now)`` for each entry, each failure reported with its Id."""
    successful: dict[str, SendResult | None] = {}
    failed: list[BatchFailure] = []
    for entry_id, args in items:
        try:
            action(*args, now)
        except SQSError as err:
            failed.append(BatchFailure(entry_id, err.code, err.message, err.sender_fault))
        else:
            successful[entry_id] = None
    return BatchResult(successful, tuple(failed))
