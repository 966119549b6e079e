"""The active providers of brokers to moto (see :mod:`sqsqueue.moto`)."""

from __future__ import annotations

import threading
from typing import Protocol

from sqsqueue.aws._client import BrokerAPI

__all__ = ["Provider", "current", "deactivate", "push"]


class Provider(Protocol):
    """Who serves SQS to moto: the broker of an account in a region, or None
    when it serves no such account or region (moto then finds no queue)."""

    def broker_for(self, account: str, region: str) -> BrokerAPI | None: ...


_providers: list[Provider] = []
_lock = threading.Lock()


def current() -> Provider | None:
    """The innermost active provider, or None. O(1)."""
    with _lock:
        return _providers[-1] if _providers else None


def push(provider: Provider) -> None:
    with _lock:
        _providers.append(provider)


def deactivate(provider: Provider) -> None:
    """Stop serving from ``provider``; one not active is ignored."""
    with _lock:
        if provider in _providers:
            _providers.remove(provider)
