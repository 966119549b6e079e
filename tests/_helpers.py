"""Small helpers shared by the test modules."""

from __future__ import annotations

from sqsqueue import FifoQueue, Queue


def counts(q: Queue | FifoQueue) -> tuple[int, int, int]:
    """(visible, in flight, delayed) as GetQueueAttributes reports them."""
    a = q.get_attributes(
        [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ]
    )
    return (
        int(a["ApproximateNumberOfMessages"]),
        int(a["ApproximateNumberOfMessagesNotVisible"]),
        int(a["ApproximateNumberOfMessagesDelayed"]),
    )
