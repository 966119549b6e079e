"""The message lifecycle: the records, their indexes and the transitions.

States and legal transitions (``docs/design.md`` principle 3)::

                send                    receive                delete
    (none) ---------> DELAYED ---------> VISIBLE ---------> IN FLIGHT ---------> (deleted)
                        |   delay ends    ^   |    receive       |  |
                        |                 |   +------------------+  | change visibility
                        |                 +--- visibility ends -----+ (re-hides, counts
                        |                                             from the call)
                        +--> (expired)   retention ends, from any state
                             (dead-lettered)  a receive finds receive count >= maxReceiveCount
                             (moved)          a message move task takes it (``_deadletter.py``)
                             (purged)         PurgeQueue, from any state

The transitions are the methods :meth:`Lifecycle._enqueue` (sent, or arrived as
a dead letter), :meth:`~Lifecycle._deliver` (received), :meth:`~Lifecycle._rehide`
(visibility changed), :meth:`~Lifecycle._drop` (deleted, expired, dead-lettered,
moved) and :meth:`~Lifecycle._purge`; :meth:`~Lifecycle._advance` applies the
deadlines that passed (expiry). Their one-pass forms for a batch (``_admit``,
``_admit_bodies``, ``_admit_body``: stamp and enqueue; ``_deliver_all``;
``_drop_all``) do the same per record, with fewer Python calls per message
(``benchmarks/RESULTS.md`` §2b), and go record by record through the
transition itself when there are observers or an ordering that tracks
records. They are the only code that changes a stored message, and each
reports its change to the queue's observers through one narrow interface,
:class:`Observer` (history is one; see ``docs/architecture.md``). An operation
that made a message receivable wakes the long polls waiting on the queue
(:meth:`Lifecycle._notify`; the polls themselves are ``_polling.py``'s).

A message's state is derived, never stored: a record is *fresh* until its first
receive (DELAYED while its delay runs, VISIBLE after) and *received* after (IN
FLIGHT while its visibility timeout runs, VISIBLE after). Both kinds sit in
indexes keyed by the time they next become receivable (a record's ``R_VKEY``, a
packed key: ``_message.key_at``), so the exact counts of visible, in-flight and
delayed messages are bisections.

Two lanes keep the common case off the sorted indexes (benchmarks/RESULTS.md
§2): the *ready lane*, the fresh messages sent without delay, in chunks of
records the collector does not walk (``_store.ReadyLane``; they
arrive in key order; standard queues only), and the *in-flight lane*, an
OrderedDict of received messages whose deadlines arrive in order (every
receive with the same visibility timeout). A lane record whose deadline passes
moves to the sorted index in ``_settle``, before anything reads the indexes.

Deadlines are applied lazily: each operation first drops whatever expired by
``now`` (retention, then the time windows such as FIFO deduplication), in
O(k log n) for k expired messages, and settles the lane.

Which receivable message a receive returns is the :class:`Ordering`'s
business (``_ordering.py``): the lifecycle consults it (``select``,
``next_due``) and, if it keeps structures of its own (FIFO group chains),
notifies it of each transition. An ordering never calls a transition.
"""

from __future__ import annotations

import abc
import itertools
import operator
import random as _random
import struct
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from hmac import compare_digest
from operator import itemgetter
from typing import Any, ClassVar, Protocol

from sortedcontainers import SortedKeyList, SortedList

from sqsqueue._clock import Waiter
from sqsqueue._faults import Faults
from sqsqueue._limits import RECEIVE_VISIBILITY_BUDGET, US
from sqsqueue._message import (
    R_BODY,
    R_COUNT,
    R_DEDUP,
    R_EXTRA,
    R_GROUP,
    R_ID,
    R_RECEIPT,
    R_REHIDES,
    R_SIZE,
    R_SKEY,
    R_TOKEN,
    R_VKEY,
    SEQ_BITS,
    SEQ_MASK,
    X_SEQNO,
    HistoryEvent,
    _Record,
    key_at,
    key_time,
    last_key,
)
from sqsqueue._metrics import Tally
from sqsqueue._receipts import _HANDLE_LEN, _HANDLE_VERSION, Receipts, _a2b
from sqsqueue._receipts import _unpack as _unpack_handle
from sqsqueue._store import BLOCK, BLOCK_BITS, CHUNK, KEYS, LOW, NO_BLOCK, ReadyLane, Records

_VKEY = itemgetter(R_VKEY)
_SKEY = itemgetter(R_SKEY)
_NEVER = 1 << 200  # a vkey later than any (time < 2**63 us, shifted by SEQ_BITS)
_BUDGET_US = RECEIVE_VISIBILITY_BUDGET * US
_LAST_IN_CHUNK = CHUNK - 1


class Observer(Protocol):
    """What the lifecycle reports every change of stored message state to.

    ``event`` is one of ``sent``, ``dead_letter_arrived`` (:meth:`Lifecycle._enqueue`),
    ``received`` (``_deliver``), ``visibility_changed`` (``_rehide``),
    ``deleted``, ``expired``, ``dead_lettered``, ``moved`` (``_drop``),
    ``purged`` and ``queue_deleted`` (``_purge``, once per message); and, on
    FIFO queues, ``receive_attempt`` (a ReceiveRequestAttemptId remembered for
    a delivered message, ``detail["attempt"]``). ``rec`` is the record after
    the change (before it for drops); ``at`` the moment in microseconds;
    ``detail`` what the event adds (receipt number, new deadline, destination).
    FIFO deduplication entries are not reported apart: each is made by a
    ``sent`` report (the record's ``dedup_id``, ``group_id`` and send time).
    """

    def report(self, event: str, rec: _Record, at: int, detail: Mapping[str, object]) -> None: ...

    def queue_changed(self, event: str) -> None:
        """The queue's own state changed (``Lifecycle._queue_changed``):
        ``settings`` (attributes, tags, policy) or ``purged`` (PurgeQueue: the
        purge window started, the FIFO windows were emptied)."""


class Window(Protocol):
    """A time window the lifecycle expires with the messages (FIFO
    deduplication ids, receive attempts): ``expire(now)`` drops what ended,
    ``clear()`` forgets everything (PurgeQueue)."""

    def expire(self, now: int) -> None: ...

    def clear(self) -> None: ...


class History:
    """The :class:`Observer` behind ``Queue.keep_history`` and ``Queue.history``."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: dict[str, list[HistoryEvent]] = {}

    def report(self, event: str, rec: _Record, at: int, detail: Mapping[str, object]) -> None:
        self.events.setdefault(rec[R_ID], []).append(HistoryEvent(at / US, event, detail))

    def queue_changed(self, event: str) -> None:
        pass


class Ordering(abc.ABC):
    """Which receivable records a receive takes, and when one next becomes due.

    Consulted by the lifecycle, which owns every index; an ordering reads them
    (and may move received records between the lifecycle's own indexes with
    ``Lifecycle._revisit``), never changes a message's state.
    """

    #: Notify this ordering of each transition (``linked``, ``moved``, ``unlinked``).
    TRACKS: ClassVar[bool] = False
    #: Fresh messages sent without delay may go to the lifecycle's ready lane.
    READY_LANE: ClassVar[bool] = False
    #: Only the latest receipt, and only while in flight, may delete or change (FIFO).
    LATEST_RECEIPT_ONLY: ClassVar[bool] = False
    #: A dead letter keeps its original enqueue time (standard) or gets a new one (FIFO).
    KEEPS_ENQUEUE_TIME: ClassVar[bool] = True
    #: The ordering keeps the never-received records itself (FIFO's chains): the
    #: lifecycle indexes none of them, and asks it for ``delayed`` and ``fresh_records``.
    KEEPS_FRESH: ClassVar[bool] = False

    def __init__(self, life: Lifecycle) -> None:
        self.life = life

    def reset(self) -> None:
        """Forget every record (the lifecycle was emptied)."""

    @abc.abstractmethod
    def select(self, now: int, limit: int, threshold: int) -> tuple[list[_Record], list[_Record]]:
        """Up to ``limit`` receivable records in delivery order, and the records
        to dead-letter instead (receive count already ``>= threshold`` when
        ``threshold`` > 0, section 11). Changes no message's state."""

    @abc.abstractmethod
    def next_due(self, now: int) -> int | None:
        """The earliest time after ``now`` when a receive could find something."""

    def fresh_bound(self, now: int) -> int:
        """Largest ``vkey`` of a fresh record that is receivable at ``now``."""
        return last_key(now)

    def sequence_number(self, seq: int) -> int | None:
        """The SequenceNumber of the message stored with ``seq`` (FIFO only)."""
        return None

    def delayed(self, now: int) -> int:
        """How many never-received records are not receivable yet at ``now``
        (still in their delay). O(log n) from the lifecycle's sorted index."""
        fresh = self.life._fresh
        count: int = len(fresh) - fresh.bisect_key_right(self.fresh_bound(now))
        return count

    def fresh_records(self) -> Iterable[_Record]:
        """The never-received records this ordering keeps (``KEEPS_FRESH``), for
        the lifecycle's checks."""
        return ()

    def linked(self, rec: _Record) -> None:
        """``rec`` was stored (TRACKS only)."""

    def moved(self, rec: _Record, was_fresh: bool) -> None:
        """``rec``'s ``vkey`` changed: received, re-hidden (TRACKS only)."""

    def unlinked(self, rec: _Record) -> None:
        """``rec`` left the queue (TRACKS only)."""

    def check(self) -> None:
        """Assert this ordering's invariants. O(n)."""


class Lifecycle:
    """The records of one queue, their indexes and the transitions.

    The base of every queue class (``_operations._BaseQueue``, by way of
    ``_settings.QueueSettings``); its state is set up by :meth:`_init_lifecycle`.
    Every method runs under the queue's lock.
    """

    _records: Records
    _ordering: Ordering
    # Fields the queue sets (``_operations._BaseQueue.__init__``, and
    # ``QueueSettings._apply_config`` for the two times), read here and by orderings:
    _retention_us: int
    _delay_s: int
    _rng: _random.Random
    #: Where message ids come from (``id_source``), drawn from ``_rng``.
    _id_prefix: str
    _id_mult: int
    _id_offset: int
    _receipts: Receipts
    _account_id: str
    #: Fault emulation (standard queues; see Queue.faults): None = exact.
    _faults: Faults | None = None
    _fault_rng: _random.Random
    #: The CloudWatch counters (``_metrics.py``), counted where the transitions
    #: report; None counts nothing (a benchmark's baseline).
    _tally: Tally | None

    def _init_lifecycle(self, ordering: Callable[[Lifecycle], Ordering]) -> None:
        self._seq = 0
        #: Called with ``now`` before anything expires (a Broker drives move tasks).
        self._tick: Callable[[int], None] | None = None
        self._observers: tuple[Observer, ...] = ()
        self._tally = Tally()
        #: Long polls waiting for a change, in the order they began to wait.
        self._waiters: dict[Waiter, None] = {}
        self._windows: tuple[Window, ...] = ()
        self._ordering = ordering(self)
        self._id_prefix, self._id_mult, self._id_offset = id_source(self._rng)
        self._tracks = self._ordering.TRACKS
        self._ready_lane = self._ordering.READY_LANE
        self._keeps_fresh = self._ordering.KEEPS_FRESH
        self._reset_messages()

    def _reset_messages(self) -> None:
        """Empty the queue: O(1) here, the old structures are freed by refcounting."""
        self._records = records = Records()
        # Retention index. Records enqueued in time order (all sends: queue time
        # never runs backwards) expire in sequence order, so a pointer to the
        # lowest live sequence number finds the oldest one: it only moves
        # forward, skipping each deleted number once (amortised O(1), no index
        # upkeep on the hot path). Dead letters that keep an older enqueue time
        # (standard DLQs) are "out of order" and go to a sorted index instead.
        self._oldest_seq = self._seq + 1
        self._last_skey = 0
        #: No stored in-order record expires before this time (microseconds):
        #: each one's enqueue time plus the retention period is at least this
        #: (out-of-order ones have their own index). Operations compare ``now``
        #: with it instead of looking up the oldest record; 0 (unknown) makes
        #: the next one run ``_advance``, which sets it again.
        self._expiry_floor = 0
        self._out_of_order: SortedList = SortedList()  # their enqueue keys
        # Fresh records: the ready lane (in key order, all receivable) and the
        # sorted index of the others (delayed ones, dead letters, FIFO's).
        self._ready = ReadyLane(records)
        self._fresh: SortedKeyList = SortedKeyList(key=_VKEY)
        # Received records, by vkey. The in-flight lane holds those received
        # with a deadline later than the lane's tail when received (the usual
        # case): an OrderedDict, so receive and delete cost O(1) instead of a
        # sorted-index insert and removal each. ``_settle`` moves lane records
        # whose deadline passed into ``_received``, the sorted index that holds
        # every other received record. ``_lane_min`` is a lower bound of the
        # lane's smallest vkey (exact when set; deletions only raise the true
        # minimum), so checking for due lane records is one comparison. The
        # price is memory: an OrderedDict entry costs about 100 bytes more per
        # message in flight than a sorted-index slot.
        self._received: SortedKeyList = SortedKeyList(key=_VKEY)
        # Received records visible again, by enqueue time (``skey``): the
        # standard ordering moves them here from ``_received`` (``_revisit``)
        # so it can deliver them in send order. Every received record is in
        # exactly one of the lane, ``_received`` and ``_revisible``.
        self._revisible: SortedKeyList = SortedKeyList(key=_SKEY)
        self._lane: OrderedDict[int, _Record] = OrderedDict()
        self._lane_min = _NEVER
        self._ordering.reset()

    # -- reports ------------------------------------------------------------------

    def _report(self, event: str, rec: _Record, at: int, **detail: object) -> None:
        if rec[R_ID] is None:
            rec = self._realized(rec)  # observers see every field
        for observer in self._observers:
            observer.report(event, rec, at, detail)

    def _ids_of(self, seq: int) -> tuple[str, int | None]:
        """The message id and the sequence number (None on a standard queue)
        of message ``seq`` sent here: functions of ``seq``. O(1)."""
        prefix, mult, offset = self._id_prefix, self._id_mult, self._id_offset
        message_id = prefix + ((seq * mult + offset) & _ID_MASK).to_bytes(6).hex()  # inlined
        return message_id, self._ordering.sequence_number(seq)

    def _derived(self, seq: int, extra: tuple[Any, ...] | None) -> tuple[str, tuple[Any, ...]]:
        """The message id of message ``seq`` and its extra fields with its
        sequence number (both functions of ``seq``): what a record without an
        id stands for. O(1)."""
        message_id, number = self._ids_of(seq)
        if extra is None:
            return message_id, (None, None, None, number, 0, None)
        return message_id, (*extra[:X_SEQNO], number, *extra[X_SEQNO + 1 :])

    def _realized(self, rec: _Record) -> _Record:
        """``rec`` with every field: a FIFO message sent here and never
        received holds no id and no sequence number (``_message``, "the stored
        record"), which this derives; any other record is itself. For what
        reads records outside the transitions (reports, inspection, moves,
        checks). O(1)."""
        if rec[R_ID] is not None:
            return rec
        message_id, extra = self._derived(rec[R_SKEY] & SEQ_MASK, rec[R_EXTRA])
        return (*rec[:R_ID], message_id, *rec[R_ID + 1 : R_EXTRA], extra, *rec[R_EXTRA + 1 :])

    def _queue_changed(self, event: str) -> None:
        """Tell the observers the queue's own state changed (not a message's):
        ``settings`` or ``purged`` (see :meth:`Observer.queue_changed`)."""
        for observer in self._observers:
            observer.queue_changed(event)

    def _add_observer(self, observer: Observer) -> None:
        """Report every later change to ``observer`` as well (History, a
        durable store). O(observers)."""
        self._observers = (*self._observers, observer)

    def _notify(self, count: int | None = None) -> None:
        """Wake long polls so they look again: every one (``count`` None: a
        visibility change, a delete that may unlock a FIFO group, a close...),
        or the ``count`` that waited longest and were not woken yet (a send of
        ``count`` messages: waking every poll for one message would have them
        all look and all but one wait again, a cost that grows with the polls
        held). A woken poll that leaves without looking passes its wake-up on
        (``_polling.long_poll``), so none is lost. O(w) for all, O(count + woken) else."""
        waiters = self._waiters
        if not waiters:
            return
        if count is None:
            for waiter in waiters:
                waiter.wake()
            return
        for waiter in waiters:
            if count <= 0:
                break
            if not waiter.called:
                waiter.wake()
                count -= 1

    def _restore(self, records: Iterable[_Record], seq: int) -> None:
        """Index stored records, in sequence order, as they were: no transition,
        no report (a durable broker reopening, ``_durable.py``). ``seq`` is the
        last sequence number issued. O(n log n)."""
        tracks = self._tracks
        ordering = self._ordering
        for rec in records:
            skey = rec[R_SKEY]
            self._records[skey & SEQ_MASK] = rec  # key_seq, inlined
            if skey >= self._last_skey:
                self._last_skey = skey
            else:
                self._out_of_order.add(skey)
            if not rec[R_COUNT]:
                self._add_fresh(rec)
                if tracks:
                    ordering.linked(rec)
            else:
                self._received.add(rec)
                if tracks:
                    ordering.linked(rec)
                    ordering.moved(rec, True)
        self._seq = seq
        first = self._records.first()
        self._oldest_seq = seq + 1 if first is None else first
        self._expiry_floor = 0  # older records than any before: _advance sets it

    # -- the transitions ------------------------------------------------------------
    #
    # A record is a tuple (``_message``, "the stored record"): a transition that
    # changes one builds its successor and puts it in ``_records`` and in the
    # index it moves to, in place of the one it took out; the successor is
    # what observers and orderings are told of.

    def _next_seq(self) -> int:
        """A new sequence number for a message arriving in this queue: every
        stored message has its own, in arrival order. O(1)."""
        self._seq += 1
        return self._seq

    def _stamp(self, rec: _Record, now: int, due: int, sender_id: str) -> _Record:
        """The record to store for a draft record: its sequence number, id,
        sender and times given (the draft is not changed)."""
        self._seq = seq = self._seq + 1  # _next_seq, inlined: once per message sent
        skey = (now << SEQ_BITS) | seq  # key_at, inlined: once per message sent
        return (
            skey,
            skey if due == now else (due << SEQ_BITS) | seq,  # one int when due now
            message_id((self._id_prefix, self._id_mult, self._id_offset), seq),
            rec[R_BODY],
            rec[R_SIZE],
            sender_id,
            *rec[R_COUNT:],  # a draft's: never received; and its extra fields
        )

    def _admit(
        self, drafts: Iterable[tuple[_Record, int | None]], now: int, sender_id: str
    ) -> list[_Record]:
        """:meth:`_stamp` then :meth:`_enqueue` (``sent``) for each draft record
        with its DelaySeconds (None: the queue's), in one pass: a send batch of
        a queue whose ordering tracks nothing. Returns the stored records.
        O(k) with the ready lane, O(k log n) for delayed messages."""
        if self._observers or self._tracks:
            # Reports and orderings that track records go record by record.
            out = []
            for d, delay in drafts:
                delay_s = self._delay_s if delay is None else delay
                rec = self._stamp(d, now, now + delay_s * US, sender_id)
                self._enqueue(rec)
                out.append(rec)
            return out
        seq = first = self._seq
        records = self._records
        blocks = records.blocks
        ready = self._ready if self._ready_lane else None
        prefix, mult, offset = self._id_prefix, self._id_mult, self._id_offset
        at = now << SEQ_BITS
        queue_due = now + self._delay_s * US
        last_skey = self._last_skey
        sizes = 0
        stored = []
        for d, delay in drafts:
            # _stamp, _enqueue and _add_fresh, inlined.
            seq += 1
            due = queue_due if delay is None else now + delay * US
            skey = at | seq  # key_at, inlined
            vkey = skey if due == now else (due << SEQ_BITS) | seq  # one int when due now
            size = d[R_SIZE]
            rec = (
                skey,
                vkey,
                prefix + ((seq * mult + offset) & _ID_MASK).to_bytes(6).hex(),
                d[R_BODY],
                size,
                sender_id,
                *d[R_COUNT:],  # a draft's: never received; and its extra fields
            )
            block = blocks.get(seq >> BLOCK_BITS)
            if block is None:
                block = blocks[seq >> BLOCK_BITS] = {}
                records.opened(seq >> BLOCK_BITS)
            block[KEYS[seq & LOW]] = rec
            stored.append(rec)
            sizes += size
            if skey >= last_skey:
                last_skey = skey
            else:
                self._out_of_order.add(skey)
            if ready is not None and due == now and (not ready.size or ready.tail_vkey < vkey):
                ready.append(rec)
            else:
                self._fresh.add(rec)
        records.count += seq - first
        self._seq = seq
        self._last_skey = last_skey
        tally = self._tally
        if tally is not None:
            tally.sent += seq - first
            tally.sent_bytes += sizes
        return stored

    def _admit_bodies(self, bodies: list[str], now: int, sender_id: str) -> list[str]:
        """:meth:`_admit` of plain ASCII bodies (no attribute, no delay of their
        own), building their records here with their final fields: a send
        batch's common case. Returns the message ids. O(k) with the ready
        lane, O(k log n) with a queue delay."""
        seq = first = self._seq
        at = now << SEQ_BITS
        due = now + self._delay_s * US
        ready = self._ready
        if (
            self._observers
            or self._tracks
            or at | (seq + 1) < self._last_skey
            or (ready.size and ready.tail_vkey >= (due << SEQ_BITS) | (seq + 1))
        ):
            # Reports, tracking orderings, keys out of order: the general path.
            drafts = [
                (0, 0, "", b, len(b), "", 0, 0, None, 0, 0, 0, None, None, None) for b in bodies
            ]
            admitted = self._admit(zip(drafts, itertools.repeat(None)), now, sender_id)
            return [rec[R_ID] for rec in admitted]
        vat = due << SEQ_BITS
        undelayed = due == now
        to_lane = self._ready_lane and undelayed
        records = self._records
        blocks = records.blocks
        prefix, mult, offset = self._id_prefix, self._id_mult, self._id_offset
        ids = []
        stored: list[_Record] = []
        block = blocks.get((seq + 1) >> BLOCK_BITS)
        for body in bodies:
            # _stamp, _enqueue and _add_fresh, inlined; the keys increase.
            seq += 1
            message_id = prefix + ((seq * mult + offset) & _ID_MASK).to_bytes(6).hex()
            skey = at | seq  # key_at, inlined
            # Never received, no extra fields: the receive state's zeros, then None.
            # Due now, the two keys are one int object (40 bytes a message less).
            rec = (
                skey,
                skey if undelayed else vat | seq,
                message_id,
                body,
                len(body),
                sender_id,
                0,
                0,
                None,
                0,
                0,
                0,
                None,
                None,
                None,
            )
            if block is None or not seq & LOW:  # a new block begins
                block = blocks.get(seq >> BLOCK_BITS)
                if block is None:
                    block = blocks[seq >> BLOCK_BITS] = {}
                    records.opened(seq >> BLOCK_BITS)
            block[KEYS[seq & LOW]] = rec
            if to_lane:
                stored.append(rec)
            else:
                self._fresh.add(rec)
            ids.append(message_id)
        if to_lane:
            ready.extend(stored)
        records.count += seq - first
        self._seq = seq
        self._last_skey = at | seq
        tally = self._tally
        if tally is not None:
            tally.sent += seq - first
            tally.sent_bytes += sum(map(len, bodies))
        return ids

    def _admit_body(self, body: str, now: int, sender_id: str) -> str:
        """:meth:`_admit_bodies` of one body: a SendMessage's common case.
        Returns the message id. O(1) with the ready lane, O(log n) with a
        queue delay."""
        seq = self._seq + 1
        skey = (now << SEQ_BITS) | seq  # key_at, inlined
        delay_s = self._delay_s
        vkey = ((now + delay_s * US) << SEQ_BITS) | seq if delay_s else skey  # key_at, inlined
        ready = self._ready
        if (
            self._observers
            or self._tracks
            or skey < self._last_skey
            or (ready.size and ready.tail_vkey >= vkey)
        ):
            return self._admit_bodies([body], now, sender_id)[0]
        # _stamp, _enqueue and _add_fresh, inlined.
        self._seq = seq
        self._last_skey = skey
        tail = (seq * self._id_mult + self._id_offset) & _ID_MASK
        message_id = self._id_prefix + tail.to_bytes(6).hex()  # message_id, inlined
        # Never received, no extra fields: the receive state's zeros, then None.
        rec = (
            skey,
            vkey,
            message_id,
            body,
            len(body),
            sender_id,
            0,
            0,
            None,
            0,
            0,
            0,
            None,
            None,
            None,
        )
        records = self._records
        # Subscripts, not get(): a dict subscript costs less than a method
        # call, and a try costs nothing until it raises (once a block).
        try:
            block = records.blocks[seq >> BLOCK_BITS]
        except KeyError:
            block = records.blocks[seq >> BLOCK_BITS] = {}
            records.opened(seq >> BLOCK_BITS)
        block[KEYS[seq & LOW]] = rec
        records.count += 1
        if not delay_s and self._ready_lane:  # due now: the ready lane
            # ReadyLane.append, inlined.
            lane_tail = ready.tail
            lane_tail.append(rec)
            if len(lane_tail) == CHUNK:
                ready.chunks.append(tuple(lane_tail))
                ready.tail = []
            ready.size += 1
            ready.tail_vkey = vkey
        else:
            self._fresh.add(rec)
        tally = self._tally
        if tally is not None:
            tally.sent += 1
            tally.sent_bytes += len(body)
        return message_id

    def _enqueue(self, rec: _Record, event: str = "sent", at: int | None = None) -> None:
        """(none) -> DELAYED or VISIBLE. ``at``: the event time, when it is not the
        enqueue time (a standard dead letter keeps its original enqueue time)."""
        skey = rec[R_SKEY]
        self._records[skey & SEQ_MASK] = rec  # key_seq, inlined: the send path
        if skey >= self._last_skey:
            self._last_skey = skey
        else:
            self._out_of_order.add(skey)
        self._add_fresh(rec)
        if self._tracks:
            self._ordering.linked(rec)
        tally = self._tally
        if tally is not None:
            if event == "sent":
                tally.sent += 1
                tally.sent_bytes += rec[R_SIZE]
            elif at is not None and at > skey >> SEQ_BITS:  # key_time, inlined
                # A dead letter that kept an older enqueue time: its age counts
                # from its arrival (``_metrics.Tally.arrivals``).
                tally.arrivals.append((skey & SEQ_MASK, at))
        if self._observers:
            t = key_time(skey) if at is None else at
            # As in inspect(): a FIFO fresh vkey excludes the queue delay.
            shift = t - key_time(self._ordering.fresh_bound(t))
            self._report(event, rec, t, visible_at=(key_time(rec[R_VKEY]) + shift) / US)

    def _deliver(self, rec: _Record, now: int, visibility_us: int) -> tuple[str, _Record]:
        """VISIBLE -> IN FLIGHT, issuing a new receipt. Returns the receipt
        handle and the record as it is now."""
        # Runs once per message received, so locals stand in for repeated
        # attribute reads, and the key arithmetic is inlined (key_at).
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        (
            skey,
            _,
            message_id,
            body,
            size,
            sender,
            count,
            receipt_no,
            _,
            first,
            _,
            rehides,
            extra,
            group,
            dedup,
        ) = rec
        if message_id is None:
            # A FIFO message's first receive stores the id and the sequence
            # number its sequence number gives (see _realized).
            message_id, extra = self._derived(seq, extra)
        was_fresh = not count
        if was_fresh:
            self._remove_fresh(rec)
        else:
            self._unindex_received(rec)
        count += 1
        receipt_no += 1
        vkey = ((now + visibility_us) << SEQ_BITS) | seq  # key_at, inlined
        token, handle = self._receipts.issue(seq, receipt_no)
        rec = self._records.blocks[seq >> BLOCK_BITS][seq & LOW] = (
            skey,
            vkey,
            message_id,
            body,
            size,
            sender,
            count,
            receipt_no,
            token,
            first or now,  # a dead letter keeps its first receive
            now + _BUDGET_US,
            rehides,
            extra,
            group,
            dedup,
        )
        lane = self._lane
        if not lane:
            self._lane_min = vkey
            lane[seq] = rec
        elif vkey > lane[next(reversed(lane))][R_VKEY]:  # after the lane's tail: O(1)
            lane[seq] = rec
        else:
            self._received.add(rec)
        if self._tally is not None:
            self._tally.received += 1
        if self._tracks:
            self._ordering.moved(rec, was_fresh)
        if self._observers:
            visible_at = key_time(vkey) / US
            self._report("received", rec, now, receipt=receipt_no, visible_at=visible_at)
        return handle, rec

    def _deliver_all(self, recs: list[_Record], now: int, visibility_us: int) -> list[str]:
        """:meth:`_deliver` for each of ``recs`` in order, in one pass: a
        receive's messages. Returns their receipt handles, and puts in ``recs``
        the records as they are now (each delivered record is replaced).
        O(k) with the lanes, O(k log n) at worst."""
        if self._tracks or self._observers or len(recs) == 1:
            # Orderings that track records and reports go record by record; so
            # does a receive of one message, which the pass below costs more
            # to set up than to run.
            handles = []
            for i, rec in enumerate(recs):
                handle, recs[i] = self._deliver(rec, now, visibility_us)
                handles.append(handle)
            return handles
        # The tokens and handles first, from the records as they are (each
        # receipt number one up): then one pass takes each record out of its
        # index and puts its successor in.
        tokens, handles = self._receipts.issue_all(recs)
        ready = self._ready
        chunks = ready.chunks
        lane = self._lane
        blocks = self._records.blocks
        vat = (now + visibility_us) << SEQ_BITS  # the new deadline's key, but for the seq
        cap = now + _BUDGET_US
        tail = lane[next(reversed(lane))][R_VKEY] if lane else -1
        # The ready lane's head: where it is, in which part, that part's length;
        # and how many records were taken from it.
        at = ready.head_at
        part = chunks[0] if chunks else ready.tail
        end = len(part)
        taken = 0
        # The commonest receive takes the lane's first records: its first at
        # the head and its last len(recs) - 1 further on, in one part. Then
        # they are all the lane's (select takes lane records as a run from
        # the head: the lane without holes skips none, and without faults
        # nothing reorders them), and they leave the lane at once.
        last = at + len(recs) - 1
        run = (
            at <= last < end
            and part[at] is recs[0]
            and part[last] is recs[-1]
            and not ready.holes
            and self._faults is None
        )
        if run:
            ready.skip(len(recs))
        i = 0
        for old, token in zip(recs, tokens):  # noqa: B905 (equal lengths: issue_all's)
            # The record's fields, unpacked at once (R_SKEY .. R_EXTRA, in order).
            (
                skey,
                _,
                message_id,
                body,
                size,
                sender,
                count,
                receipt_no,
                _,
                first,
                _,
                rehides,
                extra,
                group,
                dedup,
            ) = old
            seq = skey & SEQ_MASK  # key_seq, inlined
            if count:
                self._unindex_received(old)
            elif not run:
                if at < end and part[at] is old:
                    # _remove_fresh's common case, the lane's head (ReadyLane.discard),
                    # inlined: the head moves on in locals, written back below.
                    at += 1
                    taken += 1
                    if at == end:  # ReadyLane._step at the end of a chunk or of the tail
                        at = 0
                        if chunks:
                            chunks.popleft()
                            part = chunks[0] if chunks else ready.tail
                            end = len(part)
                        else:  # the tail (``part``) is done: the lane is empty
                            ready.tail.clear()
                            end = 0
                else:
                    ready.head_at = at
                    ready.size -= taken
                    taken = 0
                    self._remove_fresh(old)
                    at = ready.head_at
                    part = chunks[0] if chunks else ready.tail
                    end = len(part)
            vkey = vat | seq  # key_at, inlined
            rec = blocks[seq >> BLOCK_BITS][seq & LOW] = (
                skey,
                vkey,
                message_id,
                body,
                size,
                sender,
                count + 1,
                receipt_no + 1,
                token,
                first or now,  # a dead letter keeps its first receive
                cap,
                rehides,
                extra,
                group,
                dedup,
            )
            recs[i] = rec
            i += 1  # noqa: SIM113 (enumerate costs a tuple a message)
            if vkey > tail:  # after the lane's tail (or the lane is empty): O(1)
                if not lane:
                    self._lane_min = vkey
                lane[seq] = rec
                tail = vkey
            else:
                self._received.add(rec)
        if not run:
            ready.head_at = at
            ready.size -= taken
        if self._tally is not None:
            self._tally.received += len(recs)
        return handles

    def _rehide(self, rec: _Record, due: int, now: int) -> _Record:
        """IN FLIGHT or VISIBLE (received) -> IN FLIGHT until ``due`` (or VISIBLE
        if due <= now). Returns the record as it is now."""
        self._unindex_received(rec)
        seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
        rec = self._records.blocks[seq >> BLOCK_BITS][seq & LOW] = (
            rec[R_SKEY],
            key_at(due, seq),
            *rec[R_ID:R_REHIDES],
            rec[R_REHIDES] + 1,
            *rec[R_EXTRA:],
        )
        # A changed deadline goes to the sorted index: the lane is for the
        # in-order deadlines of receives.
        self._received.add(rec)
        if self._tracks:
            self._ordering.moved(rec, False)
        if self._observers:
            self._report("visibility_changed", rec, now, visible_at=due / US)
        return rec

    def _drop(self, rec: _Record, reason: str, now: int, **detail: object) -> None:
        """Any state -> deleted, expired, dead-lettered or moved."""
        if self._observers:
            self._report(reason, rec, now, **detail)
        skey = rec[R_SKEY]
        seq = skey & SEQ_MASK  # key_seq, inlined
        del self._records[seq]
        if seq == self._oldest_seq:
            # Consumers mostly delete oldest first: step the retention pointer
            # past the deleted number, so that _advance mostly stays on its fast
            # path (the next number may be gone too: _oldest walks on from there).
            self._oldest_seq = seq + 1
        # Out of order: mostly standard dead letters (they keep their enqueue
        # time). Empty, the check costs nothing.
        # ``_len``: a SortedList's length without its Python-level __len__.
        if self._out_of_order._len and skey in self._out_of_order:
            self._out_of_order.remove(skey)
        if not rec[R_COUNT]:
            self._remove_fresh(rec)
        elif self._lane.pop(seq, None) is None:  # _unindex_received's common case, inlined
            self._unindex_received(rec)
        if self._tracks:
            self._ordering.unlinked(rec)

    def _delete_latest(self, handle: object, now: int) -> bool:
        """DeleteMessage's common case on a queue any receipt may delete with
        (standard, no faults), in one call: when ``handle`` is the latest
        receipt of a stored message (``Receipts.latest``), count it and drop
        it (``deleted``); else change nothing and return False (the caller
        takes the general path, which refuses or accepts the handle). O(1)
        for a record in the in-flight lane, O(log n) otherwise."""
        # Receipts.latest, inlined (a call per message deleted; the same
        # checks in the same order, held equal by tests/test_hot_paths.py).
        if type(handle) is not str or len(handle) != _HANDLE_LEN:
            return False
        try:
            version, tag, seq, receipt_no, token = _unpack_handle(_a2b(handle, strict_mode=True))
        except (ValueError, struct.error):  # binascii.Error and UnicodeError are ValueErrors
            return False
        records = self._records
        try:  # records.get, inlined: subscripts cost less than get() calls
            block = records.blocks[seq >> BLOCK_BITS]
            rec = block[seq & LOW]
        except KeyError:
            return False  # gone, or never was
        if (
            version != _HANDLE_VERSION  # version 1: see Receipts.verify
            or tag != self._receipts._tag
            or receipt_no != rec[R_RECEIPT]
            # Receipts.latest's ``rec[R_TOKEN] is None``: a record has no token
            # exactly while its receipt number is 0 (check_indexes), and here
            # the two receipt numbers are equal.
            or not receipt_no
            or not compare_digest(rec[R_TOKEN], token)
        ):
            return False
        tally = self._tally
        if tally is not None:
            tally.deleted += 1
        if (
            self._observers
            or self._tracks
            or self._out_of_order._len
            or self._lane.pop(seq, None) is None  # not in the lane (or never received)
        ):
            self._drop(rec, "deleted", now)
            return True
        # _drop's common case, inlined: a received record taken from the lane.
        del block[seq & LOW]  # del records[seq], inlined
        records.count -= 1
        # Empty, and not the block sends fill (``a ^ b >= BLOCK``: a and b are
        # not in one block; a comparison costs less than two shifts): drop it.
        if not block and seq ^ self._seq >= BLOCK and (k := seq >> BLOCK_BITS) != records.tail:
            del records.blocks[k]
        if seq == self._oldest_seq:
            self._oldest_seq = seq + 1
        return True

    def _drop_all(self, recs: Iterable[_Record], reason: str, now: int) -> None:
        """:meth:`_drop` of each of ``recs`` still stored, in order, in one pass
        (a delete batch; a record named twice is dropped once). O(k) for records
        in the lanes, O(k log n) at worst."""
        records = self._records
        if self._observers or self._tracks or self._out_of_order._len:
            # Reports, tracking orderings, out-of-order records: record by record.
            for rec in recs:
                if records.get(rec[R_SKEY] & SEQ_MASK) is rec:  # key_seq, inlined
                    self._drop(rec, reason, now)
            return
        pop = self._lane.pop
        blocks = records.blocks
        last = self._seq
        oldest = self._oldest_seq
        dropped = 0
        for rec in recs:
            seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
            try:  # subscripts, not get() calls (see _delete_latest)
                block = blocks[seq >> BLOCK_BITS]
                if block[seq & LOW] is not rec:
                    continue
            except KeyError:
                continue  # dropped by an earlier one
            # _drop, inlined (del records[seq] too; the count and the retention
            # pointer are written back after the loop).
            del block[seq & LOW]
            dropped += 1
            # Empty, and not the block sends fill (see _delete_latest): drop it.
            if not block and seq ^ last >= BLOCK and (k := seq >> BLOCK_BITS) != records.tail:
                del blocks[k]
            if seq == oldest:
                oldest = seq + 1
            if not rec[R_COUNT]:
                self._remove_fresh(rec)
            elif pop(seq, None) is None:  # _unindex_received's common case, inlined
                self._unindex_received(rec)
        records.count -= dropped
        self._oldest_seq = oldest

    def _purge(self, now: int, reason: str) -> None:
        """Every state -> ``purged`` (PurgeQueue) or ``queue_deleted``
        (DeleteQueue), at once. O(n) with observers, else O(1)."""
        if self._observers:
            for rec in self._records.values():
                self._report(reason, rec, now)
        self._reset_messages()

    def _advance(self, now: int) -> None:
        """Apply every deadline that passed by ``now``: move tasks, retention,
        the time windows, ended visibility timeouts. O(k log n) for k expired."""
        if self._tick is not None:
            # Move tasks first: each acts at its own moments up to ``now``, on the
            # messages as they were then (see _deadletter.MoveTasks.drive).
            self._tick(now)
        # The key arithmetic is inlined here (last_key): every operation runs it.
        bound = ((now - self._retention_us) << SEQ_BITS) | SEQ_MASK  # last_key, inlined
        records = self._records
        oldest = self._oldest_seq
        head = records.blocks.get(oldest >> BLOCK_BITS, NO_BLOCK).get(oldest & LOW)  # records.get
        # Fast path, taken by almost every call: the queue is empty, or the
        # pointer's record is live, in order and not yet due, so nothing can
        # have expired.
        if records.count and (head is None or head[R_SKEY] <= bound or self._out_of_order._len):
            while True:
                rec = self._oldest()
                if rec is None or rec[R_SKEY] > bound:
                    break
                # Stamp the moment retention ran out, not when it was noticed.
                expired_at = min(now, key_time(rec[R_SKEY]) + self._retention_us)
                self._drop(rec, "expired", expired_at)
            head = rec
        # The oldest record's expiry: the records after it were enqueued no
        # earlier (those that were go out of order, apart). With none stored,
        # the last enqueue key's: a record enqueued in order is no older.
        # (``head`` may be an out-of-order one, older: a lower floor, still true.)
        oldest_key = head[R_SKEY] if head is not None and records.count else self._last_skey
        self._expiry_floor = (oldest_key >> SEQ_BITS) + self._retention_us  # key_time, inlined
        for window in self._windows:
            window.expire(now)
        if self._lane_min <= ((now << SEQ_BITS) | SEQ_MASK):  # last_key, inlined
            self._settle(now)

    # -- indexes --------------------------------------------------------------------

    def _add_fresh(self, rec: _Record) -> None:
        """Index a never-received record: the ready lane if it is receivable at
        once and in key order (and the ordering uses the lane), else sorted."""
        if self._ready_lane:
            ready = self._ready
            vkey = rec[R_VKEY]
            if vkey >> SEQ_BITS == rec[R_SKEY] >> SEQ_BITS and (  # key_time, inlined
                not ready.size or ready.tail_vkey < vkey
            ):
                ready.append(rec)
                return
        if not self._keeps_fresh:
            self._fresh.add(rec)

    def _remove_fresh(self, rec: _Record) -> None:
        """Take a never-received record out of its index, before the caller
        changes or drops it. O(1) from the ready lane, O(log n) from the
        sorted index."""
        fresh = self._fresh
        # key_time, inlined: a record due at its enqueue time may be in the lane.
        if self._ready_lane and rec[R_VKEY] >> SEQ_BITS == rec[R_SKEY] >> SEQ_BITS:
            n = fresh._len
            if n:
                fresh.discard(rec)  # the sorted index takes what the lane could not
                if fresh._len < n:
                    return
            # In the lane: from its head, or (a reordering fault, a console
            # delete, retention) from further in.
            self._ready.discard(rec)
            return
        if not self._keeps_fresh:
            fresh.remove(rec)

    def _unindex_received(self, rec: _Record) -> None:
        if self._lane.pop(rec[R_SKEY] & SEQ_MASK, None) is None:  # key_seq, inlined
            if self._revisible and rec in self._revisible:
                self._revisible.remove(rec)
            else:
                self._received.remove(rec)

    def _settle(self, now: int) -> None:
        """Move lane records whose visibility timeout ended by ``now`` into the
        sorted index (IN FLIGHT -> VISIBLE: no state changes, the index does).
        Amortised O(log n) per record moved, O(1) when none is due. Every reader
        of the received indexes calls it first."""
        bound = (now << SEQ_BITS) | SEQ_MASK  # last_key(now), inlined: hot
        if self._lane_min > bound:
            return
        lane = self._lane
        while lane:
            rec = next(iter(lane.values()))
            if rec[R_VKEY] > bound:
                self._lane_min = rec[R_VKEY]
                return
            lane.popitem(last=False)
            self._received.add(rec)
        self._lane_min = _NEVER

    def _revisit(self, bound: int) -> None:
        """Move received records due by ``bound`` from deadline order
        (``_received``) to send order (``_revisible``): O(log n) each, once."""
        received = self._received
        revisible = self._revisible
        while received and received[0][R_VKEY] <= bound:
            revisible.add(received.pop(0))

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
        while rec is None or (odd and rec[R_SKEY] in odd):
            if seq >= last:
                rec = None
                break
            seq += 1
            rec = records.get(seq)
        self._oldest_seq = seq
        if odd and (rec is None or odd[0] < rec[R_SKEY]):
            return records[odd[0] & SEQ_MASK]
        return rec

    # -- counts -------------------------------------------------------------------

    def _counts(self, now: int) -> tuple[int, int, int]:
        """(visible, in flight, delayed), exact. O(log n), and the ordering's
        ``delayed`` (FIFO: O(1) without a queue delay)."""
        in_flight = self._in_flight(now)
        delayed = self._ordering.delayed(now)
        return len(self._records) - in_flight - delayed, in_flight, delayed

    def _in_flight(self, now: int) -> int:
        """Messages in flight at ``now``. O(log n)."""
        self._settle(now)
        received = self._received
        index: int = received.bisect_key_right(last_key(now))
        return len(self._lane) + len(received) - index

    def _oldest_arrival(self) -> int | None:
        """When the stored message that arrived first arrived in this queue (the
        age of ApproximateAgeOfOldestMessage counts from it); None if empty.

        Messages arrive in sequence order and ``_records`` holds them in that
        order, so the first is its first key; it arrived at its enqueue time,
        unless it is a dead letter that kept an older one, whose arrival the
        tally keeps. Amortised O(1) (each arrival entry is dropped once);
        changes no message's state. A dead letter restored by a durable broker
        has no arrival entry: its enqueue time stands in for it."""
        records = self._records
        if not records:
            return None
        seq = records.first()
        assert seq is not None
        tally = self._tally
        if tally is not None:
            arrivals = tally.arrivals
            while arrivals and arrivals[0][0] < seq:
                arrivals.popleft()  # every position below the first live one is gone
            if arrivals and arrivals[0][0] == seq:
                return arrivals[0][1]
        return key_time(records[seq][R_SKEY])

    def _first_receivable(self, now: int) -> _Record | None:
        """The record a receive at ``now`` would take first, after applying the
        deadlines up to ``now``; changes no message's state. O(log n)."""
        self._advance(now)
        self._settle(now)
        deliver, _ = self._ordering.select(now, 1, 0)
        return deliver[0] if deliver else None

    # -- invariants ---------------------------------------------------------------

    def _check_indexes(self) -> None:
        """Assert every internal invariant, reading only (:func:`check_indexes`)."""
        check_indexes(self)
        self._ordering.check()


def check_indexes(life: Lifecycle) -> None:
    """Assert every invariant of a lifecycle's records and indexes, reading
    only: no clock, no pointer moved, no lane settled. For tests and state
    machines, which run it after every step. O(n), and linear in time too:
    each index is walked once, records are told apart by sequence number
    (small ints a set keeps close together, where a set of the ids of records
    spread over the heap missed the cache more the larger it grew), and
    orders are compared in C."""
    records = life._records
    mask = SEQ_MASK
    for index in (life._out_of_order, life._fresh, life._received, life._revisible):
        index._check()
    # Dead letters enqueued out of time order are in their own index (by
    # enqueue key); the retention pointer never passed a live record of the others.
    odd = {skey & mask for skey in life._out_of_order}
    for skey in life._out_of_order:
        assert records[skey & mask][R_SKEY] == skey
    # The five indexes partition the stored records: each member is the
    # stored record of its sequence number, none is in two, together they
    # hold every record; the never received are in the first two, and the
    # ready lane's are receivable since their enqueue time. Each record is
    # read in one pass (a pass per check missed the cache once more each).
    oldest_seq, last_seq = life._oldest_seq, life._seq
    retention, floor = life._retention_us, life._expiry_floor
    seen: set[int] = set()
    add = seen.add
    total = 0
    lane = life._lane
    parts: tuple[tuple[Iterable[_Record], bool, bool], ...] = (
        (life._ready, True, True),
        (life._fresh, True, False),
        (life._ordering.fresh_records(), True, False),
        (lane.values(), False, False),
        (life._received, False, False),
        (life._revisible, False, False),
    )
    for part, fresh, ready in parts:
        for rec in part:
            seq = rec[R_SKEY] & mask
            assert records.get(seq) is rec and rec[R_VKEY] & mask == seq and seq <= last_seq
            assert seq >= oldest_seq or seq in odd
            if seq not in odd:
                assert (rec[R_SKEY] >> SEQ_BITS) + retention >= floor, "the expiry floor holds"
            assert type(rec) is tuple and len(rec) == R_DEDUP + 1, "a record is a plain tuple"
            if rec[R_ID] is None:
                assert fresh and life._ordering.sequence_number(seq) is not None, "id derived"
            assert rec[R_GROUP] is None or rec[R_EXTRA] is not None, "a group: not plain"
            if fresh:
                assert rec[R_COUNT] == 0 and rec[R_TOKEN] is None and rec[R_RECEIPT] == 0
                assert not ready or rec[R_VKEY] >> SEQ_BITS == rec[R_SKEY] >> SEQ_BITS
            else:
                assert rec[R_COUNT] > 0 and rec[R_TOKEN] is not None
                assert rec[R_RECEIPT] == rec[R_COUNT]
            add(seq)
            total += 1
    assert len(seen) == total == len(records)
    for seq, rec in lane.items():
        assert rec[R_SKEY] & mask == seq
    ready_keys = [r[R_VKEY] for r in life._ready]
    assert len(ready_keys) == len(life._ready) and life._records.count == sum(
        map(len, life._records.blocks.values())
    )
    tail_block = life._records.tail
    assert not NO_BLOCK, "the block of reads that find none is never written to"
    assert all(b or k == tail_block for k, b in life._records.blocks.items()), "empty blocks go"
    assert not ready_keys or life._ready.tail_vkey >= ready_keys[-1]
    lane_keys = [r[R_VKEY] for r in lane.values()]
    assert all(map(operator.lt, ready_keys, ready_keys[1:]))
    assert all(map(operator.lt, lane_keys, lane_keys[1:]))
    assert not lane_keys or life._lane_min <= lane_keys[0]


#: The last group of a message id: 12 hex digits.
_ID_MASK = (1 << 48) - 1


def id_source(rng: _random.Random) -> tuple[str, int, int]:
    """A queue's message-id source, drawn once from ``rng``: (prefix, multiplier,
    offset). Message ``seq``'s id is the prefix followed by 12 hex digits of
    ``(seq * multiplier + offset) mod 2**48`` (:func:`message_id`).

    The prefix holds the first four groups of a version-4 UUID (74 random bits,
    the version nibble 4 and the RFC 4122 variant bits 10xx); the last group is
    a bijection of the sequence number (the multiplier is odd), so no two
    messages of one queue object share an id, and each queue object draws its
    own prefix (the ids of two queues differ unless 74 random bits do not).
    A durable broker reopens its queues with new prefixes and continues their
    sequence numbers, so ids stay unique across restarts. Ids are unique, not
    secret (``docs/guarantees.md``); one costs a multiply and a format instead
    of 128 random bits and a UUID's formatting.
    """
    h = f"{rng.getrandbits(80):020x}"
    prefix = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-"
    mixing = rng.getrandbits(96)
    return prefix, (mixing >> 48) | 1, mixing & _ID_MASK


def message_id(source: tuple[str, int, int], seq: int) -> str:
    """The id of message ``seq`` of a queue whose id source is ``source``."""
    prefix, mult, offset = source
    # to_bytes().hex() formats the 12 digits in half the time of "{:012x}".
    return prefix + ((seq * mult + offset) & _ID_MASK).to_bytes(6).hex()


def uuid4(rng: _random.Random) -> str:
    """A version-4 UUID string drawn from ``rng``.

    Message ids must be unique, not secret, and this is 4x faster than
    ``str(uuid.uuid4())`` on the send path.
    """
    h = rng.getrandbits(128).to_bytes(16, "big").hex()
    # Version nibble 4 and RFC 4122 variant bits 10xx, set while formatting.
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def by_send_order(records: Iterable[_Record]) -> list[_Record]:
    """``records`` sorted by enqueue time. O(n log n)."""
    return sorted(records, key=_SKEY)
