"""Durable brokers: ``Broker(data_dir=...)`` reopened is the broker it was. One
test per item of the restore list, plus the schema, the directory lock and
damaged or foreign files. The crash suite (SIGKILL) is ``tests/test_crash.py``."""

from __future__ import annotations

import ast
import json
import os
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, _durable, errors
from sqsqueue._durable import DB_NAME, StoredFifoQueue, StoredQueue
from sqsqueue._message import RECORD_FIELDS, RecordView, key_seq, key_time, record_of, view
from tests._helpers import failing_db
from tests._mirror import state

START = 1_700_000_000.0


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=START)


class Reopener:
    """Opens a durable broker on one directory, and reopens it."""

    def __init__(self, path: Path, clock: ManualClock) -> None:
        self.path = path
        self.clock = clock
        self.broker: Broker[ManualClock] = Broker(clock=clock, data_dir=path)

    def reopen(self) -> Broker[ManualClock]:
        self.broker.close()
        self.broker = Broker(clock=self.clock, data_dir=self.path)
        return self.broker


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[Reopener]:
    r = Reopener(tmp_path / "data", clock)
    yield r
    r.broker.close()


def _count(path: Path, table: str) -> int:
    """Rows of ``table`` in the store, read beside the broker (WAL)."""
    db = sqlite3.connect(path / DB_NAME)
    try:
        count: int = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        return count
    finally:
        db.close()


def standard(b: Broker[Any], name: str = "jobs") -> Queue:
    q = b.get_queue(name)
    assert isinstance(q, Queue)
    return q


def fifo(b: Broker[Any], name: str = "orders.fifo") -> FifoQueue:
    q = b.get_queue(name)
    assert isinstance(q, FifoQueue)
    return q


class TestQueues:
    def test_attributes_tags_policy_and_times_survive(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        b = store.broker
        dlq = b.create_queue("dlq")
        q = b.create_queue(
            "jobs",
            attributes={
                "VisibilityTimeout": "45",
                "DelaySeconds": "3",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 2}),
            },
            tags={"team": "a"},
        )
        clock.advance(10)
        q.add_permission("share", ["111111111111"], ["SendMessage"])
        q.tag({"env": "test"})
        q.untag(["team"])
        before = q.get_attributes()
        b = store.reopen()
        q2 = standard(b)
        assert q2.get_attributes() == before
        assert q2.list_tags() == {"env": "test"}
        assert list(b.list_queues().queue_urls) == [dlq.url, q.url]
        assert b.list_dead_letter_source_queues(dlq.url).queue_urls == (q.url,)
        # CreateQueue with the same attributes is still idempotent after a restart.
        assert b.create_queue("jobs", attributes={"VisibilityTimeout": "45"}) is q2

    def test_deleted_queue_stays_deleted_and_its_name_waits(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        q = store.broker.create_queue("gone")
        q.send("lost with the queue")
        store.broker.delete_queue(q.url)
        clock.advance(30)
        b = store.reopen()
        assert "gone" not in b
        with pytest.raises(errors.QueueDeletedRecently):
            b.create_queue("gone")
        clock.advance(31)
        assert len(b.create_queue("gone")) == 0

    def test_purge_window_survives(self, store: Reopener, clock: ManualClock) -> None:
        q = store.broker.create_queue("jobs")
        q.send("x")
        q.purge()
        clock.advance(30)
        q2 = standard(store.reopen())
        with pytest.raises(errors.PurgeQueueInProgress):
            q2.purge()
        clock.advance(31)
        q2.purge()


class TestMessages:
    def test_every_field_survives(self, store: Reopener, clock: ManualClock) -> None:
        q = store.broker.create_queue("jobs", visibility_timeout=30)
        sent = q.send(
            "héllo",
            message_attributes={"s": "text", "b": b"\x00\xff", "n": 12.5},
            trace_header="Root=1-5759e988-bd862e3fe1be46a994272793",
        )
        [first] = q.receive(attribute_names=["All"])
        clock.advance(31)  # visible again, received once
        b = store.reopen()
        [again] = standard(b).receive(attribute_names=["All"])
        assert again.message_id == sent.message_id
        assert again.body == "héllo"
        assert again.message_attributes == first.message_attributes
        assert again.md5_of_message_attributes == first.md5_of_message_attributes
        for name in ("SenderId", "SentTimestamp", "ApproximateFirstReceiveTimestamp"):
            assert again.attributes[name] == first.attributes[name]
        assert again.attributes["AWSTraceHeader"] == first.attributes["AWSTraceHeader"]
        assert again.attributes["ApproximateReceiveCount"] == "2"

    def test_delay_and_visibility_deadlines_survive(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        q = store.broker.create_queue("jobs")
        q.send("delayed", delay_seconds=60)
        q.send("taken")
        [taken] = q.receive(visibility_timeout=100)
        clock.advance(30)
        q2 = standard(store.reopen())
        assert q2.receive(10) == []  # one delayed for 30 s more, one in flight for 70 s
        clock.advance(30)
        assert [m.body for m in q2.receive(10, visibility_timeout=600)] == ["delayed"]
        clock.advance(40)
        [back] = q2.receive(10)
        assert back.message_id == taken.message_id

    def test_message_ids_stay_unique_across_restarts(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        """A message id is a queue's random prefix and its sequence number, which
        a reopened broker continues: ids never repeat across restarts, even
        with a seeded ``random`` that draws the same prefix each time."""
        for seeded in (False, True):
            path = tmp_path / f"ids-{seeded}"
            seen: set[str] = set()
            for _ in range(3):
                rng = random.Random(4) if seeded else None
                with Broker(clock=clock, data_dir=path, random=rng) as b:
                    q = b.create_queue("jobs")
                    for m in q.receive(10):
                        q.delete(m.receipt_handle)  # the earlier run's messages
                    sent = [r.message_id for r in q.send_batch(["a", "b"]).successful.values()]  # type: ignore[union-attr]
                    sent.append(q.send("c").message_id)
                    assert not seen & set(sent)
                    seen.update(sent)
            assert len(seen) == 9

    def test_receipt_handles_from_before_a_restart_still_act(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        q = store.broker.create_queue("jobs")
        q.send_batch(["a", "b", "c"])
        a, b, c = q.receive(10, visibility_timeout=60)
        q2 = standard(store.reopen())
        q2.delete(a.receipt_handle)
        q2.change_visibility(b.receipt_handle, 0)
        assert [m.body for m in q2.receive(10)] == ["b"]
        with pytest.raises(errors.ReceiptHandleIsInvalid):
            q2.delete(c.receipt_handle[:-4] + "AAAA")  # forged handles still fail
        assert len(q2) == 2

    def test_a_standard_dead_letter_keeps_its_source_and_count(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        b = store.broker
        dlq = b.create_queue("dlq")
        q = b.create_queue(
            "jobs",
            attributes={
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1})
            },
            visibility_timeout=1,
        )
        q.send("poison")
        q.receive()
        clock.advance(2)
        assert q.receive() == []  # moved to the DLQ
        b = store.reopen()
        [m] = standard(b, "dlq").receive(attribute_names=["All"])
        assert m.attributes["DeadLetterQueueSourceArn"] == q.arn
        assert m.attributes["ApproximateReceiveCount"] == "2"


class TestFifo:
    def make(self, b: Broker[Any]) -> FifoQueue:
        q = b.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
        assert isinstance(q, FifoQueue)
        return q

    def test_groups_order_and_locks_survive(self, store: Reopener, clock: ManualClock) -> None:
        q = self.make(store.broker)
        for i in range(4):
            q.send(f"a{i}", group_id="a")
            q.send(f"b{i}", group_id="b")
        [a0] = q.receive(1)  # group a is locked while a0 is in flight
        q2 = fifo(store.reopen())
        assert [m.body for m in q2.receive(10)] == ["b0", "b1", "b2", "b3"]
        q2.delete(a0.receipt_handle)
        assert [m.body for m in q2.receive(10)] == ["a1", "a2", "a3"]

    def test_deduplication_window_and_sequence_numbers_survive(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        q = self.make(store.broker)
        first = q.send("same", group_id="g")
        q2 = fifo(store.reopen())
        duplicate = q2.send("same", group_id="g")
        assert duplicate.message_id == first.message_id
        assert len(q2) == 1
        later = q2.send("other", group_id="g")
        assert int(later.sequence_number or 0) > int(first.sequence_number or 0)
        clock.advance(301)
        q3 = fifo(store.reopen())
        assert q3.send("same", group_id="g").message_id != first.message_id

    def test_expired_windows_leave_the_store_while_it_runs(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        """A long-running broker's file does not keep every deduplication id and
        attempt it ever saw: expired ones are deleted within a minute of queue time."""
        q = self.make(store.broker)

        def stored() -> tuple[int, int]:
            db = sqlite3.connect(store.path / DB_NAME)  # a reader beside the broker (WAL)
            try:
                return (
                    db.execute("SELECT count(*) FROM dedup").fetchone()[0],
                    db.execute("SELECT count(*) FROM attempts").fetchone()[0],
                )
            finally:
                db.close()

        for i in range(20):
            q.send(f"m{i}", group_id="g")
        for m in q.receive(10, receive_request_attempt_id="a"):
            q.delete(m.receipt_handle)
        assert stored() == (20, 1)
        clock.advance(301)  # every window above has ended
        q.send("late", group_id="g")
        assert stored() == (1, 0)
        assert len(fifo(store.reopen())) == 11  # the messages themselves stay

    def test_a_long_prune_goes_on_over_several_commits(
        self, store: Reopener, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A commit deletes at most PRUNE_ROWS expired rows of each window, so a
        minute of a busy queue's ids does not stall one call; the commits after
        it go on until none has expired, and no live id goes with them."""
        monkeypatch.setattr(_durable, "PRUNE_ROWS", 3)
        q = self.make(store.broker)
        for i in range(10):
            q.send(f"old{i}", group_id="g")
        clock.advance(301)  # every id above has ended
        live = q.send("live", group_id="g")
        counts = [_count(store.path, "dedup")]  # the prune commit: 3 of the 10 gone
        for i in range(4):
            q.send(f"new{i}", group_id="g")
            counts.append(_count(store.path, "dedup"))
        # 10 old + live - 3 = 8; each send then adds one and deletes up to 3
        # (the third finds the last old one), and the fourth prunes no more
        assert counts == [8, 6, 4, 4, 5]
        assert q.send("live", group_id="g").message_id == live.message_id  # kept
        clock.advance(61)  # the next minute's prune has nothing left but live ids
        q.send("later", group_id="g")
        assert _count(store.path, "dedup") == 6

    def test_receive_attempts_replay_after_a_restart(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        q = self.make(store.broker)
        q.send("x", group_id="g")
        [m] = q.receive(receive_request_attempt_id="try-1")
        q2 = fifo(store.reopen())
        [again] = q2.receive(receive_request_attempt_id="try-1")
        assert again.receipt_handle == m.receipt_handle
        q2.delete(again.receipt_handle)
        assert len(q2) == 0

    def test_a_replayed_attempt_still_replays_after_a_restart(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        """A replay re-hides its messages, which changes the attempt; the changed
        attempt is what a reopened broker must find."""
        q = self.make(store.broker)
        q.send("x", group_id="g")
        [m] = q.receive(receive_request_attempt_id="try-1", visibility_timeout=30)
        clock.advance(5)
        [replayed] = q.receive(receive_request_attempt_id="try-1", visibility_timeout=30)
        assert replayed.receipt_handle == m.receipt_handle
        clock.advance(5)
        q2 = fifo(store.reopen())
        [again] = q2.receive(receive_request_attempt_id="try-1", visibility_timeout=30)
        assert again.receipt_handle == m.receipt_handle


class TestMoveTasks:
    def test_a_running_task_goes_on_after_a_restart(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        b = store.broker
        dlq = b.create_queue("dlq")
        src = b.create_queue(
            "src",
            attributes={
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1})
            },
        )
        for i in range(4):
            dlq.send(f"m{i}")
        b.start_message_move_task(
            dlq.arn, destination_arn=src.arn, max_number_of_messages_per_second=1
        )
        clock.advance(1)
        assert len(src) == 1
        b = store.reopen()
        [task] = b.list_message_move_tasks(dlq.arn)
        assert task["Status"] == "RUNNING" and task["ApproximateNumberOfMessagesMoved"] == 1
        clock.advance(3)
        assert len(b.get_queue("src")) == 4
        [task] = b.list_message_move_tasks(dlq.arn)
        assert task["ApproximateNumberOfMessagesMoved"] == 4


#: The ``messages`` table of schema version 1, as the first stores were written:
#: the store derives it from ``_message.FIELDS``, and must keep it.
V1_MESSAGES = """CREATE TABLE messages (
    queue TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    body TEXT NOT NULL,
    size INTEGER NOT NULL,
    attributes TEXT,
    attributes_md5 TEXT,
    sender_id TEXT NOT NULL,
    sent INTEGER NOT NULL,
    due INTEGER NOT NULL,
    receive_count INTEGER NOT NULL,
    receive_base INTEGER NOT NULL,
    first_receive INTEGER NOT NULL,
    receipt_no INTEGER NOT NULL,
    receive_cap INTEGER NOT NULL,
    rehides INTEGER NOT NULL,
    token BLOB,
    group_id TEXT,
    dedup_id TEXT,
    sequence_number TEXT,
    trace_header TEXT,
    dlq_source_arn TEXT,
    PRIMARY KEY (queue, seq)
) WITHOUT ROWID"""
V1_COLUMNS = [line.split()[0] for line in V1_MESSAGES.splitlines()[1:-2]]


class TestTheSchema:
    """The store's table, statements and restore are derived from the record's
    declared fields (``_message.FIELDS``); the file they make is version 1's."""

    def test_the_record_takes_its_declared_fields_in_order(self) -> None:
        assert RecordView._fields == ("skey", "vkey", *RECORD_FIELDS)
        fields = {name: f"v{i}" for i, name in enumerate(RECORD_FIELDS)}
        fields["receive_count"] = 1  # with a receive state, every field is kept
        rec = record_of(1, 2, **fields)
        assert view(rec) == (1, 2, *fields.values()), "every field comes back in its place"

    def test_a_new_store_has_the_version_1_tables(self, tmp_path: Path, clock: ManualClock) -> None:
        Broker(clock=clock, data_dir=tmp_path).close()
        db = sqlite3.connect(tmp_path / DB_NAME)
        tables = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        assert tables["messages"] == V1_MESSAGES
        assert db.execute("PRAGMA user_version").fetchone() == (1,)
        assert db.execute("PRAGMA application_id").fetchone() == (0x53515351,)
        db.close()

    def test_pruning_reads_the_expiry_indexes_not_the_tables(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        """The windows' prune finds expired rows through an index on ``expires``
        (a scan of a million ids stalled a send for 100 ms); a store made before
        the indexes gets them when it is opened."""
        Broker(clock=clock, data_dir=tmp_path).close()
        db = sqlite3.connect(tmp_path / DB_NAME)
        for table, prune in _durable._PRUNE.items():
            plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {prune}", (0, 1)))
            assert f"INDEX {table}_expires (expires<?)" in plan, plan
            assert f"SCAN {table}" not in plan, plan
        db.executescript("DROP INDEX dedup_expires; DROP INDEX attempts_expires;")
        db.close()
        Broker(clock=clock, data_dir=tmp_path).close()
        db = sqlite3.connect(tmp_path / DB_NAME)
        indexes = db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql NOT NULL")
        assert sorted(name for (name,) in indexes) == ["attempts_expires", "dedup_expires"]
        db.close()

    def test_every_column_holds_its_field_and_comes_back(
        self, store: Reopener, clock: ManualClock
    ) -> None:
        """Each field is written to the column of its name (read with version 1's
        column list, not the store's), and every record reopens equal, field by
        field: a FIFO dead letter fills every column."""
        b = store.broker
        dlq = b.create_queue("d.fifo", fifo_queue=True)
        src = b.create_queue(
            "s.fifo",
            fifo_queue=True,
            content_based_deduplication=True,
            attributes={"RedrivePolicy": {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}},
        )
        src.send(
            "héllo",
            group_id="g",
            message_attributes={"s": "text", "b": b"\x00\xff", "n": 12.5},
            trace_header="Root=1-5759e988-bd862e3fe1be46a994272793",
        )
        [m] = src.receive(visibility_timeout=30)
        src.change_visibility(m.receipt_handle, 10)
        clock.advance(11)
        assert src.receive() == []  # moved to the dead-letter queue instead
        assert dlq.receive(visibility_timeout=60)
        plain = b.create_queue("jobs")
        plain.send("plain")
        queues = [dlq, src, plain]
        before = {(q.name, seq): state(rec) for q in queues for seq, rec in q._records.items()}
        assert len(before) == 2
        [(_, fifo_seq)] = [key for key in before if key[0] == "d.fifo"]
        dead = view(dlq._records[fifo_seq])
        assert None not in dead and dead.receive_base == 1 and dead.receipt_no == 1

        b = store.reopen()
        db = sqlite3.connect(store.path / DB_NAME)
        rows = {
            (row["queue"], row["seq"]): row
            for row in (
                dict(zip(V1_COLUMNS, values, strict=True))
                for values in db.execute(f"SELECT {', '.join(V1_COLUMNS)} FROM messages")
            )
        }
        db.close()
        row = rows[("d.fifo", fifo_seq)]
        assert (row["seq"], row["sent"], row["due"]) == (
            key_seq(dead.skey),
            key_time(dead.skey),
            key_time(dead.vkey),
        )
        assert row["sequence_number"] == str(dead.sequence_number)
        assert [a[0] for a in json.loads(row["attributes"])] == [a[0] for a in dead.attributes]
        for name in RECORD_FIELDS:
            if name not in ("attributes", "sequence_number"):
                assert row[name] == getattr(dead, name), name
        after = {
            (name, seq): state(rec)
            for name in ("d.fifo", "s.fifo", "jobs")
            for seq, rec in b.get_queue(name)._records.items()
        }
        assert after == before


def test_the_store_reaches_a_queue_only_through_its_protocols() -> None:
    """Every private name ``_durable.py`` uses on another object is a member of
    ``StoredQueue`` or ``StoredFifoQueue``: the interface the queue classes
    document for the store, so they can change anything else freely."""
    tree = ast.parse(Path(_durable.__file__).read_text(encoding="utf-8"))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "_thread"))
    }
    offered = {name for proto in (StoredQueue, StoredFifoQueue) for name in vars(proto)}
    offered -= {"_abc_impl", "_is_protocol"}  # what Protocol itself defines
    assert used, "the store uses the protocols"
    assert used <= offered, sorted(used - offered)


class TestTheDirectory:
    def test_one_broker_at_a_time(self, tmp_path: Path, clock: ManualClock) -> None:
        first = Broker(clock=clock, data_dir=tmp_path)
        with pytest.raises(errors.StorageError, match="in use by another broker"):
            Broker(clock=clock, data_dir=tmp_path)
        first.close()
        Broker(clock=clock, data_dir=tmp_path).close()

    def test_a_foreign_sqlite_file_is_refused_and_left_alone(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        db = sqlite3.connect(tmp_path / DB_NAME)
        db.execute("CREATE TABLE mine (x)")
        db.commit()
        db.close()
        before = (tmp_path / DB_NAME).read_bytes()
        with pytest.raises(errors.StorageError, match=f"{DB_NAME} is not a sqsqueue data file"):
            Broker(clock=clock, data_dir=tmp_path)
        assert (tmp_path / DB_NAME).read_bytes() == before

    def test_a_damaged_file_is_refused_and_left_alone(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        b = Broker(clock=clock, data_dir=tmp_path)
        b.create_queue("jobs").send("x")
        b.close()
        path = tmp_path / DB_NAME
        data = bytearray(path.read_bytes())
        data[:16] = b"garbage garbage!"  # the SQLite header
        path.write_bytes(bytes(data))
        with pytest.raises(errors.StorageError, match=DB_NAME):
            Broker(clock=clock, data_dir=tmp_path)
        assert path.read_bytes() == bytes(data)

    def test_a_row_it_cannot_read_is_refused_and_left_alone(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        b = Broker(clock=clock, data_dir=tmp_path)
        b.create_queue("jobs").send("x")
        b.close()
        db = sqlite3.connect(tmp_path / DB_NAME)
        db.execute("UPDATE queues SET state = '{\"values\": 1}'")
        db.commit()
        db.close()
        before = (tmp_path / DB_NAME).read_bytes()
        with pytest.raises(errors.StorageError, match=f"{DB_NAME} holds data"):
            Broker(clock=clock, data_dir=tmp_path)
        assert (tmp_path / DB_NAME).read_bytes() == before

    def test_a_failed_write_stops_the_broker(self, tmp_path: Path, clock: ManualClock) -> None:
        """Fail-stop: a call whose transaction SQLite refuses (disk full, I/O
        error) raises StorageError, and so does every later call, so nothing the
        store does not hold is ever served; closing and reopening reads back
        what was written."""
        b = Broker(clock=clock, data_dir=tmp_path)
        q = b.create_queue("jobs")
        q.send("kept")
        store = b._store
        assert store is not None
        real = store.db
        store.db = failing_db(real)
        with pytest.raises(errors.StorageError, match="disk I/O error"):
            q.send("lost with its call")
        store.db = real  # the disk is back: the broker still refuses until reopened
        for call in (lambda: len(q), lambda: q.receive(10), lambda: q.send("x"), b.list_queues):
            with pytest.raises(errors.StorageError, match="stopped"):
                call()
        b.close()
        with Broker(clock=clock, data_dir=tmp_path) as again:
            assert [m.body for m in standard(again).receive(10)] == ["kept"]

    def test_send_receive_and_delete_commit_before_they_return(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        """Durability: SendMessage, ReceiveMessage and DeleteMessage, which take
        the queue's lock by two calls rather than a with statement, still
        commit what they changed before they return (the broker's lock
        commits on its outermost release), and each is refused once a write
        failed."""
        b = Broker(clock=clock, data_dir=tmp_path)
        q = b.create_queue("jobs")
        store = b._store
        assert store is not None
        q.send("a")
        assert not store.dirty
        q.send("b")
        [m, n] = q.receive(10)
        assert not store.dirty
        q.delete(m.receipt_handle)
        assert not store.dirty
        real = store.db
        store.db = failing_db(real)
        with pytest.raises(errors.StorageError, match="disk I/O error"):
            q.send("lost with its call")
        store.db = real
        for call in (
            lambda: q.send("x"),
            lambda: q.receive(10),
            lambda: q.delete(n.receipt_handle),
        ):
            with pytest.raises(errors.StorageError, match="stopped"):
                call()
        b.close()
        with Broker(clock=clock, data_dir=tmp_path) as again:
            assert [m.body for m in standard(again).receive(10, visibility_timeout=0)] == []
            clock.advance(30)
            assert [m.body for m in standard(again).receive(10)] == ["b"]

    def test_a_store_whose_creation_a_crash_cut_short_is_made_afresh(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        """Before the schema's transaction commits, the file holds at most the WAL
        mode (SQLite writes that header first): no table, no application id. It
        opens as a new store; a foreign file with a table in it stays refused."""
        db = sqlite3.connect(tmp_path / DB_NAME)
        db.execute("PRAGMA journal_mode=WAL")
        db.close()
        assert (tmp_path / DB_NAME).stat().st_size > 0
        with Broker(clock=clock, data_dir=tmp_path) as b:
            b.create_queue("jobs").send("x")
        with Broker(clock=clock, data_dir=tmp_path) as b:
            assert len(standard(b)) == 1
        foreign = tmp_path / "foreign"
        foreign.mkdir()
        db = sqlite3.connect(foreign / DB_NAME)
        db.execute("CREATE TABLE mine (x)")
        db.close()
        with pytest.raises(errors.StorageError, match="not a sqsqueue data file"):
            Broker(clock=clock, data_dir=foreign)

    def test_the_directory_keeps_its_account_and_region(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        """Queue ARNs and URLs, receipt keys and RedrivePolicies name the account
        and region: opening the directory as another is refused, changing nothing."""
        with Broker(clock=clock, data_dir=tmp_path, account_id="111111111111") as b:
            b.create_queue("jobs").send("x")
        before = (tmp_path / DB_NAME).read_bytes()
        for other in ({"account_id": "222222222222"}, {"region": "eu-west-1"}):
            with pytest.raises(errors.StorageError, match="belongs to account 111111111111"):
                Broker(clock=clock, data_dir=tmp_path, **other)  # type: ignore[call-overload]
        assert (tmp_path / DB_NAME).read_bytes() == before
        with Broker(clock=clock, data_dir=tmp_path, account_id="111111111111") as b:
            assert standard(b).arn == "arn:aws:sqs:us-east-1:111111111111:jobs"
            assert len(standard(b)) == 1

    def test_a_store_without_an_identity_takes_the_brokers(
        self, tmp_path: Path, clock: ManualClock
    ) -> None:
        with Broker(clock=clock, data_dir=tmp_path) as b:
            b.create_queue("jobs")
        db = sqlite3.connect(tmp_path / DB_NAME)
        db.execute("DROP TABLE identity")  # as the first stores were written
        db.commit()
        db.close()
        with Broker(clock=clock, data_dir=tmp_path, account_id="333333333333") as b:
            assert "jobs" in b
        with pytest.raises(errors.StorageError, match="belongs to account 333333333333"):
            Broker(clock=clock, data_dir=tmp_path)

    def test_bad_arguments(self, tmp_path: Path) -> None:
        with pytest.raises(errors.InvalidParameterValue, match="durability"):
            Broker(data_dir=tmp_path, durability="disk")  # type: ignore[call-overload]
        with pytest.raises(errors.InvalidParameterValue, match="durability"):
            Broker(durability="disk")  # type: ignore[call-overload]
        with pytest.raises(errors.InvalidParameterValue, match="data_dir"):
            Broker(data_dir=42)  # type: ignore[call-overload]
        assert not os.listdir(tmp_path)  # nothing was created

    def test_machine_durability_opens_and_keeps(self, tmp_path: Path, clock: ManualClock) -> None:
        b = Broker(clock=clock, data_dir=tmp_path, durability="machine")
        b.create_queue("jobs").send("kept")
        b.close()
        with Broker(clock=clock, data_dir=tmp_path) as again:
            assert [m.body for m in standard(again).receive()] == ["kept"]

    def test_an_in_memory_broker_has_no_directory(self) -> None:
        assert Broker().data_dir is None

    def test_without_fcntl_only_data_directories_are_refused(self, tmp_path: Path) -> None:
        """Where there is no ``fcntl`` (Windows), ``import sqsqueue`` and every
        in-memory queue and broker work; opening a data directory is a
        StorageError that says why, and creates nothing."""
        import subprocess
        import sys

        root = Path(__file__).resolve().parent.parent
        target = tmp_path / "data"
        done = subprocess.run(
            [sys.executable, "-c", NO_FCNTL, str(target)],
            check=False,
            env={**os.environ, "PYTHONPATH": str(root)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "round trip: hello" in done.stdout
        assert "cannot open the data directory" in done.stdout
        assert "fcntl" in done.stdout
        assert not target.exists()


class TestBackup:
    """``Broker.backup(dir)`` copies a running durable broker into a new data
    directory that opens as the broker was at the last call that returned."""

    def fill(self, b: Broker[Any]) -> tuple[Queue, FifoQueue]:
        q = b.create_queue("jobs", tags={"team": "a"})
        f = b.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
        assert isinstance(q, Queue) and isinstance(f, FifoQueue)
        q.send_batch(["a", "b", "c"])
        for i in range(3):
            f.send(f"o{i}", group_id="g")
        return q, f

    def test_the_copy_opens_as_the_broker_was(
        self, store: Reopener, clock: ManualClock, tmp_path: Path
    ) -> None:
        q, f = self.fill(store.broker)
        [held] = q.receive(1, visibility_timeout=60)
        [first] = f.receive(1)
        copy = store.broker.backup(tmp_path / "copy")
        assert copy == tmp_path / "copy"
        q.send("after the backup")  # the running broker goes on, the copy does not see it
        with Broker(clock=clock, data_dir=copy) as restored:
            rq, rf = standard(restored), fifo(restored)
            assert rq.get_attributes()["ApproximateNumberOfMessages"] == "2"
            assert rq.get_attributes()["ApproximateNumberOfMessagesNotVisible"] == "1"
            assert rq.list_tags() == {"team": "a"}
            rq.delete(held.receipt_handle)  # a handle issued before the backup acts on the copy
            assert sorted(m.body for m in rq.receive(10)) == ["b", "c"]
            assert rf.receive(10) == []  # the group is still locked by the message in flight
            rf.delete(first.receipt_handle)
            assert [m.body for m in rf.receive(10)] == ["o1", "o2"]
            assert rf.send("o0", group_id="g").message_id == first.message_id  # dedup window
        assert len(standard(store.broker)) == 4  # the original is untouched by the copy's use

    def test_refusals_change_nothing(self, store: Reopener, tmp_path: Path) -> None:
        self.fill(store.broker)
        busy = tmp_path / "busy"
        busy.mkdir()
        (busy / "keep.txt").write_text("mine")
        with pytest.raises(errors.StorageError, match="new or empty directory"):
            store.broker.backup(busy)
        assert os.listdir(busy) == ["keep.txt"]
        with pytest.raises(errors.StorageError, match="in memory"):
            Broker().backup(tmp_path / "never")
        assert not (tmp_path / "never").exists()
        with pytest.raises(errors.InvalidParameterValue, match="destination"):
            store.broker.backup(42)  # type: ignore[arg-type]
        store.broker.close()
        with pytest.raises(errors.ServiceUnavailable):
            store.broker.backup(tmp_path / "closed")

    def test_another_process_can_copy_a_served_directory(
        self, store: Reopener, clock: ManualClock, tmp_path: Path
    ) -> None:
        """What docs/durability.md tells users of ``sqsqueue serve --data-dir``: SQLite's
        own backup, from another connection, while the broker has the directory."""
        self.fill(store.broker)
        (tmp_path / "copy").mkdir()
        source = sqlite3.connect(store.path / DB_NAME)
        target = sqlite3.connect(tmp_path / "copy" / DB_NAME)
        source.backup(target)
        source.close()
        target.close()
        with Broker(clock=clock, data_dir=tmp_path / "copy") as restored:
            assert len(standard(restored)) == 3
            assert len(fifo(restored)) == 3


NO_FCNTL = r"""
import sys


class NoFcntl:  # the import system of a platform without fcntl (Windows)
    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            raise ModuleNotFoundError("No module named 'fcntl'", name=name)
        return None


sys.modules.pop("fcntl", None)
sys.meta_path.insert(0, NoFcntl())

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, errors

q = Queue("jobs", clock=ManualClock())
q.send("hello")
[m] = q.receive()
q.delete(m.receipt_handle)
assert len(q) == 0
f = FifoQueue("o.fifo", clock=ManualClock(), content_based_deduplication=True)
f.send("a", group_id="g")
with Broker() as b:
    b.create_queue("jobs").send("x")
print("round trip:", m.body)
try:
    Broker(data_dir=sys.argv[1])
except errors.StorageError as exc:
    print("StorageError:", exc)
assert "fcntl" not in sys.modules
"""


CHILD = r"""
import json, os, signal, sys
from sqsqueue import Broker, ManualClock

data_dir, out = sys.argv[1], sys.argv[2]
clock = ManualClock(start=float(sys.argv[3]))
b = Broker(clock=clock, data_dir=data_dir)
dlq = b.create_queue("dlq")
q = b.create_queue("jobs", attributes={"RedrivePolicy": json.dumps(
    {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 5})})
q.tag({"team": "a"})
q.add_permission("share", ["111111111111"], ["SendMessage"])
q.set_attributes({"VisibilityTimeout": "77"})
for i in range(5):
    dlq.send(f"dead-{i}")
b.create_queue("gone")
b.delete_queue("gone")
b.start_message_move_task(dlq.arn, destination_arn=q.arn, max_number_of_messages_per_second=1)
clock.advance(2)
held = q.receive(10)  # the moved messages, now in flight for 77 s
other = b.create_queue("other")
other.send("x")
other.purge()
f = b.create_queue("o.fifo", fifo_queue=True, content_based_deduplication=True)
sent = f.send("same", group_id="g")
with open(out, "w") as fh:
    json.dump({"fifo": sent.message_id, "seq": sent.sequence_number,
               "held": [[m.body, m.receipt_handle] for m in held]}, fh)
os.kill(os.getpid(), signal.SIGKILL)  # no close(): only per-call commits count
"""


def test_a_killed_broker_comes_back_without_close(tmp_path: Path, clock: ManualClock) -> None:
    """The restore tests above close the broker before reopening it (which
    commits anything pending); here the process is killed instead, so each item
    is only there if the call that made it committed it."""
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "child.json"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "data"), str(out), str(START)],
        check=False,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    told = json.loads(out.read_text())
    clock.advance(2 + 1)  # the child's time, and one second more
    with Broker(clock=clock, data_dir=tmp_path / "data") as b:
        q = standard(b)
        attrs = q.get_attributes()
        assert attrs["VisibilityTimeout"] == "77"
        assert json.loads(attrs["Policy"])["Statement"][0]["Sid"] == "share"
        assert q.list_tags() == {"team": "a"}
        with pytest.raises(errors.PurgeQueueInProgress):
            standard(b, "other").purge()  # the 60-second purge window
        with pytest.raises(errors.QueueDeletedRecently):
            b.create_queue("gone")  # the 60-second re-create window
        [task] = b.list_message_move_tasks(standard(b, "dlq").arn)
        assert task["Status"] == "RUNNING"  # 5 messages at 1 a second: it goes on
        assert task["ApproximateNumberOfMessagesMoved"] > len(told["held"])
        assert attrs["ApproximateNumberOfMessagesNotVisible"] == str(len(told["held"]))
        assert len(told["held"]) >= 1
        body, handle = told["held"][0]
        q.delete(handle)  # a handle issued before the kill
        again = fifo(b, "o.fifo").send("same", group_id="g")
        assert again.message_id == told["fifo"]  # deduplicated across the kill
        assert int(fifo(b, "o.fifo").send("new", group_id="g").sequence_number or 0) > int(
            told["seq"]
        )
        assert body.startswith("dead-")
