"""CreateEventSourceMapping's parameters for an SQS source, checked as Lambda checks them.

Each keyword of :class:`~sqsqueue.awslambda.EventSourceMapping` is the snake
case of a CreateEventSourceMapping member (or of the function's own setting:
``function_timeout`` is the function's ``Timeout``). A value outside the API
model's range is refused as Lambda's request validation refuses it (a
``ValidationException`` whose text is AWS's ``1 validation error detected:
...``); a value inside the model that the SQS source forbids is refused with
an ``InvalidParameterValueException`` carrying Lambda's message. Both are
:class:`LambdaError` (and ``ValueError``). The ranges and texts:

* ``BatchSize`` 1-10,000 (model); above 10 "Maximum batch window in seconds
  must be greater than 0 if maximum batch size is greater than 10".
* ``MaximumBatchingWindowInSeconds`` 0-300 (model); on a FIFO queue "Batching
  window is not supported for FIFO queues" (so a FIFO batch is at most 10).
* ``FunctionResponseTypes`` at most one item, ``ReportBatchItemFailures``.
* ``ScalingConfig.MaximumConcurrency`` 2-1,000 (model).
* ``FilterCriteria.Filters`` at most 5 (Lambda's quota); each ``Pattern`` at
  most 4,096 characters (model) and a valid pattern, else "Invalid filter
  pattern definition.".
* the function's ``Timeout`` 1-900 seconds; a queue whose visibility timeout
  is shorter is refused: "Queue visibility timeout: 30 seconds is less than
  Function timeout: 60 seconds".

The order of the checks follows Lambda's: the model's ranges first, then the
source's rules. Nothing is kept of a refused mapping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from sqsqueue.awslambda._filter import Pattern, compile_pattern

__all__ = [
    "InvalidParameterValueException",
    "LambdaError",
    "ResourceConflictException",
    "Settings",
    "ValidationException",
    "settings",
]

#: Lambda's quota of filters per event source mapping.
FILTERS_MAX = 5
#: The model's limit on one filter pattern, in characters.
PATTERN_MAX = 4_096
#: Lambda's maximum function timeout, in seconds.
FUNCTION_TIMEOUT_MAX = 900
#: Lambda's memory range (MemorySize), in MB.
MEMORY_MIN, MEMORY_MAX = 128, 10_240


class LambdaError(ValueError):
    """A mapping setting AWS Lambda would refuse; ``code`` is AWS's error code."""

    code = "ServiceException"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ValidationException(LambdaError):
    """Outside the API model's range or type (request validation)."""

    code = "ValidationException"


class InvalidParameterValueException(LambdaError):
    """Inside the model, but a rule of the SQS source forbids it."""

    code = "InvalidParameterValueException"


class ResourceConflictException(LambdaError):
    """A mapping for the same queue and function exists already (HTTP 409)."""

    code = "ResourceConflictException"


@attrs.frozen
class Settings:
    """A mapping's validated settings (what GetEventSourceMapping would report)."""

    batch_size: int
    maximum_batching_window_in_seconds: int
    report_batch_item_failures: bool
    maximum_concurrency: int | None
    filters: tuple[Pattern, ...]
    function_timeout: int
    enabled: bool
    function_name: str
    memory_size: int


def _show(value: object) -> str:
    return "null" if value is None else str(value).replace("'", "")


def _constraint(value: object, member: str, constraint: str) -> ValidationException:
    # The text of AWS's request validation (Coral), as CreateEventSourceMapping
    # answers with it; `member` is the lower-camel path of the member.
    return ValidationException(
        f"1 validation error detected: Value '{_show(value)}' at '{member}' failed to "
        f"satisfy constraint: {constraint}"
    )


def _integer(value: object, member: str, low: int, high: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        # boto3 refuses a wrong type before sending (its ParamValidationError);
        # the same words, as a ValidationException.
        raise ValidationException(
            f"Invalid type for parameter {member}, value: {value!r}, type: "
            f"{type(value)}, valid types: <class 'int'>"
        )
    if value < low:
        raise _constraint(value, member, f"Member must have value greater than or equal to {low}")
    if high is not None and value > high:
        raise _constraint(value, member, f"Member must have value less than or equal to {high}")
    return value


def _response_types(value: object) -> bool:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationException(
            f"Invalid type for parameter FunctionResponseTypes, value: {value!r}, type: "
            f"{type(value)}, valid types: <class 'list'>, <class 'tuple'>"
        )
    items = list(value)
    if len(items) > 1:
        raise _constraint(
            items, "functionResponseTypes", "Member must have length less than or equal to 1"
        )
    for item in items:
        if item != "ReportBatchItemFailures":
            raise _constraint(
                items,
                "functionResponseTypes",
                "Member must satisfy constraint: [Member must satisfy enum value set: "
                "[ReportBatchItemFailures]]",
            )
    return bool(items)


def _scaling(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationException(
            f"Invalid type for parameter ScalingConfig, value: {value!r}, type: "
            f"{type(value)}, valid types: <class 'dict'>"
        )
    unknown = set(value) - {"MaximumConcurrency"}
    if unknown:
        raise ValidationException(
            f'Unknown parameter in ScalingConfig: "{sorted(unknown)[0]}", must be one of: '
            "MaximumConcurrency"
        )
    if "MaximumConcurrency" not in value:
        return None  # an empty ScalingConfig sets no maximum
    return _integer(value["MaximumConcurrency"], "scalingConfig.maximumConcurrency", 2, 1_000)


def _filters(value: object) -> tuple[Pattern, ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or set(value) - {"Filters"}:
        raise ValidationException(
            f"Invalid type for parameter FilterCriteria, value: {value!r}: "
            'must be {"Filters": [{"Pattern": "..."}]}'
        )
    filters = value.get("Filters") or []
    if isinstance(filters, (str, bytes)) or not isinstance(filters, Sequence):
        raise ValidationException(
            f"Invalid type for parameter FilterCriteria.Filters, value: {filters!r}, type: "
            f"{type(filters)}, valid types: <class 'list'>, <class 'tuple'>"
        )
    if len(filters) > FILTERS_MAX:
        # Lambda's quota (5 filters per mapping). Message text UNCONFIRMED:
        # the quota is documented, the refusal's words are not.
        raise InvalidParameterValueException(
            f"The number of filters exceeds the limit of {FILTERS_MAX} per event source mapping."
        )
    patterns = []
    for i, entry in enumerate(filters, start=1):
        if not isinstance(entry, Mapping) or set(entry) - {"Pattern"}:
            raise ValidationException(
                f"Invalid type for parameter FilterCriteria.Filters[{i - 1}], value: "
                f'{entry!r}: must be {{"Pattern": "..."}}'
            )
        text = entry.get("Pattern")
        if isinstance(text, str) and len(text) > PATTERN_MAX:
            raise _constraint(
                text,
                f"filterCriteria.filters.{i}.member.pattern",
                f"Member must have length less than or equal to {PATTERN_MAX}",
            )
        pattern = compile_pattern(text)
        if pattern is None:
            raise InvalidParameterValueException("Invalid filter pattern definition.")
        patterns.append(pattern)
    return tuple(patterns)


def settings(
    *,
    fifo: bool,
    visibility_timeout: int | None,
    batch_size: object = 10,
    maximum_batching_window_in_seconds: object = None,
    function_response_types: object = (),
    scaling_config: object = None,
    filter_criteria: object = None,
    function_timeout: object = 3,
    enabled: object = True,
    function_name: object = "function",
    memory_size: object = 128,
) -> Settings:
    """Check every setting, Lambda's way; ``visibility_timeout`` is the queue's
    (None when it cannot be read, which skips that one check)."""
    size = _integer(batch_size, "batchSize", 1, 10_000)
    window = (
        0
        if maximum_batching_window_in_seconds is None
        else _integer(maximum_batching_window_in_seconds, "maximumBatchingWindowInSeconds", 0, 300)
    )
    report = _response_types(function_response_types)
    concurrency = _scaling(scaling_config)
    filters = _filters(filter_criteria)
    timeout = _integer(function_timeout, "timeout", 1, FUNCTION_TIMEOUT_MAX)
    if not isinstance(enabled, bool):
        raise ValidationException(
            f"Invalid type for parameter Enabled, value: {enabled!r}, type: {type(enabled)}, "
            "valid types: <class 'bool'>"
        )
    if not isinstance(function_name, str) or not 1 <= len(function_name) <= 64:
        raise _constraint(function_name, "functionName", "Member must have length between 1 and 64")
    memory = _integer(memory_size, "memorySize", MEMORY_MIN, MEMORY_MAX)
    # The SQS source's rules, in Lambda's order.
    if size > 10 and window == 0:
        raise InvalidParameterValueException(
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is "
            "greater than 10"
        )
    if fifo and window > 0:
        raise InvalidParameterValueException("Batching window is not supported for FIFO queues")
    if visibility_timeout is not None and visibility_timeout < timeout:
        raise InvalidParameterValueException(
            f"Queue visibility timeout: {visibility_timeout} seconds is less than Function "
            f"timeout: {timeout} seconds"
        )
    # A keyword a field, as the poller builds an Invocation: alike in shape only (duplicates).
    return Settings(
        batch_size=size,
        maximum_batching_window_in_seconds=window,
        report_batch_item_failures=report,
        maximum_concurrency=concurrency,
        filters=filters,
        function_timeout=timeout,
        enabled=enabled,
        function_name=function_name,
        memory_size=memory,
    )


def describe(s: Settings) -> dict[str, Any]:
    """The settings as CreateEventSourceMapping's members (for logs and reprs)."""
    out: dict[str, Any] = {
        "BatchSize": s.batch_size,
        "MaximumBatchingWindowInSeconds": s.maximum_batching_window_in_seconds,
        "FunctionResponseTypes": (
            ["ReportBatchItemFailures"] if s.report_batch_item_failures else []
        ),
        "Enabled": s.enabled,
    }
    if s.maximum_concurrency is not None:
        out["ScalingConfig"] = {"MaximumConcurrency": s.maximum_concurrency}
    if s.filters:
        out["FilterCriteria"] = {"Filters": [{"Pattern": p.text} for p in s.filters]}
    return out
