"""Judging a run by the consumer's effects, and the results a check returns.

* ``at-least-once``: every message has an effect by the end of the run. A
  message in the dead-letter queue counts as not processed unless the
  schedule allows dead letters.
* ``exactly-once``: every message has exactly one effect (a dead letter
  without one is accepted where dead letters are allowed).
* ``fifo-order``: within each message group, the first effects come in send
  order (messages without an effect are at-least-once's business).

Effects are ordered as the server received them (one event loop thread);
the judge is O(events + messages log messages).
"""

from __future__ import annotations

from collections import Counter

import attrs

from sqsqueue.check._run import InputMessage, RunRecord
from sqsqueue.check._served import Event

__all__ = ["CheckResult", "RunResult", "Violation", "judge"]


@attrs.frozen
class Violation:
    """One message that broke one expectation, with why, and everything the
    broker saw happen to it (sends, receives, deletes, visibility changes,
    effects, dead-lettering, and the kills of consumers that held it)."""

    expectation: str
    message: InputMessage
    reason: str
    history: tuple[Event, ...]


@attrs.frozen
class RunResult:
    """One run: its record and the violations found in it (empty: it passed)."""

    record: RunRecord
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def seed(self) -> int:
        return self.record.schedule.seed

    def summary(self) -> str:
        """One line: the verdict and the run's counts."""
        r = self.record
        kills = sum(1 for i in r.incarnations if i.how == "killed")
        wanted = r.schedule.faults.kill
        asked = f" of {wanted}" if kills < wanted else ""
        verdict = "ok" if self.ok else f"{len(self.violations)} violation(s)"
        extra = ", timed out" if r.timed_out else ""
        exits = sum(1 for i in r.incarnations if i.how.startswith("exited"))
        if exits:
            extra += f", the consumer exited by itself {exits} time(s)"
        dead = f", {len(r.dead_letters)} dead letters" if r.dead_letters else ""
        throttled = r.count("throttled")
        throttles = f", {throttled} throttled" if throttled else ""
        return (
            f"{verdict} ({len(r.messages)} messages, {r.count('received')} receives, "
            f"{r.count('deleted')} deletes, {r.count('effect')} effects, {kills}{asked} kills"
            f"{throttles}{dead}, {r.duration:.1f} s{extra})"
        )


@attrs.frozen
class CheckResult:
    """What :func:`sqsqueue.testing.check` returns.

    ``runs`` are the seeded runs in order (the search stops at the first that
    fails, ``original``); ``failure`` is that run shrunk to the smallest schedule found that
    still fails (``failure.record.schedule``), None when every run passed.
    ``ok`` is True when every run met every expectation; ``exit_status`` is
    what the command exits with (0 or 1).
    """

    runs: tuple[RunResult, ...]
    failure: RunResult | None = None
    #: The failing run as found, before shrinking.
    original: RunResult | None = None
    report_path: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def exit_status(self) -> int:
        return 0 if self.ok else 1

    @property
    def violations(self) -> tuple[Violation, ...]:
        """The violations of :attr:`failure` (empty when every run passed)."""
        return () if self.failure is None else self.failure.violations

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(run.seed for run in self.runs)

    @property
    def command_line(self) -> str | None:
        """The ``sqsqueue check`` line that reproduces the failure."""
        return None if self.failure is None else self.failure.record.schedule.command_line()


def history_of(record: RunRecord, message_id: str) -> tuple[Event, ...]:
    """The message's events, with the kills of incarnations that had received
    it and had not both reported its effect and deleted it (a kill after
    both concerns it no more). O(events)."""
    own = [e for e in record.events if e.message_id == message_id]
    holders = {e.incarnation for e in own if e.kind == "received"}

    def concerns(kill: Event) -> bool:
        if kill.incarnation not in holders:
            return False
        before = {e.kind for e in own if e.incarnation == kill.incarnation and e.time <= kill.time}
        return not {"effect", "deleted"} <= before

    return tuple(
        e
        for e in record.events
        if e.message_id == message_id or (e.kind == "killed" and concerns(e))
    )


def _lost_reason(record: RunRecord, message_id: str) -> str:
    received = sum(1 for e in record.events if e.message_id == message_id and e.kind == "received")
    deleted = [e for e in record.events if e.message_id == message_id and e.kind == "deleted"]
    if not received:
        return "no effect: the consumer never received it"
    if deleted:
        first = deleted[0]
        return (
            f"no effect, yet it was deleted (first by incarnation {first.incarnation}, "
            f"pid {record.pid(first.incarnation)}): the message is lost"
        )
    return f"no effect, and still not deleted after {received} receive(s)"


def judge(record: RunRecord) -> tuple[Violation, ...]:
    """The violations of ``record`` against its schedule's expectations."""
    schedule = record.schedule
    effects: Counter[str] = Counter()
    first_effect: dict[str, int] = {}
    for seq, event in enumerate(record.events):
        if event.kind == "effect" and event.message_id is not None:
            effects[event.message_id] += 1
            first_effect.setdefault(event.message_id, seq)
    dead = record.dead_letters
    allow = schedule.allow_dead_letters
    found: list[Violation] = []

    def violation(expectation: str, message: InputMessage, reason: str) -> None:
        history = history_of(record, message.message_id)
        found.append(Violation(expectation, message, reason, history))

    for expectation in schedule.expect:
        if expectation == "at-least-once":
            for m in record.messages:
                if m.message_id in dead and not allow:
                    violation(
                        expectation,
                        m,
                        f"reached the dead-letter queue ({effects[m.message_id]} effect(s)): "
                        "counted as not processed (--allow-dead-letters accepts it)",
                    )
                elif not effects[m.message_id] and m.message_id not in dead:
                    violation(expectation, m, _lost_reason(record, m.message_id))
        elif expectation == "exactly-once":
            for m in record.messages:
                n = effects[m.message_id]
                if n == 1 or (n == 0 and allow and m.message_id in dead):
                    continue
                if n == 0:
                    violation(expectation, m, _lost_reason(record, m.message_id))
                else:
                    violation(expectation, m, f"{n} effects: processed {n} times")
        elif expectation == "fifo-order":
            groups: dict[str | None, list[InputMessage]] = {}
            for m in record.messages:
                groups.setdefault(m.group, []).append(m)
            for group, members in groups.items():
                latest: InputMessage | None = None
                for m in members:  # in send order
                    position = first_effect.get(m.message_id)
                    if position is None:
                        continue
                    if latest is not None and position < first_effect[latest.message_id]:
                        violation(
                            expectation,
                            m,
                            f"processed before {latest.body}, which was sent before it in "
                            f"group {group}",
                        )
                        break
                    latest = m
    return tuple(found)
