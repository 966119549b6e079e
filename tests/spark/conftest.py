"""Fixtures for the Spark connector tests: one local SparkSession for the run.

Every test here is marked ``spark`` (``pytest -m "not spark"`` skips them). The
session is ``local[2,2]``: two cores and a failed task is retried once, which
the task-retry test relies on. It starts once (about 10 s) and is stopped at the
end of the test session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need pip install 'sqsqueue[spark]'")

from sqsqueue import Broker, ManualClock, SystemClock

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

START = 1_700_000_000.0

# The JVM and its Python workers inherit this environment when the session
# starts: boto3 there must find no credentials of the machine's (every test
# passes its own, one test checks the error when there are none) and must never
# ask an instance-metadata address for some (no traffic leaves loopback).
for _name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
    os.environ.pop(_name, None)
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/spark with the ``spark`` marker."""
    for item in items:
        if "tests/spark/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A local SparkSession (``local[2,2]``, UI off, 4 shuffle partitions)."""
    from sqsqueue.spark import SparkSupportError, check_java, local_session

    try:
        check_java()
    except SparkSupportError as exc:
        pytest.skip(str(exc))
    session = local_session("local[2,2]", app_name="sqsqueue-tests")
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def clock() -> ManualClock:
    """A virtual clock at a fixed epoch time."""
    return ManualClock(start=START)


@pytest.fixture
def broker(clock: ManualClock) -> Broker:
    """A Broker for account 123456789012 on ``clock``."""
    return Broker(clock=clock, account_id="123456789012")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Broker, str]]:
    """A broker on the system clock, served on 127.0.0.1 for the test module:
    (broker, endpoint URL). The data source reaches it over HTTP, as it would AWS."""
    broker = Broker(clock=SystemClock(), account_id="123456789012")
    with broker.serve(host="127.0.0.1", port=0, credentials=None) as handle:
        yield broker, handle.endpoint_url
