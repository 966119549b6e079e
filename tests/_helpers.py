"""Small helpers shared by the test modules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sqsqueue import FifoQueue, Queue, errors


def new_queue_attributes(arn: str) -> dict[str, str]:
    """GetQueueAttributes(All) of the standard queue ``arn`` just created at
    1,700,000,000 (section 2.1, AWS-observed)."""
    return {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesDelayed": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
        "CreatedTimestamp": "1700000000",
        "DelaySeconds": "0",
        "LastModifiedTimestamp": "1700000000",
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "345600",
        "QueueArn": arn,
        "ReceiveMessageWaitTimeSeconds": "0",
        "SqsManagedSseEnabled": "true",
        "VisibilityTimeout": "30",
    }


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


def snapshot(q: Queue) -> tuple[int, dict[str, str]]:
    """Everything observable about a queue's state, without changing it."""
    return len(q), q.get_attributes(["All"])


def refused(
    q: Queue, exc: type[errors.SQSError], call: Callable[[], object], message: str | None = None
) -> errors.SQSError:
    """Assert ``call`` raises ``exc`` (with ``message``) and changes nothing."""
    before = snapshot(q)
    with pytest.raises(exc) as info:
        call()
    if message is not None:
        assert info.value.message == message
    assert snapshot(q) == before
    q._check()
    return info.value
