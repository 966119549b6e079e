"""The hot paths' shortcuts agree with the rules and structures they stand in for.

Each shortcut in the send/receive/delete path (see benchmarks/RESULTS.md) is
checked here against the plain rule it replaces, so a faster path can never be
a different one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsqueue import ManualClock, Queue, errors
from sqsqueue._validate import _INVALID_CHARS, batch_entry_ids, body
from tests._helpers import counts

START = 1_700_000_000.0
BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


def test_body_check_agrees_with_the_character_rule_for_every_code_point() -> None:
    """Section 2.1's allowed characters, through the isprintable() shortcut:
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
        assert [r.body for r in q._lane.values()] == ["m0"] and not q._received
        assert [r.body for r in q._revisible] == [f"m{i}" for i in range(1, 6)]
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
        assert [r.body for r in q._revisible] == ["b"]
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
    """_prepare skips a standard queue's _check_ids when neither id is given:
    whatever _check_ids answers or raises, _prepare answers or raises the same."""
    q = Queue("hot", clock=ManualClock(start=START))
    try:
        expected: object = q._check_ids(delay, group_id, dedup_id, batch=False)
    except errors.SQSError as err:
        expected = type(err)
    try:
        rec, _ = q._prepare("x", delay, None, None, group_id, dedup_id, batch=False)
        got: object = (rec.group_id, rec.dedup_id)
    except errors.SQSError as err:
        got = type(err)
    assert got == expected
