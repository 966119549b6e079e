"""Where a mapping's messages come from: an in-process queue or any SQS over boto3.

The poller (``_poller.py``) is written once against :class:`Source`; two
classes give it: :class:`QueueSource` (a ``Queue``/``FifoQueue`` in this
process, through its public operations) and :class:`BotoSource` (a queue URL
and a boto3 SQS client: a served sqsqueue broker or AWS itself).

``next_due()`` is how a mapping driven by ``run_until_idle()`` knows when to
look again without scanning the queue: an in-process queue answers with the
moment its next delayed or in-flight message becomes receivable (what a long
poll waits for: ``_polling.wake_time``, under the queue's lock, O(log n));
a remote queue answers "in a second" while its ``ApproximateNumberOfMessages
NotVisible`` or ``...Delayed`` count is above zero, and None once both are
zero (one GetQueueAttributes call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqsqueue._clock import Clock, SystemClock
from sqsqueue._fifo import FifoQueue
from sqsqueue._limits import US
from sqsqueue._polling import wake_time
from sqsqueue._standard import Queue
from sqsqueue.awslambda._event import Record, from_boto, from_message
from sqsqueue.errors import QueueDoesNotExist

__all__ = ["BotoSource", "QueueSource", "Source"]

#: How long a remote queue with messages in flight or delayed is left before
#: ``run_until_idle`` looks again (its clock's seconds).
REMOTE_RECHECK = 1.0
_NEVER = 1 << 62  # a deadline later than any (µs)
#: The error codes a missing queue comes back with: the query protocol's
#: (botocore maps JSON answers to it too) and the JSON protocol's own.
_NO_QUEUE_CODES = frozenset({"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"})
_ALL = ("All",)


class Source(Protocol):
    """What the poller needs of a queue."""

    arn: str
    region: str
    account_id: str
    fifo: bool
    clock: Clock

    def visibility_timeout(self) -> int | None:
        """The queue's VisibilityTimeout, in seconds (None if unreadable)."""

    def receive(self, limit: int, wait: int, md5_null: bool = False) -> list[Record]:
        """Up to ``limit`` (1-10) messages as event records, long-polling ``wait``
        seconds; ``md5_null`` as for ``_event.from_message``."""

    def delete(self, handles: Sequence[str]) -> set[str]:
        """Delete by receipt handle (in batches of 10); the handles deleted."""

    def next_due(self) -> float | None:
        """When something not receivable now may become receivable (the clock's
        epoch seconds), or None when nothing will."""


def _parts(arn: str) -> tuple[str, str]:
    # arn:aws:sqs:<region>:<account>:<name>
    fields = arn.split(":")
    return fields[3], fields[4]


class QueueSource:
    """An in-process ``Queue`` or ``FifoQueue``."""

    def __init__(self, queue: Queue | FifoQueue) -> None:
        self.queue = queue
        self.arn = queue.arn
        self.region, self.account_id = _parts(self.arn)
        self.fifo = queue.FIFO
        self.clock = queue.clock

    def visibility_timeout(self) -> int | None:
        # A queue deleted from its broker raises QueueDoesNotExist (the mapping
        # answers it with Lambda's error).
        return int(self.queue.get_attributes(["VisibilityTimeout"])["VisibilityTimeout"])

    def receive(self, limit: int, wait: int, md5_null: bool = False) -> list[Record]:
        messages = self.queue.receive(
            limit, wait_time_seconds=wait, attribute_names=_ALL, message_attribute_names=_ALL
        )
        return [from_message(m, self.arn, self.region, md5_null) for m in messages]

    def delete(self, handles: Sequence[str]) -> set[str]:
        done: set[str] = set()
        for i in range(0, len(handles), 10):
            chunk = list(handles[i : i + 10])
            result = self.queue.delete_batch(chunk)
            done.update(chunk[int(entry)] for entry in result.successful)
        return done

    def next_due(self) -> float | None:
        queue = self.queue
        with queue._lock:
            due = wake_time(queue, queue._now_us(), _NEVER)
        return None if due >= _NEVER else due / US


class BotoSource:
    """A queue URL and a boto3 SQS client (any endpoint, AWS included). A URL
    naming no queue raises sqsqueue's QueueDoesNotExist."""

    def __init__(self, client: Any, queue_url: str, clock: Clock | None = None) -> None:
        self.client = client
        self.url = queue_url
        self.clock = clock if clock is not None else SystemClock()
        try:
            attributes = client.get_queue_attributes(
                QueueUrl=queue_url, AttributeNames=["QueueArn", "VisibilityTimeout"]
            )["Attributes"]
        except Exception as exc:  # botocore's ClientError, not imported here
            code = (getattr(exc, "response", None) or {}).get("Error", {}).get("Code")
            if code in _NO_QUEUE_CODES:
                raise QueueDoesNotExist() from None  # the mapping answers it, Lambda's way
            raise
        self.arn = attributes["QueueArn"]
        self._visibility = int(attributes["VisibilityTimeout"])
        self.region, self.account_id = _parts(self.arn)
        self.fifo = self.arn.endswith(".fifo")

    def visibility_timeout(self) -> int | None:
        return self._visibility

    def receive(self, limit: int, wait: int, md5_null: bool = False) -> list[Record]:
        reply = self.client.receive_message(
            QueueUrl=self.url,
            MaxNumberOfMessages=limit,
            WaitTimeSeconds=wait,
            MessageSystemAttributeNames=list(_ALL),
            MessageAttributeNames=list(_ALL),
        )
        return [from_boto(m, self.arn, self.region, md5_null) for m in reply.get("Messages", [])]

    def delete(self, handles: Sequence[str]) -> set[str]:
        done: set[str] = set()
        for i in range(0, len(handles), 10):
            chunk = list(handles[i : i + 10])
            reply = self.client.delete_message_batch(
                QueueUrl=self.url,
                Entries=[{"Id": str(n), "ReceiptHandle": h} for n, h in enumerate(chunk)],
            )
            done.update(chunk[int(entry["Id"])] for entry in reply.get("Successful", []))
        return done

    def next_due(self) -> float | None:
        counts = self.client.get_queue_attributes(
            QueueUrl=self.url,
            AttributeNames=[
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        if any(int(v) for v in counts.values()):
            return self.clock.now() + REMOTE_RECHECK
        return None
