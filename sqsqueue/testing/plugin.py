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

One ini option: ``sqsqueue_lenient = purge-interval`` (names separated by
commas or lines) gives every ``sqsqueue_broker`` those leniencies, the AWS
rules it relaxes (``docs/testing.md``); an unknown name stops the run with a
usage error listing the known ones. With any leniency on, the terminal summary
ends with one line counting what they let through over the session, 0
included: ``sqsqueue: 12 requests AWS would have refused: purge-interval 12``.

At load the plugin does one thing besides defining these fixtures, the option
and the hooks that read it (``pytest_configure``, ``pytest_terminal_summary``): it imports
:mod:`sqsqueue.testing`, which registers mock_sqs's botocore handlers when
botocore is installed, so that every boto3 client created during the test
session (module-level clients in the code under test included) is served by
the active mock, never by AWS, while a mock is active. While none is active
(always, in a test suite that uses no sqsqueue mock) the handlers pass every
request through unchanged. It imports neither boto3 nor moto nor hypothesis,
adds no marker and no command-line option, and changes no other plugin's
fixture; ``-p no:sqsqueue`` turns it off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import sqsqueue.testing  # noqa: F401  (registers the botocore handlers)
from sqsqueue import Broker, ManualClock
from sqsqueue._lenient import Leniency, parse_lenient, summary

START = 1_700_000_000.0
REGION = "us-east-1"
#: The ini option naming the leniencies of the fixtures' brokers.
LENIENT_OPTION = "sqsqueue_lenient"
#: The session's tally of what the fixtures' leniencies let through.
_TALLY = pytest.StashKey[Leniency]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        LENIENT_OPTION,
        "AWS rules sqsqueue_broker relaxes, each let-through request counted, e.g. "
        "purge-interval (docs/testing.md)",
        type="linelist",
        default=[],
    )


def pytest_configure(config: pytest.Config) -> None:
    try:
        names = parse_lenient(config.getini(LENIENT_OPTION))
    except (ValueError, TypeError) as exc:
        raise pytest.UsageError(f"{LENIENT_OPTION}: {exc}") from None
    config.stash[_TALLY] = Leniency(names)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One line, when a leniency is on: what it let through this session."""
    tally = config.stash.get(_TALLY, None)
    if tally is not None and tally.names:
        terminalreporter.write_line(f"sqsqueue: {summary(tally.counts())}")


@pytest.fixture
def sqsqueue_clock() -> ManualClock:
    """A virtual clock for SQS deadlines."""
    return ManualClock(start=START)


@pytest.fixture
def sqsqueue_broker(
    sqsqueue_clock: ManualClock, request: pytest.FixtureRequest
) -> Broker[ManualClock]:
    """A fresh broker on ``sqsqueue_clock``, in the default account, with the
    leniencies of the ``sqsqueue_lenient`` ini option."""
    tally = request.config.stash.get(_TALLY, None)
    broker = Broker(
        clock=sqsqueue_clock,
        region=REGION,
        keep_history=True,
        lenient=tally.names if tally is not None else None,
    )
    if tally is not None:
        broker._tally_into(tally)
    return broker


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
