"""The event and context a handler receives: AWS's SQS record shape key by key
(attributes, Lambda's lower-camel message attributes with base64 binaries,
SQS's own MD5s), the FIFO attributes, the trace header and the dead-letter
source, and a context whose remaining time runs on the queue's clock
(docs/aws-behaviour.md §7 for the MD5s)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue
from sqsqueue._message import md5_of_body
from sqsqueue.awslambda import EventSourceMapping


def capture() -> tuple[list[tuple[dict[str, Any], Any]], Any]:
    seen: list[tuple[dict[str, Any], Any]] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        seen.append((json.loads(json.dumps(event)), context))

    return seen, handler


def test_standard_record_byte_for_byte(clock: ManualClock) -> None:
    q = Queue("jobs", clock=clock, region="eu-west-1", account_id="123456789012")
    sent = q.send("hello", message_attributes={"n": 5, "s": "x", "b": b"\x00\xff"})
    clock.advance(2)
    seen, handler = capture()
    EventSourceMapping(q, handler).run_until_idle()
    [(event, _)] = seen
    [record] = event["Records"]
    assert list(event) == ["Records"]
    handle = record["receiptHandle"]
    assert json.dumps(record) == json.dumps(
        {
            "messageId": sent.message_id,
            "receiptHandle": handle,
            "body": "hello",
            "attributes": {
                "ApproximateReceiveCount": "1",
                "SentTimestamp": "1700000000000",
                "SenderId": "123456789012",
                "ApproximateFirstReceiveTimestamp": "1700000002000",
            },
            "messageAttributes": {
                "b": {
                    "binaryValue": base64.b64encode(b"\x00\xff").decode(),
                    "stringListValues": [],
                    "binaryListValues": [],
                    "dataType": "Binary",
                },
                "n": {
                    "stringValue": "5",
                    "stringListValues": [],
                    "binaryListValues": [],
                    "dataType": "Number",
                },
                "s": {
                    "stringValue": "x",
                    "stringListValues": [],
                    "binaryListValues": [],
                    "dataType": "String",
                },
            },
            "md5OfMessageAttributes": sent.md5_of_message_attributes,
            "md5OfBody": md5_of_body("hello"),
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:jobs",
            "awsRegion": "eu-west-1",
        }
    )


def test_no_attributes_no_md5_of_attributes_without_a_window(queue: Queue) -> None:
    """AWS: with MaximumBatchingWindowInSeconds 0, a record without message
    attributes has no md5OfMessageAttributes key (recorded: LocalStack's
    AWS-validated test_lambda_integration_sqs.snapshot.json, the 6 snapshots
    of window-0 mappings, e.g. test_failing_lambda_retries_after_visibility_timeout,
    2025-11-25)."""
    queue.send("plain")
    seen, handler = capture()
    EventSourceMapping(queue, handler).run_until_idle()
    [record] = seen[0][0]["Records"]
    assert record["messageAttributes"] == {}
    assert "md5OfMessageAttributes" not in record


@pytest.mark.parametrize("window", [1, 10])
def test_md5_of_attributes_is_null_with_a_window(clock: ManualClock, window: int) -> None:
    """AWS: with a batching window (1 or 10 s), a record without message
    attributes carries ``"md5OfMessageAttributes": null`` between
    messageAttributes and md5OfBody; one with attributes carries SQS's digest
    (recorded: LocalStack's AWS-validated test_lambda_integration_sqs.snapshot.json,
    29 snapshots 2024-10 to 2025-11: test_sqs_event_source_mapping, every
    test_sqs_event_filter, test_sqs_event_source_mapping_batch_size[15..10000],
    ..._batching_reserved_concurrency, ..._update). docs/lambda.md says what
    is not known (whether the window is what decides)."""
    q = Queue("jobs", clock=clock)
    q.send("plain")
    sent = q.send("with", message_attributes={"k": "v"})
    seen, handler = capture()
    EventSourceMapping(
        q, handler, batch_size=20, maximum_batching_window_in_seconds=window
    ).run_until_idle()
    [plain, with_attributes] = seen[0][0]["Records"]
    assert plain["md5OfMessageAttributes"] is None
    keys = list(plain)
    assert keys[keys.index("messageAttributes") + 1 : keys.index("md5OfBody")] == [
        "md5OfMessageAttributes"
    ]
    assert with_attributes["md5OfMessageAttributes"] == sent.md5_of_message_attributes


def test_md5_of_attributes_null_over_boto3_too(broker: Broker) -> None:
    """The same record from a queue URL (boto3's ReceiveMessage) as in process:
    null with a window, absent without (the recordings above)."""
    from sqsqueue.testing import mock_sqs

    with mock_sqs(broker=broker):
        import boto3

        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="remote")["QueueUrl"]
        for window, present in ((1, True), (0, False)):
            sqs.send_message(QueueUrl=url, MessageBody="plain")
            seen, handler = capture()
            EventSourceMapping(
                url,
                handler,
                client=sqs,
                clock=broker.clock,
                maximum_batching_window_in_seconds=window,
            ).run_until_idle()
            [record] = seen[0][0]["Records"]
            assert ("md5OfMessageAttributes" in record) is present
            assert record.get("md5OfMessageAttributes") is None


def test_fifo_attributes_in_awss_order(fifo: FifoQueue) -> None:
    sent = fifo.send("order 1", group_id="customer-1", trace_header="Root=1-abc")
    seen, handler = capture()
    EventSourceMapping(fifo, handler).run_until_idle()
    attributes = seen[0][0]["Records"][0]["attributes"]
    assert list(attributes) == [
        "ApproximateReceiveCount",
        "SentTimestamp",
        "SequenceNumber",
        "MessageGroupId",
        "SenderId",
        "MessageDeduplicationId",
        "ApproximateFirstReceiveTimestamp",
        "AWSTraceHeader",
    ]
    assert attributes["SequenceNumber"] == sent.sequence_number
    assert attributes["MessageGroupId"] == "customer-1"
    assert attributes["AWSTraceHeader"] == "Root=1-abc"


def test_dead_letter_source_arn(broker: Broker[ManualClock], clock: ManualClock) -> None:
    dlq = broker.create_queue("dlq")
    jobs = broker.create_queue(
        "jobs", redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}
    )
    jobs.send("poison")
    jobs.receive()
    clock.advance(30)
    assert jobs.receive() == []  # moved
    seen, handler = capture()
    EventSourceMapping(dlq, handler).run_until_idle()
    attributes = seen[0][0]["Records"][0]["attributes"]
    assert attributes["DeadLetterQueueSourceArn"] == jobs.arn
    assert list(attributes)[-1] == "DeadLetterQueueSourceArn"


def test_context(clock: ManualClock) -> None:
    q = Queue("jobs", clock=clock, region="eu-west-1", account_id="123456789012")
    q.send("x")
    remaining: list[int] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        remaining.append(context.get_remaining_time_in_millis())
        clock.advance(1.5)
        remaining.append(context.get_remaining_time_in_millis())

    [inv] = EventSourceMapping(
        q, handler, function_timeout=10, function_name="resize", memory_size=512
    ).run_until_idle()
    ctx = inv.context
    assert remaining == [10_000, 8_500]
    assert ctx.function_name == "resize"
    assert ctx.invoked_function_arn == "arn:aws:lambda:eu-west-1:123456789012:function:resize"
    assert ctx.memory_limit_in_mb == 512
    assert ctx.log_group_name == "/aws/lambda/resize"
    assert ctx.function_version == "$LATEST"
    assert len(ctx.aws_request_id) == 36
    clock.advance(100)
    assert ctx.get_remaining_time_in_millis() == 0
