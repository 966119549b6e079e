"""Named leniencies: AWS rules a broker can be told to relax, each counted.

sqsqueue is strict by default: it refuses what AWS refuses. Suites written
against a peer that does not enforce a rule (moto, ElasticMQ, LocalStack with
its defaults) can trip on it; a leniency turns exactly one such rule off for a
broker, and every request it lets through that AWS would have refused is
counted, so the suite passes today and its authors see what AWS would reject
(``docs/serving.md``, "Leniencies").

Each leniency names the one rule of ``docs/aws-behaviour.md`` it relaxes
(:data:`LENIENCIES`). The broker's :class:`Leniency` holds the names turned on
and the counts; the queues a broker makes share it. Asking whether a rule is
relaxed happens only where a request is about to be refused, and counting
only where one was let through, so a strict broker, and every request AWS
would accept, pays nothing for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import attrs

__all__ = [
    "FIFO_QUEUE_FALSE",
    "LENIENCIES",
    "PURGE_INTERVAL",
    "RECREATE_INTERVAL",
    "STRICT",
    "Leniency",
    "Rule",
    "parse_lenient",
    "summary",
]

#: One PurgeQueue per queue every 60 seconds (PurgeQueueInProgress).
PURGE_INTERVAL = "purge-interval"
#: ``FifoQueue`` is an attribute of FIFO queues only, even ``false``.
FIFO_QUEUE_FALSE = "fifo-queue-false"
#: A deleted queue's name is free again after 60 seconds (QueueDeletedRecently).
RECREATE_INTERVAL = "recreate-interval"


@attrs.frozen
class Rule:
    """The AWS rule a leniency relaxes, as ``docs/aws-behaviour.md`` states it."""

    #: What AWS refuses, in a line.
    rule: str
    #: AWS's error code for it (``e.response["Error"]["Code"]``).
    error: str
    #: Where ``docs/aws-behaviour.md`` states the rule: a section and the
    #: operations whose paragraphs in it carry the rule.
    section: str
    #: What sqsqueue does instead, with the leniency on.
    instead: str


#: Every leniency by name. Each relaxes one rule that moto, ElasticMQ and
#: LocalStack (by default) do not enforce and that real suites trip on.
LENIENCIES: Mapping[str, Rule] = MappingProxyType(
    {
        PURGE_INTERVAL: Rule(
            rule="one PurgeQueue per queue every 60 seconds",
            error="AWS.SimpleQueueService.PurgeQueueInProgress",
            section="§2.1 PurgeQueue",
            instead=(
                "purges again; the 60 seconds still run from the last purge AWS would have accepted"
            ),
        ),
        FIFO_QUEUE_FALSE: Rule(
            rule=(
                "FifoQueue is an attribute of FIFO queues only: FifoQueue=false on a standard "
                'queue is "Unknown Attribute FifoQueue."'
            ),
            error="InvalidAttributeName",
            section="§2.1 CreateQueue, SetQueueAttributes",
            instead="ignores FifoQueue=false on a standard queue, which stays a standard queue",
        ),
        RECREATE_INTERVAL: Rule(
            rule="a deleted queue's name cannot be used again for 60 seconds",
            error="AWS.SimpleQueueService.QueueDeletedRecently",
            section="§2.1 CreateQueue",
            instead="creates the queue again at once, empty",
        ),
    }
)


def _known() -> str:
    return ", ".join(sorted(LENIENCIES))


def parse_lenient(names: str | Iterable[str] | None) -> frozenset[str]:
    """The leniency names in ``names``: a comma-separated string
    (``"purge-interval, fifo-queue-false"``) or an iterable of such strings;
    blanks around and between names are ignored, and None or ``""`` is none.

    Raises :class:`ValueError` for a name that is not a leniency, its message
    listing the known ones (``unknown leniency 'x': known are ...``), and
    :class:`TypeError` for a value that is neither. O(number of names).
    """
    if names is None:
        return frozenset()
    if isinstance(names, str):
        parts = [names]
    elif isinstance(names, Iterable) and not isinstance(names, bytes | bytearray | Mapping):
        parts = list(names)
    else:
        raise TypeError(
            "lenient takes leniency names, a comma-separated str or an iterable of str, "
            f"not {type(names).__name__}"
        )
    out: set[str] = set()
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(f"lenient takes leniency names as str, not {type(part).__name__}")
        for raw in part.split(","):
            name = raw.strip()
            if not name:
                continue
            if name not in LENIENCIES:
                raise ValueError(f"unknown leniency {name!r}: known are {_known()}")
            out.add(name)
    return frozenset(out)


class Leniency:
    """The leniencies one broker has on, and how many requests each let
    through that AWS would have refused.

    The queues of a broker share its Leniency. :meth:`allows` is asked only
    where a request is about to be refused, and :meth:`count` called only once
    such a request succeeded (an operation that raises counts nothing); both
    are O(1), and counting takes a lock of its own, so counts are exact from
    any number of threads and brokers.
    """

    __slots__ = ("_counts", "_lock", "also", "names")

    def __init__(self, names: frozenset[str] = frozenset()) -> None:
        #: The leniencies on (validated names: :func:`parse_lenient`).
        self.names = names
        self._counts = dict.fromkeys(sorted(names), 0)
        self._lock = threading.Lock()
        #: A tally that counts what this one counts too (a mock's, over every
        #: broker it makes), with the same names.
        self.also: Leniency | None = None

    def allows(self, name: str) -> bool:
        """Whether the rule ``name`` relaxes is off. O(1)."""
        return name in self.names

    def count(self, name: str) -> None:
        """One more request let through by leniency ``name`` (which is on). O(1)."""
        with self._lock:
            self._counts[name] += 1
        if self.also is not None:
            self.also.count(name)

    def counts(self) -> dict[str, int]:
        """Requests let through so far, by leniency, for each one on (0 until
        one is). A copy. O(number of leniencies)."""
        with self._lock:
            return dict(self._counts)

    def __repr__(self) -> str:
        return f"Leniency({sorted(self.names)!r})"


#: The leniency of a standalone queue and of a strict broker: none.
STRICT = Leniency()


def summary(counts: Mapping[str, int]) -> str:
    """The line that reports counts: ``12 requests AWS would have refused:
    purge-interval 12`` (leniencies by name; a request two leniencies let
    through counts under each). O(number of leniencies)."""
    total = sum(counts.values())
    noun = "request" if total == 1 else "requests"
    each = ", ".join(f"{name} {counts[name]}" for name in sorted(counts))
    return f"{total} {noun} AWS would have refused: {each}"
