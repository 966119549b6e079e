"""What one ``sqsqueue check`` asks for: the fault schedule, the expectations,
the input, and their parsing from the command line's text.

Every value is checked here, once, so the command and the Python API refuse
the same things with the same one-line message (:class:`UsageError`).
Parsing is O(len(text)).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Sequence

import attrs

__all__ = [
    "EXPECTATIONS",
    "FaultSpec",
    "Schedule",
    "UsageError",
    "parse_expectations",
    "parse_faults",
]

#: The expectations ``--expect`` takes, in the order reports list them.
EXPECTATIONS = ("at-least-once", "exactly-once", "fifo-order")


class UsageError(ValueError):
    """A check asked for something that cannot be run: the command answers
    it with its one-line message and exit status 2."""


@attrs.frozen
class FaultSpec:
    """The faults of one run (``--faults``).

    ``duplicate``: the probability that a DeleteMessage is acknowledged but
    the message survives (redelivered after its visibility timeout);
    ``reorder``: receives take receivable messages in random order;
    ``partial``: a short poll returns a random part of what it could;
    ``kill``: SIGKILL the consumer this many times while it has messages in
    flight, restarting it each time; ``slow``: milliseconds added to every
    answer about the consumed queue; ``throttle``: the probability that a
    request about the consumed queue is answered with SQS's throttling error.
    The effects queue is never faulted: it is the checker's instrument.
    """

    duplicate: float = 0.0
    reorder: bool = False
    partial: bool = False
    kill: int = 0
    slow: int = 0
    throttle: float = 0.0

    def text(self) -> str:
        """The ``--faults`` text that gives this spec back ("" for none)."""
        items: list[str] = []
        if self.duplicate:
            items.append(f"duplicate={self.duplicate:g}")
        if self.reorder:
            items.append("reorder")
        if self.partial:
            items.append("partial")
        if self.kill:
            items.append(f"kill={self.kill}")
        if self.slow:
            items.append(f"slow={self.slow}")
        if self.throttle:
            items.append(f"throttle={self.throttle:g}")
        return ",".join(items)

    def fewer(self) -> list[FaultSpec]:
        """Smaller schedules, for shrinking a failure: each fault dropped in
        turn, then fewer kills. O(number of faults)."""
        dropped = [
            (bool(self.throttle), attrs.evolve(self, throttle=0.0)),
            (bool(self.slow), attrs.evolve(self, slow=0)),
            (self.partial, attrs.evolve(self, partial=False)),
            (self.reorder, attrs.evolve(self, reorder=False)),
            (bool(self.duplicate), attrs.evolve(self, duplicate=0.0)),
            (bool(self.kill), attrs.evolve(self, kill=0)),
        ]
        out = [smaller for here, smaller in dropped if here]
        if self.kill > 1:
            out.append(attrs.evolve(self, kill=self.kill // 2))
            out.append(attrs.evolve(self, kill=self.kill - 1))
        return out


def _rate(name: str, value: str) -> float:
    try:
        rate = float(value)
    except ValueError:
        raise UsageError(
            f"--faults {name}={value}: the rate must be a number from 0 to 1"
        ) from None
    if not (math.isfinite(rate) and 0 <= rate <= 1):
        raise UsageError(f"--faults {name}={value}: the rate must be a number from 0 to 1")
    return rate


def _count(name: str, value: str, unit: str) -> int:
    if not value.isdigit():
        raise UsageError(f"--faults {name}={value}: {unit} must be a whole number >= 0")
    return int(value)


def parse_faults(text: str | Iterable[str] | None) -> FaultSpec:
    """A :class:`FaultSpec` from ``"duplicate=0.3,reorder,kill=2"`` (or an
    iterable of such items); UsageError naming the first bad item."""
    if text is None:
        return FaultSpec()
    items = text.split(",") if isinstance(text, str) else list(text)
    found: dict[str, object] = {}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        name, eq, value = item.partition("=")
        name = name.strip().lower()
        value = value.strip()
        if name in found:
            raise UsageError(f"--faults: {name} is given twice")
        if name in ("reorder", "partial"):
            if eq:
                raise UsageError(f"--faults {item}: {name} takes no value")
            found[name] = True
        elif name in ("duplicate", "throttle"):
            if not eq:
                raise UsageError(f"--faults {name}: give a rate, e.g. {name}=0.2")
            found[name] = _rate(name, value)
        elif name == "kill":
            found[name] = _count(name, value if eq else "1", "the number of kills")
        elif name == "slow":
            if not eq:
                raise UsageError("--faults slow: give milliseconds, e.g. slow=50")
            found[name] = _count(name, value, "the milliseconds")
        else:
            raise UsageError(
                f"--faults: unknown fault {name!r} (known: duplicate=RATE, reorder, partial, "
                "kill=K, slow=MS, throttle=RATE)"
            )
    return FaultSpec(**found)  # type: ignore[arg-type]


def parse_expectations(names: Iterable[str] | None) -> tuple[str, ...]:
    """The expectations asked for, deduplicated in :data:`EXPECTATIONS`'
    order; ``at-least-once`` when none is."""
    chosen: set[str] = set()
    for name in names or ():
        if name not in EXPECTATIONS:
            raise UsageError(
                f"--expect: unknown expectation {name!r} (known: {', '.join(EXPECTATIONS)})"
            )
        chosen.add(name)
    if not chosen:
        chosen.add("at-least-once")
    return tuple(e for e in EXPECTATIONS if e in chosen)


@attrs.frozen
class Schedule:
    """Everything one run depends on: with the same consumer, the same
    schedule gives the same input, faults and kill moments (the consumer's
    and the machine's timing still vary)."""

    command: tuple[str, ...]
    seed: int
    messages: int = 20
    fifo: bool = False
    groups: int = 1
    faults: FaultSpec = FaultSpec()
    visibility_timeout: float = 2.0
    expect: tuple[str, ...] = ("at-least-once",)
    timeout: float = 60.0
    max_receive_count: int | None = None
    allow_dead_letters: bool = False

    def validate(self) -> Schedule:
        """Itself, or UsageError naming the first bad value."""
        counts: dict[str, object] = {
            "messages": self.messages,
            "groups": self.groups,
            "seed": self.seed,
        }
        if self.max_receive_count is not None:
            counts["max_receive_count"] = self.max_receive_count
        for name, value in counts.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{name} must be a whole number, not {value!r}")
        seconds: dict[str, object] = {
            "visibility_timeout": self.visibility_timeout,
            "timeout": self.timeout,
        }
        for name, value in seconds.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"{name} must be a number of seconds, not {value!r}")
        if not self.command:
            raise UsageError("no consumer command: give it after --, e.g. -- python worker.py")
        if self.messages < 1:
            raise UsageError(f"--messages {self.messages}: give at least 1 message")
        if self.groups < 1:
            raise UsageError(f"--groups {self.groups}: give at least 1 group")
        if self.groups > 1 and not self.fifo:
            raise UsageError("--groups needs --fifo (message groups are a FIFO queue's)")
        if "fifo-order" in self.expect and not self.fifo:
            raise UsageError("--expect fifo-order needs --fifo")
        if not (math.isfinite(self.visibility_timeout) and 0 <= self.visibility_timeout <= 43200):
            raise UsageError(
                f"--visibility-timeout {self.visibility_timeout:g}: give 0 to 43200 seconds"
            )
        if self.visibility_timeout != int(self.visibility_timeout):
            raise UsageError(
                f"--visibility-timeout {self.visibility_timeout:g}: SQS takes whole seconds"
            )
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise UsageError(f"--timeout {self.timeout:g}: give a number of seconds above 0")
        if self.max_receive_count is not None and not 1 <= self.max_receive_count <= 1000:
            raise UsageError(f"--max-receive-count {self.max_receive_count}: give 1 to 1000")
        if self.allow_dead_letters and self.max_receive_count is None:
            raise UsageError("--allow-dead-letters needs --max-receive-count")
        return self

    def argv(self) -> list[str]:
        """The ``sqsqueue check`` arguments that run this schedule again."""
        out = ["sqsqueue", "check", "--messages", str(self.messages)]
        if self.fifo:
            out += ["--fifo", "--groups", str(self.groups)]
        faults = self.faults.text()
        if faults:
            out += ["--faults", faults]
        out += ["--seed", str(self.seed)]
        out += ["--visibility-timeout", f"{self.visibility_timeout:g}"]
        for expectation in self.expect:
            out += ["--expect", expectation]
        if self.max_receive_count is not None:
            out += ["--max-receive-count", str(self.max_receive_count)]
        if self.allow_dead_letters:
            out.append("--allow-dead-letters")
        out += ["--timeout", f"{self.timeout:g}", "--", *self.command]
        return out

    def command_line(self) -> str:
        """:meth:`argv` as one shell line."""
        return shlex.join(self.argv())


def as_command(command: str | Sequence[str]) -> tuple[str, ...]:
    """A command given as a shell line or as its arguments."""
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(command)


def count_messages(n: int) -> str:
    """``1 message``, ``15 messages``: how reports count them."""
    return f"{n} message" if n == 1 else f"{n} messages"
