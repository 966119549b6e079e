"""What users' type checkers see: ``broker.clock.advance(5)``, the idiom of
docs/testing.md, passes ``mypy --strict``, and a queue's keywords are checked
with their types."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import sqsqueue

USER_CODE = textwrap.dedent(
    """
    from typing import Any
    from sqsqueue import Broker, ManualClock, SystemClock

    broker = Broker(clock=ManualClock(start=1_700_000_000.0))
    broker.clock.advance(5)
    reveal_type(broker.clock)
    reveal_type(Broker().clock)

    def takes_any(b: Broker[Any]) -> None: ...
    takes_any(broker)
    system: Broker[SystemClock] = Broker()
    """
)


def mypy_strict(code: str, where: Path) -> str:
    """What ``mypy --strict`` prints for ``code``, a user's module."""
    user = where / "user.py"
    user.write_text(code, encoding="utf-8")
    env = dict(os.environ)
    flags = []
    home = Path(sqsqueue.__file__).resolve().parent.parent
    if home.name != "site-packages":
        # An editable install of a checkout exposes sqsqueue through an import
        # hook (hatch's dev-mode-exact), which mypy does not follow: point mypy
        # at the checkout, and keep its errors in sqsqueue's own modules silent
        # as it keeps those of an installed package.
        env["MYPYPATH"] = str(home)
        flags = ["--follow-imports=silent"]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *flags, str(user)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=where,
        env=env,
    )
    return result.stdout


def test_broker_keeps_its_clock_type(tmp_path: Path) -> None:
    """``Broker`` is generic over its clock: a ManualClock broker's clock has
    ``advance``; a default broker's clock is a SystemClock."""
    out = mypy_strict(USER_CODE, tmp_path)
    assert 'Revealed type is "sqsqueue._clock.ManualClock"' in out, out
    assert 'Revealed type is "sqsqueue._clock.SystemClock"' in out, out
    assert "error" not in out.replace("Revealed type", ""), out


QUEUE_CODE = textwrap.dedent(
    """
    from sqsqueue import FifoQueue, ManualClock, Queue

    clock = ManualClock()
    dlq = Queue("dlq", clock=clock)
    Queue("jobs", clock=clock, visibility_timeout=30, dead_letter_queue=dlq, max_receive_count=3)
    Queue("jobs", region="eu-west-1", policy={"Statement": []}, sqs_managed_sse_enabled=False)
    FifoQueue("o.fifo", content_based_deduplication=True, deduplication_scope="messageGroup")
    Queue("jobs", visibility_timeout="30")  # error: a str for an int
    Queue("jobs", content_based_deduplication=True)  # error: a FIFO keyword
    Queue("jobs", visibility_timeot=30)  # error: a misspelt keyword
    """
)


def test_queue_keywords_are_typed(tmp_path: Path) -> None:
    """``Queue(name, **options)`` and ``FifoQueue``'s keywords are TypedDicts
    (``_operations.QueueOptions``): mypy checks each keyword and its type."""
    out = mypy_strict(QUEUE_CODE, tmp_path)
    errors = [line for line in out.splitlines() if ": error:" in line]
    wanted = [str(i) for i, line in enumerate(QUEUE_CODE.splitlines(), 1) if "# error" in line]
    assert [line.split(":")[1] for line in errors] == wanted, out
    assert '"visibility_timeout"' in errors[0] and '"str"' in errors[0], errors[0]
    assert '"content_based_deduplication"' in errors[1], errors[1]
    assert '"visibility_timeot"' in errors[2], errors[2]


def test_queue_keywords_are_the_attribute_table() -> None:
    """The typed keywords name exactly the attributes a queue takes, by the
    Pythonic names of ``_attributes.ATTRIBUTES`` (its rules)."""
    from sqsqueue import _attributes
    from sqsqueue._operations import FifoQueueOptions, QueueOptions, _QueueSetup

    setup = set(_QueueSetup.__optional_keys__)
    standard = {a.py_name for a in _attributes.ATTRIBUTES.values() if not a.fifo_only}
    every = {a.py_name for a in _attributes.ATTRIBUTES.values()}
    assert set(QueueOptions.__optional_keys__) - setup == standard
    assert set(FifoQueueOptions.__optional_keys__) - setup == every
