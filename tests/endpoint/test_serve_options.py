"""``sqsqueue serve``'s options from the environment (issue 31 §1): every
option as ``SQSQUEUE_<OPTION>``, the command line winning; bad values, an
unreadable config and a data directory the process cannot write are one line
and exit status 2, never a traceback; ``--lenient`` and ``SQSQUEUE_LENIENT``
turn named leniencies on and an unknown name is refused with the known ones.
docs/serving.md, "Options from the environment" and "Leniencies"."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsqueue._lenient import LENIENCIES
from sqsqueue.server import _cli
from tests._helpers import sqs_as, sqsqueue_serve

ENV = {k: v for k, v in os.environ.items() if not k.startswith("SQSQUEUE_")}


def parse(*argv: str) -> argparse.Namespace:
    return _cli._parser().parse_args(["serve", *argv])


def test_every_option_has_a_variable_and_the_command_line_wins() -> None:
    commands = argparse.ArgumentParser().add_subparsers()
    _cli.add_command(commands)
    options = {action.dest for action in commands.choices["serve"]._actions} - {"help"}
    assert options == set(_cli.OPTIONS)
    environ = {
        "SQSQUEUE_PORT": "1234",
        "SQSQUEUE_REGION": "eu-west-1",
        "SQSQUEUE_ACCOUNT_ID": "111122223333",
        "SQSQUEUE_ALLOW_ANONYMOUS": "yes",
        "SQSQUEUE_CONSOLE": "0",
        "SQSQUEUE_LOG_LEVEL": "info",
        "SQSQUEUE_LENIENT": "purge-interval, fifo-queue-false",
        "SQSQUEUE_IDLE_TIMEOUT": "2.5",
    }
    got = _cli.settings(parse(), environ)
    assert (got.port, got.region, got.account_id) == (1234, "eu-west-1", "111122223333")
    assert got.allow_anonymous is True and got.console is False
    assert got.log_level == "INFO" and got.idle_timeout == 2.5
    assert got.lenient == {"purge-interval", "fifo-queue-false"}
    assert got.host == "127.0.0.1" and got.data_dir is None  # defaults where nothing is set
    flags = parse("--port", "9999", "--region", "us-west-2", "--no-console", "--lenient", "")
    wins = _cli.settings(flags, {**environ, "SQSQUEUE_CONSOLE": "1"})
    assert (wins.port, wins.region, wins.console, wins.lenient) == (
        9999,
        "us-west-2",
        False,
        frozenset(),
    )
    defaults = _cli.settings(parse(), {})
    assert defaults.port == 9324 and defaults.lenient == frozenset()
    assert defaults.allow_anonymous is False and defaults.console is None


@pytest.mark.parametrize("text", ["1", "true", "YES", "0", "false", "No"])
def test_booleans_take_the_usual_words(text: str) -> None:
    got = _cli.settings(parse(), {"SQSQUEUE_WITH_MOTO": text})
    assert got.with_moto is (text.lower() in ("1", "true", "yes"))


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("SQSQUEUE_PORT", "abc", "SQSQUEUE_PORT: 'abc' is not a port number"),
        ("SQSQUEUE_PORT", "70000", "SQSQUEUE_PORT: 70000 is not a port"),
        ("SQSQUEUE_ACCOUNT_ID", "123", "SQSQUEUE_ACCOUNT_ID: '123' is not an account id"),
        ("SQSQUEUE_REGION", "Mars 1", "SQSQUEUE_REGION: 'Mars 1' is not a region"),
        ("SQSQUEUE_ALLOW_ANONYMOUS", "maybe", "'maybe' is not a boolean"),
        ("SQSQUEUE_DURABILITY", "disk", "'disk' is not one of process, machine"),
        ("SQSQUEUE_LENIENT", "nonsense", "unknown leniency 'nonsense': known are"),
        ("SQSQUEUE_IDLE_TIMEOUT", "-1", "the timeout must be greater than 0"),
    ],
)
def test_a_bad_variable_is_one_line_and_exit_2(variable: str, value: str, says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve"],
        env={**ENV, variable: value},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert says in done.stderr
    assert done.stderr.startswith("sqsqueue serve: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_an_unknown_leniency_on_the_command_line_lists_the_known_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "serve", "--lenient", "purge-interval,typo"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "unknown leniency 'typo'" in done.stderr
    assert all(name in done.stderr for name in LENIENCIES)
    assert "Traceback" not in done.stderr


def test_an_unreadable_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for config, says in (
        (tmp_path / "missing.toml", "no such file"),
        (tmp_path, "cannot be read"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "sqsqueue", "serve", "--port", "0"],
            env={**ENV, "SQSQUEUE_CONFIG": str(config)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def _as_nobody() -> dict[str, Any]:
    """Run a child as an unprivileged user when the tests run as root (root
    writes anywhere)."""
    return {"user": 65534, "group": 65534} if os.geteuid() == 0 else {}


def test_a_data_directory_the_user_cannot_write_names_the_uid(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    tmp_path.chmod(0o755)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sqsqueue", "serve", "--port", "0"],
            env={**ENV, "SQSQUEUE_DATA_DIR": str(locked / "inner")},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd="/",
            **_as_nobody(),
        )
    finally:
        locked.chmod(0o755)
    uid = 65534 if os.geteuid() == 0 else os.geteuid()
    assert done.returncode == 2, done.stderr
    assert f"is not writable by uid {uid}" in done.stderr and "chown" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_environment_configures_a_running_server(tmp_path: Path) -> None:
    """The variables reach the server: region and account in the queue ARN,
    the leniency let through and counted in the stop summary."""
    env = {
        **ENV,
        "SQSQUEUE_REGION": "eu-north-1",
        "SQSQUEUE_ACCOUNT_ID": "444455556666",
        "SQSQUEUE_LENIENT": "purge-interval",
    }
    with sqsqueue_serve(env=env, expect="region eu-north-1, account 444455556666") as (url, _):
        client = sqs_as(url, "test", "eu-north-1")
        queue = client.create_queue(QueueName="jobs")["QueueUrl"]
        arn = client.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
        assert arn["Attributes"]["QueueArn"] == "arn:aws:sqs:eu-north-1:444455556666:jobs"
        client.purge_queue(QueueUrl=queue)
        client.purge_queue(QueueUrl=queue)  # AWS: PurgeQueueInProgress
        # Another account's purges count too.
        other = sqs_as(url, "111111111111", "eu-north-1")
        other_queue = other.create_queue(QueueName="jobs")["QueueUrl"]
        other.purge_queue(QueueUrl=other_queue)
        other.purge_queue(QueueUrl=other_queue)
    strict = {**env, "SQSQUEUE_LENIENT": ""}
    with sqsqueue_serve(env=strict, expect="serving SQS at") as (url, _):
        client = sqs_as(url, "test", "eu-north-1")
        queue = client.create_queue(QueueName="jobs")["QueueUrl"]
        client.purge_queue(QueueUrl=queue)
        with pytest.raises(ClientError) as exc:
            client.purge_queue(QueueUrl=queue)
        assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.PurgeQueueInProgress"


def test_the_stop_summary_counts_every_account() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--lenient", "purge-interval"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split(" at ")[1].split()[0]
    for key in ("test", "111111111111", "222222222222"):
        client = sqs_as(url, key, "us-east-1")
        queue = client.create_queue(QueueName="jobs")["QueueUrl"]
        for _ in range(3):
            client.purge_queue(QueueUrl=queue)
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "6 requests AWS would have refused: purge-interval 6" in out
