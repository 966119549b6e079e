"""The public :class:`EventSourceMapping` and :func:`resolve_handler`
(re-exported by :mod:`sqsqueue.awslambda`), and the registry that refuses a
second mapping of one queue to one function, as Lambda does.

AWS refuses CreateEventSourceMapping for a queue and function that already
have a mapping: ``ResourceConflictException`` (409), "An event source
mapping with SQS arn (" <arn> ") and function (" <name> ") already exists.
Please update or delete the existing mapping with UUID <uuid>" (recorded:
LocalStack's AWS-validated ``test_duplicate_event_source_mappings``,
2025-11-25). In process, "the same function" is the ``function_name`` the
mapping is given, or, without one, the same handler (the same callable, or
the same ``module:function`` name); "the same queue" is the same queue object
(a registry per queue, so per broker), or for a queue URL the same ARN at the
same endpoint (a registry per process). An entry is held from construction
until the mapping stops (:meth:`EventSourceMapping.stop`), is deleted
(:meth:`EventSourceMapping.delete`) or is garbage collected; a stopped mapping
takes its entry back when it runs again, if no other mapping took it.
Cost: O(1) per claim and release, under one lock.
"""

from __future__ import annotations

import pkgutil
import threading
import uuid
import weakref
from typing import Any

from sqsqueue._clock import Clock
from sqsqueue._fifo import FifoQueue
from sqsqueue._standard import Queue
from sqsqueue.awslambda._poller import Handler, Invocation, Poller
from sqsqueue.awslambda._settings import (
    InvalidParameterValueException,
    ResourceConflictException,
    Settings,
    ValidationException,
    describe,
    settings,
)
from sqsqueue.awslambda._sources import BotoSource, QueueSource, Source
from sqsqueue.errors import QueueDoesNotExist

__all__ = ["EventSourceMapping", "resolve_handler"]

_Entries = dict[object, "weakref.ref[EventSourceMapping]"]
_registry_lock = threading.Lock()
#: In-process queues: queue -> {function key: mapping}.
_by_queue: weakref.WeakKeyDictionary[Queue | FifoQueue, _Entries] = weakref.WeakKeyDictionary()
#: Queue URLs: (endpoint URL, queue ARN) -> {function key: mapping}.
_by_url: dict[tuple[str | None, str], _Entries] = {}


def no_such_queue() -> InvalidParameterValueException:
    """What CreateEventSourceMapping answers for a queue that does not exist
    (recorded: LocalStack's AWS-validated test_esm_with_not_existing_sqs_queue,
    2025-11-25: InvalidParameterValueException, HTTP 400, this text)."""
    return InvalidParameterValueException(
        "Error occurred while ReceiveMessage. SQS Error Code: "
        "AWS.SimpleQueueService.NonExistentQueue. SQS Error Message: The specified queue "
        "does not exist."
    )


def _entries(mapping: EventSourceMapping) -> _Entries:
    """The registry of ``mapping``'s queue (call under ``_registry_lock``)."""
    scope = mapping._scope
    if isinstance(scope, (Queue, FifoQueue)):
        return _by_queue.setdefault(scope, {})
    return _by_url.setdefault(scope, {})


def _claim(mapping: EventSourceMapping) -> None:
    """Hold ``mapping``'s entry, or raise Lambda's ResourceConflictException
    when a live mapping of the same queue and function holds it."""
    with _registry_lock:
        entries = _entries(mapping)
        held = entries.get(mapping._function_key)
        other = held() if held is not None else None
        if other is not None and other is not mapping:
            raise ResourceConflictException(
                f'An event source mapping with SQS arn (" {mapping.event_source_arn} ") and '
                f'function (" {mapping._function_label} ") already exists. Please update or '
                f"delete the existing mapping with UUID {other.uuid}"
            )
        entries[mapping._function_key] = weakref.ref(mapping)


def _release(mapping: EventSourceMapping) -> None:
    """Give ``mapping``'s entry up (nothing if another holds it)."""
    with _registry_lock:
        entries = _entries(mapping)
        held = entries.get(mapping._function_key)
        if held is not None and held() in (mapping, None):
            del entries[mapping._function_key]


def resolve_handler(handler: object) -> Handler:
    """A callable ``(event, context)``, or the function a handler name names:
    ``"module:function"`` or Lambda's ``"module.function"``.

    The name is the caller's configuration (as Lambda's ``Handler`` setting),
    never message data; the module is imported by ``pkgutil.resolve_name``.
    """
    if callable(handler):
        return handler
    if not isinstance(handler, str) or not handler.strip():
        raise InvalidParameterValueException(
            f"The handler must be a callable or a 'module:function' name, not {handler!r}"
        )
    try:
        found = pkgutil.resolve_name(handler)
    except (ImportError, AttributeError, ValueError) as exc:
        # Lambda's runtime reports this at invocation as Runtime.ImportModuleError;
        # refusing at once is friendlier and changes nothing else.
        raise InvalidParameterValueException(
            f"Unable to import module or find handler {handler!r}: {exc}"
        ) from exc
    if not callable(found):
        raise InvalidParameterValueException(f"Handler {handler!r} is not callable")
    return found  # type: ignore[no-any-return]


class EventSourceMapping:
    """AWS Lambda's SQS event source mapping, in front of a Python handler.

    ``queue`` is an in-process :class:`~sqsqueue.Queue` or
    :class:`~sqsqueue.FifoQueue`, or a queue URL, with ``client=`` a boto3
    SQS client (a served sqsqueue broker, or AWS). ``handler`` is a callable
    ``(event, context)`` or a ``"module:function"`` name. The settings are
    CreateEventSourceMapping's, in snake case, validated with AWS's ranges
    and messages (:mod:`sqsqueue.awslambda._settings`):

    ``batch_size`` (1-10,000, FIFO 1-10; default 10; above 10 needs a
    window), ``maximum_batching_window_in_seconds`` (0-300; not FIFO),
    ``function_response_types`` (``["ReportBatchItemFailures"]``),
    ``scaling_config`` (``{"MaximumConcurrency": 2..1000}``),
    ``filter_criteria`` (``{"Filters": [{"Pattern": "..."}]}``, up to 5),
    ``enabled``; and the function's own: ``function_timeout`` (seconds, 1-900,
    default 3; not above the queue's visibility timeout), ``function_name``,
    ``memory_size``.

    ``ramp_up=True`` adds AWS's scale-up (5 concurrent batches, then up to
    300 more a minute); ``keep_invocations`` bounds :attr:`invocations`
    (a long-running worker should set it). ``clock`` is for URL mode only
    (the clock a queue URL's deadlines run on; default real time).
    """

    def __init__(
        self,
        queue: Queue | FifoQueue | str,
        handler: object,
        *,
        client: Any = None,
        clock: Clock | None = None,
        ramp_up: bool = False,
        keep_invocations: int | None = None,
        **settings_: Any,
    ) -> None:
        source: Source
        if isinstance(queue, (Queue, FifoQueue)):
            if client is not None or clock is not None:
                raise TypeError("client= and clock= are for a queue URL; a queue has its own")
            source = QueueSource(queue)
        elif isinstance(queue, str):
            if client is None:
                raise TypeError("a queue URL needs client=: a boto3 SQS client")
            try:
                source = BotoSource(client, queue, clock)
            except QueueDoesNotExist:
                raise no_such_queue() from None
        else:
            raise TypeError(f"queue must be a Queue, a FifoQueue or a queue URL, not {queue!r}")
        if keep_invocations is not None and (
            isinstance(keep_invocations, bool)
            or not isinstance(keep_invocations, int)
            or keep_invocations < 0
        ):
            raise ValueError(
                f"keep_invocations must be None or an int >= 0, not {keep_invocations!r}"
            )
        try:
            visibility = source.visibility_timeout()
        except QueueDoesNotExist:  # a queue deleted from its broker
            raise no_such_queue() from None
        valid = settings(fifo=source.fifo, visibility_timeout=visibility, **settings_)
        function = resolve_handler(handler)
        self._poller = Poller(
            source,
            function,
            valid,
            ramp_up=bool(ramp_up),
            keep_invocations=keep_invocations,
        )
        #: The mapping's id, as Lambda's UUID (named in a conflict's message).
        self.uuid = str(uuid.uuid4())
        self._scope: Queue | FifoQueue | tuple[str | None, str] = (
            queue
            if isinstance(queue, (Queue, FifoQueue))
            else (getattr(getattr(client, "meta", None), "endpoint_url", None), source.arn)
        )
        if "function_name" in settings_:
            self._function_key: object = ("function_name", valid.function_name)
            self._function_label = valid.function_name
        else:
            self._function_key = ("handler", function)
            self._function_label = getattr(function, "__qualname__", repr(function))
        _claim(self)

    def __repr__(self) -> str:
        return f"EventSourceMapping({self.event_source_arn!r}, {describe(self.settings)})"

    @property
    def settings(self) -> Settings:
        """The validated settings."""
        return self._poller.settings

    @property
    def event_source_arn(self) -> str:
        """The queue's ARN (each record's ``eventSourceARN``)."""
        return self._poller.source.arn

    @property
    def invocations(self) -> list[Invocation]:
        """Every invocation so far (the last ``keep_invocations`` if set), oldest first."""
        return list(self._poller.invocations)

    @property
    def filtered(self) -> list[str]:
        """Ids of messages deleted without an invocation because no filter matched."""
        return list(self._poller.filtered)

    @property
    def enabled(self) -> bool:
        """Whether the mapping polls (UpdateEventSourceMapping's ``Enabled``)."""
        return self._poller.enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise ValidationException(
                f"Invalid type for parameter Enabled, value: {value!r}, type: {type(value)}, "
                "valid types: <class 'bool'>"
            )
        self._poller.enabled = value

    def run_until_idle(self, *, max_invocations: int | None = None) -> list[Invocation]:
        """Poll and invoke until nothing is receivable and nothing in flight or
        delayed will come back; the invocations made.

        On a ManualClock the clock is moved (never slept) to each moment a
        message becomes receivable, the batching window included, so a test
        runs in microseconds and always the same way. On a real clock (or a
        queue URL) it waits for those moments. ``max_invocations`` stops
        early (a handler that always fails on a queue without a dead-letter
        queue would otherwise run until retention ends).
        """
        if self.running:
            raise RuntimeError("the mapping runs in the background: stop() it first")
        if max_invocations is not None and (
            isinstance(max_invocations, bool)
            or not isinstance(max_invocations, int)
            or max_invocations < 1
        ):
            raise ValueError(
                f"max_invocations must be None or an int >= 1, not {max_invocations!r}"
            )
        _claim(self)
        return self._poller.run_until_idle(max_invocations)

    def start(self) -> None:
        """Run in the background, on real time: a poller thread and up to the
        concurrency of invocation threads. A mapping stopped before takes its
        queue and function back (ResourceConflictException if another has)."""
        _claim(self)
        self._poller.start()

    def stop(self) -> None:
        """Stop polling and return once the invocations in flight finish; the
        queue and function are free for another mapping."""
        self._poller.stop()
        _release(self)

    def delete(self) -> None:
        """Lambda's DeleteEventSourceMapping: stop if running, and free the queue
        and function for another mapping."""
        if self.running:
            self._poller.stop()
        _release(self)

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._poller.running

    def __enter__(self) -> EventSourceMapping:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
