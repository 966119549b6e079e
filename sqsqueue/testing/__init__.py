"""Testing toolkit: ``mock_sqs``, a pytest plugin, hypothesis strategies and a
reusable state machine for checking your own consumers.

* :func:`mock_aws` is moto's ``mock_aws`` with sqsqueue's SQS (needs
  ``sqsqueue[moto]``): a moto suite moves over by changing its import.
* :func:`mock_sqs` routes boto3 and aiobotocore SQS calls to a
  :class:`~sqsqueue.Broker` (needs ``sqsqueue[aws]``); an aiobotocore long
  poll awaits the engine without blocking the event loop. Importing this
  package registers its botocore handlers (:mod:`sqsqueue.testing._hooks`),
  so no client created afterwards can reach AWS while a mock is active; the
  pytest plugin imports it when pytest starts. The handlers pass every request
  through while no mock is active. Nothing else in sqsqueue registers them.
* The pytest plugin (:mod:`sqsqueue.testing.plugin`, auto-registered)
  provides ``sqsqueue_clock``, ``sqsqueue_broker``, ``sqsqueue_client`` and
  ``sqsqueue_endpoint_url`` fixtures.
* :mod:`sqsqueue.testing.strategies` and :mod:`sqsqueue.testing.stateful` need
  ``hypothesis``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from sqsqueue._faults import Faults

if TYPE_CHECKING:
    from sqsqueue._broker import Broker
    from sqsqueue.check import CheckResult
    from sqsqueue.testing._mock import MockAWS, MockSQS

__all__ = ["CheckResult", "Faults", "MockAWS", "MockSQS", "check", "mock_aws", "mock_sqs"]

_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def mock_sqs(
    broker: Broker[Any] | None = None, *, lenient: str | Iterable[str] | None = None
) -> MockSQS: ...
@overload
def mock_sqs(broker: _F) -> _F: ...
def mock_sqs(broker: Any = None, *, lenient: str | Iterable[str] | None = None) -> Any:
    """Route every boto3 and aiobotocore SQS call to ``broker`` (fresh brokers
    at each start if None) while active, as moto's ``mock_aws`` is used: a bare
    or called decorator (functions, coroutines, classes), a context manager
    (``with mock_sqs() as mock``), or ``start()``/``stop()``; ``mock.broker``
    is the broker served. Inside moto's ``mock_aws``, moto's other services
    deliver into these brokers (:mod:`sqsqueue.moto`). ``lenient`` names AWS
    rules the mock's brokers relax (``"purge-interval"``; ``docs/testing.md``),
    counted by ``mock.lenient_counts()``; a given broker keeps its own, and
    ``lenient=`` beside it is a TypeError.

    >>> import boto3, sqsqueue
    >>> with mock_sqs(sqsqueue.Broker(account_id="123456789012")):
    ...     sqs = boto3.client("sqs", region_name="us-east-1")
    ...     sqs.create_queue(QueueName="jobs")["QueueUrl"]
    'https://sqs.us-east-1.amazonaws.com/123456789012/jobs'
    """
    from sqsqueue.testing._mock import mock_sqs as make

    return make(broker, lenient=lenient)


@overload
def mock_aws(
    target: None = None,
    *,
    config: Any = None,
    broker: Broker[Any] | None = None,
    lenient: str | Iterable[str] | None = None,
) -> MockAWS: ...
@overload
def mock_aws(target: _F, *, config: Any = None, broker: Broker[Any] | None = None) -> _F: ...
def mock_aws(
    target: Any = None,
    *,
    config: Any = None,
    broker: Any = None,
    lenient: str | Iterable[str] | None = None,
) -> Any:
    """moto's ``mock_aws`` with sqsqueue's SQS, in every form ``mock_aws`` is
    used: a moto test module moves over by changing ``from moto import
    mock_aws`` to ``from sqsqueue.testing import mock_aws``. Every other
    service stays moto's, delivering into sqsqueue's queues. ``config`` is
    moto's; ``lenient`` is :func:`mock_sqs`'s. Needs ``sqsqueue[moto]``."""
    from sqsqueue.testing._mock import mock_aws as make

    return make(target, config=config, broker=broker, lenient=lenient)


def check(command: str | Sequence[str], **options: Any) -> CheckResult:
    """Check a consumer program as ``sqsqueue check`` does, and return a
    :class:`~sqsqueue.check.CheckResult` to assert on (``result.ok``,
    ``result.violations``, ``result.runs``). ``command`` is a shell line or
    its arguments; ``options`` are :func:`sqsqueue.check.check`'s
    (``messages``, ``faults="kill=2,duplicate=0.2"``, ``expect``, ``seed``,
    ``runs``, ``fifo``, ``groups``, ``visibility_timeout``, ``report``...).
    Needs the ``server`` extra. Costs the runs' wall time: seconds for tens of
    messages (``docs/check.md``).

    >>> result = check(["python", "worker.py"], messages=30, faults="kill=2")  # doctest: +SKIP
    >>> assert result.ok, result.command_line  # doctest: +SKIP
    """
    from sqsqueue.check import check as run

    return run(command, **options)


def _install_hooks() -> None:
    """Register mock_sqs's botocore handlers now, if botocore is installed.

    botocore copies its handler list into each session it creates, so clients
    made after this (a module-level ``boto3.client("sqs")`` in the code under
    test, say) are served by any mock_sqs active when they send.
    """
    try:
        import botocore  # noqa: F401
    except ImportError:  # no botocore: no client can exist to escape
        return
    from sqsqueue.testing import _hooks

    _hooks.install()


_install_hooks()


def __getattr__(name: str) -> Any:
    if name == "CheckResult":
        from sqsqueue.check import CheckResult

        return CheckResult
    if name in ("MockSQS", "MockAWS"):
        from sqsqueue.testing import _mock

        return _mock.MockSQS if name == "MockSQS" else _mock.MockAWS
    raise AttributeError(name)
