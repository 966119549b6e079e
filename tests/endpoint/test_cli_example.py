"""The documentation's AWS CLI examples work as written on a fresh machine:
no AWS configuration at all (no ``~/.aws``, no ``AWS_*`` variables), the
``sqsqueue serve`` command running (``--with-moto`` for an example that says
so), then the example's ``export`` and ``aws`` commands run in a shell. The
examples are read from the README and the guides under docs/ (every ``bash``
block that creates a queue with the CLI at the documented address), so the
test follows the text; the AWS CLI is ``python3 tests``' own (``.venv/awscli``)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._helpers import sqsqueue_serve

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
AWS_BIN = VENV / "awscli" / "bin"
DOCUMENTED = "http://127.0.0.1:9324"
CONTINUED = "\\\n"


def _examples(with_moto: bool) -> list[tuple[str, list[str]]]:
    """(file, shell commands) of each documented CLI example: the ``export``
    and ``aws`` commands (continued lines joined) of a bash block that runs
    ``aws ... sqs create-queue``, among those serving ``--with-moto`` or not."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", text, flags=re.S):
            if "sqs create-queue" not in block or DOCUMENTED not in block:
                continue
            if ("--with-moto" in block) != with_moto:
                continue
            commands = block.replace(CONTINUED, " ").splitlines()
            lines = [c.strip() for c in commands if c.strip().startswith(("export ", "aws "))]
            found.append((doc.name, lines))
    return found


@pytest.fixture
def fresh_env(tmp_path: Path) -> dict[str, str]:
    """A machine that never ran ``aws configure``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_"))}
    env["HOME"] = str(tmp_path)
    env["PATH"] = f"{AWS_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["AWS_EC2_METADATA_DISABLED"] = "true"  # no instance-metadata probe on a laptop
    return env


@contextlib.contextmanager
def _serve(fresh_env: dict[str, str], *flags: str) -> Iterator[str]:
    env = {**fresh_env, "PYTHONPATH": str(ROOT)}
    with sqsqueue_serve(*flags, env=env, expect="sqsqueue: serving SQS") as (url, _):
        yield url


def _run(script: str, fresh_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", "set -e\n" + script],
        capture_output=True,
        text=True,
        timeout=120,
        env=fresh_env,
        cwd=fresh_env["HOME"],
        check=False,
    )


@pytest.mark.parametrize("with_moto", [False, True], ids=["serve", "serve --with-moto"])
def test_the_documented_cli_examples_work_on_a_fresh_machine(
    fresh_env: dict[str, str], with_moto: bool
) -> None:
    """Each example runs whole against the served endpoint: the README's
    creates its queue there; docs/moto.md's (``--with-moto``) ends by
    receiving what SNS delivered."""
    assert (AWS_BIN / "aws").exists(), (
        f"the AWS CLI is not at {AWS_BIN} (python3 tests installs it)"
    )
    examples = _examples(with_moto)
    assert examples, "no documented 'aws --endpoint-url ... sqs create-queue' example found"
    with _serve(fresh_env, *(["--with-moto"] if with_moto else [])) as served:
        for name, lines in examples:
            done = _run("\n".join(lines).replace(DOCUMENTED, served), fresh_env)
            assert done.returncode == 0, (name, lines, done.stderr)
            account = "123456789012" if with_moto else "000000000000"
            assert f"{served}/{account}/" in done.stdout, (name, done.stdout)
            if with_moto:
                assert "order 1 placed" in done.stdout, (name, done.stdout)


def test_without_region_and_credentials_the_cli_refuses(fresh_env: dict[str, str]) -> None:
    """Why the examples set them: the bare command fails on a fresh machine."""
    with _serve(fresh_env) as served:
        done = _run(f"aws --endpoint-url {served} sqs create-queue --queue-name jobs", fresh_env)
        assert done.returncode != 0
        assert "region" in done.stderr.lower() or "credentials" in done.stderr.lower()
