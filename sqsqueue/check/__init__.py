"""``sqsqueue check``: test any consumer program, in any language, against
what SQS really does to it (``docs/check.md``).

The checker serves a broker on 127.0.0.1 (an ephemeral port), sends
``messages`` unique bodies, runs the consumer as its own process with an
environment naming the endpoint, the queue (``SQSQUEUE_QUEUE_URL``) and an
effects queue (``SQSQUEUE_EFFECTS_URL``), drives it through seeded faults
(duplicates, reordering, partial short polls, SIGKILLs with restarts, slow
answers, throttling), and judges the run by the effects the consumer reports:
one message to the effects queue per processed message, its body the
processed message's body.

:func:`check` runs ``runs`` seeded schedules, stops at the first that
violates an expectation and shrinks it (fewer messages, fewer faults) while it
still fails. Cost: each run takes the consumer's own time plus a visibility
timeout per kill and a short settling wait (``benchmarks/RESULTS.md``: 60
messages with kills in a few seconds); a shrink step is one more run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

import attrs

from sqsqueue.check._judge import CheckResult, RunResult, Violation, judge
from sqsqueue.check._report import svg_timeline, text_report, write_markdown
from sqsqueue.check._run import Incarnation, InputMessage, RunRecord, run_once
from sqsqueue.check._served import Event
from sqsqueue.check._spec import (
    EXPECTATIONS,
    FaultSpec,
    Schedule,
    UsageError,
    as_command,
    count_messages,
    parse_expectations,
    parse_faults,
)

__all__ = [
    "EXPECTATIONS",
    "CheckResult",
    "Event",
    "FaultSpec",
    "Incarnation",
    "InputMessage",
    "RunRecord",
    "RunResult",
    "Schedule",
    "UsageError",
    "Violation",
    "check",
    "explain",
    "run_schedule",
    "svg_timeline",
    "text_report",
]

#: Runs a shrink may spend at most, by default.
SHRINK_RUNS = 8


def run_schedule(
    schedule: Schedule,
    *,
    output: IO[Any] | int | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> RunResult:
    """Run one schedule and judge it."""
    record = run_once(schedule, output=output, cwd=cwd, env=env)
    return RunResult(record, judge(record))


def _shrink(
    failing: RunResult,
    attempts: int,
    run: Callable[[Schedule], RunResult],
    progress: Callable[[str], None],
) -> RunResult:
    """A smaller schedule that still fails an expectation the failing run
    failed: greedily halve the messages, then drop faults one by one (each
    candidate tried once: timing varies, so a candidate that passes once is
    given up, not retried). At most ``attempts`` runs."""
    expectations = {v.expectation for v in failing.violations}
    best = failing
    tried = {failing.record.schedule}

    def still_fails(candidate: Schedule) -> bool:
        nonlocal best, attempts
        if attempts <= 0 or candidate in tried:
            return False
        tried.add(candidate)
        attempts -= 1
        result = run(candidate)
        shrunk = any(v.expectation in expectations for v in result.violations)
        progress(
            f"  shrinking: {count_messages(candidate.messages)}, faults "
            f"{candidate.faults.text() or 'none'}: {'fails' if shrunk else 'passes'}"
        )
        if shrunk:
            best = result
        return shrunk

    while best.record.schedule.messages > 1 and attempts > 0:
        schedule = best.record.schedule
        if not still_fails(attrs.evolve(schedule, messages=max(1, schedule.messages // 2))):
            break
    changed = True
    while changed and attempts > 0:
        changed = False
        for faults in best.record.schedule.faults.fewer():
            if still_fails(attrs.evolve(best.record.schedule, faults=faults)):
                changed = True
                break
    return best


def check(
    command: str | Sequence[str],
    *,
    messages: int = 20,
    fifo: bool = False,
    groups: int = 1,
    faults: str | Iterable[str] | FaultSpec | None = None,
    seed: int | None = None,
    visibility_timeout: float = 2.0,
    expect: str | Iterable[str] | None = None,
    timeout: float = 60.0,
    runs: int = 1,
    max_receive_count: int | None = None,
    allow_dead_letters: bool = False,
    shrink: bool = True,
    shrink_runs: int = SHRINK_RUNS,
    report: str | None = None,
    output: IO[Any] | int | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CheckResult:
    """Check the consumer ``command`` (a shell line or its arguments) as
    ``sqsqueue check`` does; the arguments are the command's options
    (``docs/check.md``). ``faults`` is ``--faults``' text (or a
    :class:`FaultSpec`), ``expect`` one expectation or several. Run ``r``
    (from 0) uses seed ``seed + r``; without ``seed`` a random one is drawn
    (and reported). ``output`` takes the consumer's stdout and stderr (a file,
    ``subprocess.DEVNULL``; None: this process's); ``env`` is the base of its
    environment. ``report`` writes the Markdown report there (and its SVG
    timeline beside it). ``progress`` is given one line per run.

    Raises :class:`UsageError` (a ValueError) for a schedule that cannot run.
    Cost: the runs' wall time (module docstring).
    """
    if isinstance(expect, str):
        expect = [expect]
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise UsageError(f"--runs {runs}: give at least 1 run")
    spec = faults if isinstance(faults, FaultSpec) else parse_faults(faults)
    base = seed if seed is not None else random.SystemRandom().randrange(2**31)
    schedule = Schedule(
        command=as_command(command),
        seed=base,
        messages=messages,
        fifo=fifo,
        groups=groups,
        faults=spec,
        visibility_timeout=visibility_timeout,
        expect=parse_expectations(expect),
        timeout=timeout,
        max_receive_count=max_receive_count,
        allow_dead_letters=allow_dead_letters,
    ).validate()
    say = progress or (lambda line: None)

    def run(candidate: Schedule) -> RunResult:
        return run_schedule(candidate, output=output, cwd=cwd, env=env)

    results: list[RunResult] = []
    failure: RunResult | None = None
    original: RunResult | None = None
    for r in range(runs):
        result = run(attrs.evolve(schedule, seed=base + r))
        results.append(result)
        say(f"run {r + 1}/{runs} seed {result.seed}: {result.summary()}")
        if not result.ok:
            original = failure = result
            if shrink and result.record.count("received"):
                failure = _shrink(result, shrink_runs, run, say)
            break
    outcome = CheckResult(tuple(results), failure, original)
    if report is not None:
        write_markdown(report, outcome, original)
        outcome = attrs.evolve(outcome, report_path=report)
    return outcome


def explain(result: CheckResult) -> str:
    """The failure's text report ("" when every run passed)."""
    return text_report(result, result.original)
