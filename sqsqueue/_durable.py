"""Durable brokers: ``Broker(data_dir=...)`` keeps its state in SQLite.

The in-memory indexes stay the read path; the store only writes. It is a
lifecycle :class:`~sqsqueue._lifecycle.Observer` on every queue of the broker:
each report marks a message (or a FIFO deduplication entry, a receive attempt,
a queue's settings, the move tasks) dirty, and when the broker's lock is
released by the outermost operation (:class:`DurableLock`), one SQLite
transaction writes the final state of everything dirty. So a call's effect is
in the store before the call returns, a batch is one transaction, and a
receive whose lazy expiries ran first commits them with it.

Storage is SQLite from the standard library in WAL mode, one file
``sqsqueue.sqlite3`` in the directory: state tables (queues, messages,
deduplication ids, receive attempts, move tasks, deleted names) rather than a
log, so there is nothing to compact; SQLite checkpoints its WAL itself.
Expired deduplication ids and attempts are pruned when the broker opens, and
while it runs once a minute of queue time, through their expiry indexes and at
most ``PRUNE_ROWS`` of each a commit (a scan of the table, or one statement
for a minute of a busy queue's ids, would stall the call that commits).

What each durability level promises is in ``docs/guarantees.md``:

* ``"process"``: ``synchronous=NORMAL``: a returned call's transaction is in
  the WAL file (the OS holds it), so it survives SIGKILL of the process;
* ``"machine"``: ``synchronous=FULL``: the WAL is fsynced before the call
  returns, so it also survives power loss.

A directory is opened by one process at a time: ``sqsqueue.lock`` holds an
exclusive ``flock`` while the broker is open. ``fcntl`` is imported only then,
so ``import sqsqueue`` and in-memory brokers work where there is none
(Windows); opening a data directory there is a ``StorageError``. A damaged or
foreign file is a :class:`~sqsqueue.errors.StorageError` naming it; nothing is
overwritten.
"""

from __future__ import annotations

import _thread
import base64
import contextlib
import json
import operator
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Protocol, cast

from sqsqueue._deadletter import MoveTask
from sqsqueue._fifo import (
    D_EXPIRES,
    D_MESSAGE_ID,
    D_SEQUENCE_NUMBER,
    Attempt,
    DedupEntry,
    FifoQueue,
)
from sqsqueue._lifecycle import Observer
from sqsqueue._limits import US
from sqsqueue._message import (
    FIELDS,
    KEY_COLUMNS,
    R_SKEY,
    R_VKEY,
    RECORD_FIELDS,
    SEQ_BITS,
    SEQ_MASK,
    _Record,
    record_fields,
    record_of,
)
from sqsqueue._state import QueueState
from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue, StorageError

DB_NAME = "sqsqueue.sqlite3"
LOCK_NAME = "sqsqueue.lock"
#: PRAGMA application_id of a sqsqueue store ("SQSQ"), and the schema version.
APPLICATION_ID = 0x53515351
SCHEMA_VERSION = 1
DURABILITY = ("process", "machine")
#: How often (queue time) a running broker deletes expired deduplication ids and
#: receive attempts from its store.
PRUNE_EVERY = 60 * US
#: The most expired rows of each window table one commit deletes: a minute of a
#: busy FIFO queue's ids is hundreds of thousands of rows, which one statement
#: would delete in one call's time. When a commit reaches it, the next commit
#: goes on (:meth:`Store.commit`).
PRUNE_ROWS = 1000

#: The ``messages`` table: the store's ``queue`` column, then ``_message.FIELDS``.
_MESSAGES_TABLE = (
    "CREATE TABLE messages (\n    queue TEXT NOT NULL,\n"
    + "".join(f"    {name} {column},\n" for name, column in FIELDS)
    + "    PRIMARY KEY (queue, seq)\n) WITHOUT ROWID;\n"
)
_SCHEMA = f"""
CREATE TABLE queues (
    name TEXT PRIMARY KEY,
    fifo INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE deleted (
    name TEXT PRIMARY KEY,
    at INTEGER NOT NULL
);
{_MESSAGES_TABLE}CREATE TABLE dedup (
    queue TEXT NOT NULL,
    key TEXT NOT NULL,
    expires INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    sequence_number TEXT NOT NULL,
    PRIMARY KEY (queue, key)
) WITHOUT ROWID;
CREATE TABLE attempts (
    queue TEXT NOT NULL,
    attempt TEXT NOT NULL,
    expires INTEGER NOT NULL,
    items TEXT NOT NULL,
    handles TEXT NOT NULL,
    PRIMARY KEY (queue, attempt)
) WITHOUT ROWID;
CREATE TABLE tasks (
    position INTEGER PRIMARY KEY,
    task TEXT NOT NULL
);
CREATE TABLE identity (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

#: The windows' expiry indexes, so that pruning reads the expired rows only, not
#: the table. Part of every store; a store made before them (same schema
#: version: nothing else changed) gets them when it is opened.
_INDEXES = """
CREATE INDEX IF NOT EXISTS dedup_expires ON dedup (expires);
CREATE INDEX IF NOT EXISTS attempts_expires ON attempts (expires);
"""
#: Deletes up to ``PRUNE_ROWS`` expired rows of a window table (by its index).
_PRUNE = {
    "dedup": "DELETE FROM dedup WHERE (queue, key) IN "
    "(SELECT queue, key FROM dedup WHERE expires <= ? LIMIT ?)",
    "attempts": "DELETE FROM attempts WHERE (queue, attempt) IN "
    "(SELECT queue, attempt FROM attempts WHERE expires <= ? LIMIT ?)",
}

# A record is written and read back through these statements, derived from
# ``_message.FIELDS`` once, here (constants only are formatted into them, never
# a value). Written: the store's columns and the two whose values are converted
# first (``_message_row``), then the record's other fields as they are.
_CONVERTED = ("attributes", "sequence_number")
_AS_IS = tuple(name for name in RECORD_FIELDS if name not in _CONVERTED)
# A record's fields in RECORD_FIELDS order (``_message.record_fields``), then
# the unconverted ones picked in one C call.
_pick_as_is = operator.itemgetter(*(RECORD_FIELDS.index(name) for name in _AS_IS))
_WRITTEN = ("queue", *KEY_COLUMNS, *_CONVERTED, *_AS_IS)
_UPSERT_MESSAGE = (
    f"INSERT OR REPLACE INTO messages ({', '.join(_WRITTEN)}) "  # noqa: S608
    f"VALUES ({', '.join('?' * len(_WRITTEN))})"
)
# Read: the key columns, then the record's fields in its constructor's order.
_SELECT_MESSAGES = (
    f"SELECT {', '.join((*KEY_COLUMNS, *RECORD_FIELDS))} FROM messages "  # noqa: S608
    "WHERE queue = ? ORDER BY seq"
)
# Where a read row holds the two converted values.
_ATTRIBUTES_AT = len(KEY_COLUMNS) + RECORD_FIELDS.index("attributes")
_NUMBER_AT = len(KEY_COLUMNS) + RECORD_FIELDS.index("sequence_number")
_ATTRIBUTES_FIELD = RECORD_FIELDS.index("attributes")
_NUMBER_FIELD = RECORD_FIELDS.index("sequence_number")


def _attributes_json(attributes: Any) -> str | None:
    if attributes is None:
        return None
    out = []
    for name, data_type, value in attributes:
        if isinstance(value, bytes):
            out.append([name, data_type, None, base64.b64encode(value).decode("ascii")])
        else:
            out.append([name, data_type, value, None])
    return json.dumps(out, ensure_ascii=False)


def _attributes_from(text: str | None) -> Any:
    if text is None:
        return None
    return tuple(
        (name, data_type, value if binary is None else base64.b64decode(binary))
        for name, data_type, value, binary in json.loads(text)
    )


def _message_row(queue: str, rec: _Record) -> tuple[Any, ...]:
    """A record's row, in ``_UPSERT_MESSAGE``'s column order. Runs once per
    message written, so the keys are unpacked inline (``key_seq``, ``key_time``)."""
    skey = rec[R_SKEY]
    fields = record_fields(rec)
    number = fields[_NUMBER_FIELD]
    head = (
        queue,
        skey & SEQ_MASK,
        skey >> SEQ_BITS,
        rec[R_VKEY] >> SEQ_BITS,
        _attributes_json(fields[_ATTRIBUTES_FIELD]),
        None if number is None else str(number),
    )
    row: tuple[Any, ...] = head + _pick_as_is(fields)  # one concatenation
    return row


def _record_from(row: tuple[Any, ...]) -> _Record:
    """The record a ``_SELECT_MESSAGES`` row holds. Runs once per message
    restored, so the keys are packed inline (``key_at``)."""
    seq = row[0]
    fields = dict(zip(RECORD_FIELDS, row[3:], strict=True))
    attributes, number = row[_ATTRIBUTES_AT], row[_NUMBER_AT]
    if attributes is not None:
        fields["attributes"] = _attributes_from(attributes)
    if number is not None:
        fields["sequence_number"] = int(number)
    skey = (row[1] << SEQ_BITS) | seq
    # Due when it was sent: one int for both keys, as a send stores it.
    vkey = skey if row[2] == row[1] else (row[2] << SEQ_BITS) | seq
    return record_of(skey, vkey, **fields)


def _dedup_key(key: object) -> str:
    return json.dumps(key if isinstance(key, str) else list(key))  # type: ignore[call-overload]


def _dedup_key_from(text: str) -> object:
    key = json.loads(text)
    return key if isinstance(key, str) else tuple(key)


class StoredQueue(Protocol):
    """What the store uses of a queue, and nothing more: ``_operations._BaseQueue``
    gives it (its section "what a durable store uses"), with the lifecycle's
    ``_add_observer``."""

    FIFO: ClassVar[bool]

    @property
    def name(self) -> str: ...

    @property
    def _deleted(self) -> bool: ...

    def _stored_state(self) -> QueueState: ...

    def _restore_state(self, state: QueueState, records: Iterable[_Record]) -> None: ...

    def _add_observer(self, observer: Observer) -> None: ...


class StoredFifoQueue(StoredQueue, Protocol):
    """What the store uses of a FIFO queue besides: its deduplication window and
    receive attempts (``_fifo.FifoQueue``)."""

    def _dedup_key(self, rec: _Record, dedup_id: str | None = None) -> object: ...

    def _dedup_entry(self, key: object) -> DedupEntry | None: ...

    def _attempt(self, attempt_id: str) -> Attempt | None: ...

    def _restore_windows(
        self, dedup: Iterable[tuple[object, DedupEntry]], attempts: Iterable[tuple[str, Attempt]]
    ) -> None: ...


def _fifo(queue: StoredQueue) -> StoredFifoQueue | None:
    """``queue`` as a FIFO queue, when it is one."""
    return queue if isinstance(queue, FifoQueue) else None


# typeshed marks _thread.RLock final; CPython lets it be subclassed, and a
# subclass keeps every queue's ``_lock: threading.RLock`` annotation true.
class DurableLock(_thread.RLock):  # type: ignore[misc]
    """The broker's re-entrant lock, which commits the store's pending writes
    when the outermost holder releases it: every operation takes the lock, so
    its effects are written before it returns. Its ``acquire`` and
    ``release`` do this as its ``with`` statement does (the queue's hot
    operations call them directly, a with statement costing twice as much)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.store: Store | None = None
        #: Threads running Broker.close(), which a stopped broker still lets in.
        self.closers: set[int] = set()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not super().acquire(blocking, timeout):
            return False
        store = self.store
        if (
            self.depth == 0
            and store is not None
            and store.failed is not None
            and _thread.get_ident() not in self.closers
        ):
            # Fail-stop: a write failed, so memory holds changes the store does not.
            # Nothing may read or build on them; reopening reads back what was written.
            super().release()
            raise StorageError(
                f"an earlier write to {store.file} failed ({store.failed}); the broker "
                "stopped so that it serves nothing the store does not hold: close it and "
                "open the directory again"
            )
        self.depth += 1
        return True

    def release(self) -> None:
        self.depth -= 1
        try:
            store = self.store
            if self.depth == 0 and store is not None and store.dirty and store.failed is None:
                store.commit()
        finally:
            super().release()

    def __enter__(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self.acquire(blocking, timeout)

    def __exit__(self, *exc_info: object) -> None:
        self.release()


class _QueueObserver:
    """The store's observer on one queue: marks what each report changed."""

    __slots__ = ("fifo", "name", "queue", "store")

    def __init__(self, store: Store, queue: StoredQueue) -> None:
        self.store = store
        self.queue = queue
        self.fifo = _fifo(queue)
        self.name = queue.name

    def report(self, event: str, rec: _Record, at: int, detail: Mapping[str, object]) -> None:
        store = self.store
        store.dirty = True
        key = (self.name, rec[R_SKEY] & SEQ_MASK)  # key_seq, inlined
        if event in ("sent", "dead_letter_arrived", "received", "visibility_changed"):
            store.messages[key] = rec
            if event in ("sent", "dead_letter_arrived"):
                store.queues[self.name] = self.queue  # its sequence counter moved
            if event == "sent" and self.fifo is not None:
                store.dedup[(self.name, self.fifo._dedup_key(rec))] = self.fifo
        elif event == "receive_attempt":
            if self.fifo is not None:  # attempt ids are kept on FIFO queues only
                store.attempts[(self.name, str(detail["attempt"]))] = self.fifo
        else:  # deleted, expired, dead_lettered, moved, purged, queue_deleted
            store.messages[key] = None

    def queue_changed(self, event: str) -> None:
        self.store.dirty = True
        self.store.queues[self.name] = self.queue
        if event == "purged":
            self.store.purged.add(self.name)


def check_durability(durability: object) -> None:
    if durability not in DURABILITY:
        raise InvalidParameterValue(
            f"Value {show(durability)} for parameter durability is invalid. Reason: must be "
            "'process' or 'machine'."
        )


class Store:
    """One data directory: the lock, the SQLite file and the pending writes."""

    def __init__(self, data_dir: str | os.PathLike[str], durability: str) -> None:
        check_durability(durability)
        self.path = Path(data_dir)
        flock = _flock(self.path)  # before anything is created
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the data directory {self.path}: {exc}") from None
        self.file = self.path / DB_NAME
        self._lock_file = self._take_lock(flock)
        try:
            self.db = self._open(durability)
        except BaseException:
            self._lock_file.close()
            raise
        self.dirty = False
        #: (queue name, seq) -> record to write, or None to delete.
        self.messages: dict[tuple[str, int], _Record | None] = {}
        #: queue name -> queue to write, or None when it was deleted.
        self.queues: dict[str, StoredQueue | None] = {}
        self.deleted: dict[str, int] = {}
        self.dedup: dict[tuple[str, object], StoredFifoQueue] = {}
        self.attempts: dict[tuple[str, str], StoredFifoQueue] = {}
        self.tasks: list[MoveTask] | None = None
        #: Queues purged since the last commit: their windows start empty.
        self.purged: set[str] = set()
        #: Why a commit failed; once set, the broker refuses every call (fail-stop).
        self.failed: str | None = None
        #: The broker's clock in microseconds (set once it is restored), and when
        #: expired deduplication ids and attempts were last deleted.
        self.now: Callable[[], int] | None = None
        self.pruned_at = 0

    # -- opening --------------------------------------------------------------------

    def _take_lock(self, flock: Callable[[int], None]) -> Any:
        lock_path = self.path / LOCK_NAME
        try:
            handle = open(lock_path, "a+b")  # noqa: SIM115 - held open while the broker lives
        except OSError as exc:
            raise StorageError(f"cannot open the lock file {lock_path}: {exc}") from None
        try:
            flock(handle.fileno())
        except OSError:
            handle.close()
            raise StorageError(
                f"the data directory {self.path} is in use by another broker (another "
                f"process, or an open Broker in this one, holds {lock_path}); close it first"
            ) from None
        return handle

    def _open(self, durability: str) -> sqlite3.Connection:
        existed = self.file.exists() and self.file.stat().st_size > 0
        try:
            db = sqlite3.connect(self.file, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self.file}: {exc}") from None
        try:
            if existed and _unfinished(db):
                # A store whose creation a crash cut short: the schema and the
                # identifying pragmas commit in one transaction, so before it the
                # file holds no table at all (at most the WAL mode). Made afresh.
                existed = False
            if existed:
                app = db.execute("PRAGMA application_id").fetchone()[0]
                if app != APPLICATION_ID:
                    raise StorageError(
                        f"{self.file} is not a sqsqueue data file (application_id {app:#x}); "
                        "nothing was changed"
                    )
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version != SCHEMA_VERSION:
                    raise StorageError(
                        f"{self.file} has schema version {version}; this sqsqueue reads "
                        f"version {SCHEMA_VERSION}"
                    )
                check = db.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise StorageError(f"{self.file} is damaged: {check}; nothing was changed")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if durability == 'machine' else 'NORMAL'}")
            if not existed:
                # One transaction: a crash leaves either no table or the whole store.
                db.executescript(
                    f"BEGIN;\n{_SCHEMA}{_INDEXES}\nPRAGMA application_id={APPLICATION_ID};\n"
                    f"PRAGMA user_version={SCHEMA_VERSION};\nCOMMIT;"
                )
            else:
                db.executescript(f"BEGIN;\n{_INDEXES}\nCOMMIT;")
        except StorageError:
            db.close()
            raise
        except sqlite3.Error as exc:
            db.close()
            raise StorageError(f"{self.file} cannot be read: {exc}; nothing was changed") from None
        return db

    # -- writing --------------------------------------------------------------------

    def commit(self) -> None:
        """Write everything pending in one transaction. Runs under the broker's
        lock, when its outermost holder releases it."""
        messages, self.messages = self.messages, {}
        queues, self.queues = self.queues, {}
        deleted, self.deleted = self.deleted, {}
        dedup, self.dedup = self.dedup, {}
        attempts, self.attempts = self.attempts, {}
        tasks, self.tasks = self.tasks, None
        purged, self.purged = self.purged, set()
        self.dirty = False
        db = self.db
        prune_at = self._prune_due()
        try:
            with _transaction(db):
                for name, queue in queues.items():
                    if queue is None or queue._deleted:
                        db.execute("DELETE FROM queues WHERE name = ?", (name,))
                        db.execute("DELETE FROM messages WHERE queue = ?", (name,))
                        db.execute("DELETE FROM dedup WHERE queue = ?", (name,))
                        db.execute("DELETE FROM attempts WHERE queue = ?", (name,))
                    else:
                        db.execute(
                            "INSERT OR REPLACE INTO queues (name, fifo, state) VALUES (?, ?, ?)",
                            (name, int(queue.FIFO), _state_text(queue._stored_state())),
                        )
                for name in purged:
                    # Before this transaction's own writes: a send after the purge
                    # in the same transaction adds its entry back below.
                    db.execute("DELETE FROM dedup WHERE queue = ?", (name,))
                    db.execute("DELETE FROM attempts WHERE queue = ?", (name,))
                for name, at in deleted.items():
                    db.execute(
                        "INSERT OR REPLACE INTO deleted (name, at) VALUES (?, ?)", (name, at)
                    )
                upserts = []
                removals = []
                for (name, seq), rec in messages.items():
                    owner = queues.get(name)
                    if owner is not None and owner._deleted:
                        continue
                    if rec is None:
                        removals.append((name, seq))
                    else:
                        upserts.append(_message_row(name, rec))
                if removals:
                    db.executemany("DELETE FROM messages WHERE queue = ? AND seq = ?", removals)
                if upserts:
                    db.executemany(_UPSERT_MESSAGE, upserts)
                for (name, key), fifo in dedup.items():
                    entry = fifo._dedup_entry(key)
                    if entry is None or fifo._deleted:
                        continue
                    db.execute(
                        "INSERT OR REPLACE INTO dedup (queue, key, expires, message_id, "
                        "sequence_number) VALUES (?, ?, ?, ?, ?)",
                        (
                            name,
                            _dedup_key(key),
                            entry[D_EXPIRES],
                            entry[D_MESSAGE_ID],
                            str(entry[D_SEQUENCE_NUMBER]),
                        ),
                    )
                for (name, attempt_id), fifo in attempts.items():
                    if fifo._deleted:
                        continue
                    attempt = fifo._attempt(attempt_id)
                    if attempt is None:
                        db.execute(
                            "DELETE FROM attempts WHERE queue = ? AND attempt = ?",
                            (name, attempt_id),
                        )
                        continue
                    db.execute(
                        "INSERT OR REPLACE INTO attempts (queue, attempt, expires, items, "
                        "handles) VALUES (?, ?, ?, ?, ?)",
                        (
                            name,
                            attempt_id,
                            attempt.expires,
                            json.dumps(attempt.items),
                            json.dumps(attempt.handles),
                        ),
                    )
                if prune_at is not None:
                    # The windows forget their ids lazily in memory; the store forgets
                    # them here, so a long-running broker's file does not grow with
                    # every id it ever saw: once a minute of queue time, up to
                    # PRUNE_ROWS of each table a commit (through the expiry indexes:
                    # O(rows deleted x log rows)) until none has expired.
                    done = True
                    for prune in _PRUNE.values():
                        if db.execute(prune, (prune_at, PRUNE_ROWS)).rowcount >= PRUNE_ROWS:
                            done = False  # more may have expired: the next commit goes on
                    if done:
                        self.pruned_at = prune_at
                if tasks is not None:
                    db.execute("DELETE FROM tasks")
                    db.executemany(
                        "INSERT INTO tasks (position, task) VALUES (?, ?)",
                        [(i, json.dumps(_task_state(t))) for i, t in enumerate(tasks)],
                    )
        except sqlite3.Error as exc:
            self.failed = str(exc)
            raise StorageError(
                f"writing to {self.file} failed: {exc}; the broker stopped (close it and "
                "open the directory again: this call's changes were not kept)"
            ) from None

    def _prune_due(self) -> int | None:
        """The time to prune expired windows at in this commit, if a minute of
        queue time passed since the last. Read before the transaction: a clock
        that fails here only postpones pruning, it never fails a commit."""
        if self.now is None:
            return None
        try:
            now = self.now()
        except Exception:  # a user's Clock; the operation itself already read it
            return None
        return now if now - self.pruned_at >= PRUNE_EVERY else None

    def queue_deleted(self, name: str, at: int) -> None:
        self.dirty = True
        self.queues[name] = None
        self.deleted[name] = at

    def tasks_changed(self, tasks: list[MoveTask]) -> None:
        self.dirty = True
        self.tasks = tasks

    def observe(self, queue: StoredQueue) -> None:
        """Attach the store to ``queue`` (after restoring it, before any use)."""
        queue._add_observer(_QueueObserver(self, queue))

    # -- reading --------------------------------------------------------------------

    def restore(self, queue: StoredQueue, state: Mapping[str, Any], now: int) -> None:
        """Give a freshly made ``queue`` its stored state (a ``load_queues``
        row's), messages and FIFO windows: no reports, as nothing changes and
        the store already holds it all. O(n log n)."""
        name = queue.name
        queue._restore_state(_state_from(state), self.load_messages(name))
        fifo = _fifo(queue)
        if fifo is not None:
            fifo._restore_windows(self.load_dedup(name, now), self.load_attempts(name, now))

    def check_identity(self, account_id: str, region: str) -> None:
        """Refuse to open the directory as another account or region: queue ARNs
        and URLs, the receipt keys derived from them and every RedrivePolicy
        name them. A store written before this check was kept takes the
        broker's (O(1))."""
        wanted = {"account_id": account_id, "region": region}
        has_table = self._rows(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'identity'"
        )
        stored = dict(self._rows("SELECT key, value FROM identity")) if has_table else {}
        if not stored:
            try:
                with _transaction(self.db):
                    self.db.execute(
                        "CREATE TABLE IF NOT EXISTS identity "
                        "(key TEXT PRIMARY KEY, value TEXT NOT NULL)"
                    )
                    self.db.executemany("INSERT INTO identity VALUES (?, ?)", wanted.items())
            except sqlite3.Error as exc:
                raise StorageError(f"writing to {self.file} failed: {exc}") from None
            return
        if stored != wanted:
            raise StorageError(
                f"{self.path} belongs to account {stored.get('account_id')} in region "
                f"{stored.get('region')}, not account {account_id} in {region}: open it with "
                f"account_id={stored.get('account_id')!r}, region={stored.get('region')!r} "
                "(its queue ARNs, URLs and receipt handles name them); nothing was changed"
            )

    def load_queues(self) -> list[tuple[str, bool, dict[str, Any]]]:
        try:
            rows = self.db.execute("SELECT name, fifo, state FROM queues ORDER BY name").fetchall()
            return [(name, bool(fifo), json.loads(state)) for name, fifo, state in rows]
        except (sqlite3.Error, ValueError) as exc:
            raise StorageError(f"{self.file} cannot be read: {exc}") from None

    def load_deleted(self) -> dict[str, int]:
        return dict(self._rows("SELECT name, at FROM deleted"))

    def load_messages(self, name: str) -> Iterator[_Record]:
        """The stored messages of queue ``name``, in sequence order, read in
        chunks: a million rows never sit in memory beside their records."""
        try:
            cursor = self.db.execute(_SELECT_MESSAGES, (name,))
            while True:
                rows = cursor.fetchmany(4096)
                if not rows:
                    return
                for row in rows:
                    yield _record_from(row)
        except sqlite3.Error as exc:
            raise StorageError(f"{self.file} cannot be read: {exc}") from None

    def load_dedup(self, name: str, now: int) -> list[tuple[object, DedupEntry]]:
        sql = "SELECT key, expires, message_id, sequence_number FROM dedup WHERE queue = ? "
        sql += "AND expires > ? ORDER BY expires"
        return [
            (_dedup_key_from(key), (expires, message_id, int(number)))
            for key, expires, message_id, number in self._rows(sql, (name, now))
        ]

    def load_attempts(self, name: str, now: int) -> list[tuple[str, Attempt]]:
        sql = "SELECT attempt, expires, items, handles FROM attempts WHERE queue = ? "
        sql += "AND expires > ? ORDER BY expires"
        return [
            (
                attempt,
                Attempt(expires, [tuple(i) for i in json.loads(items)], json.loads(handles)),
            )
            for attempt, expires, items, handles in self._rows(sql, (name, now))
        ]

    def load_tasks(self) -> list[MoveTask]:
        rows = self._rows("SELECT task FROM tasks ORDER BY position")
        return [MoveTask(**json.loads(task)) for (task,) in rows]

    def prune(self, now: int) -> None:
        """Forget deduplication ids and attempts that ended before ``now``
        (at open: all of them in one transaction, through the expiry indexes)."""
        with _transaction(self.db):
            self.db.execute("DELETE FROM dedup WHERE expires <= ?", (now,))
            self.db.execute("DELETE FROM attempts WHERE expires <= ?", (now,))

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"{self.file} cannot be read: {exc}") from None

    def backup(self, destination: str | os.PathLike[str]) -> Path:
        """Copy the store into ``destination``, a new or empty directory, with
        SQLite's online backup (a consistent snapshot, never a torn file copy).
        Runs under the broker's lock, so no call is half in the copy."""
        target_dir = Path(destination)
        try:
            if target_dir.exists() and (not target_dir.is_dir() or any(target_dir.iterdir())):
                raise StorageError(
                    f"cannot back up into {target_dir}: it must be a new or empty directory"
                )
            target_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot back up into {target_dir}: {exc}") from None
        target = target_dir / DB_NAME
        try:
            copy = sqlite3.connect(target)
            try:
                self.db.backup(copy)
            finally:
                copy.close()
        except sqlite3.Error as exc:
            raise StorageError(f"cannot back up {self.file} into {target}: {exc}") from None
        return target_dir

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
        self._lock_file.close()


def _flock(path: Path) -> Callable[[int], None]:
    """The exclusive, non-blocking ``flock`` that keeps a data directory to one
    broker. ``fcntl`` is imported here, when a directory is opened, and not with
    the module: without it (Windows) everything but data directories works."""
    try:
        import fcntl
    except ImportError:
        raise StorageError(
            f"cannot open the data directory {path}: locking it needs fcntl.flock, which "
            "this platform does not have (data directories need a POSIX system; a Broker "
            "without data_dir works here)"
        ) from None
    return lambda fd: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unfinished(db: sqlite3.Connection) -> bool:
    """A database file with no schema and no application id: what a crash
    during a store's creation leaves (never a foreign file with data)."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    return bool(app == 0 and tables == 0)


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _state_text(state: QueueState) -> str:
    """A queue's state as the ``queues`` table keeps it: JSON, the seed in hex."""
    return json.dumps({**state, "seed": state["seed"].hex()})


def _state_from(stored: Mapping[str, Any]) -> QueueState:
    """The state ``_state_text`` wrote, as the queue takes it back."""
    return cast(QueueState, {**stored, "seed": bytes.fromhex(stored["seed"])})


def _task_state(task: MoveTask) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "source_arn": task.source_arn,
        "destination_arn": task.destination_arn,
        "max_number_of_messages_per_second": task.max_number_of_messages_per_second,
        "started": task.started,
        "to_move": task.to_move,
        "moved": task.moved,
        "status": task.status,
        "failure_reason": task.failure_reason,
    }


__all__ = [
    "DURABILITY",
    "DurableLock",
    "Store",
    "StoredFifoQueue",
    "StoredQueue",
    "check_durability",
]
