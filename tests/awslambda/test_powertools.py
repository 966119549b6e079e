"""aws-lambda-powertools' ``BatchProcessor`` and ``SqsFifoPartialProcessor``
handlers, unchanged, under the mapping: partial failures retried, the FIFO
processor's "stop at the first failure" honoured, in process and over the
endpoint through boto3 (docs/lambda.md, "powertools")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from botocore import UNSIGNED
from botocore.config import Config

from sqsqueue import Broker, ManualClock, Queue
from sqsqueue.awslambda import EventSourceMapping

RBIF = {"function_response_types": ["ReportBatchItemFailures"]}


class Orders:
    """An application's handlers, written for Lambda with powertools."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.attempts: dict[str, int] = {}

    def record_handler(self, record: SQSRecord) -> None:
        body = record.body
        self.attempts[body] = self.attempts.get(body, 0) + 1
        if body.startswith("bad") and self.attempts[body] == 1:
            raise ValueError(f"cannot process {body}")  # fails once, then succeeds
        self.done.append(body)

    def standard(self, event: dict[str, Any], context: Any) -> Any:
        processor = BatchProcessor(event_type=EventType.SQS)
        return process_partial_response(
            event=event, record_handler=self.record_handler, processor=processor, context=context
        )

    def fifo(self, event: dict[str, Any], context: Any) -> Any:
        processor = SqsFifoPartialProcessor()
        return process_partial_response(
            event=event, record_handler=self.record_handler, processor=processor, context=context
        )


def check_standard(mapping: EventSourceMapping, orders: Orders) -> None:
    invs = mapping.run_until_idle()
    assert invs[0].outcome == "partial"
    assert sorted(orders.done) == ["bad-2", "bad-5", "ok-1", "ok-3", "ok-4"]
    assert [b for i in invs[1:] for b in i.bodies] == ["bad-2", "bad-5"]  # only the failed ones


def check_fifo(mapping: EventSourceMapping, orders: Orders) -> None:
    invs = mapping.run_until_idle()
    # The processor stops at bad-2 and reports it and everything after it.
    assert invs[0].bodies == ["ok-1", "bad-2", "ok-3"]
    assert invs[0].outcome == "partial" and len(invs[0].returned) == 2
    assert invs[1].bodies == ["bad-2", "ok-3"]
    assert orders.done == ["ok-1", "bad-2", "ok-3"]  # in order, nothing twice


def test_batch_processor_in_process(queue: Queue) -> None:
    for body in ["ok-1", "bad-2", "ok-3", "ok-4", "bad-5"]:
        queue.send(body)
    orders = Orders()
    check_standard(EventSourceMapping(queue, orders.standard, **RBIF), orders)
    assert len(queue) == 0


def test_fifo_partial_processor_in_process(clock: ManualClock) -> None:
    from sqsqueue import FifoQueue

    q = FifoQueue("orders.fifo", clock=clock, content_based_deduplication=True)
    for body in ["ok-1", "bad-2", "ok-3"]:
        q.send(body, group_id="customer-1")
    orders = Orders()
    check_fifo(EventSourceMapping(q, orders.fifo, **RBIF), orders)
    assert len(q) == 0


def test_all_failed_is_a_whole_batch_failure(queue: Queue) -> None:
    # BatchProcessor raises when every record failed: the batch comes back whole.
    queue.send("bad-1")
    orders = Orders()
    first, second = EventSourceMapping(queue, orders.standard, **RBIF).run_until_idle()
    assert first.outcome == "error" and type(first.error).__name__ == "BatchProcessingError"
    assert second.outcome == "success" and orders.done == ["bad-1"]


@pytest.fixture
def served() -> Iterator[tuple[Broker[ManualClock], ManualClock, Any]]:
    clock = ManualClock(start=1_700_000_000.0, max_wall_wait=0.05)
    broker = Broker(clock=clock, account_id="123456789012")
    with broker.serve() as endpoint:
        sqs = boto3.client(
            "sqs",
            region_name="us-east-1",
            endpoint_url=endpoint.endpoint_url,
            config=Config(signature_version=UNSIGNED),
        )
        yield broker, clock, sqs


def test_batch_processor_over_the_endpoint(
    served: tuple[Broker[ManualClock], ManualClock, Any],
) -> None:
    broker, clock, sqs = served
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    for body in ["ok-1", "bad-2", "ok-3", "ok-4", "bad-5"]:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    orders = Orders()
    # The served broker's clock: run_until_idle moves it as the failed ones wait.
    mapping = EventSourceMapping(url, orders.standard, client=sqs, clock=clock, **RBIF)
    check_standard(mapping, orders)
    assert len(broker.get_queue("orders")) == 0


def test_fifo_partial_processor_over_the_endpoint(
    served: tuple[Broker[ManualClock], ManualClock, Any],
) -> None:
    broker, clock, sqs = served
    url = sqs.create_queue(
        QueueName="orders.fifo",
        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"},
    )["QueueUrl"]
    for body in ["ok-1", "bad-2", "ok-3"]:
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="customer-1")
    orders = Orders()
    check_fifo(EventSourceMapping(url, orders.fifo, client=sqs, clock=clock, **RBIF), orders)
    assert len(broker.get_queue("orders.fifo")) == 0
