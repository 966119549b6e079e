"""The ``context`` object a Python Lambda handler receives.

The attributes of Lambda's Python runtime (``function_name``,
``function_version``, ``invoked_function_arn``, ``memory_limit_in_mb``,
``aws_request_id``, ``log_group_name``, ``log_stream_name``, ``identity``,
``client_context``) and ``get_remaining_time_in_millis()``, which counts
down to the function's timeout on the queue's clock: on a ManualClock it
moves only when the test moves time.
"""

from __future__ import annotations

import uuid

from sqsqueue._clock import Clock

__all__ = ["LambdaContext"]


class LambdaContext:
    """One invocation's context (``deadline`` in the clock's epoch seconds)."""

    function_version = "$LATEST"
    identity = None
    client_context = None

    def __init__(
        self,
        *,
        function_name: str,
        region: str,
        account_id: str,
        memory_limit_in_mb: int,
        clock: Clock,
        deadline: float,
        request_id: str | None = None,
    ) -> None:
        self.function_name = function_name
        self.invoked_function_arn = f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"
        self.memory_limit_in_mb = memory_limit_in_mb
        self.aws_request_id = request_id if request_id is not None else str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = f"sqsqueue/[$LATEST]{self.aws_request_id.replace('-', '')}"
        self._clock = clock
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds until the function's timeout, on the queue's clock (>= 0)."""
        return max(0, int((self._deadline - self._clock.now()) * 1000))

    def __repr__(self) -> str:
        return f"LambdaContext({self.function_name!r}, request {self.aws_request_id})"
