"""Testing toolkit: ``mock_sqs``, a pytest plugin, hypothesis strategies and a
reusable state machine for checking your own consumers.

* :func:`mock_sqs` routes boto3 and aiobotocore SQS calls to a
  :class:`~sqsqueue.Broker` (needs ``sqsqueue[aws]``); an aiobotocore long
  poll awaits the engine without blocking the event loop. Importing this
  package registers its botocore handlers, so no client created afterwards
  can reach AWS while a mock is active (the pytest plugin imports it when
  pytest starts).
* The pytest plugin (auto-registered) provides ``sqs_clock``, ``sqs_broker`` and
  ``sqs_client`` fixtures.
* :mod:`sqsqueue.testing.strategies` and :mod:`sqsqueue.testing.stateful` need
  ``hypothesis``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqsqueue._faults import Faults

if TYPE_CHECKING:
    from sqsqueue.aws._mock import MockSQS

__all__ = ["Faults", "MockSQS", "mock_sqs"]


def mock_sqs(broker: Any = None) -> MockSQS:
    """Route every boto3 and aiobotocore SQS call to ``broker`` (see
    :func:`sqsqueue.aws.mock_sqs`)."""
    from sqsqueue.aws._mock import mock_sqs as _mock_sqs

    return _mock_sqs(broker)


def _install_hooks() -> None:
    """Register mock_sqs's botocore handlers now, if botocore is installed.

    botocore copies its handler list into each session it creates, so clients
    made after this (a module-level ``boto3.client("sqs")`` in the code under
    test, say) are served by any mock_sqs active when they send. The handlers
    pass every request through untouched while no mock is active.
    """
    try:
        import botocore  # noqa: F401
    except ImportError:  # no botocore: no client can exist to escape
        return
    import sqsqueue.aws._mock  # noqa: F401  (registers on import)


_install_hooks()


def __getattr__(name: str) -> Any:
    if name == "MockSQS":
        from sqsqueue.aws._mock import MockSQS

        return MockSQS
    raise AttributeError(name)
