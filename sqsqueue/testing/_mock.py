"""``mock_sqs``: real boto3 and aiobotocore code talks to a Broker, in process.

How requests reach the broker (botocore's handlers) is :mod:`sqsqueue.testing._hooks`;
this module is the mock object users hold.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from sqsqueue._broker import Broker
from sqsqueue.aws._client import Client
from sqsqueue.testing import _hooks

__all__ = ["MockSQS", "mock_sqs"]

F = TypeVar("F", bound=Callable[..., Any])


class MockSQS:
    """Serve SQS requests from a :class:`~sqsqueue.Broker` while active.

    Use as a context manager, a decorator (sync or async functions), or with
    :meth:`start` / :meth:`stop`. Requests for another region than the
    broker's go to a broker of that region sharing its clock and account.
    """

    def __init__(self, broker: Broker[Any] | None = None) -> None:
        self.broker = broker if broker is not None else Broker()
        self._brokers: dict[str, Broker[Any]] = {self.broker.region: self.broker}
        self._lock = threading.Lock()
        self._saved_region: str | None = None

    def client_for(self, region: str | None) -> Client:
        """The dict-level client of the broker serving ``region``."""
        if region is None:
            return Client(self.broker)
        with self._lock:
            broker = self._brokers.get(region)
            if broker is None:
                broker = self._brokers[region] = Broker(
                    clock=self.broker.clock, region=region, account_id=self.broker.account_id
                )
                # Closing the mock's broker closes the brokers of every region.
                self.broker._close_with(broker)
        return Client(broker)

    def start(self) -> MockSQS:
        _hooks.activate(self)
        return self

    def stop(self) -> None:
        _hooks.deactivate(self)

    def __enter__(self) -> Broker[Any]:
        self.start()
        return self.broker

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __call__(self, func: F) -> F:
        if asyncio.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await func(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def mock_sqs(broker: Broker[Any] | None = None) -> MockSQS:
    """:func:`sqsqueue.testing.mock_sqs`."""
    return MockSQS(broker)
