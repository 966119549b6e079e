"""Dead-letter queues and message move tasks: every redrive, in one module.

* **Redrive on receive** (``docs/aws-behaviour.md`` §§10-11): a receive that
  finds a message already received ``maxReceiveCount`` times moves it to the
  queue its ``RedrivePolicy`` names, instead of delivering it
  (:func:`redrive_target`, :func:`dead_letter`).
* **RedrivePolicy checks** when it is set (:func:`check_redrive_policy`).
* **Message move tasks** (§11): ``StartMessageMoveTask`` and friends, driven
  lazily by virtual time (:class:`MoveTasks`).

The narrow API this module uses on queues is :class:`Redrivable`: the
lifecycle's transitions (``_enqueue``, ``_drop``, ``_first_receivable``) and
the queue type's send rule (``_commit``). Queues are typed by that protocol,
so this module imports no queue class.
"""

from __future__ import annotations

import base64
import binascii
import json
import random as _random
import threading
from collections.abc import Callable, Mapping
from typing import ClassVar, Protocol

import attrs

from sqsqueue import _attributes, _validate
from sqsqueue._lifecycle import Ordering, uuid4
from sqsqueue._limits import ACTIVE_MOVE_TASKS_MAX, MOVE_TASK_RATE_MAX, MOVE_TASKS_LISTED_MAX, US
from sqsqueue._message import (
    R_BODY,
    R_ID,
    R_SENDER,
    R_SIZE,
    R_SKEY,
    X_ATTRS,
    X_ATTRS_MD5,
    X_BASE,
    X_DLQ_ARN,
    X_TRACE,
    SendResult,
    _Record,
    dedup_id_of,
    draft,
    extra_of,
    first_receive_of,
    group_id_of,
    key_at,
    key_time,
    receive_count_of,
    record_of,
)
from sqsqueue.errors import InvalidParameterValue, ResourceNotFoundException


class Redrivable(Protocol):
    """What dead-lettering and move tasks need of a queue."""

    FIFO: ClassVar[bool]
    _values: dict[str, object]
    _deleted: bool
    _ordering: Ordering

    @property
    def _resolver(self) -> Callable[[str], Redrivable | None]: ...

    @property
    def arn(self) -> str: ...

    def _counts(self, now: int) -> tuple[int, int, int]: ...

    def _advance(self, now: int) -> None: ...

    def _next_seq(self) -> int: ...

    def _enqueue(self, rec: _Record, event: str = "sent", at: int | None = None) -> None: ...

    def _drop(self, rec: _Record, reason: str, now: int, **detail: object) -> None: ...

    def _first_receivable(self, now: int) -> _Record | None: ...

    def _realized(self, rec: _Record) -> _Record: ...

    def _commit(self, rec: _Record, delay: int | None, now: int, sender_id: str) -> SendResult: ...

    def _notify(self) -> None: ...


# -- redrive on receive ---------------------------------------------------------------


def admits_source(target: Redrivable, source_arn: str) -> bool:
    """RedriveAllowPolicy: may ``source_arn`` use ``target`` as its DLQ?"""
    allow = target._values.get("RedriveAllowPolicy")
    if allow is None:
        return True  # allowAll is the default (section 5)
    assert isinstance(allow, dict)
    permission = allow["redrivePermission"]
    if permission == "allowAll":
        return True
    if permission == "denyAll":
        return False
    return source_arn in allow.get("sourceQueueArns", ())


def redrive_target(queue: Redrivable) -> Redrivable | None:
    """The queue that takes ``queue``'s dead letters now, if any.

    Resolved at each receive, so a DLQ deleted (or re-created) later is seen.
    If the DLQ is gone or its RedriveAllowPolicy no longer admits this queue,
    messages are delivered normally rather than lost (UNCONFIRMED: AWS does
    not document this case).
    """
    policy = queue._values.get("RedrivePolicy")
    if policy is None:
        return None
    assert isinstance(policy, dict)
    target = queue._resolver(policy["deadLetterTargetArn"])
    if target is None or target._deleted or target.FIFO != queue.FIFO or target is queue:
        # A queue may name itself as its DLQ: AWS accepts that RedrivePolicy
        # (docs/aws-behaviour.md §2.1, SetQueueAttributes). Moving a message
        # into the queue it is in would change nothing but its place, so it is
        # delivered normally (what AWS then does is UNCONFIRMED, §11).
        return None
    return target if admits_source(target, queue.arn) else None


def dead_letter(source: Redrivable, records: list[_Record], target: Redrivable, now: int) -> None:
    """Move ``records`` (chosen by a receive) from ``source`` to ``target``.
    O(k log n)."""
    for rec in records:
        source._drop(rec, "dead_lettered", now)
        _accept(target, source._realized(rec), source.arn, now)


def _accept(target: Redrivable, rec: _Record, source_arn: str, now: int) -> None:
    """Store in ``target`` a message dead-lettered from ``source_arn`` (§§9-11).

    Message id, body, attributes, trace header, sender and group id are
    kept, ApproximateReceiveCount continues, DeadLetterQueueSourceArn is
    added; the enqueue time is kept on standard queues (retention counts
    from the original send) and reset on FIFO queues, where the deduplication
    id becomes the message id and a new sequence number is given.
    """
    target._advance(now)
    seq = target._next_seq()
    ordering = target._ordering
    sent = key_time(rec[R_SKEY]) if ordering.KEEPS_ENQUEUE_TIME else now
    extra = extra_of(rec)
    dedup_id = dedup_id_of(rec)
    number = ordering.sequence_number(seq)
    if number is not None:
        # "the dedup id is replaced with the original MessageId" (section 9).
        dedup_id = rec[R_ID]
    new = record_of(
        key_at(sent, seq),
        key_at(now, seq),
        message_id=rec[R_ID],
        body=rec[R_BODY],
        size=rec[R_SIZE],
        attributes=extra[X_ATTRS],
        attributes_md5=extra[X_ATTRS_MD5],
        sender_id=rec[R_SENDER],
        trace_header=extra[X_TRACE],
        group_id=group_id_of(rec),
        dedup_id=dedup_id,
        sequence_number=number,
        dlq_source_arn=source_arn,
        receive_base=extra[X_BASE] + receive_count_of(rec),
        first_receive=first_receive_of(rec),
    )
    target._enqueue(new, "dead_letter_arrived", now)
    target._notify()


def check_redrive_policy(queue: Redrivable, update: Mapping[str, object]) -> None:
    """Cross-queue checks before an update applies: the DLQ must exist, be
    of the same type and admit this queue (section 5). Texts UNCONFIRMED."""
    policy = update.get("RedrivePolicy")
    if policy is None:
        return
    assert isinstance(policy, dict)
    text = _attributes.render("RedrivePolicy", policy)
    target = queue._resolver(policy["deadLetterTargetArn"])
    reason = None
    if target is None or target._deleted:
        reason = "Dead letter target does not exist."
    elif target.FIFO != queue.FIFO:
        reason = "Dead-letter queue must be the same type of queue as the source queue."
    elif not admits_source(target, queue.arn):
        reason = (
            f"Queue {queue.arn} is not allowed as a source by the dead-letter "
            "queue's RedriveAllowPolicy."
        )
    if reason:
        raise InvalidParameterValue(
            f"Value {text} for parameter RedrivePolicy is invalid. Reason: {reason}"
        )


# -- message move tasks ---------------------------------------------------------------


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


def parse_task_handle(task_handle: object) -> tuple[str, str]:
    """(task id, source ARN) of a TaskHandle, or AWS's error."""
    try:
        decoded = json.loads(base64.b64decode(task_handle, validate=True))  # type: ignore[arg-type]
        task_id, source_arn = decoded["taskId"], decoded["sourceArn"]
        if not isinstance(task_id, str) or not isinstance(source_arn, str):
            raise TypeError
    except (ValueError, TypeError, KeyError, binascii.Error, RecursionError):
        # (UnicodeDecodeError is a ValueError; RecursionError: nested JSON.)
        raise InvalidParameterValue("Value for parameter TaskHandle is invalid.") from None
    return task_id, source_arn


def _no_source() -> ResourceNotFoundException:
    return ResourceNotFoundException(
        "The resource that you specified for the SourceArn parameter doesn't exist."
    )


class MoveTasks:
    """A broker's message move tasks. Every method runs under the broker's lock.

    Tasks act lazily: every operation of the broker (and of its queues, through
    ``Lifecycle._tick``) first calls :meth:`drive` with ``now``, which takes each
    step at the moment the task's rate allows, earliest first across tasks, so
    progress depends only on virtual time, never on when an operation looks.
    """

    def __init__(
        self,
        lookup: Callable[[str], Redrivable | None],
        sources_of: Callable[[str], list[str]],
        rng: _random.Random,
        lock: threading.RLock,
        on_change: Callable[[list[MoveTask]], None] | None = None,
    ) -> None:
        self._lookup = lookup
        self._sources_of = sources_of
        self._rng = rng
        self._lock = lock
        #: Called with every task, oldest first, after any task changed (a
        #: durable broker writes them, ``_durable.py``).
        self._on_change = on_change
        self._tasks: dict[str, list[MoveTask]] = {}  # source arn -> tasks, oldest first
        self._running: list[MoveTask] = []
        self._all: list[MoveTask] = []  # every task, oldest first
        self._driving = False

    def restore(self, tasks: list[MoveTask]) -> None:
        """Take back the tasks a durable broker stored, oldest first."""
        for task in tasks:
            self._all.append(task)
            self._tasks.setdefault(task.source_arn, []).append(task)
            if task.status == "RUNNING":
                self._running.append(task)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._all)

    def start(
        self,
        now: int,
        source_arn: str,
        destination_arn: str | None,
        rate: object,
    ) -> str:
        """StartMessageMoveTask (see ``Broker.start_message_move_task``)."""
        source = self._lookup(source_arn)
        if source is None:
            raise _no_source()
        if not self._sources_of(source.arn):
            raise InvalidParameterValue("Source queue must be configured as a Dead Letter Queue.")
        if destination_arn is not None:
            destination = self._lookup(destination_arn)
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
        limit = None
        if rate is not None:
            limit = _validate.integer(
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
        task = MoveTask(uuid4(self._rng), source.arn, destination_arn, limit, now, visible)
        self._tasks.setdefault(source.arn, []).append(task)
        self._running.append(task)
        self._all.append(task)
        self._changed()
        self.drive(now)
        return task.task_handle

    def list(self, source_arn: str, max_results: object) -> list[dict[str, object]]:
        """ListMessageMoveTasks: the most recent tasks first, 1..10 (default 1)."""
        if self._lookup(source_arn) is None:
            raise _no_source()
        limit = (
            1
            if max_results is None
            else _validate.integer(
                "MaxResults", max_results, 1, MOVE_TASKS_LISTED_MAX, "Must be between 1 and 10."
            )
        )
        tasks = self._tasks.get(source_arn, [])
        return [t.to_aws() for t in reversed(tasks[-limit:])]

    def cancel(self, task_id: str, source_arn: str) -> int:
        """CancelMessageMoveTask; returns the number of messages moved."""
        if self._lookup(source_arn) is None:
            raise _no_source()
        for task in self._tasks.get(source_arn, []):
            if task.task_id == task_id:
                if task.status != "RUNNING":
                    # Cancel only while RUNNING (section 11); text UNCONFIRMED.
                    raise InvalidParameterValue("Only active tasks can be cancelled.")
                task.status = "CANCELLED"
                self._running.remove(task)
                self._changed()
                return task.moved
        raise ResourceNotFoundException("Task does not exist.")

    def drive(self, now: int) -> None:
        """Advance every running task to ``now``. O(k log n) for k moves."""
        if not self._running or self._driving:
            return
        with self._lock:
            self._driving = True
            try:
                while self._running:
                    task = min(self._running, key=lambda t: t.next_move(now))
                    if task.next_move(now) > now:
                        break
                    self._step(task, now)
            finally:
                self._driving = False

    def next_move(self, now: int) -> int | None:
        """The next moment after ``now`` a running task acts: a long poll on any
        queue of the broker wakes then (a moved message may arrive)."""
        moves = [t.next_move(now) for t in self._running]
        return min((t for t in moves if t > now), default=None)

    def _step(self, task: MoveTask, now: int) -> None:
        """One step of ``task``, at the moment it may take it (``next_move``):
        move the message of its source that is receivable first then, or, with
        none, complete. Moved messages are new messages enqueued at that moment."""
        source = self._lookup(task.source_arn)
        if source is None:
            self._finish(task, "FAILED", "AWS.SimpleQueueService.NonExistentQueue")
            return
        at = task.next_move(now)
        # Retention first, as of that moment: a message that expired in the DLQ
        # must not be redriven back to life (section 10). Re-entry is guarded.
        stored = source._first_receivable(at)
        if stored is None:
            self._finish(task, "COMPLETED")
            return
        rec = source._realized(stored)
        extra = extra_of(rec)
        target_arn = task.destination_arn or extra[X_DLQ_ARN]
        target = self._lookup(target_arn) if target_arn else None
        if target is None:
            self._finish(task, "FAILED", "AWS.SimpleQueueService.NonExistentQueue")
            return
        group_id = group_id_of(rec)
        dedup_id = dedup_id_of(rec) if target.FIFO else None
        if target.FIFO:
            # A standard message moved into a FIFO queue: its id stands in.
            group_id = rec[R_ID] if group_id is None else group_id
            dedup_id = rec[R_ID] if dedup_id is None else dedup_id
        moved = draft(
            rec[R_BODY],
            rec[R_SIZE],
            extra[X_ATTRS],
            extra[X_ATTRS_MD5],
            extra[X_TRACE],
            group_id,
            dedup_id,
        )
        result = target._commit(moved, None, at, rec[R_SENDER])
        source._drop(stored, "moved", at, to=target.arn, new_message_id=result.message_id)
        target._notify()
        task.moved += 1
        self._changed()
        if (
            task.max_number_of_messages_per_second is not None
            and task.moved >= task.to_move
            and source._first_receivable(at) is None
        ):
            self._finish(task, "COMPLETED")

    def _finish(self, task: MoveTask, status: str, reason: str | None = None) -> None:
        task.status = status
        task.failure_reason = reason
        self._running.remove(task)
        self._changed()
