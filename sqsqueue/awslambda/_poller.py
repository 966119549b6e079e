"""AWS's SQS poller for Lambda: batches in, handler called, messages deleted or returned.

One :class:`Poller` serves both ways a mapping runs:

* ``run_until_idle()`` (tests): on the calling thread, in *waves*. A wave
  receives up to the allowed concurrency of batches at one moment of the
  queue's clock (each batch formed before any of them settles, as that many
  concurrent pollers would), invokes them one after another in batch order,
  then settles them. Between waves, when nothing is receivable, the clock is
  moved to the next moment something becomes receivable (a ManualClock is
  advanced; a real clock is waited for), until nothing will. Deterministic
  on a ManualClock: the same sends give the same invocations.
* ``start()``/``stop()`` (workers): a dispatcher thread forms batches with
  long polls and hands each to a pool of up to the allowed concurrency of
  invocation threads; ``stop()`` lets the invocations in flight finish.

A batch (``_gather``) takes up to ``batch_size`` records, waiting up to the
batching window for a fuller one, and never more than 6 MB of event payload:
a record that does not fit is kept for the next batch (its visibility
timeout keeps running, as on AWS). Records that match no filter are deleted
at once, without an invocation.

After the handler (``_conclude``): a raise, a timeout, or (with
ReportBatchItemFailures) a malformed response fails the whole batch; a valid
response fails the listed items; nothing failed is deleted, so a failed
message comes back after its visibility timeout (and goes to the queue's
dead-letter queue after maxReceiveCount). On a FIFO queue, a failed
message's later messages of the same group in the batch come back too, and
records of that group kept for a later batch are dropped (they come back
after their visibility timeout): a group is never processed out of order,
and never by two invocations at once (``_busy``).

The function timeout: on a real clock the handler runs in its own thread,
which the invocation stops waiting for at the timeout; Python cannot kill a
thread, so a handler that overruns keeps running in the background (its
result is ignored, its batch failed). On a ManualClock a handler runs past
its timeout when the clock, read as it returns, is past the deadline: a test
makes a handler "take" 5 s by advancing the clock 5 s inside it.

Costs: each batch costs its receives and deletes (O(log n) each on an
in-process queue) plus one JSON encoding of each record (its payload size).
"""

from __future__ import annotations

import collections
import json
import logging
import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from sqsqueue._clock import ManualClock
from sqsqueue.awslambda._context import LambdaContext
from sqsqueue.awslambda._event import (
    EVENT_PAYLOAD_MAX,
    Record,
    event_size,
    group_of,
    size_of,
)
from sqsqueue.awslambda._filter import matches_any
from sqsqueue.awslambda._settings import Settings
from sqsqueue.awslambda._sources import Source
from sqsqueue.errors import ServiceClosed

__all__ = ["Invocation", "Poller"]

log = logging.getLogger("sqsqueue.awslambda")

#: Concurrency without a ScalingConfig: Lambda's default account limit.
DEFAULT_CONCURRENCY = 1_000
#: AWS's ramp-up: "Lambda starts with five concurrent batches" and adds up to
#: 300 concurrent invocations a minute (an option, off by default).
RAMP_START, RAMP_PER_MINUTE = 5, 300
#: Longest single receive wait in worker mode (seconds): bounds how long
#: ``stop()`` waits for the dispatcher (AWS's pollers wait 20 s).
POLL_WAIT = 1

Handler = Callable[[dict[str, Any], Any], Any]


@attrs.frozen
class Invocation:
    """One invocation, for assertions.

    ``outcome`` is ``"success"``, ``"partial"`` (ReportBatchItemFailures
    listed some items), ``"error"`` (the handler raised), ``"timeout"`` or
    ``"invalid_response"`` (a malformed partial batch response). ``deleted``
    and ``returned`` are message ids: deleted after the invocation, and left
    to come back after their visibility timeout. ``wave`` numbers the
    invocations ``run_until_idle`` formed together (at most the concurrency);
    ``started_at``/``ended_at`` are times on the queue's clock.
    """

    event: dict[str, Any]
    context: LambdaContext
    wave: int
    started_at: float
    ended_at: float
    outcome: str
    response: object
    error: BaseException | None
    reason: str
    deleted: tuple[str, ...]
    returned: tuple[str, ...]

    @property
    def message_ids(self) -> list[str]:
        """The ids of the batch's messages, in event order."""
        return [r["messageId"] for r in self.event["Records"]]

    @property
    def bodies(self) -> list[str]:
        """The batch's bodies, in event order."""
        return [r["body"] for r in self.event["Records"]]


@attrs.define
class _Batch:
    records: list[Record]
    sizes: list[int]
    wave: int = 0
    #: Formed without waiting out its batching window (``_wave``).
    unfinished: bool = False
    #: Each record's place in ``records``, by message id.
    index: dict[str, int] = attrs.Factory(dict)


class Poller:
    """The loop behind an :class:`~sqsqueue.awslambda.EventSourceMapping`."""

    def __init__(
        self,
        source: Source,
        handler: Handler,
        settings: Settings,
        *,
        ramp_up: bool,
        keep_invocations: int | None,
    ) -> None:
        self.source = source
        self.handler = handler
        self.settings = settings
        self.ramp_up = ramp_up
        self.clock = source.clock
        self.enabled = settings.enabled
        #: Records without message attributes carry ``md5OfMessageAttributes:
        #: null`` when the mapping has a batching window (``_event``'s docstring).
        self._md5_null = settings.maximum_batching_window_in_seconds > 0
        self.invocations: collections.deque[Invocation] = collections.deque(maxlen=keep_invocations)
        #: Ids of messages deleted because no filter matched them.
        self.filtered: collections.deque[str] = collections.deque(maxlen=keep_invocations)
        self._pending: list[tuple[Record, int]] = []  # received, kept for a later batch
        self._busy: collections.Counter[str] = collections.Counter()  # FIFO groups in flight
        self._lock = threading.RLock()
        self._started_at: float | None = None
        self._waves = 0
        self._stop = threading.Event()
        self._dispatcher: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._active = 0  # invocations in flight (worker mode)

    # -- concurrency --------------------------------------------------------

    def concurrency(self) -> int:
        """Invocations allowed at once now: MaximumConcurrency (or Lambda's
        default), ramped up from 5 by 300 a minute when ``ramp_up`` is on."""
        limit = self.settings.maximum_concurrency or DEFAULT_CONCURRENCY
        if not self.ramp_up:
            return limit
        now = self.clock.now()
        if self._started_at is None:
            self._started_at = now
        minutes = int((now - self._started_at) // 60)
        return min(limit, RAMP_START + RAMP_PER_MINUTE * minutes)

    # -- forming a batch ----------------------------------------------------

    def _fits(self, batch: _Batch, size: int) -> bool:
        return (
            len(batch.records) < self.settings.batch_size
            and event_size([*batch.sizes, size]) <= EVENT_PAYLOAD_MAX
        )

    def _take(self, batch: _Batch, record: Record, size: int) -> bool:
        """Put ``record`` in ``batch`` if its group is free and it fits, else keep
        it for later; True when it went in."""
        held = batch.index.get(record["messageId"])
        if held is not None:
            # Received again while held (its visibility timeout ran out
            # during the window): one record, with the newest handle.
            batch.records[held] = record
            return True
        if self._pending:
            self._pending = [p for p in self._pending if p[0]["messageId"] != record["messageId"]]
        group = group_of(record) if self.source.fifo else None
        if (group is None or group not in self._busy) and self._fits(batch, size):
            batch.index[record["messageId"]] = len(batch.records)
            batch.records.append(record)
            batch.sizes.append(size)
            return True
        self._pending.append((record, size))
        return False

    def _full(self, batch: _Batch) -> bool:
        return len(batch.records) >= self.settings.batch_size or bool(
            self._pending and batch.records
        )

    def _gather(self, *, virtual: bool, may_wait: bool = True) -> _Batch | None:
        """One batch, or None if nothing came (virtual: nothing receivable now;
        worker: the mapping is stopping). ``may_wait`` False (virtual): a batch
        that would wait for its window comes back ``unfinished`` instead."""
        settings = self.settings
        batch = _Batch([], [])
        with self._lock:
            pending, self._pending = self._pending, []
            for record, size in pending:
                self._take(batch, record, size)
        window_end: float | None = None
        while not self._full(batch):
            if not virtual and self._stop.is_set():
                break
            wait = 0
            if not virtual:
                if not batch.records:
                    wait = POLL_WAIT
                elif window_end is not None:
                    wait = min(POLL_WAIT, max(0, math.ceil(window_end - self.clock.now())))
            limit = min(10, settings.batch_size - len(batch.records))
            records = self.source.receive(limit, wait, self._md5_null)
            self._admit(batch, records)
            if batch.records and window_end is None:
                window_end = self.clock.now() + settings.maximum_batching_window_in_seconds
            if len(records) == limit:
                continue  # more may be there at once
            if not batch.records:
                if virtual:
                    return None
                continue  # a worker keeps polling
            assert window_end is not None
            now = self.clock.now()
            if now >= window_end:
                break
            if virtual and not may_wait:
                batch.unfinished = True
                return batch
            if virtual:
                # Wait for the window on the clock: to the next message due
                # within it, or to its end.
                due = self.source.next_due()
                self._pass_time(window_end if due is None or due > window_end else due)
        if not batch.records:
            return None
        with self._lock:
            for record in batch.records:
                group = group_of(record) if self.source.fifo else None
                if group is not None:
                    self._busy[group] += 1
        return batch

    def _admit(self, batch: _Batch, records: list[Record]) -> None:
        """Filter received records (deleting those no filter matches) and put
        the others in ``batch`` or aside."""
        dropped = []
        with self._lock:
            for record in records:
                if not matches_any(self.settings.filters, record):
                    dropped.append(record)
                    continue
                self._take(batch, record, size_of(record))
        if dropped:
            deleted = self.source.delete([r["receiptHandle"] for r in dropped])
            self.filtered.extend(r["messageId"] for r in dropped if r["receiptHandle"] in deleted)

    # -- invoking -----------------------------------------------------------

    def _invoke(self, batch: _Batch) -> Invocation:
        clock = self.clock
        started = clock.now()
        deadline = started + self.settings.function_timeout
        context = LambdaContext(
            function_name=self.settings.function_name,
            region=self.source.region,
            account_id=self.source.account_id,
            memory_limit_in_mb=self.settings.memory_size,
            clock=clock,
            deadline=deadline,
        )
        event: dict[str, Any] = {"Records": batch.records}
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["response"] = self.handler(event, context)
            except BaseException as exc:  # a handler's failure is the batch's
                box["error"] = exc

        timed_out = False
        if isinstance(clock, ManualClock):
            call()
            timed_out = clock.now() > deadline
        else:
            worker = threading.Thread(
                target=call, name=f"lambda {context.aws_request_id}", daemon=True
            )
            worker.start()
            worker.join(max(0.0, deadline - clock.now()))
            # The thread cannot be stopped: an overrunning handler keeps running,
            # its result ignored (documented in docs/lambda.md).
            timed_out = worker.is_alive()
        ended = clock.now()
        error: BaseException | None = None if timed_out else box.get("error")
        response = None if timed_out else box.get("response")
        outcome, failed, reason = self._judge(batch, timed_out, error, response)
        deleted, returned = self._settle(batch, failed)
        # A keyword a field, as _settings builds Settings: alike in shape only (duplicates).
        return Invocation(
            event=event,
            context=context,
            wave=batch.wave,
            started_at=started,
            ended_at=ended,
            outcome=outcome,
            response=response,
            error=error,
            reason=reason,
            deleted=deleted,
            returned=returned,
        )

    def _judge(
        self,
        batch: _Batch,
        timed_out: bool,
        error: BaseException | None,
        response: object,
    ) -> tuple[str, set[str] | None, str]:
        """(outcome, the ids that failed (None: all), why)."""
        if timed_out:
            return "timeout", None, f"Task timed out after {self.settings.function_timeout} seconds"
        if error is not None:
            return "error", None, f"{type(error).__name__}: {error}"
        if not self.settings.report_batch_item_failures:
            return "success", set(), ""
        failed = _item_failures(response, {r["messageId"] for r in batch.records})
        if isinstance(failed, str):
            return "invalid_response", None, failed
        return ("partial" if failed else "success"), failed, ""

    def _settle(self, batch: _Batch, failed: set[str] | None) -> tuple[tuple[str, ...], ...]:
        """Delete what succeeded; the rest comes back after its visibility
        timeout. Returns (deleted ids, returned ids)."""
        fifo = self.source.fifo
        keep: list[Record] = []
        done: list[Record] = []
        failed_groups: set[str] = set()
        for record in batch.records:
            group = group_of(record) if fifo else None
            if failed is None or record["messageId"] in failed or group in failed_groups:
                keep.append(record)
                if group is not None:
                    failed_groups.add(group)
            else:
                done.append(record)
        deleted = self.source.delete([r["receiptHandle"] for r in done]) if done else set()
        with self._lock:
            if failed_groups:
                self._pending = [
                    (r, s) for r, s in self._pending if group_of(r) not in failed_groups
                ]
            self._untrack(batch)
        return (
            tuple(r["messageId"] for r in done if r["receiptHandle"] in deleted),
            tuple(r["messageId"] for r in keep),
        )

    def _untrack(self, batch: _Batch) -> None:
        """Its FIFO groups are no longer in flight (under the lock)."""
        if not self.source.fifo:
            return
        for record in batch.records:
            group = group_of(record)
            if group is not None:
                self._busy[group] -= 1
                if self._busy[group] <= 0:
                    del self._busy[group]

    # -- run_until_idle -----------------------------------------------------

    def run_until_idle(self, max_invocations: int | None) -> list[Invocation]:
        """Drive the mapping until nothing is receivable and nothing will become
        so; the invocations made."""
        made: list[Invocation] = []
        if not self.enabled:
            return made
        while True:
            wave = self._wave()
            for batch in wave:
                invocation = self._invoke(batch)
                self.invocations.append(invocation)
                made.append(invocation)
                if max_invocations is not None and len(made) >= max_invocations:
                    self._release_pending()
                    return made
            if wave:
                continue
            due = self.source.next_due()
            if due is None:
                return made
            self._pass_time(due)

    def _pass_time(self, until: float) -> None:
        """Let the clock reach ``until``: a ManualClock is advanced, a real
        clock waited for."""
        if isinstance(self.clock, ManualClock):
            self.clock.advance_to(max(until, self.clock.now()))
        else:
            self._stop.wait(max(0.0, until - self.clock.now()))

    def _wave(self) -> list[_Batch]:
        self._waves += 1
        batches: list[_Batch] = []
        allowed = self.concurrency()
        while len(batches) < allowed:
            # Only a wave's first batch may wait out the window on the clock: a
            # later one would hold the earlier batches back from their
            # invocation. It is formed again, first, in the next wave.
            batch = self._gather(virtual=True, may_wait=not batches)
            if batch is None:
                break
            if batch.unfinished:
                with self._lock:
                    self._untrack(batch)
                    self._pending[:0] = zip(batch.records, batch.sizes, strict=True)
                break
            batch.wave = self._waves
            batches.append(batch)
            if len(batch.records) < self.settings.batch_size and not self._pending:
                break  # the queue had no more: another batch would find nothing
        return batches

    def _release_pending(self) -> None:
        # Stopping early: records kept aside come back after their visibility
        # timeout, as an abandoned receive's do.
        with self._lock:
            self._pending = []

    # -- worker mode --------------------------------------------------------

    def start(self) -> None:
        if self._dispatcher is not None:
            raise RuntimeError("the mapping is already running")
        self._stop.clear()
        limit = self.settings.maximum_concurrency or DEFAULT_CONCURRENCY
        # Threads are made as invocations need them, up to the limit.
        self._pool = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="lambda-invoke")
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="lambda-poller", daemon=True
        )
        self._dispatcher.start()

    def stop(self) -> None:
        """Stop polling; return once the invocations in flight have finished."""
        self._stop.set()
        dispatcher, pool = self._dispatcher, self._pool
        if dispatcher is not None:
            dispatcher.join()
        if pool is not None:
            pool.shutdown(wait=True)
        self._dispatcher = self._pool = None
        self._release_pending()

    @property
    def running(self) -> bool:
        return self._dispatcher is not None and self._dispatcher.is_alive()

    def _dispatch(self) -> None:
        pool = self._pool
        assert pool is not None
        while not self._stop.is_set():
            with self._lock:
                busy = self._active >= self.concurrency()
            if busy or not self.enabled:
                self._stop.wait(0.01)
                continue
            try:
                batch = self._gather(virtual=False)
            except ServiceClosed:
                # The in-process queue was closed: nothing more will come.
                log.info("%s is closed; the mapping stops polling", self.source.arn)
                return
            except Exception:
                log.exception("receiving from %s failed; retrying in 1 s", self.source.arn)
                self._stop.wait(1.0)
                continue
            if batch is None:
                continue
            with self._lock:
                self._active += 1
            pool.submit(self._run_one, batch)

    def _run_one(self, batch: _Batch) -> None:
        try:
            invocation = self._invoke(batch)
            self.invocations.append(invocation)
            if invocation.outcome != "success":
                # A partial batch has no reason to show: its item failures are
                # the messages returned.
                log.warning(
                    "invocation %s: %s%s; returned %d of %d messages",
                    invocation.context.aws_request_id,
                    invocation.outcome,
                    f" ({invocation.reason})" if invocation.reason else "",
                    len(invocation.returned),
                    len(batch.records),
                )
        except Exception:
            log.exception("settling a batch from %s failed", self.source.arn)
        finally:
            with self._lock:
                self._active -= 1


def _item_failures(response: object, ids: set[str]) -> set[str] | str:
    """The ids a partial batch response lists, or why the response is malformed.

    AWS: success for a None response, an empty object, a null or empty
    ``batchItemFailures``; the whole batch fails for a response that is not
    a JSON object, and for an entry whose ``itemIdentifier`` is missing,
    null, empty, not a string, or not a message of the batch.
    """
    if response is None:
        return set()
    if not isinstance(response, dict):
        return f"the response is not a JSON object: {type(response).__name__}"
    try:
        json.dumps(response)
    except (TypeError, ValueError) as exc:
        return f"the response is not JSON: {exc}"
    failures = response.get("batchItemFailures")
    if failures is None:
        return set()
    if not isinstance(failures, list):
        return "batchItemFailures is not a list"
    out: set[str] = set()
    for entry in failures:
        if not isinstance(entry, dict) or "itemIdentifier" not in entry:
            return f"a batchItemFailures entry has no itemIdentifier: {entry!r}"
        item = entry["itemIdentifier"]
        if not isinstance(item, str) or not item:
            return f"an itemIdentifier is null, empty or not a string: {item!r}"
        if item not in ids:
            return f"itemIdentifier {item!r} is not a message of the batch"
        out.add(item)
    return out
