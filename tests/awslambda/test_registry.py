"""CreateEventSourceMapping's refusals about the queue itself, as AWS answers
them: a queue that does not exist (InvalidParameterValueException, 400) and a
second mapping of one queue to one function (ResourceConflictException, 409),
with the registry released when a mapping stops, is deleted or is collected
(docs/lambda.md, "Settings"; sqsqueue/awslambda/_mapping.py)."""

from __future__ import annotations

import gc
from typing import Any

import boto3
import pytest

from sqsqueue import Broker, Queue
from sqsqueue.awslambda import (
    EventSourceMapping,
    InvalidParameterValueException,
    LambdaError,
    ResourceConflictException,
)
from sqsqueue.testing import mock_sqs

#: AWS's text (recorded: LocalStack's AWS-validated
#: test_lambda_integration_sqs.py::test_esm_with_not_existing_sqs_queue, 2025-11-25).
NO_QUEUE = (
    "Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService."
    "NonExistentQueue. SQS Error Message: The specified queue does not exist."
)


def handler(event: Any, context: Any) -> None:
    pass


def other_handler(event: Any, context: Any) -> None:
    pass


def conflict_text(arn: str, function: str, uuid: str) -> str:
    """AWS's text (recorded: LocalStack's AWS-validated
    TestSQSEventSourceMapping::test_duplicate_event_source_mappings, 2025-11-25)."""
    return (
        f'An event source mapping with SQS arn (" {arn} ") and function (" {function} ") '
        f"already exists. Please update or delete the existing mapping with UUID {uuid}"
    )


# -- a queue that does not exist ----------------------------------------------------


def test_a_queue_deleted_from_its_broker(broker: Broker) -> None:
    """AWS: InvalidParameterValueException with SQS's error in its text."""
    q = broker.create_queue("gone")
    broker.delete_queue(q.url)
    with pytest.raises(InvalidParameterValueException) as info:
        EventSourceMapping(q, handler)
    assert info.value.message == NO_QUEUE
    assert info.value.code == "InvalidParameterValueException"
    assert isinstance(info.value, LambdaError)


def test_a_queue_url_that_names_no_queue(broker: Broker) -> None:
    """The same through boto3 (botocore's QueueDoesNotExist must not escape:
    it is no LambdaError)."""
    with mock_sqs(broker=broker):
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="here")["QueueUrl"].replace("here", "not-here")
        with pytest.raises(InvalidParameterValueException) as info:
            EventSourceMapping(url, handler, client=sqs)
        assert info.value.message == NO_QUEUE


def test_other_boto_errors_pass_through(broker: Broker) -> None:
    """Only a missing queue becomes Lambda's error; anything else is boto's."""

    class Broken:
        def get_queue_attributes(self, **_: Any) -> Any:
            raise RuntimeError("no endpoint")

    with pytest.raises(RuntimeError, match="no endpoint"):
        EventSourceMapping("http://x/000000000000/q", handler, client=Broken())


# -- one mapping per queue and function -----------------------------------------------


def test_a_second_mapping_is_refused(queue: Queue) -> None:
    """AWS: ResourceConflictException (409) naming the queue's ARN, the
    function and the existing mapping's UUID; the first keeps working."""
    first = EventSourceMapping(queue, handler, function_name="orders")
    with pytest.raises(ResourceConflictException) as info:
        EventSourceMapping(queue, other_handler, function_name="orders")
    assert info.value.code == "ResourceConflictException"
    assert info.value.message == conflict_text(queue.arn, "orders", first.uuid)
    queue.send("x")
    assert [i.outcome for i in first.run_until_idle()] == ["success"]


def test_the_same_handler_without_a_name_is_the_same_function(queue: Queue) -> None:
    first = EventSourceMapping(queue, handler)
    with pytest.raises(ResourceConflictException) as info:
        EventSourceMapping(queue, handler)
    assert info.value.message == conflict_text(queue.arn, "handler", first.uuid)
    with pytest.raises(ResourceConflictException):
        EventSourceMapping(queue, f"{__name__}:handler")  # the same function, by name


def test_other_functions_and_other_queues_are_free(broker: Broker) -> None:
    a, b = broker.create_queue("a"), broker.create_queue("b")
    kept = [
        EventSourceMapping(a, handler),
        EventSourceMapping(a, other_handler),
        EventSourceMapping(b, handler),
        EventSourceMapping(a, handler, function_name="named"),
        EventSourceMapping(a, lambda e, c: None),
        EventSourceMapping(a, lambda e, c: None),  # two lambdas: two functions
    ]
    assert len({m.uuid for m in kept}) == len(kept)
    # Another broker's queue of the same name and ARN is another queue.
    EventSourceMapping(Broker(clock=broker.clock).create_queue("a"), handler)


def test_stop_delete_and_collection_release(queue: Queue) -> None:
    first = EventSourceMapping(queue, handler)
    first.start()
    first.stop()  # a mapping that stops frees its queue and function
    second = EventSourceMapping(queue, handler)
    # The stopped one cannot come back while the new one holds the entry.
    with pytest.raises(ResourceConflictException):
        first.run_until_idle()
    with pytest.raises(ResourceConflictException):
        first.start()
    second.delete()
    assert first.run_until_idle() == []  # free again: it takes it back
    del first, second
    gc.collect()
    third = EventSourceMapping(queue, handler)  # collected mappings hold nothing
    with third:
        pass  # start() and stop() on its own entry
    EventSourceMapping(queue, handler).delete()


def test_queue_urls_share_a_registry_per_process(broker: Broker) -> None:
    with mock_sqs(broker=broker):
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="remote")["QueueUrl"]
        first = EventSourceMapping(url, handler, client=sqs)
        again = boto3.client("sqs", region_name="us-east-1")  # another client, same queue
        with pytest.raises(ResourceConflictException) as info:
            EventSourceMapping(url, handler, client=again)
        assert info.value.message == conflict_text(first.event_source_arn, "handler", first.uuid)
        first.delete()
        EventSourceMapping(url, handler, client=again).delete()
