"""Testing toolkit: ``mock_sqs``, a pytest plugin, hypothesis strategies and a
reusable state machine for checking your own consumers.

* :func:`mock_sqs` routes boto3 SQS calls to a :class:`~sqsqueue.Broker`
  (needs ``sqsqueue[aws]``).
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
    """Route every boto3 SQS call to ``broker`` (see :func:`sqsqueue.aws.mock_sqs`)."""
    from sqsqueue.aws._mock import mock_sqs as _mock_sqs

    return _mock_sqs(broker)


def __getattr__(name: str) -> Any:
    if name == "MockSQS":
        from sqsqueue.aws._mock import MockSQS

        return MockSQS
    raise AttributeError(name)
