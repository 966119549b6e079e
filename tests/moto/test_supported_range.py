"""sqsqueue.moto at both ends of the moto versions its extra declares.

The dev venv holds the newest moto of the range (this suite's other tests run
on it); ``python3 tests`` installs the oldest into ``.venv/moto-oldest``
(``.ci/bootstrap.py``), where this test runs the bridge's tests and the
mock_sqs forms again in a separate pytest. A missing venv fails, never skips.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import moto

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))
OLDEST_PYTHON = VENV / "moto-oldest" / "bin" / "python"


def _declared_range() -> tuple[str, str]:
    """(lowest, first excluded) of the ``moto`` extra's moto requirement."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    [requirement] = [r for r in extras["moto"] if r.startswith("moto")]
    match = re.fullmatch(r"moto>=([0-9.]+),<([0-9.]+)", requirement)
    assert match, requirement
    return match.group(1), match.group(2)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_the_dev_venv_has_the_newest_supported_moto() -> None:
    """The rest of this suite runs on the last minor version of the range."""
    _, excluded = _declared_range()
    upper = _minor(excluded)
    assert _minor(moto.__version__) == (upper[0], upper[1] - 1), moto.__version__


def test_the_bridge_on_the_oldest_supported_moto() -> None:
    """The bridge's tests and the mock_sqs forms pass on the oldest moto the
    extra admits (moto-alone halves included: the comparisons hold there too)."""
    assert OLDEST_PYTHON.exists(), (
        f"the oldest moto is not installed at {OLDEST_PYTHON} (python3 tests installs it)"
    )
    lowest, _ = _declared_range()
    version = subprocess.run(
        [str(OLDEST_PYTHON), "-c", "import moto; print(moto.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    assert _minor(version) == _minor(lowest) and version.startswith(lowest), version
    done = subprocess.run(
        [
            str(OLDEST_PYTHON),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/moto/test_bridge.py",
            "tests/aws/test_mock_forms.py",
            "tests/aws/test_moto_coexistence.py",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
