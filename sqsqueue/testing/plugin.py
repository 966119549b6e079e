"""pytest plugin (entry point ``pytest11``): SQS fixtures for your tests.

Its fixtures carry the ``sqsqueue_`` prefix, so they never take the place of
another plugin's (a moto-based fixture library's ``sqs_client``, say):

* ``sqsqueue_clock``: a :class:`~sqsqueue.ManualClock` at 2023-11-14 22:13:20 UTC
  (epoch 1,700,000,000). Advance it to pass visibility timeouts, delays and
  retention in no time.
* ``sqsqueue_broker``: a :class:`~sqsqueue.Broker` on that clock, in the
  default account (``MOTO_ACCOUNT_ID`` when set, else moto's 123456789012),
  region ``us-east-1``, recording message histories.
* ``sqsqueue_client``: a real ``boto3`` SQS client whose calls go to
  ``sqsqueue_broker`` (through :func:`sqsqueue.testing.mock_sqs`); needs
  ``sqsqueue[aws]``. While it is active, aiobotocore clients the test creates
  are served by ``sqsqueue_broker`` too.
* ``sqsqueue_endpoint_url``: ``sqsqueue_broker`` served over HTTP for the test.

At load the plugin does one thing besides defining these fixtures: it imports
:mod:`sqsqueue.testing`, which registers mock_sqs's botocore handlers when
botocore is installed, so that every boto3 client created during the test
session (module-level clients in the code under test included) is served by
the active mock, never by AWS, while a mock is active. While none is active
(always, in a test suite that uses no sqsqueue mock) the handlers pass every
request through unchanged. It imports neither boto3 nor moto nor hypothesis,
adds no option, marker or hook, and changes no other plugin's fixture;
``-p no:sqsqueue`` turns it off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import sqsqueue.testing  # noqa: F401  (registers the botocore handlers)
from sqsqueue import Broker, ManualClock

START = 1_700_000_000.0
REGION = "us-east-1"


@pytest.fixture
def sqsqueue_clock() -> ManualClock:
    """A virtual clock for SQS deadlines."""
    return ManualClock(start=START)


@pytest.fixture
def sqsqueue_broker(sqsqueue_clock: ManualClock) -> Broker[ManualClock]:
    """A fresh broker on ``sqsqueue_clock``, in the default account."""
    return Broker(clock=sqsqueue_clock, region=REGION, keep_history=True)


@pytest.fixture
def sqsqueue_client(sqsqueue_broker: Broker[ManualClock]) -> Iterator[Any]:
    """A boto3 SQS client served in process by ``sqsqueue_broker``."""
    try:
        import boto3
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the sqsqueue_client fixture needs boto3: pip install sqsqueue[aws]"
        ) from exc
    from sqsqueue.testing import mock_sqs

    with mock_sqs(sqsqueue_broker):
        yield boto3.client(
            "sqs",
            region_name=sqsqueue_broker.region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - never sent anywhere
        )


@pytest.fixture
def sqsqueue_endpoint_url(sqsqueue_broker: Broker[Any]) -> Iterator[str]:
    """``http://127.0.0.1:<port>``: ``sqsqueue_broker`` served over HTTP for the test,
    so a subprocess, the AWS CLI or any SDK reaches the same broker; needs
    ``sqsqueue[server]`` (without it, serving raises an ImportError naming it)."""
    with sqsqueue_broker.serve() as endpoint:
        yield endpoint.endpoint_url
