"""The crash suite (issue 16): SIGKILL a durable broker's process at random
moments, again and again, and check that nothing it acknowledged was lost.

A child (``tests/_crash_worker.py``) runs a mixed workload against
``Broker(data_dir=...)`` and logs each operation after the call returned. The
parent kills it with SIGKILL at a random moment once it is working, starts it
again on the same directory, and repeats. Then it opens the directory itself
and checks, against the log:

* every acknowledged send is stored (in its queue or, dead-lettered, in the
  queue's DLQ) unless its delete was acknowledged (or a delete call returned
  just before the kill and was not logged: only the messages of the life's
  last delete intent can be those);
* no acknowledged delete came back (in the queue it was deleted from);
* each FIFO group's stored messages are in the order their sends were
  acknowledged, with increasing sequence numbers;
* deduplication held across restarts: an acknowledged send of a
  deduplication id got the message of the send before it unless that one's
  5-minute window had ended;
* the engine's invariants hold after the restore.

Most kills land once the worker is working; about one in seven lands at a
random moment of its start, while it opens (and prunes) the directory.
A few dozen kills here; ``SQSQUEUE_LONG=1`` runs at least 1,000.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import Broker, SystemClock
from sqsqueue._message import view
from tests._crash_worker import FIFO, FIFO_DLQ, STD, STD_DLQ
from tests._profiles import LONG

WORKER = Path(__file__).with_name("_crash_worker.py")
ROOT = Path(__file__).resolve().parent.parent
KILLS = 1_000 if LONG else 30


def read_log(path: Path) -> list[dict[str, Any]]:
    # Each line is one write() of a few hundred bytes to an O_APPEND file: a
    # kill lands before or after the system call, never inside it, so every
    # line must be whole.
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_lives(data_dir: Path, log: Path, kills: int, rng: random.Random) -> int:
    """Start and kill the worker ``kills`` times; return how many kills landed
    while it was opening the directory (before its "ready" line)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    early = 0
    start = 0.1  # seconds from spawn to "ready", as the last working life took
    for life in range(kills):
        before = log.stat().st_size if log.exists() else 0
        spawned = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, str(WORKER), str(data_dir), str(log), str(life)],
            env=env,
            stderr=subprocess.PIPE,
        )
        if life % 7 == 3:
            # A kill during the start: interpreter, imports, opening the store.
            time.sleep(rng.uniform(0.0, 0.8 * start))
            if child.poll() is not None:
                _, err = child.communicate()
                raise AssertionError(f"life {life}: the worker died by itself: {err.decode()}")
            child.send_signal(signal.SIGKILL)
            child.communicate()
            early += log.stat().st_size == before if log.exists() else 1
            continue
        deadline = time.monotonic() + 30
        # Wait until it is working (its "ready" line is in the log), then let it
        # run for a random moment and kill it.
        while (not log.exists() or log.stat().st_size == before) and child.poll() is None:
            assert time.monotonic() < deadline, "the worker did not start in 30 s"
            time.sleep(0.002)
        start = time.monotonic() - spawned
        time.sleep(rng.uniform(0.0, 0.25))
        if child.poll() is not None:
            _, err = child.communicate()
            raise AssertionError(f"life {life}: the worker died by itself: {err.decode()[-3000:]}")
        child.send_signal(signal.SIGKILL)
        child.communicate()
    return early


def last_intents(entries: list[dict[str, Any]]) -> list[set[str]]:
    """For each life, the ids of its last delete call whose acknowledgement it
    had not logged in full when it was killed (empty when none was pending)."""
    lives: list[set[str]] = []
    for e in entries:
        if e["op"] == "ready":
            lives.append(set())
        elif e["op"] == "deleting":
            lives[-1] = set(e["ids"])
        elif e["op"] == "delete":
            lives[-1].discard(e["id"])
    return lives


def verify(data_dir: Path, entries: list[dict[str, Any]]) -> dict[str, int]:
    sends = [e for e in entries if e["op"] in ("send", "fsend")]
    deletes = {(e["q"], e["id"]) for e in entries if e["op"] == "delete"}
    deleted_ids = {i for _, i in deletes}
    with Broker(clock=SystemClock(), data_dir=data_dir) as broker:
        stored: dict[str, dict[str, Any]] = {}
        for name in (STD, STD_DLQ, FIFO, FIFO_DLQ):
            q = broker.get_queue(name)
            q._check()
            stored[name] = {r.message_id: r for r in map(view, q._records.values())}
        home = {STD: STD_DLQ, FIFO: FIFO_DLQ}
        missing = {
            e["id"]
            for e in sends
            if e["id"] not in deleted_ids
            and e["id"] not in stored[e["q"]]
            and e["id"] not in stored[home[e["q"]]]
        }
        # A kill can land after a delete call returned and before its lines were
        # written: that delete happened, unacknowledged, as a client whose
        # connection dropped would see it. Only the messages of a life's last
        # delete intent can go that way. Anything else missing was lost.
        unexplained = set(missing)
        for pending in last_intents(entries):
            unexplained -= pending
        assert not unexplained, (
            f"{len(unexplained)} acknowledged sends lost: {sorted(unexplained)[:3]}"
        )
        back = [(q, i) for q, i in deletes if i in stored[q]]
        assert not back, f"acknowledged deletes came back: {back[:5]}"
        # FIFO order per group: stored messages in acknowledged-send order.
        first_send: dict[str, dict[str, Any]] = {}
        for e in sends:
            if e["op"] == "fsend":
                first_send.setdefault(e["id"], e)
        groups: dict[str, list[str]] = {}
        for e in first_send.values():
            if e["id"] in stored[FIFO]:
                groups.setdefault(e["group"], []).append(e["id"])
        for group, ids in groups.items():
            by_sequence = sorted(ids, key=lambda i: stored[FIFO][i].sequence_number)
            assert by_sequence == ids, f"group {group} out of order"
        # Deduplication across restarts: a send that got a new message for a
        # deduplication id must come after the window of the one before ended
        # (each logged send records when its entry expires, as the engine had it).
        last: dict[str, dict[str, Any]] = {}
        for e in sends:
            if e["op"] != "fsend":
                continue
            before = last.get(e["dedup"])
            if before is not None and e["id"] != before["id"]:
                assert e["t"] >= before["expires"], (
                    f"deduplication id {e['dedup']} gave {e['id']} at {e['t']:.3f}, while "
                    f"{before['id']}'s window ran to {before['expires']:.3f}"
                )
            last[e["dedup"]] = e
        return {
            "sends": len(sends),
            "deletes": len(deletes),
            "stored": sum(len(v) for v in stored.values()),
            "deleted unacknowledged": len(missing),
        }


@pytest.mark.timeout(3600 if LONG else 300)
def test_sigkill_at_random_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    log = tmp_path / "acknowledged.log"
    data_dir = tmp_path / "data"
    early = run_lives(data_dir, log, KILLS, rng)
    entries = read_log(log)
    lives = sum(1 for e in entries if e["op"] == "ready")
    assert lives == KILLS - early
    assert early > 0  # some kills did land while the worker opened the directory
    figures = verify(data_dir, entries)
    # The workload did something worth checking in this run.
    assert figures["sends"] > KILLS and figures["deletes"] > 0, figures
