"""The Broker: one account's queues in one region, as SQS sees them.

A :class:`Broker` owns the queue namespace (names, URLs, ARNs), hands messages
between queues through redrive policies and message move tasks, and applies
the account-level rules of ``docs/aws-behaviour.md`` §§2, 3, 5, 10 and 11:
idempotent CreateQueue, the 60-second re-create window, ListQueues paging,
ListDeadLetterSourceQueues, move tasks.

All queues of a broker share one re-entrant lock, so a dead-letter move from
one queue into another is atomic and lock order can never deadlock. Move
tasks, like every other deadline, advance lazily: each operation on any queue
of the broker first moves what the task's rate allows by ``now``. No threads.
"""

from __future__ import annotations

import base64
import binascii
import json
import random as _random
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

import attrs
from sortedcontainers import SortedDict

from sqsqueue import _attributes, _validate
from sqsqueue import _limits as L
from sqsqueue._admin import validate_tags
from sqsqueue._clock import Clock, SystemClock
from sqsqueue._faults import Faults
from sqsqueue._fifo import FifoQueue
from sqsqueue._lifecycle import _attribute_map, _BaseQueue, _draft, _uuid4
from sqsqueue._standard import Queue
from sqsqueue._validate import show
from sqsqueue.errors import (
    InvalidParameterValue,
    QueueDeletedRecently,
    QueueDoesNotExist,
    QueueNameExists,
    ResourceNotFoundException,
    ServiceUnavailable,
)

if TYPE_CHECKING:
    from sqsqueue._client import Client
    from sqsqueue.server import EndpointHandle

__all__ = ["Broker", "ListQueuesResult", "MoveTask"]

US = L.US
#: The type of a broker's clock, so ``broker.clock.advance(5)`` type-checks
#: for a ``Broker(clock=ManualClock())``.
C = TypeVar("C", bound=Clock)
_ARN = re.compile(r"arn:aws[a-zA-Z-]*:sqs:([a-z0-9-]+):([0-9]{12}):(.+)")
_ACCOUNT = re.compile(r"[0-9]{12}")
MOVE_TASK_RATE_MAX = 500
MOVE_TASKS_LISTED_MAX = 10
ACTIVE_MOVE_TASKS_MAX = 100


@attrs.frozen
class ListQueuesResult:
    """A page of queue URLs; ``next_token`` is set when more remain."""

    queue_urls: tuple[str, ...]
    next_token: str | None = None


@attrs.define
class MoveTask:
    """A message move task (section 11), as ListMessageMoveTasks reports it."""

    task_id: str
    source_arn: str
    destination_arn: str | None
    max_number_of_messages_per_second: int | None
    started: int  # microseconds
    to_move: int
    moved: int = 0
    status: str = "RUNNING"
    failure_reason: str | None = None

    def next_move(self, now: int) -> int:
        """When the task may take its next step: at once (``now``) without a
        rate; with one, the first moment at which ``rate * elapsed`` reaches
        ``moved + 1`` (section 11: at most ``rate`` messages per second)."""
        rate = self.max_number_of_messages_per_second
        if rate is None:
            return now
        return self.started + -(-(self.moved + 1) * US // rate)

    @property
    def task_handle(self) -> str:
        """base64 of ``{"taskId": ..., "sourceArn": ...}`` (AWS-obs, section 11)."""
        raw = json.dumps({"taskId": self.task_id, "sourceArn": self.source_arn})
        return base64.b64encode(raw.encode()).decode()

    def to_aws(self) -> dict[str, object]:
        """The ListMessageMoveTasksResultEntry shape."""
        out: dict[str, object] = {"Status": self.status, "SourceArn": self.source_arn}
        if self.status == "RUNNING":
            out["TaskHandle"] = self.task_handle
        if self.destination_arn is not None:
            out["DestinationArn"] = self.destination_arn
        if self.max_number_of_messages_per_second is not None:
            out["MaxNumberOfMessagesPerSecond"] = self.max_number_of_messages_per_second
        out["ApproximateNumberOfMessagesMoved"] = self.moved
        out["ApproximateNumberOfMessagesToMove"] = self.to_move
        if self.failure_reason is not None:
            out["FailureReason"] = self.failure_reason
        out["StartedTimestamp"] = self.started // 1000
        return out


class Broker(Generic[C]):
    """Queues of one AWS account in one region.

    Generic over its clock: ``Broker(clock=ManualClock())`` is a
    ``Broker[ManualClock]``, ``Broker()`` a ``Broker[SystemClock]`` (annotate
    with ``Broker[Any]`` where any clock will do).

    >>> from sqsqueue import ManualClock
    >>> broker = Broker(clock=ManualClock(start=1_700_000_000.0), account_id="123456789012")
    >>> q = broker.create_queue("jobs", visibility_timeout=60)
    >>> q.url
    'https://sqs.us-east-1.amazonaws.com/123456789012/jobs'
    >>> broker.get_queue(q.url) is q
    True
    """

    @overload
    def __init__(
        self: Broker[SystemClock],
        *,
        clock: None = None,
        region: str = ...,
        account_id: str = ...,
        random: _random.Random | None = ...,
        faults: Faults | None = ...,
        keep_history: bool = ...,
    ) -> None: ...

    @overload
    def __init__(
        self,
        *,
        clock: C,
        region: str = ...,
        account_id: str = ...,
        random: _random.Random | None = ...,
        faults: Faults | None = ...,
        keep_history: bool = ...,
    ) -> None: ...

    def __init__(
        self,
        *,
        clock: C | None = None,
        region: str = "us-east-1",
        account_id: str = "000000000000",
        random: _random.Random | None = None,
        faults: Faults | None = None,
        keep_history: bool = False,
    ) -> None:
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidParameterValue(
                f"Value {show(clock)} for parameter clock is invalid. Reason: must be a Clock."
            )
        if not isinstance(account_id, str) or not _ACCOUNT.fullmatch(account_id):
            raise InvalidParameterValue(
                f"Value {show(account_id)} for parameter account_id is invalid. Reason: an AWS "
                "account id is 12 digits."
            )
        if not isinstance(region, str) or not re.fullmatch(r"[a-z0-9-]{1,32}", region):
            raise InvalidParameterValue(f"Value {show(region)} for parameter region is invalid.")
        if random is not None and not isinstance(random, _random.Random):
            raise InvalidParameterValue(
                f"Value {show(random)} for parameter random is invalid. Reason: must be a "
                "random.Random."
            )
        if faults is not None and not isinstance(faults, Faults):
            raise InvalidParameterValue(
                f"Value {show(faults)} for parameter faults is invalid. Reason: must be a Faults."
            )
        #: The clock every queue of this broker runs on.
        self.clock: C = clock if clock is not None else SystemClock()  # type: ignore[assignment]
        self.region = region
        self.account_id = account_id
        self._random = random
        self._rng = random if random is not None else _random.Random()
        self._lock = threading.RLock()
        self._queues: SortedDict = SortedDict()  # name -> queue
        self._deleted_at: dict[str, int] = {}
        self._tasks: dict[str, list[MoveTask]] = {}  # source arn -> tasks, oldest first
        self._running: list[MoveTask] = []
        self._driving = False
        self._closed = False
        #: Faults given to every standard queue this broker creates.
        self.faults = faults
        #: Whether queues this broker creates record message histories.
        self.keep_history = keep_history

    def __repr__(self) -> str:
        return f"Broker(region={self.region!r}, account_id={self.account_id!r})"

    def _now_us(self) -> int:
        return round(self.clock.now() * US)

    # -- shutdown -------------------------------------------------------------------

    def close(self) -> None:
        """Close the broker and every queue in it: blocked long polls return
        ``[]`` at once, and later calls (on the broker or any of its queues)
        raise :class:`~sqsqueue.errors.ServiceUnavailable` instead of blocking.
        Idempotent; safe from any thread. O(q + w) for q queues and w polls.
        """
        with self._lock:
            self._closed = True
            queues = list(self._queues.values())
        for queue in queues:
            queue.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ServiceUnavailable("The broker is closed.")

    # -- naming -------------------------------------------------------------------

    def _by_arn(self, arn: str) -> _BaseQueue | None:
        match = _ARN.fullmatch(arn) if isinstance(arn, str) else None
        if match is None:
            return None
        region, account, name = match.groups()
        if region != self.region or account != self.account_id:
            return None
        queue: _BaseQueue | None = self._queues.get(name)
        return queue

    def _name_from(self, ref: object) -> str:
        """The queue name in a URL, ARN or bare name."""
        if not isinstance(ref, str) or not ref:
            raise QueueDoesNotExist()
        match = _ARN.fullmatch(ref)
        if match:
            region, account, name = match.groups()
            if region != self.region or account != self.account_id:
                raise QueueDoesNotExist()
            return name
        if "/" in ref:
            parts = ref.rstrip("/").split("/")
            if len(parts) < 2 or parts[-2] != self.account_id:
                raise QueueDoesNotExist()
            return parts[-1]
        return ref  # a bare name (accepted by AWS, section 2.1; UNCONFIRMED)

    def get_queue(self, ref: str) -> Queue | FifoQueue:
        """The queue named by a URL, an ARN or a name. O(log q)."""
        self._check_open()
        name = self._name_from(ref)
        with self._lock:
            queue = self._queues.get(name)
            if queue is None:
                raise QueueDoesNotExist()
            self._drive(self._now_us())
            assert isinstance(queue, Queue | FifoQueue)
            return queue

    queue_for_url = get_queue

    def get_queue_url(
        self,
        name: str,
        *,
        queue_owner_account_id: str | None = None,
        principal: str | None = None,
    ) -> str:
        """GetQueueUrl. A queue of another account does not exist here. O(log q)."""
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", name):
            raise QueueDoesNotExist()
        if queue_owner_account_id is not None and queue_owner_account_id != self.account_id:
            raise QueueDoesNotExist()
        queue = self.get_queue(name)
        queue._authorize(principal, "GetQueueUrl")
        return queue.url

    # -- create and delete ----------------------------------------------------------

    def create_queue(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = None,
        tags: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Queue | FifoQueue:
        """CreateQueue: a :class:`Queue`, or a :class:`FifoQueue` when
        ``fifo_queue=True`` (or ``FifoQueue: "true"``) and the name ends ``.fifo``.

        Idempotent: with a name in use, returns the existing queue if every
        attribute given equals its current value, else raises QueueNameExists
        naming the first that differs (section 2.1). A name deleted less than 60
        seconds ago raises QueueDeletedRecently. O(log q).
        """
        requested: dict[str, object] = _attribute_map(attributes)
        for key, value in kwargs.items():
            if value is not None:
                requested[key] = value
        fifo_raw = None
        for key in ("FifoQueue", "fifo_queue"):
            if key in requested:
                fifo_raw = requested[key]
        fifo = (
            fifo_raw is not None
            and _attributes.ATTRIBUTES["FifoQueue"].parse("FifoQueue", fifo_raw) is True
        )
        if fifo:
            # FifoQueue=false stays in the request: a standard queue refuses it
            # with AWS's "Unknown Attribute FifoQueue." (section 2.1).
            requested = {k: v for k, v in requested.items() if k not in ("FifoQueue", "fifo_queue")}
        clean_tags = validate_tags(tags) if tags is not None else {}
        _validate.queue_name(name, fifo=fifo)
        with self._lock:
            self._check_open()
            now = self._now_us()
            self._drive(now)
            existing = self._queues.get(name)
            if existing is not None:
                self._check_same(existing, requested, fifo, fifo_raw is not None)
                assert isinstance(existing, Queue | FifoQueue)
                return existing
            deleted = self._deleted_at.get(name)
            if deleted is not None and now < deleted + L.RECREATE_INTERVAL * US:
                raise QueueDeletedRecently()
            cls: type[Queue] | type[FifoQueue] = FifoQueue if fifo else Queue
            queue = cls(
                name,
                clock=self.clock,
                attributes=requested,
                random=self._random,
                region=self.region,
                account_id=self.account_id,
                _lock=self._lock,
                _resolver=self._by_arn,
            )
            queue._tick = self._drive
            queue._next_tick = self._next_move
            queue.keep_history = self.keep_history
            if isinstance(queue, Queue) and self.faults is not None:
                queue.faults = self.faults
            if clean_tags:
                queue._set_tags(clean_tags)
            self._queues[name] = queue
            self._deleted_at.pop(name, None)
            return queue

    def _check_same(
        self, queue: _BaseQueue, requested: dict[str, object], fifo: bool, fifo_given: bool
    ) -> None:
        if fifo_given and fifo != queue.FIFO:
            raise QueueNameExists(
                "A queue already exists with the same name and a different value for "
                "attribute FifoQueue"
            )
        parsed = _attributes.parse(requested, fifo=queue.FIFO, creating=True, current=queue._values)
        for attr_name, value in parsed.items():
            if queue._values.get(attr_name) != value:
                raise QueueNameExists(
                    "A queue already exists with the same name and a different value "
                    f"for attribute {attr_name}"
                )

    def delete_queue(self, ref: str, *, principal: str | None = None) -> None:
        """DeleteQueue: the queue and its messages go at once; the name can be
        reused after 60 seconds. Old references raise QueueDoesNotExist. O(log q).
        """
        queue = self.get_queue(ref)
        queue._authorize(principal, "DeleteQueue")
        with self._lock:
            now = self._now_us()
            del self._queues[queue.name]
            self._deleted_at[queue.name] = now
            queue._deleted = True
            queue._reset_messages()
            queue._notify()

    # -- listing --------------------------------------------------------------------

    def list_queues(
        self,
        prefix: str | None = None,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
    ) -> ListQueuesResult:
        """ListQueues: URLs in name order, optionally by prefix (case-sensitive).

        Without ``max_results`` at most 1,000 URLs and no token; with it, a page
        of 1..1000 and a ``next_token`` when more remain (section 2.1).
        O(log q + page).
        """
        if prefix is not None and not isinstance(prefix, str):
            raise InvalidParameterValue(
                f"Value {show(prefix)} for parameter QueueNamePrefix is invalid. "
                "Reason: must be a string."
            )
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            if next_token is not None:
                after = _decode_token(next_token)
                names = self._queues.irange(minimum=after, inclusive=(False, True))
            else:
                names = self._queues.irange(minimum=prefix or None)
            return _page(names, prefix, max_results, lambda n: self._queues[n].url)

    def list_dead_letter_source_queues(
        self,
        ref: str,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
        principal: str | None = None,
    ) -> ListQueuesResult:
        """ListDeadLetterSourceQueues: queues whose RedrivePolicy targets ``ref``.

        O(q) in the number of queues (never in messages).
        """
        target = self.get_queue(ref)
        target._authorize(principal, "ListDeadLetterSourceQueues")
        with self._lock:
            sources = self._sources_of(target.arn)
            start = _decode_token(next_token) if next_token is not None else None
            names = (n for n in sources if start is None or n > start)
            return _page(names, None, max_results, lambda n: self._queues[n].url)

    def _sources_of(self, arn: str) -> list[str]:
        out = []
        for name, queue in self._queues.items():
            policy = queue._values.get("RedrivePolicy")
            if isinstance(policy, dict) and policy["deadLetterTargetArn"] == arn:
                out.append(name)
        return out

    # -- tags and permissions (delegated to the queue) -------------------------------

    def tag_queue(self, ref: str, tags: Mapping[str, str], *, principal: str | None = None) -> None:
        """TagQueue."""
        self.get_queue(ref).tag(tags, principal=principal)

    def untag_queue(self, ref: str, keys: list[str], *, principal: str | None = None) -> None:
        """UntagQueue."""
        self.get_queue(ref).untag(keys, principal=principal)

    def list_queue_tags(self, ref: str, *, principal: str | None = None) -> dict[str, str]:
        """ListQueueTags."""
        return self.get_queue(ref).list_tags(principal=principal)

    def add_permission(
        self,
        ref: str,
        label: str,
        account_ids: list[str],
        actions: list[str],
        *,
        principal: str | None = None,
    ) -> None:
        """AddPermission."""
        self.get_queue(ref).add_permission(label, account_ids, actions, principal=principal)

    def remove_permission(self, ref: str, label: str, *, principal: str | None = None) -> None:
        """RemovePermission."""
        self.get_queue(ref).remove_permission(label, principal=principal)

    # -- message move tasks (section 11) ---------------------------------------------

    def start_message_move_task(
        self,
        source_arn: str,
        *,
        destination_arn: str | None = None,
        max_number_of_messages_per_second: int | None = None,
    ) -> str:
        """StartMessageMoveTask: move a DLQ's messages back to their source
        queues (or to ``destination_arn``), optionally at most ``rate`` per second
        of the broker's clock. Returns the task handle.

        Moved messages are new messages: new id, new enqueue time. O(log q);
        the moving itself happens lazily, O(k log n) for k messages moved.
        """
        with self._lock:
            self._check_open()
            now = self._now_us()
            self._drive(now)
            source = self._by_arn(source_arn)
            if source is None:
                raise ResourceNotFoundException(
                    "The resource that you specified for the SourceArn parameter doesn't exist."
                )
            if not self._sources_of(source.arn):
                raise InvalidParameterValue(
                    "Source queue must be configured as a Dead Letter Queue."
                )
            if destination_arn is not None:
                destination = self._by_arn(destination_arn)
                if destination is None:
                    raise ResourceNotFoundException(
                        "The resource that you specified for the DestinationArn parameter "
                        "doesn't exist."
                    )
                if source.FIFO and not destination.FIFO:
                    raise InvalidParameterValue(
                        "The destination queue of a FIFO dead-letter queue redrive must be "
                        "a FIFO queue."
                    )
                if destination is source:
                    # Moving a queue into itself never ends (an unlimited task
                    # would loop forever under the lock). Text UNCONFIRMED.
                    raise InvalidParameterValue(
                        "Value for parameter DestinationArn is invalid. Reason: The source "
                        "and destination queues must be different."
                    )
            rate = max_number_of_messages_per_second
            if rate is not None:
                rate = _validate.integer(
                    "MaxNumberOfMessagesPerSecond",
                    rate,
                    1,
                    MOVE_TASK_RATE_MAX,
                    "Must be between 1 and 500.",
                )
            if any(t.source_arn == source.arn for t in self._running):
                raise InvalidParameterValue(
                    "There is already a task running. Only one active task is allowed for a "
                    "source queue arn at a given time."
                )
            if len(self._running) >= ACTIVE_MOVE_TASKS_MAX:
                raise InvalidParameterValue(
                    "You have reached the maximum of 100 active message move tasks."
                )
            source._advance(now)  # expired messages are neither counted nor moved
            visible, _, _ = source._counts(now)
            task = MoveTask(_uuid4(self._rng), source.arn, destination_arn, rate, now, visible)
            self._tasks.setdefault(source.arn, []).append(task)
            self._running.append(task)
            self._drive(now)
            return task.task_handle

    def list_message_move_tasks(
        self, source_arn: str, *, max_results: int | None = None
    ) -> list[dict[str, object]]:
        """ListMessageMoveTasks: the most recent tasks first, 1..10 (default 1)."""
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            if self._by_arn(source_arn) is None:
                raise ResourceNotFoundException(
                    "The resource that you specified for the SourceArn parameter doesn't exist."
                )
            limit = (
                1
                if max_results is None
                else _validate.integer(
                    "MaxResults", max_results, 1, MOVE_TASKS_LISTED_MAX, "Must be between 1 and 10."
                )
            )
            tasks = self._tasks.get(source_arn, [])
            return [t.to_aws() for t in reversed(tasks[-limit:])]

    def cancel_message_move_task(self, task_handle: str) -> int:
        """CancelMessageMoveTask: stop a running task; moved messages stay moved.
        Returns the number of messages moved."""
        try:
            decoded = json.loads(base64.b64decode(task_handle, validate=True))
            task_id, source_arn = decoded["taskId"], decoded["sourceArn"]
            if not isinstance(task_id, str) or not isinstance(source_arn, str):
                raise TypeError
        except (ValueError, TypeError, KeyError, binascii.Error, RecursionError):
            # (UnicodeDecodeError is a ValueError; RecursionError: nested JSON.)
            raise InvalidParameterValue("Value for parameter TaskHandle is invalid.") from None
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            if self._by_arn(source_arn) is None:
                raise ResourceNotFoundException(
                    "The resource that you specified for the SourceArn parameter doesn't exist."
                )
            for task in self._tasks.get(source_arn, []):
                if task.task_id == task_id:
                    if task.status != "RUNNING":
                        # Cancel only while RUNNING (section 11); text UNCONFIRMED.
                        raise InvalidParameterValue("Only active tasks can be cancelled.")
                    task.status = "CANCELLED"
                    self._running.remove(task)
                    return task.moved
            raise ResourceNotFoundException("Task does not exist.")

    def _drive(self, now: int) -> None:
        """Advance every running move task to ``now`` (called by every operation)."""
        if not self._running or self._driving:
            return
        self._driving = True
        try:
            # One step at a time, earliest moment first across all tasks, so that
            # a task's progress depends only on virtual time, never on when an
            # operation happens to look.
            while self._running:
                task = min(self._running, key=lambda t: t.next_move(now))
                if task.next_move(now) > now:
                    break
                self._drive_task(task, now)
        finally:
            self._driving = False

    def _next_move(self, now: int) -> int | None:
        """The next moment after ``now`` a running task acts: a long poll on any
        queue of the broker wakes then (a moved message may arrive)."""
        moves = [t.next_move(now) for t in self._running]
        return min((t for t in moves if t > now), default=None)

    def _drive_task(self, task: MoveTask, now: int) -> None:
        """One step of ``task``, at the moment it may take it (``next_move``):
        move the message of its source that is receivable first then, or, with
        none, complete. Moved messages are new messages enqueued at that moment."""
        source = self._by_arn(task.source_arn)
        if source is None:
            self._finish(task, "FAILED", "AWS.SimpleQueueService.NonExistentQueue")
            return
        at = task.next_move(now)
        # Retention first, as of that moment: a message that expired in the DLQ
        # must not be redriven back to life (section 10). Re-entry is guarded.
        source._advance(at)
        deliver, _ = source._select(at, 1, 0)
        if not deliver:
            self._finish(task, "COMPLETED")
            return
        rec = deliver[0]
        target_arn = task.destination_arn or rec.dlq_source_arn
        target = self._by_arn(target_arn) if target_arn else None
        if target is None:
            self._finish(task, "FAILED", "AWS.SimpleQueueService.NonExistentQueue")
            return
        group_id, dedup_id = rec.group_id, rec.dedup_id if target.FIFO else None
        if target.FIFO:
            # A standard message moved into a FIFO queue: its id stands in.
            group_id = rec.message_id if group_id is None else group_id
            dedup_id = rec.message_id if dedup_id is None else dedup_id
        draft = _draft(
            rec.body,
            rec.size,
            rec.attributes,
            rec.attributes_md5,
            rec.trace_header,
            group_id,
            dedup_id,
        )
        result = target._commit(draft, None, at, rec.sender_id)
        source._drop(rec, "moved", at, to=target.arn, new_message_id=result.message_id)
        target._notify()
        task.moved += 1
        if (
            task.max_number_of_messages_per_second is not None
            and task.moved >= task.to_move
            and not source._select(at, 1, 0)[0]
        ):
            self._finish(task, "COMPLETED")

    def _finish(self, task: MoveTask, status: str, reason: str | None = None) -> None:
        task.status = status
        task.failure_reason = reason
        self._running.remove(task)

    def client(self, *, principal: str | None = None, endpoint_url: str | None = None) -> Client:
        """A boto3-shaped client over this broker that needs no boto3: same
        method names, parameters and response dicts, raising
        :mod:`sqsqueue.errors` exceptions. ``endpoint_url`` makes the queue
        URLs it answers with point at an HTTP endpoint serving this broker."""
        from sqsqueue._client import Client

        return Client(self, principal=principal, endpoint_url=endpoint_url)

    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> EndpointHandle:
        """Serve this broker as an SQS endpoint over HTTP from a background thread.

        Needs the ``sqsqueue[server]`` extra (uvicorn). Returns a handle with
        ``.endpoint_url`` (``http://127.0.0.1:<port>``; port 0 picks a free one)
        and ``.close()``, usable as a context manager; the process keeps using
        the broker natively meanwhile. ``credentials`` (``{access_key_id:
        secret}``) turns on Signature V4 verification; a non-loopback ``host``
        is refused without them unless ``allow_anonymous=True``. Other options
        are those of :func:`sqsqueue.server.serve`. Starting costs one thread
        and one listening socket; each request costs what its operation costs.
        """
        from sqsqueue.server import serve

        return serve(self, host=host, port=port, credentials=credentials, **options)

    def __contains__(self, ref: object) -> bool:
        try:
            name = self._name_from(ref)
        except QueueDoesNotExist:
            return False
        with self._lock:
            return name in self._queues

    def __iter__(self) -> Any:
        with self._lock:
            return iter(list(self._queues.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._queues)


def _decode_token(token: object) -> str:
    # No asserts here: ``python -O`` strips them, and this is input validation.
    try:
        if not isinstance(token, str):
            raise TypeError
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        after = decoded["after"]
        if not isinstance(after, str):
            raise TypeError
        return after
    except (ValueError, KeyError, TypeError, binascii.Error, RecursionError):
        raise InvalidParameterValue("Invalid NextToken value.") from None


def _encode_token(name: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": name}).encode()).decode()


def _page(names: Any, prefix: str | None, max_results: object, url: Any) -> ListQueuesResult:
    if max_results is not None:
        limit = _validate.integer(
            "MaxResults", max_results, 1, 1000, "MaxResults must be an integer between 1 and 1000."
        )
    else:
        limit = 1000
    urls: list[str] = []
    last = None
    more = False
    for name in names:
        if prefix and not name.startswith(prefix):
            break
        if len(urls) == limit:
            more = True
            break
        urls.append(url(name))
        last = name
    token = _encode_token(last) if more and max_results is not None and last else None
    return ListQueuesResult(tuple(urls), token)
