"""EventSourceMapping's settings: CreateEventSourceMapping's ranges and AWS's
messages (ValidationException for the model's ranges, InvalidParameterValueException
for the SQS source's rules), and a refused mapping touches nothing: the queue
keeps its messages and no handler runs (docs/lambda.md, "Settings")."""

from __future__ import annotations

from typing import Any

import pytest

from sqsqueue import FifoQueue, ManualClock, Queue
from sqsqueue.awslambda import (
    EventSourceMapping,
    InvalidParameterValueException,
    LambdaError,
    ValidationException,
)


def never(event: Any, context: Any) -> None:
    raise AssertionError("no invocation expected")


def refused(q: Queue | FifoQueue, exc: type[LambdaError], message: str, **settings: Any) -> None:
    q.send("x", **({"group_id": "g"} if q.FIFO else {}))
    before = q.get_attributes(["All"])
    with pytest.raises(exc) as info:
        EventSourceMapping(q, never, **settings)
    assert info.value.message == message
    assert info.value.code == exc.code
    assert isinstance(info.value, ValueError)
    assert q.get_attributes(["All"]) == before


def test_defaults_are_lambdas(queue: Queue) -> None:
    s = EventSourceMapping(queue, never).settings
    assert (s.batch_size, s.maximum_batching_window_in_seconds) == (10, 0)
    assert (s.function_timeout, s.memory_size, s.enabled) == (3, 128, True)
    assert not s.report_batch_item_failures and s.maximum_concurrency is None and not s.filters


@pytest.mark.parametrize(
    ("value", "bound"),
    [
        (0, "greater than or equal to 1"),
        (10_001, "less than or equal to 10000"),
    ],
)
def test_batch_size_model_range(queue: Queue, value: int, bound: str) -> None:
    refused(
        queue,
        ValidationException,
        f"1 validation error detected: Value '{value}' at 'batchSize' failed to satisfy "
        f"constraint: Member must have value {bound}",
        batch_size=value,
        maximum_batching_window_in_seconds=1,
    )


def test_batch_size_must_be_an_int(queue: Queue) -> None:
    with pytest.raises(ValidationException, match="Invalid type for parameter batchSize"):
        EventSourceMapping(queue, never, batch_size="10")
    with pytest.raises(ValidationException):
        EventSourceMapping(queue, never, batch_size=True)


def test_above_ten_needs_a_window(queue: Queue) -> None:
    msg = (
        "Maximum batch window in seconds must be greater than 0 if maximum batch size is "
        "greater than 10"
    )
    refused(queue, InvalidParameterValueException, msg, batch_size=11)
    refused(
        queue,
        InvalidParameterValueException,
        msg,
        batch_size=11,
        maximum_batching_window_in_seconds=0,
    )
    m = EventSourceMapping(queue, never, batch_size=10_000, maximum_batching_window_in_seconds=1)
    assert m.settings.batch_size == 10_000


def test_window_range(queue: Queue) -> None:
    refused(
        queue,
        ValidationException,
        "1 validation error detected: Value '301' at 'maximumBatchingWindowInSeconds' failed "
        "to satisfy constraint: Member must have value less than or equal to 300",
        maximum_batching_window_in_seconds=301,
    )
    refused(
        queue,
        ValidationException,
        "1 validation error detected: Value '-1' at 'maximumBatchingWindowInSeconds' failed "
        "to satisfy constraint: Member must have value greater than or equal to 0",
        maximum_batching_window_in_seconds=-1,
    )


def test_fifo_has_no_window_and_at_most_ten(fifo: FifoQueue) -> None:
    refused(
        fifo,
        InvalidParameterValueException,
        "Batching window is not supported for FIFO queues",
        maximum_batching_window_in_seconds=1,
    )
    # Above 10 needs a window, which FIFO refuses: a FIFO batch is 1-10.
    refused(
        fifo,
        InvalidParameterValueException,
        "Maximum batch window in seconds must be greater than 0 if maximum batch size is "
        "greater than 10",
        batch_size=11,
    )
    refused(
        fifo,
        InvalidParameterValueException,
        "Batching window is not supported for FIFO queues",
        batch_size=11,
        maximum_batching_window_in_seconds=5,
    )
    assert EventSourceMapping(fifo, never, batch_size=10).settings.batch_size == 10


def test_function_response_types(queue: Queue) -> None:
    m = EventSourceMapping(queue, never, function_response_types=["ReportBatchItemFailures"])
    assert m.settings.report_batch_item_failures
    refused(
        queue,
        ValidationException,
        "1 validation error detected: Value '[ReportFailures]' at 'functionResponseTypes' "
        "failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy "
        "enum value set: [ReportBatchItemFailures]]",
        function_response_types=["ReportFailures"],
    )
    with pytest.raises(ValidationException, match="length less than or equal to 1"):
        EventSourceMapping(
            queue,
            never,
            function_response_types=["ReportBatchItemFailures", "ReportBatchItemFailures"],
        )
    with pytest.raises(ValidationException, match="FunctionResponseTypes"):
        EventSourceMapping(queue, never, function_response_types="ReportBatchItemFailures")


@pytest.mark.parametrize(
    ("value", "bound"), [(1, "greater than or equal to 2"), (1001, "less than or equal to 1000")]
)
def test_maximum_concurrency(queue: Queue, value: int, bound: str) -> None:
    refused(
        queue,
        ValidationException,
        f"1 validation error detected: Value '{value}' at 'scalingConfig.maximumConcurrency' "
        f"failed to satisfy constraint: Member must have value {bound}",
        scaling_config={"MaximumConcurrency": value},
    )


def test_scaling_config_shape(queue: Queue) -> None:
    with pytest.raises(ValidationException, match='Unknown parameter in ScalingConfig: "Max"'):
        EventSourceMapping(queue, never, scaling_config={"Max": 5})
    m = EventSourceMapping(queue, never, scaling_config={"MaximumConcurrency": 2})
    assert m.settings.maximum_concurrency == 2


def test_filters(queue: Queue) -> None:
    ok = {"Filters": [{"Pattern": '{"body": {"kind": ["a"]}}'}] * 5}
    assert len(EventSourceMapping(queue, never, filter_criteria=ok).settings.filters) == 5
    refused(
        queue,
        InvalidParameterValueException,
        "The number of filters exceeds the limit of 5 per event source mapping.",
        filter_criteria={"Filters": [{"Pattern": '{"body": ["a"]}'}] * 6},
    )
    for bad in [
        "",
        "not json",
        "[]",
        "{}",
        '{"body": "a"}',
        '{"body": []}',
        '{"a": [{"nope": 1}]}',
    ]:
        refused(
            queue,
            InvalidParameterValueException,
            "Invalid filter pattern definition.",
            filter_criteria={"Filters": [{"Pattern": bad}]},
        )
    long = '{"body": ["' + "x" * 4_100 + '"]}'
    member = r"at 'filterCriteria\.filters\.1\.member\.pattern'"
    with pytest.raises(ValidationException, match=member):
        EventSourceMapping(queue, never, filter_criteria={"Filters": [{"Pattern": long}]})


def test_function_timeout_against_the_visibility_timeout(clock: ManualClock) -> None:
    q = Queue("jobs", clock=clock, visibility_timeout=30)
    refused(
        q,
        InvalidParameterValueException,
        "Queue visibility timeout: 30 seconds is less than Function timeout: 60 seconds",
        function_timeout=60,
    )
    assert EventSourceMapping(q, never, function_timeout=30).settings.function_timeout == 30
    refused(
        q,
        ValidationException,
        "1 validation error detected: Value '901' at 'timeout' failed to satisfy constraint: "
        "Member must have value less than or equal to 900",
        function_timeout=901,
    )
    refused(
        q,
        ValidationException,
        "1 validation error detected: Value '0' at 'timeout' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1",
        function_timeout=0,
    )


def test_enabled_and_handler(queue: Queue) -> None:
    with pytest.raises(ValidationException, match="Enabled"):
        EventSourceMapping(queue, never, enabled="yes")
    with pytest.raises(InvalidParameterValueException, match="Unable to import module"):
        EventSourceMapping(queue, "no_such_module_xyz:handler")
    with pytest.raises(InvalidParameterValueException, match="not callable"):
        EventSourceMapping(queue, "sqsqueue:__version__")
    m = EventSourceMapping(queue, "json:dumps")
    assert m.invocations == []


def test_unknown_setting_is_a_type_error(queue: Queue) -> None:
    with pytest.raises(TypeError):
        EventSourceMapping(queue, never, starting_position="LATEST")
    with pytest.raises(TypeError):
        EventSourceMapping("https://sqs.us-east-1.amazonaws.com/1/q", never)  # no client
