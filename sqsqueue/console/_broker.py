"""What the console needs of a :class:`~sqsqueue.Broker`, as a protocol: the
console is an adapter above the engine and types the broker by what it uses,
never by importing ``sqsqueue._broker`` (``docs/architecture.md``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sqsqueue._clock import Clock
from sqsqueue._fifo import FifoQueue
from sqsqueue._metrics import QueueMetrics
from sqsqueue._standard import Queue
from sqsqueue.aws._client import BrokerAPI

__all__ = ["ConsoleBroker", "ConsoleBrokers", "OneBroker"]


class ConsoleBroker(BrokerAPI, Protocol):
    """The broker's namespace and move tasks (:class:`BrokerAPI`), and the
    operational side the console shows: clock, data directory, metrics, reset,
    the counts of its leniencies."""

    @property
    def clock(self) -> Clock: ...
    @property
    def data_dir(self) -> Path | None: ...
    def metrics(self) -> dict[str, QueueMetrics]: ...
    def lenient_counts(self) -> dict[str, int]: ...
    def reset(self) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Queue | FifoQueue]: ...
    def __contains__(self, ref: object) -> bool: ...


class ConsoleBrokers(Protocol):
    """Every broker a served endpoint holds, one per (account, region)
    (``sqsqueue.server``'s ``Accounts`` for ``sqsqueue serve``;
    :class:`OneBroker` for an endpoint serving a single broker)."""

    @property
    def default(self) -> ConsoleBroker: ...
    def __iter__(self) -> Iterator[ConsoleBroker]: ...
    def get(self, account: str, region: str) -> ConsoleBroker | None: ...
    def route(self, ref: object, region: str) -> ConsoleBroker: ...
    def lenient_counts(self) -> dict[str, int]: ...


class OneBroker:
    """:class:`ConsoleBrokers` of an endpoint serving one broker
    (``Broker.serve()``): that broker answers every reference itself."""

    __slots__ = ("default",)

    def __init__(self, broker: ConsoleBroker) -> None:
        self.default = broker

    def __iter__(self) -> Iterator[ConsoleBroker]:
        yield self.default

    def get(self, account: str, region: str) -> ConsoleBroker | None:
        broker = self.default
        return broker if (account, region) == (broker.account_id, broker.region) else None

    def route(self, ref: object, region: str) -> ConsoleBroker:
        return self.default

    def lenient_counts(self) -> dict[str, int]:
        return self.default.lenient_counts()
