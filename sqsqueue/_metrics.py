"""Per-queue counters behind CloudWatch's SQS metrics, and the values a
caller reads (:class:`QueueMetrics`, ``Broker.metrics()``, ``Queue.metrics()``).

Amazon SQS publishes these metrics to CloudWatch (``docs/console.md`` lists
them with their AWS definitions). sqsqueue keeps them exactly:

* **Counters** (``NumberOfMessagesSent``, ``...Received``, ``...Deleted``,
  ``NumberOfEmptyReceives``, ``SentMessageSize``, FIFO's
  ``NumberOfDeduplicatedSentMessages``) are fields of a :class:`Tally` that
  the lifecycle's transitions and the operations increment where they report
  to the observers: one integer addition per event, no scan. A generic
  :class:`~sqsqueue._lifecycle.Observer` would do the same but costs a
  report call and its detail per event (about 15% of a send+receive+delete
  cycle, measured), so the counting sits beside the reports instead
  (``benchmarks/RESULTS.md`` has the paired run).
* **Gauges** (``ApproximateNumberOfMessagesVisible``, ``...NotVisible``,
  ``...Delayed``, ``ApproximateAgeOfOldestMessage``) are read when asked for,
  from the lifecycle's indexes: O(log n).

Counters are totals since the queue was made in this process (a durable
broker does not store them): CloudWatch's Sum over a period is the
difference of two readings.
"""

from __future__ import annotations

from collections import deque

import attrs

__all__ = ["AWS_NAMES", "QueueMetrics", "Tally"]


class Tally:
    """The counters of one queue. Mutated under the queue's lock only."""

    __slots__ = (
        "arrivals",
        "deduplicated",
        "deleted",
        "empty_receives",
        "received",
        "sent",
        "sent_bytes",
    )

    def __init__(self) -> None:
        self.sent = 0
        self.sent_bytes = 0
        self.received = 0
        self.deleted = 0
        self.empty_receives = 0
        self.deduplicated = 0
        #: ``(seq, arrival time)`` of the dead letters that kept an older
        #: enqueue time (standard DLQs), in arrival order: AWS counts their
        #: age from the move ("The ApproximateAgeOfOldestMessage metric
        #: indicates when the message moved to the dead-letter queue", DG:
        #: setting-up-dead-letter-queue-retention). Entries of messages gone
        #: are dropped when the age is next read, so this holds at most one
        #: entry per dead letter stored plus those removed since.
        self.arrivals: deque[tuple[int, int]] = deque()


#: The AWS name of each metric field of :class:`QueueMetrics`, in CloudWatch's order.
AWS_NAMES = {
    "number_of_messages_sent": "NumberOfMessagesSent",
    "number_of_messages_received": "NumberOfMessagesReceived",
    "number_of_messages_deleted": "NumberOfMessagesDeleted",
    "number_of_empty_receives": "NumberOfEmptyReceives",
    "sent_message_size_sum": "SentMessageSize",
    "approximate_number_of_messages_visible": "ApproximateNumberOfMessagesVisible",
    "approximate_number_of_messages_not_visible": "ApproximateNumberOfMessagesNotVisible",
    "approximate_number_of_messages_delayed": "ApproximateNumberOfMessagesDelayed",
    "approximate_age_of_oldest_message": "ApproximateAgeOfOldestMessage",
    "number_of_deduplicated_sent_messages": "NumberOfDeduplicatedSentMessages",
}


@attrs.frozen
class QueueMetrics:
    """One queue's CloudWatch metrics at one moment (``Queue.metrics()``).

    Counters are totals since the queue was made in this process; gauges are
    exact at the moment read (AWS's are approximate). ``sent_message_size_sum``
    with ``number_of_messages_sent`` gives SentMessageSize's Sum and
    SampleCount (its Average is their quotient).
    ``approximate_age_of_oldest_message`` is in whole seconds, 0 for an empty
    queue; ``number_of_deduplicated_sent_messages`` is None on a standard queue.

    >>> from sqsqueue import ManualClock, Queue
    >>> q = Queue("jobs", clock=ManualClock(start=1_700_000_000.0))
    >>> _ = q.send("hello")
    >>> q.metrics().as_cloudwatch()["NumberOfMessagesSent"]
    1
    """

    queue: str
    number_of_messages_sent: int
    number_of_messages_received: int
    number_of_messages_deleted: int
    number_of_empty_receives: int
    sent_message_size_sum: int
    approximate_number_of_messages_visible: int
    approximate_number_of_messages_not_visible: int
    approximate_number_of_messages_delayed: int
    approximate_age_of_oldest_message: int
    number_of_deduplicated_sent_messages: int | None = None

    def as_cloudwatch(self) -> dict[str, int | float]:
        """The metrics under their AWS names, as CloudWatch's statistics of a
        single reading would give them: counters are Sums, SentMessageSize is
        the Average over the messages sent (0 before any), gauges are the
        value read. ``NumberOfDeduplicatedSentMessages`` only on FIFO queues."""
        out: dict[str, int | float] = {}
        fields = attrs.asdict(self, recurse=False)
        for field, name in AWS_NAMES.items():
            value = fields[field]
            if value is None:
                continue
            if name == "SentMessageSize":
                sent = self.number_of_messages_sent
                value = value / sent if sent else 0
            out[name] = value
        return out
