"""A lifecycle observer that rebuilds a queue's stored messages from the
reports alone (``sqsqueue._lifecycle.Observer``).

The state machines attach one to every queue they create and check, after each
step, that it equals the queue's records: so every change of a stored message
is reported, with the record as it is after the change, and nothing changes a
message behind the transitions' back. A durable broker relies on exactly that:
its store writes what these reports name (``sqsqueue/_durable.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqsqueue import FifoQueue, Queue
from sqsqueue._message import _Record, record_state, seq_of, show_record

ARRIVE = {"sent", "dead_letter_arrived"}
CHANGE = {"received", "visibility_changed"}
LEAVE = {"deleted", "expired", "dead_lettered", "moved", "purged", "queue_deleted"}


#: Everything the durable store keeps of a message (``_message.FIELDS``): its
#: two keys and its declared fields, as a tuple.
state: Callable[[_Record], tuple[Any, ...]] = record_state


class Mirror:
    """The stored messages of one queue, as the reports describe them."""

    def __init__(self) -> None:
        self.records: dict[int, tuple[Any, ...]] = {}
        self.events = 0

    def report(self, event: str, rec: _Record, at: int, detail: Mapping[str, object]) -> None:
        self.events += 1
        seq = seq_of(rec)
        if event in ARRIVE:
            assert seq not in self.records, f"{event}: {show_record(rec)} already stored"
            self.records[seq] = state(rec)
        elif event in CHANGE:
            assert seq in self.records, f"{event}: {show_record(rec)} never arrived"
            self.records[seq] = state(rec)
        elif event in LEAVE:
            assert self.records.pop(seq, None) is not None, (
                f"{event}: {show_record(rec)} never arrived"
            )
        elif event == "receive_attempt":
            assert self.records.get(seq) == state(rec), "an attempt names a stored message"
        else:
            raise AssertionError(f"unknown event {event!r}")

    def queue_changed(self, event: str) -> None:
        pass


def attach(queue: Queue | FifoQueue, *, restored: bool = False) -> None:
    """Start mirroring ``queue``: a new one (call before anything is sent to
    it), or one a durable broker just ``restored`` (its records are the start)."""
    mirror = Mirror()
    if restored:
        mirror.records = {seq: state(queue._realized(rec)) for seq, rec in queue._records.items()}
    else:
        assert not queue._records
    queue._add_observer(mirror)


def check(queue: Queue | FifoQueue) -> None:
    """The reports so far rebuild exactly the queue's stored messages."""
    mirrors = [o for o in queue._observers if isinstance(o, Mirror)]
    assert mirrors, "attach() the mirror when the queue is made"
    actual = {seq: state(queue._realized(rec)) for seq, rec in queue._records.items()}
    for mirror in mirrors:
        missing = actual.keys() - mirror.records.keys()
        extra = mirror.records.keys() - actual.keys()
        assert not missing and not extra, f"unreported: {missing}, stale: {extra}"
        for seq, now in actual.items():
            assert mirror.records[seq] == now, (
                f"seq {seq}: reported {mirror.records[seq]}, is {now}"
            )
