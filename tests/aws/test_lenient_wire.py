"""Leniencies through boto3, in process and over HTTP (docs/serving.md,
"Leniencies"; the rules are docs/aws-behaviour.md §2.1's).

A strict broker (the default) answers each relaxed rule with AWS's exact
error; a lenient one accepts the same request and counts it once, and a
request AWS accepts is never counted.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import Broker, ManualClock
from tests.aws._helpers import ACCOUNT, assert_aws_error


class TestStrict:
    """The default broker of the ``sqs`` fixture: every rule enforced."""

    def test_fifo_queue_false_on_create(self, sqs: Any, broker: Broker) -> None:
        with pytest.raises(sqs.exceptions.ClientError) as exc:
            sqs.create_queue(QueueName="jobs", Attributes={"FifoQueue": "false"})
        assert_aws_error(
            exc.value,
            code="InvalidAttributeName",
            query_code="InvalidAttributeName",
            message="Unknown Attribute FifoQueue.",
            operation="CreateQueue",
        )
        assert "jobs" not in broker
        assert broker.lenient_counts() == {}

    def test_fifo_queue_false_on_set(self, sqs: Any, queue_url: str) -> None:
        with pytest.raises(sqs.exceptions.ClientError) as exc:
            sqs.set_queue_attributes(
                QueueUrl=queue_url, Attributes={"FifoQueue": "false", "DelaySeconds": "5"}
            )
        assert_aws_error(
            exc.value,
            code="InvalidAttributeName",
            query_code="InvalidAttributeName",
            message="Unknown Attribute FifoQueue.",
            operation="SetQueueAttributes",
        )
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["DelaySeconds"])
        assert attributes["Attributes"] == {"DelaySeconds": "0"}


class TestLenient:
    """A broker with every leniency on, reached the same two ways."""

    @pytest.fixture
    def broker(self, clock: ManualClock) -> Broker:
        return Broker(
            clock=clock,
            account_id=ACCOUNT,
            lenient="purge-interval,fifo-queue-false,recreate-interval",
        )

    def counts(self, broker: Broker) -> tuple[int, int, int]:
        c = broker.lenient_counts()
        return c["purge-interval"], c["fifo-queue-false"], c["recreate-interval"]

    def test_a_second_purge(
        self, sqs: Any, queue_url: str, broker: Broker, clock: ManualClock
    ) -> None:
        sqs.purge_queue(QueueUrl=queue_url)
        clock.advance(30)
        sqs.send_message(QueueUrl=queue_url, MessageBody="x")
        assert set(sqs.purge_queue(QueueUrl=queue_url)) == {"ResponseMetadata"}
        assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
        assert self.counts(broker) == (1, 0, 0)
        clock.advance(30)  # 60 s after the first purge: AWS accepts this one
        sqs.purge_queue(QueueUrl=queue_url)
        assert self.counts(broker) == (1, 0, 0)

    def test_fifo_queue_false(self, sqs: Any, broker: Broker) -> None:
        url = sqs.create_queue(
            QueueName="jobs", Attributes={"FifoQueue": "false", "VisibilityTimeout": "45"}
        )["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert "FifoQueue" not in attributes
        assert attributes["VisibilityTimeout"] == "45"
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoQueue": "false"})
        sqs.create_queue(QueueName="jobs")  # idempotent, and AWS accepts it: no count
        assert self.counts(broker) == (0, 2, 0)

    def test_another_refusal_is_aws_and_counts_nothing(self, sqs: Any, broker: Broker) -> None:
        with pytest.raises(sqs.exceptions.ClientError) as exc:
            sqs.create_queue(
                QueueName="jobs", Attributes={"FifoQueue": "false", "DelaySeconds": "901"}
            )
        assert exc.value.response["Error"]["Code"] == "InvalidAttributeValue"
        assert "QueueUrls" not in sqs.list_queues()
        assert self.counts(broker) == (0, 0, 0)

    def test_recreate_at_once(self, sqs: Any, queue_url: str, broker: Broker) -> None:
        sqs.send_message(QueueUrl=queue_url, MessageBody="old")
        sqs.delete_queue(QueueUrl=queue_url)
        assert sqs.create_queue(QueueName="jobs")["QueueUrl"] == queue_url
        assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
        assert self.counts(broker) == (0, 0, 1)
