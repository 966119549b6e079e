"""sqsqueue: Amazon SQS semantics, in process.

>>> from sqsqueue import Queue, ManualClock
>>> q = Queue("jobs", clock=ManualClock(start=1_700_000_000.0))
>>> q.send("hello").md5_of_body
'5d41402abc4b2a76b9719d911017c592'
"""

from sqsqueue import errors
from sqsqueue._broker import Broker, ListQueuesResult, MoveTask
from sqsqueue._clock import Clock, ManualClock, SystemClock
from sqsqueue._config import ConfigError
from sqsqueue._faults import Faults
from sqsqueue._fifo import FifoQueue
from sqsqueue._message import (
    BatchFailure,
    BatchResult,
    ChangeVisibilityEntry,
    DeleteEntry,
    HistoryEvent,
    Message,
    MessageAttributeValue,
    MessageInfo,
    MessagePage,
    SendEntry,
    SendResult,
)
from sqsqueue._metrics import QueueMetrics
from sqsqueue._standard import Queue
from sqsqueue._version import __version__ as __version__

__all__ = [
    "BatchFailure",
    "BatchResult",
    "Broker",
    "ChangeVisibilityEntry",
    "Clock",
    "ConfigError",
    "DeleteEntry",
    "Faults",
    "FifoQueue",
    "HistoryEvent",
    "ListQueuesResult",
    "ManualClock",
    "Message",
    "MessageAttributeValue",
    "MessageInfo",
    "MessagePage",
    "MoveTask",
    "Queue",
    "QueueMetrics",
    "SendEntry",
    "SendResult",
    "SystemClock",
    "errors",
]
