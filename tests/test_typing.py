"""What users' type checkers see (issue 12: ``broker.clock.advance(5)``, the
idiom of docs/testing.md, must pass ``mypy --strict``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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


def test_broker_keeps_its_clock_type(tmp_path: Path) -> None:
    """``Broker`` is generic over its clock: a ManualClock broker's clock has
    ``advance``; a default broker's clock is a SystemClock."""
    user = tmp_path / "user.py"
    user.write_text(USER_CODE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(user)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=tmp_path,
    )
    out = result.stdout
    assert 'Revealed type is "sqsqueue._clock.ManualClock"' in out, out
    assert 'Revealed type is "sqsqueue._clock.SystemClock"' in out, out
    assert "error" not in out.replace("Revealed type", ""), out
