"""One run of a check: a broker served on 127.0.0.1, the input sent, the
consumer started (and killed and restarted, as the schedule says), the run
ended when the queue is empty and the effects have settled (or at the
timeout), and the consumer stopped: SIGTERM, then SIGKILL.

The consumer runs in a process group of its own (``start_new_session``), so
a kill or a stop reaches whatever it started (``sh -c``, ``npm`` and its
``node``, a Celery pool). The supervisor polls every :data:`TICK` seconds;
it reads the time from the broker's :class:`~sqsqueue._clock.SystemClock`.

Cost: the run's wall time is the consumer's (plus a visibility timeout per
kill, the time its in-flight messages take to come back, and the settling
wait); the checker's own work is O(events) after the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO, Any

import attrs

from sqsqueue._broker import Broker
from sqsqueue._clock import SystemClock
from sqsqueue._faults import Faults
from sqsqueue.check._served import CheckEndpoint, Event, Recorder, incarnation_key
from sqsqueue.check._spec import Schedule, UsageError
from sqsqueue.server._run import IDLE_TIMEOUT, EndpointHandle, bind, uvicorn_server

__all__ = ["Incarnation", "InputMessage", "RunRecord", "run_once"]

#: Seconds between the supervisor's looks at the consumer and the queue.
TICK = 0.01
#: Quiet seconds that settle the effects once every message has one.
SETTLE = 0.25
#: A kill comes this many seconds at most after the receive that makes it due.
KILL_DELAY = 0.05
#: Seconds a stopped consumer has between SIGTERM and SIGKILL.
STOP_GRACE = 5.0
#: Restarts of a consumer that exits by itself while work remains.
MAX_RESTARTS = 10
#: Environment variables that would point an SDK elsewhere than the checker.
_DROPPED = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)

QUEUE = "check-queue"
EFFECTS = "check-effects"
DEAD_LETTERS = "check-dead-letters"
REGION = "us-east-1"
SECRET = "sqsqueue-check-secret"  # noqa: S105 - signs requests to the checker only


@attrs.frozen
class InputMessage:
    """One message the checker sent: its place in the send order, id, body and group."""

    index: int
    message_id: str
    body: str
    group: str | None


@attrs.frozen
class Incarnation:
    """One start of the consumer: its number, pid, start and end times and
    how it ended (``killed``, ``exited N``, ``stopped``)."""

    n: int
    pid: int
    started: float
    ended: float
    how: str


@attrs.frozen
class RunRecord:
    """What one run did, for the judge and the reports."""

    schedule: Schedule
    started: float
    ended: float
    messages: tuple[InputMessage, ...]
    events: tuple[Event, ...]
    incarnations: tuple[Incarnation, ...]
    dead_letters: frozenset[str]
    timed_out: bool

    @property
    def duration(self) -> float:
        return self.ended - self.started

    def pid(self, incarnation: int | None) -> int | None:
        """The pid of an incarnation (None for the checker's own calls)."""
        for inc in self.incarnations:
            if inc.n == incarnation:
                return inc.pid
        return None

    def count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.kind == kind)


def body_of(index: int) -> str:
    """The body of the ``index``-th input message: unique within a run."""
    return f"msg-{index:05d}"


def consumer_env(
    base: Mapping[str, str], endpoint_url: str, key: str, queue_url: str, effects_url: str
) -> dict[str, str]:
    """The consumer's environment: ``base`` with everything an SDK needs to
    reach the checker's broker and nothing that would send it elsewhere."""
    env = {k: v for k, v in base.items() if k not in _DROPPED}
    env.update(
        AWS_ENDPOINT_URL_SQS=endpoint_url,
        AWS_ENDPOINT_URL=endpoint_url,
        AWS_REGION=REGION,
        AWS_DEFAULT_REGION=REGION,
        AWS_ACCESS_KEY_ID=key,
        AWS_SECRET_ACCESS_KEY=SECRET,
        SQSQUEUE_QUEUE_URL=queue_url,
        SQSQUEUE_EFFECTS_URL=effects_url,
    )
    return env


class _Consumer:
    """The consumer's current incarnation and those that ended."""

    def __init__(
        self,
        schedule: Schedule,
        env: dict[str, str],
        output: Any,
        cwd: str | None,
        now: Any,
        recorder: Recorder,
    ) -> None:
        self.schedule = schedule
        self.env = env
        self.output = output
        self.cwd = cwd
        self.now = now
        self.recorder = recorder
        self.proc: subprocess.Popen[bytes] | None = None
        self.n = -1
        self.started = 0.0
        self.ended: list[Incarnation] = []

    def start(self) -> None:
        self.n += 1
        env = dict(self.env, AWS_ACCESS_KEY_ID=incarnation_key(self.n))
        try:
            self.proc = subprocess.Popen(  # noqa: S603 - the user's own command, as asked
                list(self.schedule.command),
                env=env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
                start_new_session=True,
            )
        except OSError as exc:
            raise UsageError(
                f"cannot run {self.schedule.command[0]!r}: {exc.strerror or exc}"
            ) from None
        self.started = self.now()
        self.recorder.add("started", None, self.n, str(self.proc.pid))

    def _signal_group(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def _end(self, how: str) -> None:
        proc = self.proc
        assert proc is not None
        self._signal_group(signal.SIGKILL)  # whatever it left behind in its group
        self.recorder.add(how.split(maxsplit=1)[0], None, self.n, how)
        self.ended.append(Incarnation(self.n, proc.pid, self.started, self.now(), how))
        self.proc = None

    def kill(self) -> None:
        assert self.proc is not None
        self._signal_group(signal.SIGKILL)
        self.proc.wait()
        self._end("killed")

    def reap(self) -> bool:
        """True when the incarnation exited by itself (now recorded)."""
        if self.proc is None:
            return False
        code = self.proc.poll()
        if code is None:
            return False
        self._end(f"exited {code}")
        return True

    def stop(self) -> None:
        if self.proc is None or self.reap():
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.proc.wait()
        self._end("stopped")


def run_once(
    schedule: Schedule,
    *,
    output: IO[Any] | int | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> RunRecord:
    """Run ``schedule`` once (module docstring). ``output`` takes the
    consumer's stdout and stderr (None: this process's); ``env`` is the base
    of the consumer's environment (default: this process's). Raises
    :class:`UsageError` when the command cannot be started."""
    schedule.validate()
    seed = schedule.seed
    faults = schedule.faults
    clock = SystemClock()
    broker: Broker[Any] = Broker(clock=clock, region=REGION, random=random.Random(seed))
    fifo = schedule.fifo
    suffix = ".fifo" if fifo else ""
    base_attributes: dict[str, str] = {"FifoQueue": "true"} if fifo else {}
    attributes = dict(base_attributes, VisibilityTimeout=str(int(schedule.visibility_timeout)))
    dlq = None
    if schedule.max_receive_count is not None:
        dlq = broker.create_queue(DEAD_LETTERS + suffix, attributes=base_attributes)
        attributes["RedrivePolicy"] = json.dumps(
            {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": schedule.max_receive_count}
        )
    queue = broker.create_queue(QUEUE + suffix, attributes=attributes)
    queue.keep_history = True
    if not fifo:
        queue.faults = Faults(
            seed=seed,
            duplicate_rate=faults.duplicate,
            partial_short_polls=faults.partial,
            reorder=faults.reorder,
        )
    broker.create_queue(EFFECTS)
    recorder = Recorder(clock.now, EFFECTS)
    endpoint = CheckEndpoint(
        broker,
        recorder,
        queue_name=queue.name,
        slow_ms=faults.slow,
        throttle=faults.throttle,
        rng=random.Random(f"{seed}/throttle"),
    )
    sock = bind("127.0.0.1", 0)
    handle = EndpointHandle(uvicorn_server(endpoint, IDLE_TIMEOUT), endpoint, sock, "127.0.0.1")
    handle.start()
    consumer: _Consumer | None = None
    try:
        url = handle.endpoint_url
        account = broker.account_id
        queue_url, effects_url = f"{url}/{account}/{queue.name}", f"{url}/{account}/{EFFECTS}"
        messages: list[InputMessage] = []
        started = clock.now()
        for i in range(schedule.messages):
            body = body_of(i)
            group = f"g{i % schedule.groups}" if fifo else None
            if fifo:
                sent = queue.send(body, group_id=group, deduplication_id=body)
            else:
                sent = queue.send(body)
            messages.append(InputMessage(i, sent.message_id, body, group))
            recorder.id_of_body[body] = sent.message_id
            recorder.add("sent", sent.message_id, None, group or "")
        consumer = _Consumer(
            schedule,
            consumer_env(os.environ if env is None else env, url, "", queue_url, effects_url),
            output,
            cwd,
            clock.now,
            recorder,
        )
        timed_out = _supervise(schedule, consumer, queue, recorder, clock, started)
        consumer.stop()
        ended = clock.now()
    finally:
        if consumer is not None and consumer.proc is not None:
            consumer.stop()
        handle.close()
    dead = frozenset(info.message_id for info in dlq.inspect()) if dlq is not None else frozenset()
    events = _with_engine_history(list(recorder.events), messages, queue)

    broker.close()
    return RunRecord(
        schedule,
        started,
        ended,
        tuple(messages),
        tuple(events),
        tuple(consumer.ended),
        dead,
        timed_out,
    )


#: What a delete the engine did not carry out was.
KEPT = "acknowledged, but the duplicate fault kept the message"
ALREADY = "the message was already deleted"


def _with_engine_history(
    events: list[Event], messages: list[InputMessage], queue: Any
) -> list[Event]:
    """``events`` with what only the engine knows (``Queue.history``): when a
    message was dead-lettered, and which acknowledged deletes removed it (the
    first after the engine's deletion), which the duplicate fault lost (those
    before) and which found it already gone (those after). O(events)."""
    deletes: dict[str, list[int]] = {}
    for i, event in enumerate(events):
        if event.kind == "deleted" and event.message_id is not None:
            deletes.setdefault(event.message_id, []).append(i)
    extra: list[Event] = []
    for message in messages:
        steps = queue.history(message.message_id)
        gone = next((step.time for step in steps if step.event == "deleted"), None)
        extra += [
            Event(step.time, "dead_lettered", message.message_id)
            for step in steps
            if step.event == "dead_lettered"
        ]
        removed = False
        for i in deletes.get(message.message_id, ()):
            event = events[i]
            if gone is None or event.time < gone:
                detail = KEPT
            elif removed:
                detail = ALREADY
            else:
                detail, removed = "", True
            events[i] = attrs.evolve(event, detail=detail)
    return sorted(events + extra, key=lambda e: e.time)


def _supervise(
    schedule: Schedule,
    consumer: _Consumer,
    queue: Any,
    recorder: Recorder,
    clock: SystemClock,
    started: float,
) -> bool:
    """Start, kill, restart and watch the consumer until the run ends;
    True when it ended at the timeout.

    Kill ``i`` comes a seeded moment (0 to :data:`KILL_DELAY` seconds) after
    the incarnation's ``n``-th received message, ``n`` seeded between 1 and
    the input's share per kill: so each kill lands while that incarnation
    works, and the kills spread over the input whatever the consumer's speed."""
    rng = random.Random(f"{schedule.seed}/kills")
    kills = schedule.faults.kill
    share = max(1, schedule.messages // (kills + 1))
    plan = [(rng.randint(1, share), rng.uniform(0.0, KILL_DELAY)) for _ in range(kills)]
    deadline = started + schedule.timeout
    total = schedule.messages
    slow_settle = max(schedule.visibility_timeout, 1.0)
    tick = threading.Event()
    consumer.start()
    restarts = 0
    received = 0  # by the current incarnation
    due: float | None = None  # the next kill's moment, once its receive came
    seen = 0
    empty_since: float | None = None
    while True:
        now = clock.now()
        if now >= deadline:
            return True
        events = recorder.events
        while seen < len(events):
            event = events[seen]
            seen += 1
            if event.kind == "received" and event.incarnation == consumer.n:
                received += 1
                if plan and due is None and received >= plan[0][0]:
                    due = event.time + plan[0][1]
        depth = len(queue)
        if consumer.reap():
            received, due = 0, None
        if consumer.proc is None:
            if restarts >= MAX_RESTARTS:
                return False  # it keeps exiting: nothing more will happen
            if depth:
                restarts += 1
                tick.wait(min(0.1 * restarts, 1.0))  # a consumer failing at start: back off
                consumer.start()
        elif due is not None and now >= due:
            plan.pop(0)
            consumer.kill()
            received, due = 0, None
            consumer.start()
        if depth:
            empty_since = None
        elif empty_since is None:
            empty_since = now
        if empty_since is not None:
            quiet = SETTLE if len(recorder.effects) >= total else slow_settle
            if now - max(empty_since, recorder.last_effect) >= quiet:
                return False
        tick.wait(TICK if due is None else max(0.0, min(TICK, due - now)))
