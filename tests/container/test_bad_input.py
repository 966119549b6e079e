"""Bad input gets one clear line and exit status 2, never a traceback
(issue 31, part 1): a ``SQSQUEUE_*`` value that is not one (a port that is
not a number, an account id that is not 12 digits, an unknown leniency, a
boolean that is none), a config file that cannot be read, and a data
directory the image's user cannot write (the line names uid 10001 and how to
fix it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.container import _docker

# The first test of a run waits for both images to build (about 100 s on an idle
# machine, longer on a busy one): more than the suite's 300 s per test is allowed.
pytestmark = [pytest.mark.container, pytest.mark.timeout(1800)]


def run_to_exit(
    image: str, env: dict[str, str], volumes: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """``docker run`` in the foreground: (exit code, stdout, stderr). A
    server that starts instead of refusing is removed after 10 s."""
    name = _docker.new_name("bad")
    args = ["docker", "run", "--rm", "--network", "host", "--name", name]
    # A free port on loopback: a server that wrongly starts clashes with nothing.
    args += ["-e", f"SQSQUEUE_PORT={_docker.free_port()}", "-e", "SQSQUEUE_HOST=127.0.0.1"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    for volume in volumes:
        args += ["-v", volume]
    try:
        done = subprocess.run(
            [*args, image], capture_output=True, text=True, timeout=10, check=False
        )
    except subprocess.TimeoutExpired as exc:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)
        raise AssertionError(f"started instead of refusing {env}: {exc.stdout!r}") from None
    return done.returncode, done.stdout, done.stderr


def assert_one_line(code: int, out: str, err: str, *expected: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err, err
    assert len(lines) == 1, err
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SQSQUEUE_PORT", "abc"),
        ("SQSQUEUE_ACCOUNT_ID", "123"),
        ("SQSQUEUE_LENIENT", "nonsense"),
        ("SQSQUEUE_ALLOW_ANONYMOUS", "maybe"),
    ],
)
def test_a_bad_environment_value(sqs_image: str, variable: str, value: str) -> None:
    """The line names the variable and its value."""
    code, out, err = run_to_exit(sqs_image, {variable: value})
    assert_one_line(code, out, err, variable, value)


def test_a_config_file_that_cannot_be_read(sqs_image: str) -> None:
    code, out, err = run_to_exit(sqs_image, {"SQSQUEUE_CONFIG": "/nonexistent.toml"})
    assert_one_line(code, out, err, "/nonexistent.toml")


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a root-owned directory to mount")
def test_a_data_directory_the_user_cannot_write(sqs_image: str, tmp_path: Path) -> None:
    """A root-owned 0755 host directory mounted at /data: the image's user
    (uid 10001) cannot write there; the line says so and how to fix it."""
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    tmp_path.chmod(0o755)
    code, out, err = run_to_exit(sqs_image, {"SQSQUEUE_DATA_DIR": "/data"}, (f"{data}:/data",))
    line = assert_one_line(code, out, err, "/data", str(_docker.UID))
    assert "chown" in line, line
    assert not list(data.iterdir())
