"""The hot paths' shortcuts agree with the rules and structures they stand in for.

Each shortcut in the send/receive/delete path (see benchmarks/RESULTS.md) is
checked here against the plain rule it replaces, so a faster path can never be
a different one.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import random
import re
import threading
import uuid
from collections.abc import Callable
from functools import partial
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sqsqueue import (
    BatchResult,
    Clock,
    ManualClock,
    Queue,
    SendEntry,
    _acknowledge,
    _batches,
    _send,
    errors,
)
from sqsqueue._message import (
    R_BODY,
    R_ID,
    R_SKEY,
    RECORD_FIELDS,
    BatchFailure,
    dedup_id_of,
    group_id_of,
    key_at,
    receipt_no_of,
    record_of,
    view,
)
from sqsqueue._metrics import Tally
from sqsqueue._receipts import _HANDLE
from sqsqueue._settings import ALL
from sqsqueue._validate import _INVALID_CHARS, batch_entry_ids, body
from sqsqueue._views import message_view
from tests._helpers import counts

START = 1_700_000_000.0
BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def test_body_check_agrees_with_the_character_rule_for_every_code_point() -> None:
    """Section 2.1's allowed characters, through the shortcuts (one
    bytes.translate for an ASCII body, isprintable() for the others):
    for each of the 1,114,112 code points, body() accepts exactly when the
    rule's regular expression finds nothing wrong, and sizes it in UTF-8."""
    disagreements = []
    for code in range(0x110000):
        text = "a" + chr(code)
        allowed = _INVALID_CHARS.search(text) is None
        try:
            _, size = body(text)
        except errors.InvalidMessageContents:
            accepted = False
        else:
            accepted = True
            assert size == len(text.encode("utf-8"))
        if accepted != allowed:
            disagreements.append(hex(code))
    assert disagreements == []


ids = st.one_of(
    st.from_regex(BATCH_ID, fullmatch=True),
    st.text(max_size=90),
    st.sampled_from(["", "a\nb", "\n", "a\n", "x" * 81, "ok"]),
)


@given(st.lists(st.one_of(ids, st.integers(), st.none()), min_size=1, max_size=10))
def test_batch_ids_checked_at_once_agree_with_each_id(values: list[object]) -> None:
    """Batch entry Ids (section 4), checked with one expression over the joined
    Ids: the same answer as checking each Id, newlines and non-strings included."""
    each = all(isinstance(v, str) and BATCH_ID.fullmatch(v) for v in values)
    assert batch_entry_ids(values) == each


class TestReadyLaneRuns:
    """A receive of the ready lane's first records takes them off it at once
    (``ReadyLane.skip``); any other receive goes record by record. Receives of
    every size over a lane of several chunks and a tail, with holes made by
    deleting never-received messages from further in, deliver each message once,
    in send order, with the indexes whole after each step."""

    @given(
        sizes=st.lists(st.integers(1, 10), min_size=1, max_size=40),
        holes=st.sets(st.integers(0, 199), max_size=12),
    )
    def test_receives_over_chunks_and_holes(self, sizes: list[int], holes: set[int]) -> None:
        from sqsqueue._store import CHUNK

        q = Queue("runs", clock=ManualClock(start=START), random=random.Random(1))
        for k in range(0, 200, 10):
            q.send_batch([SendEntry(str(i), f"m{k + i}") for i in range(10)])
        assert len(q._ready.chunks) == 200 // CHUNK
        # Deleted before any receive, from where they are: holes in the lane.
        page = q.browse(limit=200)
        for info in page.messages:
            if int(info.body[1:]) in holes:
                assert q.remove(info.position, info.message_id)
        q._check()
        got: list[str] = []
        for size in sizes:
            got += [m.body for m in q.receive(max_messages=size, visibility_timeout=600)]
            q._check()
        expected = [f"m{n}" for n in range(200) if n not in holes]
        assert got == expected[: len(got)]
        assert len(got) == min(sum(sizes), len(expected))


class TestInFlightLane:
    """Received messages whose deadlines arrive in order skip the sorted index
    (the in-flight lane); out-of-order deadlines use it. Counts, redelivery
    order and deadlines must not tell the two apart."""

    @pytest.fixture
    def q(self) -> Queue:
        return Queue("lane", clock=ManualClock(start=START), visibility_timeout=30)

    def test_mixed_timeouts_redeliver_by_deadline(self, q: Queue) -> None:
        clock = q.clock
        assert isinstance(clock, ManualClock)
        for body_ in "abcd":
            q.send(body_)
        [a] = q.receive()  # deadline +30 (lane)
        [b] = q.receive(visibility_timeout=10)  # +10: earlier than the lane's tail
        [c] = q.receive(visibility_timeout=60)  # +60: extends the lane
        [d] = q.receive(visibility_timeout=20)  # +20: sorted index
        assert counts(q) == (0, 4, 0)
        q._check()
        expected = [(10, "b"), (20, "d"), (30, "a"), (60, "c")]
        elapsed = 0
        for at, name in expected:
            clock.advance(at - elapsed - 0.000001)
            assert q.receive(visibility_timeout=1000) == []
            assert counts(q) == (0, 4, 0)
            clock.advance(0.000001)
            elapsed = at
            assert counts(q) == (1, 3, 0)
            # Received again, hidden past the end of the test.
            [again] = q.receive(visibility_timeout=1000)
            assert again.body == name
            q._check()
        assert {a.body, b.body, c.body, d.body} == set("abcd")

    def test_change_and_delete_in_the_middle_of_the_lane(self, q: Queue) -> None:
        clock = q.clock
        assert isinstance(clock, ManualClock)
        for i in range(5):
            q.send(str(i))
            clock.advance(1)
        msgs = q.receive(max_messages=5)  # one receive: five deadlines at +30
        assert [m.body for m in msgs] == ["0", "1", "2", "3", "4"]
        q.delete(msgs[2].receipt_handle)
        q.change_visibility(msgs[1].receipt_handle, 0)  # visible now
        q.change_visibility(msgs[3].receipt_handle, 100)  # after the others
        q._check()
        assert counts(q) == (1, 3, 0)
        assert [m.body for m in q.receive(max_messages=10, visibility_timeout=1000)] == ["1"]
        clock.advance(30)
        again = q.receive(max_messages=10, visibility_timeout=1000)
        assert sorted(m.body for m in again) == ["0", "4"]
        clock.advance(70)
        assert [m.body for m in q.receive(max_messages=10)] == ["3"]
        q._check()

    def test_long_poll_wakes_when_a_lane_deadline_passes(self, q: Queue) -> None:
        """A long poll's wake-up time comes from the lane's head too (section 12)."""
        clock = q.clock
        assert isinstance(clock, ManualClock)
        clock.autojump_threshold = 0
        q.send("x")
        [m] = q.receive(visibility_timeout=15)
        [again] = q.receive(wait_time_seconds=20)
        assert again.message_id == m.message_id
        assert clock.now() == START + 15

    def test_in_flight_limit_counts_the_lane(self, q: Queue) -> None:
        """Section 4: the in-flight count includes lane records."""
        for _ in range(3):
            q.send("x")
        q.receive(max_messages=3)
        assert q._in_flight(q._now_us()) == 3
        assert len(q._lane) == 3

    def test_lane_resumes_after_its_tail_leaves(self, q: Queue) -> None:
        """A long timeout's record at the lane's tail, once deleted, does not keep
        later (shorter) deadlines out of the lane."""
        clock = q.clock
        assert isinstance(clock, ManualClock)
        for body_ in "xabc":
            q.send(body_)
        assert [m.body for m in q.receive()] == ["x"]  # +30 s: the lane
        [a] = q.receive(visibility_timeout=43_200)  # +12 h: the lane's tail
        # +30 s, before the tail: the sorted index
        assert [m.body for m in q.receive()] == ["b"]
        assert (len(q._lane), len(q._received)) == (2, 1)
        q.delete(a.receipt_handle)
        clock.advance(1)
        # +31 s: after the lane's true tail (x), so the lane
        assert [m.body for m in q.receive()] == ["c"]
        assert (len(q._lane), len(q._received)) == (2, 1)
        q._check()
        assert counts(q) == (0, 3, 0)
        clock.advance(30)
        assert [m.body for m in q.receive(max_messages=10)] == ["x", "b", "c"]


class TestRevisibleIndex:
    """Received messages visible again move, once per timeout, from deadline
    order (the lane, ``_received``) to send order (``_revisible``), so a receive
    delivers them in send order (issue 12 §6) in O(log n) without a scan."""

    def test_each_expired_record_moves_once_and_is_taken_in_send_order(self) -> None:
        clock = ManualClock(start=1_700_000_000.0)
        q = Queue("q", clock=clock)
        for i in range(6):
            q.send(f"m{i}")
        got = q.receive(6, visibility_timeout=10)  # all six in the lane
        for m in reversed(got[:3]):  # m2, m1, m0 re-hidden: _received, deadline order
            q.change_visibility(m.receipt_handle, 5)
        assert len(q._lane) == 3 and len(q._received) == 3
        clock.advance(10)
        [first] = q.receive(1)  # the receive settles and surfaces all six
        assert first.body == "m0"
        assert [r[R_BODY] for r in q._lane.values()] == ["m0"] and not q._received
        assert [r[R_BODY] for r in q._revisible] == [f"m{i}" for i in range(1, 6)]
        assert [m.body for m in q.receive(10)] == [f"m{i}" for i in range(1, 6)]
        assert not q._revisible
        q._check()

    def test_delete_and_change_find_a_revisible_record(self) -> None:
        clock = ManualClock(start=1_700_000_000.0)
        q = Queue("q", clock=clock)
        q.send("a")
        q.send("b")
        _a, b = q.receive(2, visibility_timeout=1)
        clock.advance(1)
        q.send("c")
        assert q.receive(1)[0].body == "a"  # surfaces b as well
        assert [r[R_BODY] for r in q._revisible] == ["b"]
        q.delete(b.receipt_handle)  # an old handle still deletes (section 8)
        assert not q._revisible
        assert counts(q) == (1, 1, 0)
        q._check()


@given(
    group_id=st.none() | st.text(max_size=3),
    dedup_id=st.none() | st.text(max_size=3),
    delay=st.none() | st.integers(0, 900),
)
def test_the_send_path_skips_check_ids_only_where_it_answers_nothing(
    group_id: str | None, dedup_id: str | None, delay: int | None
) -> None:
    """_send.prepare skips a standard queue's _check_ids when neither id is given:
    whatever _check_ids answers or raises, _send.prepare answers or raises the same."""
    q = Queue("hot", clock=ManualClock(start=START))
    try:
        expected: object = q._check_ids(delay, group_id, dedup_id, batch=False)
    except errors.SQSError as err:
        expected = type(err)
    try:
        rec, _ = _send.prepare(q, "x", delay, None, None, group_id, dedup_id, batch=False)
        got: object = (group_id_of(rec), dedup_id_of(rec))
    except errors.SQSError as err:
        got = type(err)
    assert got == expected


# -- the batch-native paths (benchmarks/RESULTS.md §2b) ------------------------------
#
# Each path below does, for a whole batch or for the common entry, what the
# per-entry path does entry by entry; each test runs both on twin queues (same
# seed, same clock) and compares what they answer and what they leave.


def twins(**options: object) -> tuple[Queue, Queue]:
    """Two queues in the same state: same seed (ids, handles), same clock."""
    clock = ManualClock(start=START)
    return (
        Queue("twin", clock=clock, random=random.Random(5), **options),  # type: ignore[arg-type]
        Queue("twin", clock=clock, random=random.Random(5), **options),  # type: ignore[arg-type]
    )


def state(q: Queue) -> tuple[object, ...]:
    """Everything a send, receive or delete could change, indexes included."""
    records = [
        (seq, [getattr(view(r), name) for name in ("skey", "vkey", *RECORD_FIELDS)])
        for seq, r in q._records.items()
    ]
    tally = q._tally
    assert tally is not None
    return (
        records,
        q._seq,
        q._oldest_seq,
        q._last_skey,
        [r[R_SKEY] for r in q._ready],
        [r[R_SKEY] for r in q._fresh],
        list(q._lane),
        [r[R_SKEY] for r in q._received],
        [r[R_SKEY] for r in q._revisible],
        (tally.sent, tally.sent_bytes, tally.received, tally.deleted),
    )


def outcome(call: Callable[[], object]) -> object:
    """What ``call`` answers, or the AWS error it raises (code and message)."""
    try:
        return call()
    except errors.SQSError as err:
        return (type(err), err.message)


#: Bodies the plain-batch check must sort right: plain ASCII, ASCII with
#: allowed and disallowed control characters, non-ASCII, empty, too long (the
#: twins' MaximumMessageSize is 1,024), not a string.
bodies = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=20),
    st.text(st.characters(max_codepoint=0x7F), max_size=20),
    st.text(max_size=5),
    st.sampled_from(["", "\x00", "a\tb\r\n", "\x7f", "é", "x" * 1_024, "x" * 1_025]),
    st.integers(),
    st.none(),
)
entry_ids = st.sampled_from("abcdefghijk")
entries = st.builds(
    SendEntry,
    id=entry_ids,
    body=bodies,
    delay_seconds=st.none() | st.just(0) | st.just(5),
    message_attributes=st.none() | st.just({"k": "v"}),
)
plain_entries = st.builds(SendEntry, id=entry_ids, body=bodies)
batches = st.one_of(
    st.lists(plain_entries, min_size=1, max_size=10, unique_by=lambda e: e.id),
    st.lists(entries, min_size=1, max_size=10, unique_by=lambda e: e.id),
    st.lists(entries, min_size=2, max_size=3),  # repeated Ids too
)


@given(batches)
def test_a_plain_send_batch_is_the_batch_entry_by_entry(batch: list[SendEntry]) -> None:
    """Section 2.1: a batch of plain bodies, checked at once in C and stored in
    one pass, answers and stores what validating and committing each entry
    does: same results, same failures, same records and indexes, same counts."""
    fast, slow = twins(maximum_message_size=1_024)
    expected = outcome(lambda: slow_send_batch(slow, batch))
    assert outcome(lambda: fast.send_batch(batch)) == expected
    assert state(fast) == state(slow)
    fast._check()


def slow_send_batch(q: Queue, batch: list[SendEntry]) -> object:
    """send_batch with every entry through _send.prepare and _commit."""
    with mock.patch.object(_batches, "plain_bodies", return_value=None):
        return q.send_batch(batch)


@given(bodies, st.none() | st.just(0), st.booleans())
def test_a_plain_send_is_prepare_then_commit(
    body: object, delay: int | None, delayed: bool
) -> None:
    """Section 2.1: SendMessage of a plain ASCII body, validated inline and
    stored by _admit_body, answers and stores what _send.prepare and _commit do."""
    fast, slow = twins(maximum_message_size=1_024, delay_seconds=3 if delayed else 0)
    fast.send("first")
    slow.send("first")

    def reference() -> object:
        prepared = _send.prepare(slow, body, delay, None, None, None, None, batch=False)
        return _send.send_prepared(slow, [prepared], None)[0]

    assert outcome(lambda: fast.send(body, delay_seconds=delay)) == outcome(reference)  # type: ignore[arg-type]
    assert state(fast) == state(slow)
    fast._check()


def reference_delete(q: Queue, handle: object, now: int) -> None:
    """DeleteMessage by the rule (section 8): a handle this queue issued,
    verified by its MAC, deletes its message if it is still stored."""
    rec, _ = _acknowledge.acting(q, handle, now)
    assert q._tally is not None
    q._tally.deleted += 1
    if rec is not None:
        q._drop(rec, "deleted", now)


@given(st.data())
def test_delete_batch_and_delete_are_the_rule_entry_by_entry(data: st.DataObject) -> None:
    """Section 8: a delete batch (its handles decoded at once, its latest
    receipts dropped in one pass) and DeleteMessage answer and delete what the
    rule does entry by entry, in order: latest and older receipts, a handle
    twice, deleted messages, forged, mutated, foreign and malformed handles."""
    fast, slow = twins(visibility_timeout=30)
    other = Queue("twin", clock=fast.clock)
    other.send("x")
    foreign = other.receive()[0].receipt_handle
    pool: list[str] = [foreign, "garbage", "", "A" * 48]
    for q in (fast, slow):
        q.send_batch([f"m{i}" for i in range(8)])
    first = [m.receipt_handle for m in fast.receive(10, visibility_timeout=0)]
    assert first == [m.receipt_handle for m in slow.receive(10, visibility_timeout=0)]
    latest = [m.receipt_handle for m in fast.receive(10)]
    assert latest == [m.receipt_handle for m in slow.receive(10)]
    gone = latest.pop()
    for q in (fast, slow):
        q.delete(gone)
    pool += first + latest + [gone]
    pool += [
        h[:i] + ("A" if h[i] != "A" else "B") + h[i + 1 :] for h in latest for i in (0, 1, 20, 47)
    ]
    batch = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=10))
    single = data.draw(st.sampled_from(pool))

    def reference() -> object:
        successful: dict[str, None] = {}
        failed = []
        with slow._lock:
            now = slow._begin()
            for i, handle in enumerate(batch):
                try:
                    reference_delete(slow, handle, now)
                except errors.SQSError as err:
                    failed.append(BatchFailure(str(i), err.code, err.message, err.sender_fault))
                else:
                    successful[str(i)] = None
        return BatchResult(successful, tuple(failed))  # type: ignore[arg-type]

    assert fast.delete_batch(batch) == reference()
    assert state(fast) == state(slow)

    def reference_single() -> None:
        with slow._lock:
            reference_delete(slow, single, slow._begin())

    assert outcome(lambda: fast.delete(single)) == outcome(reference_single)
    assert state(fast) == state(slow)
    fast._check()


@given(
    st.lists(
        st.tuples(
            st.none() | st.just({"k": "v"}),
            st.none() | st.just("Root=1-5759e988-bd862e3fe1be46a994272793"),
            st.none() | st.just("g"),
        ),
        min_size=1,
        max_size=10,
    ),
    st.integers(0, 2),
)
def test_a_receive_builds_each_message_as_message_view(
    sends: list[tuple[dict[str, str] | None, str | None, str | None]], again: int
) -> None:
    """Section 2.1: the messages a receive builds in one pass (message_views)
    are those message_view builds for each record and its handle, with and
    without user attributes, trace headers and (fair queue) group ids, for
    every system attribute, some, or none, and user attributes or none."""
    clock = ManualClock(start=START)
    q = Queue("views", clock=clock, visibility_timeout=0)
    for i, (attributes, trace, group) in enumerate(sends):
        q.send("body", message_attributes=attributes, trace_header=trace, group_id=group)
        if i % 3 == 2:
            # Sent, and first received, in different milliseconds.
            q.receive(1 + again)
            clock.advance(0.0015)
    for _ in range(again):
        q.receive(10)
        clock.advance(1.5)
    for names in (ALL, ("SentTimestamp",), ()):
        for user_names in (ALL, ()):
            for m in q.receive(10, attribute_names=names, message_attribute_names=user_names):
                rec = next(r for r in q._records.values() if r[R_ID] == m.message_id)
                assert m == message_view(rec, m.receipt_handle, names, user_names)


@given(st.lists(st.tuples(st.integers(1, 2**40 - 1), st.integers(1, 3)), min_size=0, max_size=12))
def test_issue_all_gives_each_record_its_own_handle(receipts: list[tuple[int, int]]) -> None:
    """Section 8: handles issued for a receive at once (one MAC per block of
    four messages, one base64 call, the text cut into handles by one
    itemgetter for 2 to 10 of them) are those issued one by one, and each
    token is that receipt's own."""
    q = Queue("issue", clock=ManualClock(start=START), random=random.Random(3))
    # issue_all is given the records before the receive: each one's next receipt.
    recs = [record_of(key_at(0, s), 0, body="", size=0, receipt_no=r - 1) for s, r in receipts]
    tokens, handles = q._receipts.issue_all(recs)
    assert type(handles) is list and len(handles) == len(receipts)
    assert len(tokens) == len(receipts)
    for (seq, receipt_no), handle, token in zip(receipts, handles, tokens, strict=True):
        assert q._receipts.issue(seq, receipt_no) == (token, handle)
        assert token == q._receipts.token(seq, receipt_no)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["send", "send_batch", "receive", "delete", "change"]),
            st.integers(0, 40),
        ),
        max_size=30,
    )
)
def test_begin_skips_advance_only_when_it_would_do_nothing(
    steps: list[tuple[str, int]],
) -> None:
    """_begin tests _advance's fast path inline: whenever an operation starts,
    nothing is left for _advance to do at that moment (retention, lane
    deadlines), so every skipped call would have changed nothing."""
    clock = ManualClock(start=START)
    q = Queue("begin", clock=clock, visibility_timeout=7, message_retention_period=60)
    held: list[str] = []
    for op, seconds in steps:
        clock.advance(seconds)
        with q._lock:
            now = q._begin()
            before = state(q)
            q._advance(now)
            assert state(q) == before
        if op == "send":
            q.send("x")
        elif op == "send_batch":
            q.send_batch(["y", "z"])
        elif op == "receive":
            held += [m.receipt_handle for m in q.receive(3, visibility_timeout=seconds % 3)]
        elif held and op == "delete":
            q.delete(held.pop(0))
        elif held:
            with contextlib.suppress(errors.SQSError):
                q.change_visibility(held.pop(), seconds % 5)
        q._check()


def test_message_ids_are_version_4_uuids_unique_per_queue() -> None:
    """Message ids are UUID strings with version 4 and the RFC 4122 variant,
    distinct for every message of a queue and between two queues seeded alike."""
    clock = ManualClock(start=START)
    a = Queue("ids", clock=clock, random=random.Random(1))
    b = Queue("ids", clock=clock)
    seen = set()
    for q in (a, b):
        seen.update(
            r.message_id for r in q.send_batch([f"m{i}" for i in range(10)]).successful.values()
        )  # type: ignore[union-attr]
        seen.update(q.send("x").message_id for _ in range(500))
    assert len(seen) == 2 * 510
    for message_id in seen:
        parsed = uuid.UUID(message_id)
        assert str(parsed) == message_id
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


delete_members = st.one_of(
    st.sampled_from(["0", "1", "a", "bad id!", "x" * 81]), st.integers(0, 2), st.none()
)
dict_entries = st.one_of(
    st.fixed_dictionaries({"Id": delete_members, "ReceiptHandle": delete_members}),
    st.fixed_dictionaries({"Id": delete_members}),
    st.fixed_dictionaries(
        {"Id": delete_members, "ReceiptHandle": delete_members, "Extra": st.just("x")}
    ),
    st.fixed_dictionaries({"ReceiptHandle": delete_members, "Other": st.just("x")}),
)


@given(st.lists(dict_entries, min_size=0, max_size=11))
def test_boto3_shaped_delete_entries_are_read_as_entry_by_entry(entries: list[object]) -> None:
    """Section 2.1: DeleteMessageBatch entries that are dicts (the wire's and
    boto3's shape), read at once when each has a string Id and ReceiptHandle
    and nothing else, give the Ids and handles, or the whole-request error,
    that checking each entry gives."""

    def per_entry() -> object:
        items = _batches.entries_of(
            entries, "DeleteMessageBatchRequestEntry", _batches.coerce_delete
        )
        return [item[0] for item in items], [item[1][0] for item in items]

    assert outcome(lambda: _batches.delete_entries_of(entries)) == outcome(per_entry)


@pytest.mark.parametrize("wait", [0, None])
def test_a_short_poll_receive_async_is_the_long_polls_first_attempt(wait: int | None) -> None:
    """``receive_async`` of a short poll (WaitTimeSeconds 0, or the queue's
    default 0) answers in one step without the long-poll loop: what the loop's
    first attempt gives, the same messages, counters and empty receives as
    ``receive``."""
    clock = ManualClock(start=START)
    queues = [Queue("q", clock=clock, random=random.Random(3)) for _ in range(2)]
    for q in queues:
        q.send_batch(["a", "b", "c"])
    got_async = asyncio.run(queues[0].receive_async(2, wait_time_seconds=wait))
    got_sync = queues[1].receive(2, wait_time_seconds=wait)
    assert got_async == got_sync and len(got_async) == 2
    step = queues[0].receive_async(10, wait_time_seconds=wait)
    with pytest.raises(StopIteration) as done:
        step.send(None)  # no event loop needed: it never awaits
    assert len(done.value.value) == 1
    assert asyncio.run(queues[0].receive_async(10, wait_time_seconds=wait)) == []
    queues[1].receive(10, wait_time_seconds=wait)
    assert queues[1].receive(10, wait_time_seconds=wait) == []
    assert counts(queues[0]) == counts(queues[1])
    tallies = [q._tally for q in queues]
    assert [[getattr(t, n) for n in Tally.__slots__] for t in tallies if t is not None] == [
        [getattr(t, n) for n in Tally.__slots__] for t in reversed(tallies) if t is not None
    ]
    queues[0].close()
    with pytest.raises(errors.ServiceClosed):
        asyncio.run(queues[0].receive_async(1, wait_time_seconds=wait))


def reference_send(q: Queue, body: str) -> object:
    """SendMessage by the general path: _send.prepare, then _send.send_prepared (which
    takes the lock with a with statement and calls _begin and _commit)."""
    prepared = _send.prepare(q, body, None, None, None, None, None, batch=False)
    return _send.send_prepared(q, [prepared], None)[0]


def reference_delete_call(q: Queue, handle: str) -> None:
    """DeleteMessage by the general path: _begin, then _acknowledge.delete_one (which finds
    the latest receipt with Receipts.latest and drops the record with _drop)."""
    with q._lock:
        now = q._begin()
        _acknowledge.delete_one(q, handle, now)
        q._notify()


class SteppedClock(Clock):
    """A clock (not a ManualClock) that a test steps forward and back, as a
    SystemClock is when the wall clock is set back."""

    def __init__(self) -> None:
        self.t = START

    def now(self) -> float:
        return self.t


@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["send", "send", "receive", "delete", "delete_old", "change", "wait", "back"]
            ),
            st.integers(0, 40),
        ),
        max_size=40,
    ),
    st.booleans(),
)
# Retention ending before a send, and before a delete; a delete after the
# clock was set back; the same with history kept.
@example([("send", 1), ("wait", 39), ("send", 2)], False)
@example([("send", 1), ("send", 2), ("receive", 0), ("wait", 39), ("delete", 0)], False)
@example([("send", 1), ("receive", 3), ("back", 9), ("delete", 0)], False)
@example([("send", 1), ("send", 2), ("receive", 0), ("wait", 39), ("delete", 0)], True)
@example(
    [("send", 1), ("wait", 19), ("send", 2), ("receive", 8), ("wait", 1), ("delete", 1)], False
)
def test_send_and_delete_fast_paths_as_general_paths(
    steps: list[tuple[str, int]], history: bool
) -> None:
    """SendMessage's plain path and DeleteMessage's, which checks the latest
    receipt inline (Receipts.latest), against the general paths: on twin
    queues, one through send and delete, the other through _begin and the
    general paths, every answer, record, index, counter and history event
    stays equal while the clock moves by seconds, by half microseconds
    (round() halves to even) and back, messages expire (retention 60 s),
    visibility timeouts end (or not yet) and older receipts are used."""
    clock = SteppedClock()
    fast, slow = (
        Queue(
            "twin",
            clock=clock,
            random=random.Random(5),
            visibility_timeout=7,
            message_retention_period=60,
        )
        for _ in range(2)
    )
    fast.keep_history = slow.keep_history = history
    held: list[tuple[str, str]] = []
    old: list[tuple[str, str]] = []
    ids: list[str] = []
    for op, n in steps:
        if op == "wait":
            clock.t += 3 * n if n % 2 else n * 0.0000005  # up to 117 s, or half microseconds
        elif op == "back":
            clock.t -= n
        elif op == "send":
            body_ = f"m{n}"
            sent = outcome(partial(fast.send, body_))
            assert sent == outcome(partial(reference_send, slow, body_))
            ids.append(sent.message_id)  # type: ignore[attr-defined]
        elif op == "receive":
            got = [fast.receive(3, visibility_timeout=n), slow.receive(3, visibility_timeout=n)]
            assert got[0] == got[1]
            old += held
            held += [(a.receipt_handle, b.receipt_handle) for a, b in zip(*got, strict=True)]
        elif op == "change" and held:
            a, b = held[n % len(held)]
            assert outcome(partial(fast.change_visibility, a, n % 5)) == outcome(
                partial(slow.change_visibility, b, n % 5)
            )
        elif op in ("delete", "delete_old"):
            pool = held if op == "delete" else old
            if pool:
                a, b = pool.pop(n % len(pool))
                assert outcome(partial(fast.delete, a)) == outcome(
                    partial(reference_delete_call, slow, b)
                )
        assert state(fast) == state(slow)
        assert fast._last_now == slow._last_now
        fast._check()
    if history:
        assert [fast.history(i) for i in ids] == [slow.history(i) for i in ids]
    for q in (fast, slow):
        q.close()
    assert outcome(lambda: fast.send("x")) == outcome(lambda: reference_send(slow, "x"))
    assert outcome(lambda: fast.delete("A" * 48)) == outcome(
        lambda: reference_delete_call(slow, "A" * 48)
    )


@pytest.mark.parametrize("op", ["send", "receive", "delete"])
def test_a_clock_that_raises_leaves_the_lock_free(op: str) -> None:
    """SendMessage, ReceiveMessage and DeleteMessage take the queue's lock by
    acquire and release rather than a with statement: when the clock raises
    under the lock, the error reaches the caller, nothing changes, and the
    lock is free for another thread at once."""

    class Broke(Exception):
        pass

    class FailingClock(ManualClock):
        fail = False

        def now(self) -> float:
            if self.fail:
                raise Broke
            return super().now()

    clock = FailingClock(start=START)
    q = Queue("broke", clock=clock)
    q.send("a")
    [m] = q.receive()
    before = state(q)
    clock.fail = True
    call = {
        "send": lambda: q.send("b"),
        "receive": q.receive,
        "delete": lambda: q.delete(m.receipt_handle),
    }[op]
    with pytest.raises(Broke):
        call()
    assert state(q) == before
    free: list[bool] = []
    thread = threading.Thread(target=lambda: free.append(q._lock.acquire(blocking=False)))
    thread.start()
    thread.join(timeout=10)
    assert free == [True]


def test_a_plain_send_accepts_exactly_the_allowed_ascii_characters() -> None:
    """Section 2.1's allowed characters on SendMessage's inline check of an
    ASCII body (one bytes.translate with ASCII_KEEP): for each of the 128
    ASCII code points, send accepts a body holding it exactly when the rule's
    regular expression finds nothing wrong."""
    q = Queue("ascii", clock=ManualClock(start=START))
    for code in range(0x80):
        text = "a" + chr(code)
        try:
            q.send(text)
        except errors.InvalidMessageContents:
            accepted = False
        else:
            accepted = True
        assert accepted == (_INVALID_CHARS.search(text) is None), hex(code)


@given(st.data())
def test_delete_latest_finds_what_receipts_latest_finds(data: st.DataObject) -> None:
    """Section 8: DeleteMessage's one lifecycle call (_delete_latest, which
    checks the handle inline) acts exactly on the handles Receipts.latest
    finds, the latest receipt of a stored message, and leaves every other
    handle to the general path with nothing changed: older receipts, a
    deleted message's, version 1 handles, forged, mutated, foreign, malformed
    and non-string ones."""
    fast, slow = twins(visibility_timeout=30)
    other = Queue("twin", clock=fast.clock)
    other.send("x")
    pool: list[object] = [other.receive()[0].receipt_handle, "garbage", "", "A" * 48, None, 5]
    for q in (fast, slow):
        q.send_batch([f"m{i}" for i in range(6)])
    older = [m.receipt_handle for m in fast.receive(10, visibility_timeout=0)]
    assert older == [m.receipt_handle for m in slow.receive(10, visibility_timeout=0)]
    latest = [m.receipt_handle for m in fast.receive(10)]
    assert latest == [m.receipt_handle for m in slow.receive(10)]
    gone = latest.pop()
    for q in (fast, slow):
        q.delete(gone)
    receipts, receipt_no = fast._receipts, receipt_no_of(fast._records[1])
    token = receipts.token(1, receipt_no, 1)
    version_1 = base64.b64encode(_HANDLE.pack(1, receipts._tag, 1, receipt_no, token)).decode()
    pool += [*older, *latest, gone, version_1, latest[0].encode()]
    pool += [h[:i] + ("A" if h[i] != "A" else "B") + h[i + 1 :] for h in latest for i in (0, 1, 30)]
    handle = data.draw(st.sampled_from(pool))
    expected = slow._receipts.latest(handle, slow._records)
    with fast._lock:
        found = fast._delete_latest(handle, fast._begin())
    assert found == (expected is not None)
    if expected is not None:
        with slow._lock:
            slow._drop(expected, "deleted", slow._begin())
        assert slow._tally is not None
        slow._tally.deleted += 1
    assert state(fast) == state(slow)
    fast._check()


def test_batch_results_built_fast_equal_the_classes() -> None:
    """``batch_result`` is ``BatchResult(...)`` without attrs' ``__init__``: an
    equal, frozen, hashable-as-before object; ``none_for_each`` is
    ``dict.fromkeys``, a new dict each time even for the same Ids."""
    import attrs

    from sqsqueue._batches import none_for_each
    from sqsqueue._message import BatchFailure, BatchResult, batch_result

    # batch_result skips attrs' __init__: it must have nothing to run.
    assert all(f.validator is None and f.converter is None for f in attrs.fields(BatchResult))
    failure = (BatchFailure("b", "InvalidParameterValue", "no"),)
    for args in (({"a": None},), ({"a": None}, failure), ({}, ())):
        fast, slow = batch_result(*args), BatchResult(*args)
        assert fast == slow and repr(fast) == repr(slow) and fast.ok is slow.ok
    with pytest.raises(AttributeError):
        batch_result({}).failed = ()  # type: ignore[misc]
    ids = ["0", "1", "2"]
    first = none_for_each(ids)
    first["x"] = None
    second = none_for_each(["0", "1", "2"])
    assert second == dict.fromkeys(ids) and second is not first
    assert list(none_for_each(["2", "1"])) == ["2", "1"]
