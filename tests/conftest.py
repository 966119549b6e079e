"""Shared pytest fixtures."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from sqsqueue import Broker, FifoQueue, ManualClock, Queue

# Hypothesis profiles. "ci" (what .ci/run selects) is derandomized: each test's
# examples derive from its name, so a failure in CI reproduces on any machine
# with the same command, and no example database is needed. "dev" (the default
# elsewhere) explores new random examples on every run. Both print the
# @reproduce_failure blob of a failing example. The amount of exploration is
# the same in both; SQSQUEUE_LONG=1 raises it for the state machines.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("SQSQUEUE_HYPOTHESIS_PROFILE", "dev"))

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
