"""pytest plugin (entry point ``pytest11``): SQS fixtures for your tests.

* ``sqs_clock``: a :class:`~sqsqueue.ManualClock` at 2023-11-14 22:13:20 UTC
  (epoch 1,700,000,000). Advance it to pass visibility timeouts, delays and
  retention in no time.
* ``sqs_broker``: a :class:`~sqsqueue.Broker` on that clock, account
  ``123456789012``, region ``us-east-1``, recording message histories.
* ``sqs_client``: a real ``boto3`` SQS client whose calls go to ``sqs_broker``
  (through :func:`sqsqueue.testing.mock_sqs`); needs ``sqsqueue[aws]``. While
  it is active, aiobotocore clients the test creates are served by
  ``sqs_broker`` too.

Loading the plugin imports :mod:`sqsqueue.testing`, which registers
mock_sqs's botocore handlers when botocore is installed: every boto3 client
created during the test session (module-level clients in the code under test
included) is served by ``sqs_client``'s broker, never by AWS, while a mock is
active. hypothesis is not imported until a fixture needs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import sqsqueue.testing  # noqa: F401  (registers the botocore handlers)
from sqsqueue import Broker, ManualClock

START = 1_700_000_000.0
ACCOUNT = "123456789012"
REGION = "us-east-1"


@pytest.fixture
def sqs_clock() -> ManualClock:
    """A virtual clock for SQS deadlines."""
    return ManualClock(start=START)


@pytest.fixture
def sqs_broker(sqs_clock: ManualClock) -> Broker[ManualClock]:
    """A fresh broker on ``sqs_clock``."""
    return Broker(clock=sqs_clock, account_id=ACCOUNT, region=REGION, keep_history=True)


@pytest.fixture
def sqs_client(sqs_broker: Broker[ManualClock]) -> Iterator[Any]:
    """A boto3 SQS client served in process by ``sqs_broker``."""
    try:
        import boto3
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the sqs_client fixture needs boto3: pip install sqsqueue[aws]") from exc
    from sqsqueue.testing import mock_sqs

    with mock_sqs(sqs_broker):
        yield boto3.client(
            "sqs",
            region_name=sqs_broker.region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - never sent anywhere
        )


@pytest.fixture
def sqs_endpoint_url(sqs_broker: Broker[Any]) -> Iterator[str]:
    """``http://127.0.0.1:<port>``: ``sqs_broker`` served over HTTP for the test,
    so a subprocess, the AWS CLI or any SDK reaches the same broker; needs
    ``sqsqueue[server]`` (without it, serving raises an ImportError naming it)."""
    with sqs_broker.serve() as endpoint:
        yield endpoint.endpoint_url
