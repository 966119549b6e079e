"""Shared pytest fixtures."""

from __future__ import annotations

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue

START = 1_700_000_000.0


@pytest.fixture
def clock() -> ManualClock:
    """A virtual clock at a fixed epoch time, frozen (the default): only the test
    moves it, and a long poll in a single-threaded test returns at once."""
    return ManualClock(start=START)


@pytest.fixture
def autojump(clock: ManualClock) -> ManualClock:
    """``clock`` with autojump on (``autojump_threshold=0``): a long poll that
    finds nothing jumps virtual time to its next deadline. For single-threaded
    tests of where a poll wakes."""
    clock.autojump_threshold = 0
    return clock


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
