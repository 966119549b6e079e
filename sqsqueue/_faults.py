"""Fault emulation: the legal misbehaviour of real standard queues, on demand.

Real SQS standard queues are at-least-once and best-effort ordered, and short
polls sample a subset of servers (``docs/aws-behaviour.md`` §§10 and 13).
sqsqueue is exact by default; :class:`Faults` turns on, per queue or per
broker, deterministic and seeded versions of those behaviours so a test can
prove its consumer is idempotent and order-tolerant:

* ``duplicate_rate``: the probability that a DeleteMessage is acknowledged but
  the message survives (as when a copy sits on an unavailable server), so it
  is delivered again when its visibility timeout ends;
* ``partial_short_polls``: a short poll (WaitTimeSeconds 0) on a queue holding
  fewer than 1,000 messages returns a uniformly random part of what it could
  have returned, possibly nothing;
* ``reorder``: receivable messages come back in random order rather than
  oldest first.

FIFO queues ignore faults: they stay exact, as AWS's do.
"""

from __future__ import annotations

import random
from typing import Any

import attrs

from sqsqueue._validate import show
from sqsqueue.errors import InvalidParameterValue

__all__ = ["Faults"]

#: "If the number of messages in the queue is small (fewer than 1,000), you
#: most likely get fewer messages than you requested" (section 10).
SMALL_QUEUE = 1_000
#: How many receivable messages a reordering receive draws from.
REORDER_WINDOW = 5


def _refuse(attribute: attrs.Attribute[Any], value: object, reason: str) -> None:
    raise InvalidParameterValue(
        f"Value {show(value)} for parameter {attribute.name} is invalid. Reason: {reason}"
    )


def _rate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        _refuse(attribute, value, "must be a probability between 0 and 1.")


def _seed(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # random.Random(seed) refuses lists, dicts and other objects with a TypeError.
    if isinstance(value, bool) or not isinstance(value, int):
        _refuse(attribute, value, "must be an integer.")


def _flag(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        _refuse(attribute, value, "must be True or False.")


@attrs.frozen
class Faults:
    """Which faults to emulate, and the seed that makes them reproducible.

    >>> Faults(seed=7, duplicate_rate=0.1, partial_short_polls=True, reorder=True)
    Faults(seed=7, duplicate_rate=0.1, partial_short_polls=True, reorder=True)
    """

    seed: int = attrs.field(default=0, validator=_seed)
    duplicate_rate: float = attrs.field(default=0.0, validator=_rate)
    partial_short_polls: bool = attrs.field(default=False, validator=_flag)
    reorder: bool = attrs.field(default=False, validator=_flag)

    @property
    def active(self) -> bool:
        return bool(self.duplicate_rate or self.partial_short_polls or self.reorder)


def partial_poll(
    faults: Faults, rng: random.Random, deliver: list[Any], long_poll: bool, depth: int
) -> list[Any]:
    """``partial_short_polls``: a short poll on a queue of fewer than 1,000
    messages returns a random part of what it could (``deliver``)."""
    if faults.partial_short_polls and not long_poll and depth < SMALL_QUEUE:
        return deliver[: rng.randint(0, len(deliver))]
    return deliver


def lose_delete(faults: Faults, rng: random.Random) -> bool:
    """``duplicate_rate``: whether this DeleteMessage is acknowledged but lost."""
    return rng.random() < faults.duplicate_rate
