"""Run SQS-triggered Lambda handlers as AWS's event source mapping does.

:class:`EventSourceMapping` puts AWS's SQS poller in front of a handler: it
receives batches, calls ``handler(event, context)`` with the event Lambda
would send, and deletes or returns the messages by what the handler did.
In a test, ``run_until_idle()`` drives it on the queue's clock; in a worker,
``start()``/``stop()`` (or ``with``) run it in the background. The guide is
``docs/lambda.md``.

>>> from sqsqueue import ManualClock, Queue
>>> q = Queue("jobs", clock=ManualClock(start=1_700_000_000.0))
>>> _ = q.send("hello")
>>> seen = []
>>> mapping = EventSourceMapping(q, lambda event, context: seen.extend(
...     r["body"] for r in event["Records"]))
>>> [i.outcome for i in mapping.run_until_idle()], seen, len(q)
(['success'], ['hello'], 0)
"""

from sqsqueue.awslambda._context import LambdaContext
from sqsqueue.awslambda._mapping import EventSourceMapping, resolve_handler
from sqsqueue.awslambda._poller import Invocation
from sqsqueue.awslambda._settings import (
    InvalidParameterValueException,
    LambdaError,
    ResourceConflictException,
    Settings,
    ValidationException,
)

__all__ = [
    "EventSourceMapping",
    "InvalidParameterValueException",
    "Invocation",
    "LambdaContext",
    "LambdaError",
    "ResourceConflictException",
    "Settings",
    "ValidationException",
    "resolve_handler",
]
