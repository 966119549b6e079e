"""A suite written for ElasticMQ against ``sqsqueue serve``, as its users run it
(issue 31; docs/serving.md, "Suites written for ElasticMQ").

bbc/sqs-consumer's integration suite (cucumber, ``test/features``) expects
ElasticMQ on port 9324 and purges its queue between scenarios. The npm package
does not ship those features, so CI cannot run the suite itself (the recorded
run and the commands to repeat it are in docs/serving.md); this replays its
calls in its order with Node's AWS SDK v3 (``clients/elasticmq_suite.cjs``):
its init script's queue, then ten scenarios each followed by its After hook's
PurgeQueue. Strict, every scenario after the first fails with
PurgeQueueInProgress, as the real suite does; with ``purge-interval`` on, by
``--lenient`` or ``SQSQUEUE_LENIENT``, all ten pass and the server counts the
15 purges AWS would have refused, in ``/_sqsqueue/health`` and in its stop
summary. A missing Node SDK fails these tests, it never skips them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
NODE_MODULES = VENV / "node" / "node_modules"
SCRIPT = Path(__file__).parent / "clients" / "elasticmq_suite.cjs"
SCENARIOS = [
    "Error event without a message",
    "Error event with a message",
    "Message events are emitted with metadata",
    "Empty queue event is emitted with metadata",
    "Started and stopped events are emitted with metadata",
    "Several messages in flight",
    "A message is consumed from SQS",
    "Multiple messages are consumed from SQS",
    "A message batch is consumed from SQS",
    "Multiple message batches are consumed from SQS",
]
#: PurgeQueue calls after the first: nine After hooks and six Given steps.
REFUSED = 15


@dataclass
class Served:
    url: str
    health: dict[str, Any] = field(default_factory=dict)
    printed: list[str] = field(default_factory=list)


@contextmanager
def serve(*options: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``sqsqueue serve`` in the suite's region on a free port of 127.0.0.1;
    on leaving, its health as the run left it and what it printed after its
    first line, up to and including SIGTERM."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SQSQUEUE_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqsqueue",
            "serve",
            "--port",
            "0",
            "--region",
            "eu-west-1",
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "serving SQS at " in line, (line, proc.stderr.read() if proc.stderr else "")
        served = Served(line.split("serving SQS at ")[1].split()[0])
        yield served
        with urllib.request.urlopen(f"{served.url}/_sqsqueue/health", timeout=10) as reply:
            served.health = json.loads(reply.read())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        served.printed = proc.stdout.read().splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run_suite(endpoint_url: str) -> dict[str, Any]:
    assert (NODE_MODULES / "@aws-sdk" / "client-sqs").exists(), (
        f"@aws-sdk/client-sqs is not installed in {NODE_MODULES} (python3 tests installs it)"
    )
    done = subprocess.run(
        ["node", str(SCRIPT), str(NODE_MODULES), endpoint_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert [s["name"] for s in out["scenarios"]] == SCENARIOS
    # the ElasticMQ URL its init script waits for, and its QUEUE_URL
    assert out["url"] == f"{endpoint_url}/000000000000/sqs-consumer-data"
    return out


def test_strict_fails_every_scenario_after_the_first_on_purge_queue_in_progress() -> None:
    with serve() as served:
        out = run_suite(served.url)
    passed = [s["name"] for s in out["scenarios"] if s["ok"]]
    errors = [e for s in out["scenarios"] for e in s["errors"]]
    assert passed == SCENARIOS[:1]
    assert errors == ["PurgeQueueInProgress"] * REFUSED
    assert served.health["lenient"] == {}
    assert served.printed == [
        f"sqsqueue: console at {served.url}/_sqsqueue/console/",
        "sqsqueue: stopped",
    ]


@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["--lenient", "purge-interval"], {}),
        ([], {"SQSQUEUE_LENIENT": "purge-interval"}),
    ],
    ids=["--lenient", "SQSQUEUE_LENIENT"],
)
def test_purge_interval_passes_all_ten_and_counts_what_aws_would_refuse(
    options: list[str], env: dict[str, str]
) -> None:
    with serve(*options, env=env) as served:
        out = run_suite(served.url)
    failed = {s["name"]: s["errors"] for s in out["scenarios"] if not s["ok"]}
    assert failed == {}
    assert served.health["lenient"] == {"purge-interval": REFUSED}
    assert served.health["region"] == "eu-west-1"
    assert served.health["queues"] == 1
    assert served.printed == [
        f"sqsqueue: console at {served.url}/_sqsqueue/console/",
        "sqsqueue: lenient: purge-interval (what AWS would refuse is let through and counted: "
        "/_sqsqueue/health)",
        f"sqsqueue: {REFUSED} requests AWS would have refused: purge-interval {REFUSED}",
        "sqsqueue: stopped",
    ]
