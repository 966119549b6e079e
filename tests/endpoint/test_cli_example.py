"""The documentation's AWS CLI example works as written on a fresh machine:
no AWS configuration at all (no ``~/.aws``, no ``AWS_*`` variables), the
``sqsqueue serve`` command running, then the example's ``export`` and
``aws`` lines run in a shell. The example is read from the README and the
guides under docs/ (every ``bash`` block that creates a queue with the CLI),
so the test follows the text; the AWS CLI is ``python3 tests``' own
(``.venv/awscli``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
AWS_BIN = VENV / "awscli" / "bin"
DOCUMENTED = "http://127.0.0.1:9324"


def _examples() -> list[tuple[str, list[str]]]:
    """(file, shell lines) of each documented CLI example: the ``export`` and
    ``aws`` lines of a bash block that runs ``aws ... sqs create-queue``."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", text, flags=re.S):
            if "sqs create-queue" not in block or DOCUMENTED not in block:
                continue
            lines = [
                line.strip()
                for line in block.splitlines()
                if line.strip().startswith(("export ", "aws "))
            ]
            found.append((doc.name, lines))
    return found


@pytest.fixture
def fresh_env(tmp_path: Path) -> dict[str, str]:
    """A machine that never ran ``aws configure``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["HOME"] = str(tmp_path)
    env["PATH"] = f"{AWS_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["AWS_EC2_METADATA_DISABLED"] = "true"  # no instance-metadata probe on a laptop
    return env


@pytest.fixture
def served(fresh_env: dict[str, str]) -> Iterator[str]:
    """``python -m sqsqueue serve`` with its defaults, on a free port."""
    env = {**fresh_env, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsqueue", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "serving SQS at " in line, line
        yield line.split("serving SQS at ")[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_documented_cli_example_works_on_a_fresh_machine(
    served: str, fresh_env: dict[str, str]
) -> None:
    assert (AWS_BIN / "aws").exists(), (
        f"the AWS CLI is not at {AWS_BIN} (python3 tests installs it)"
    )
    examples = _examples()
    assert examples, "no documented 'aws --endpoint-url ... sqs create-queue' example found"
    for name, lines in examples:
        script = "set -e\n" + "\n".join(lines).replace(DOCUMENTED, served)
        done = subprocess.run(
            ["bash", "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            env=fresh_env,
            cwd=fresh_env["HOME"],
            check=False,
        )
        assert done.returncode == 0, (name, script, done.stderr)
        assert f"{served}/000000000000/" in done.stdout, (name, done.stdout)


def test_without_region_and_credentials_the_cli_refuses(
    served: str, fresh_env: dict[str, str]
) -> None:
    """Why the example sets them: the bare command fails on a fresh machine."""
    done = subprocess.run(
        [
            str(AWS_BIN / "aws"),
            "--endpoint-url",
            served,
            "sqs",
            "create-queue",
            "--queue-name",
            "jobs",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=fresh_env,
        cwd=fresh_env["HOME"],
        check=False,
    )
    assert done.returncode != 0
    assert "region" in done.stderr.lower() or "credentials" in done.stderr.lower()
