"""Fixtures for the boto3 facade tests (docs/aws-behaviour.md §§1.5 and 2).

Every test here runs hermetically: AWS credentials, profiles, endpoint
overrides and the EC2 instance-metadata lookup are removed from the
environment, so the only thing that can answer an SQS call is the Broker
behind ``mock_sqs`` (section 1.5), and nothing ever reaches the network except
the deliberate closed-port checks on 127.0.0.1 and, for the ``http`` half of
the ``sqs`` fixture, the suite's own endpoint on 127.0.0.1.

The ``sqs`` fixture is parametrized: every wire test runs once in process
(``mock_sqs``) and once over HTTP (boto3 with ``endpoint_url`` against
``Broker.serve()``), the same test body both times.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config

from sqsqueue import Broker, ManualClock
from sqsqueue.server import EndpointHandle
from sqsqueue.testing import mock_sqs
from tests import _helpers as _shared
from tests.aws import _helpers

ACCOUNT = "123456789012"
REGION = "us-east-1"
START = 1_700_000_000.0


@pytest.fixture(autouse=True)
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials anywhere (tests/_helpers.py says which variables go)."""
    _shared.no_aws_credentials(monkeypatch, tmp_path)


@pytest.fixture
def clock() -> ManualClock:
    """A frozen virtual clock at epoch 1,700,000,000: only the test moves it."""
    return ManualClock(start=START)


@pytest.fixture
def broker(clock: ManualClock) -> Broker:
    """The broker behind the mock: account 123456789012, us-east-1."""
    return Broker(clock=clock, account_id=ACCOUNT)


@pytest.fixture
def endpoint(broker: Broker) -> Iterator[EndpointHandle]:
    """``broker`` served over HTTP for one test. Not shared across tests: its
    thread would make every other test's frozen-clock long polls wait for it."""
    with broker.serve() as handle:
        yield handle


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test using ``sqs`` runs in process and over HTTP, except those
    marked ``in_process`` (they test the mock itself, e.g. its per-region brokers;
    an endpoint serves one broker, hence one region)."""
    if "transport" in metafunc.fixturenames:
        only_mock = metafunc.definition.get_closest_marker("in_process") is not None
        metafunc.parametrize("transport", ["in-process"] if only_mock else ["in-process", "http"])


@pytest.fixture
def sqs(
    broker: Broker, transport: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """A real boto3 SQS client (us-east-1, no credentials) served by ``broker``:
    in process through ``mock_sqs``, or over HTTP through ``endpoint_url``."""
    if transport == "in-process":
        with mock_sqs(broker):
            yield boto3.client("sqs", region_name=REGION)
        return
    handle: EndpointHandle = request.getfixturevalue("endpoint")
    monkeypatch.setattr(_helpers, "ENDPOINT", [handle.endpoint_url])
    yield boto3.client(
        "sqs",
        region_name=REGION,
        endpoint_url=handle.endpoint_url,
        config=Config(signature_version=UNSIGNED),  # the endpoint checks no signature
    )


@pytest.fixture
def queue_url(sqs: Any) -> str:
    """A standard queue "jobs" created through boto3."""
    url: str = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    return url


@pytest.fixture
def fifo_url(sqs: Any) -> str:
    """A FIFO queue "orders.fifo" (no content-based deduplication)."""
    url: str = sqs.create_queue(QueueName="orders.fifo", Attributes={"FifoQueue": "true"})[
        "QueueUrl"
    ]
    return url
