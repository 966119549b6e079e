"""``sqsqueue check`` on a real consumer library in a second language, in CI:
bbc/sqs-consumer on Node.js, run as ``examples/check/node-sqs-consumer``
shows it (its README's usage plus the one effect line). ``python3 tests``
installs the library with the JavaScript SDK (``.ci/bootstrap.py``); the
whole fault matrix of docs/check.md is ``examples/check/real_consumers.py``.

What is asserted is what docs/check.md reports of the library: nothing lost
under kills and duplicates; order kept in FIFO groups with
``handleMessageBatch``; and, as for any consumer that is not idempotent,
duplicates caught under ``exactly-once``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from sqsqueue.check import CheckResult
from sqsqueue.testing import check

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
NODE_MODULES = VENV / "node" / "node_modules"
CONSUMER = ROOT / "examples" / "check" / "node-sqs-consumer" / "consumer.mjs"


@pytest.fixture(scope="module")
def consumer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's consumer beside the installed ``node_modules`` (an ES
    module finds its packages by its own directory, not NODE_PATH)."""
    assert shutil.which("node"), "node is not on PATH"
    assert (NODE_MODULES / "sqs-consumer" / "package.json").exists(), (
        f"sqs-consumer is not installed in {NODE_MODULES} (python3 tests installs it)"
    )
    where = tmp_path_factory.mktemp("sqs-consumer")
    shutil.copy(CONSUMER, where / "consumer.mjs")
    (where / "node_modules").symlink_to(NODE_MODULES)
    return where / "consumer.mjs"


def run(consumer: Path, **options: object) -> CheckResult:
    options.setdefault("visibility_timeout", 1)
    options.setdefault("timeout", 60)
    options.setdefault("output", subprocess.DEVNULL)
    return check(["node", str(consumer)], **options)  # type: ignore[arg-type]


def test_nothing_is_lost_under_kills_and_duplicates(consumer: Path) -> None:
    result = run(consumer, messages=20, faults="kill=2,duplicate=0.3", seed=3)
    assert result.ok, result.command_line
    (one,) = result.runs
    assert sum(i.how == "killed" for i in one.record.incarnations) >= 1
    assert one.record.count("effect") >= 20


def test_handle_message_batch_keeps_fifo_order_under_kills(
    consumer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDLE_BATCH", "1")  # the consumer's environment starts from ours
    result = run(
        consumer,
        messages=18,
        fifo=True,
        groups=3,
        faults="kill=1",
        seed=2,
        expect=["fifo-order", "at-least-once"],
    )
    assert result.ok, result.command_line
    (one,) = result.runs
    assert one.record.incarnations[0].how == "killed"


def test_duplicates_are_caught_under_exactly_once(consumer: Path) -> None:
    # A lost delete brings its message back after the visibility timeout, and
    # sqs-consumer handles it again: a second effect. Not shrunk (each shrink
    # step is one more run).
    result = run(
        consumer, messages=10, faults="duplicate=0.5", seed=1, expect=["exactly-once"], shrink=False
    )
    assert not result.ok
    assert {v.expectation for v in result.violations} == {"exactly-once"}
    assert all("effect" in v.reason for v in result.violations), result.violations[0].reason
