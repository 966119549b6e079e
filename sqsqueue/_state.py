"""What acts on a queue's messages as a whole, or on one without a receipt
handle: purge (PurgeQueue), remove (a console's delete by position), retire
(DeleteQueue); and the queue's own state as a durable store keeps it
(:class:`QueueState`) and takes it back.

Every function is handed the queue; what it uses of it is :class:`Stateful`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NotRequired, Protocol, TypedDict

from sqsqueue import _lenient
from sqsqueue._clock import Clock
from sqsqueue._lenient import Leniency
from sqsqueue._lifecycle import Window
from sqsqueue._limits import PURGE_INTERVAL, US
from sqsqueue._message import R_ID, _Record
from sqsqueue._metrics import Tally
from sqsqueue._receipts import Receipts
from sqsqueue._settings import Operating
from sqsqueue._store import Records
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue, PurgeQueueInProgress


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


class Stateful(Operating, Protocol):
    """What purge, remove, retire and restore use of a queue (``_operations._BaseQueue``)."""

    # The fields restore writes, listed as QueueSettings declares them (the house's
    # one way: a protocol of exactly what this module uses, docs/architecture.md).

    _name: str
    _clock: Clock
    _leniency: Leniency
    _records: Records
    _windows: tuple[Window, ...]
    _tally: Tally | None
    _deleted: bool
    _last_purge: int | None
    _values: dict[str, object]
    _tags: dict[str, str]
    _created: int
    _modified: int
    _seq: int
    _last_now: int
    _receipts_seed: bytes
    _receipts: Receipts

    @property
    def arn(self) -> str: ...

    def _check_alive(self) -> None: ...

    def _now_us(self) -> int: ...

    def _advance(self, now: int) -> None: ...

    def _drop(self, rec: _Record, reason: str, now: int, **detail: object) -> None: ...

    def _realized(self, rec: _Record) -> _Record: ...

    def _purge(self, now: int, reason: str) -> None: ...

    def _queue_changed(self, event: str) -> None: ...

    def _apply_config(self) -> None: ...

    def _apply_update(self, update: dict[str, object]) -> None: ...

    def _restore(self, records: Iterable[_Record], seq: int) -> None: ...


def purge(queue: Stateful, principal: str | None) -> None:
    """PurgeQueue (``Queue.purge``)."""
    queue._authorize(principal, "PurgeQueue")
    relaxed = False
    with queue._lock:
        queue._check_alive()
        now = queue._now_us()
        if queue._last_purge is not None and now < queue._last_purge + PURGE_INTERVAL * US:
            if not queue._leniency.allows(_lenient.PURGE_INTERVAL):
                raise PurgeQueueInProgress(
                    f"Only one PurgeQueue operation on {queue._name} is allowed every 60 seconds."
                )
            relaxed = True
        # What was due first happens first (a move task's moves by now).
        queue._advance(now)
        if not relaxed:
            queue._last_purge = now
        queue._purge(now, "purged")
        for window in queue._windows:
            window.clear()
        queue._queue_changed("purged")
        queue._notify()
    if relaxed:
        queue._leniency.count(_lenient.PURGE_INTERVAL)


def remove(queue: Stateful, position: int, message_id: str, principal: str | None) -> bool:
    """The stored message at ``position`` deleted without a handle (``Queue.remove``)."""
    queue._authorize(principal, "DeleteMessage")
    if isinstance(position, bool) or not isinstance(position, int):
        raise InvalidParameterValue(
            f"Value {show(position)} for parameter position is invalid. Reason: must be an integer."
        )
    with queue._lock:
        now = queue._begin()
        rec = queue._records.get(position)
        if rec is None or queue._realized(rec)[R_ID] != message_id:
            return False
        if queue._tally is not None:
            queue._tally.deleted += 1
        queue._drop(rec, "deleted", now)
        queue._notify()
        return True


def retire(queue: Stateful, now: int) -> None:
    """The queue was deleted (DeleteQueue): its messages go at once, as
    ``queue_deleted`` reports, its long polls wake and every later call
    raises QueueDoesNotExist. Under the broker's lock."""
    queue._deleted = True
    queue._purge(now, "queue_deleted")
    for window in queue._windows:
        window.clear()
    queue._notify()


# -- what a durable store uses (``_durable.py``) ------------------------------------


def stored_state(queue: Stateful) -> QueueState:
    """The queue's own state, for a store to write. O(1): it shares the
    queue's dicts, so it is written before the lock is released."""
    return {
        "values": queue._values,
        "tags": queue._tags,
        "created": queue._created,
        "modified": queue._modified,
        "last_purge": queue._last_purge,
        "seq": queue._seq,
        "last_now": queue._last_now,
        "seed": queue._receipts_seed,
    }


def restore_state(queue: Stateful, state: QueueState, records: Iterable[_Record]) -> None:
    """Make a queue just made (with no attributes given, before any use) the
    queue a store kept: ``state`` and ``records`` (in sequence order) taken
    back, reporting nothing: nothing changes. O(n log n)."""
    queue._values = dict(state["values"])
    queue._apply_config()
    queue._apply_update(queue._values)
    queue._tags = dict(state["tags"])
    queue._created = state["created"]
    queue._modified = state["modified"]
    queue._last_purge = state["last_purge"]
    queue._last_now = state["last_now"]
    queue._receipts_seed = state["seed"]
    queue._receipts = Receipts(state["seed"], queue.arn)
    queue._restore(records, state["seq"])
