"""The demo, examples/spark_pipeline.py, runs and verifies itself.

It runs in a subprocess: its ``run()`` stops the SparkSession it gets from
``getOrCreate``, which in this process would be the shared test session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(420)
def test_demo_counts_every_good_event_exactly_once(tmp_path: Path) -> None:
    """With 300 events the pipeline (a served broker; producer and its replay,
    a streaming consumer with an injected failure and a restart, DLQ for malformed
    events, all through ``format("sqs")``) exits 0 and reports exactly-once
    counting."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "spark_pipeline.py"),
            "--events",
            "300",
            "--batch",
            "100",
        ],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "every good event counted exactly once: YES" in proc.stdout
    assert "OK: pipeline verified" in proc.stdout
    assert "after the replayed write 300 (none stored twice)" in proc.stdout
    assert "1 failed, 100 messages redelivered" in proc.stdout
