"""Shared pytest fixtures."""

from __future__ import annotations

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue

START = 1_700_000_000.0


@pytest.fixture
def clock() -> ManualClock:
    """A virtual clock at a fixed epoch time (autojump on: long polls never block)."""
    return ManualClock(start=START)


@pytest.fixture
def queue(clock: ManualClock) -> Queue:
    """A standard queue named "jobs" with default attributes on ``clock``."""
    return Queue("jobs", clock=clock)


@pytest.fixture
def fifo(clock: ManualClock) -> FifoQueue:
    """A FIFO queue "orders.fifo" on ``clock``, content-based deduplication on."""
    return FifoQueue("orders.fifo", clock=clock, content_based_deduplication=True)


@pytest.fixture
def broker(clock: ManualClock) -> Broker:
    """A Broker for account 123456789012 in us-east-1 on ``clock``."""
    return Broker(clock=clock, account_id="123456789012")
