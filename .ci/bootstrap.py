"""Create the project's virtualenv and install sqsqueue with the extras asked for.

Used by ``python3 tests`` and ``python3 examples`` so that both work on a fresh
machine that has only Python 3.11+ (and Java, for Spark). The install is
skipped when ``pyproject.toml`` and the extras have not changed since the last
one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("SQSQUEUE_VENV", ROOT / ".venv"))


def ensure_venv(extras: str) -> Path:
    """Return the venv's python, creating and installing it when needed."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"[bootstrap] creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".sqsqueue-installed-{extras.replace(',', '-')}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        print(f"[bootstrap] installing sqsqueue[{extras}] into {VENV}", flush=True)
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "-e", f"{ROOT}[{extras}]"], check=True)
        stamp.write_text(digest)
    return python


#: Clients the endpoint tests run as their users do, outside the project's venv:
#: the AWS CLI pins its own botocore, so it gets a venv of its own.
AWSCLI = "awscli>=1.32"
#: The JavaScript SDK (tests/endpoint) and bbc/sqs-consumer, a real Node.js
#: consumer library that tests/check runs under sqsqueue check's faults.
NPM_PACKAGES = ["@aws-sdk/client-sqs@^3", "sqs-consumer@^15"]
#: aioboto3 pins an aiobotocore of its own (15.5: aiobotocore 2.25, botocore
#: 1.40), older than the dev venv's newest aiobotocore 3.x: a venv of its own
#: too, so both aiobotocore lines are tested (tests/endpoint/test_real_clients.py).
AIOBOTO3 = "aioboto3>=15.5,<16"


#: The oldest moto sqsqueue.moto supports (the lower bound of the ``moto``
#: extra): the bridge's tests run there too (tests/moto/test_supported_range.py),
#: the newest being the dev venv's. With moto's services those tests drive.
MOTO_OLDEST = "moto[server,sqs,sns,s3,events,cloudformation,resourcegroupstaggingapi,ses]==5.0.0"
MOTO_OLDEST_TEST_DEPS = ["boto3", "pytest>=8", "pytest-timeout>=2.3", "hypothesis>=6.100"]


def _project_dependencies() -> list[str]:
    """sqsqueue's own runtime dependencies, as pyproject.toml names them."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])


def ensure_aioboto3() -> Path:
    """Install aioboto3 and sqsqueue's dependencies into ``.venv/aioboto3``
    (sqsqueue itself comes from the checkout, on PYTHONPATH); return its python."""
    target = VENV / "aioboto3"
    python = target / "bin" / "python"
    wanted = " ".join([AIOBOTO3, *_project_dependencies()])
    stamp = target / ".sqsqueue-installed"
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        print(f"[bootstrap] installing {wanted} into {target}", flush=True)
        venv.EnvBuilder(with_pip=True).create(target)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                AIOBOTO3,
                *_project_dependencies(),
            ],
            check=True,
        )
        stamp.write_text(wanted)
    return python


def ensure_moto_oldest() -> Path:
    """Install the oldest supported moto, the test tools and sqsqueue's
    dependencies into ``.venv/moto-oldest`` (sqsqueue itself comes from the
    checkout, on PYTHONPATH); return its python."""
    target = VENV / "moto-oldest"
    python = target / "bin" / "python"
    wanted = [MOTO_OLDEST, *MOTO_OLDEST_TEST_DEPS, *_project_dependencies()]
    stamp = target / ".sqsqueue-installed"
    if not python.exists() or not stamp.exists() or stamp.read_text() != " ".join(wanted):
        print(f"[bootstrap] installing {' '.join(wanted)} into {target}", flush=True)
        venv.EnvBuilder(with_pip=True).create(target)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *wanted],
            check=True,
        )
        stamp.write_text(" ".join(wanted))
    return python


def ensure_clients() -> None:
    """Install the AWS CLI into ``.venv/awscli``, aioboto3 into
    ``.venv/aioboto3`` and the JS SDK into ``.venv/node`` once; a failure stops
    the run (the tests would fail anyway); and the oldest supported moto into
    ``.venv/moto-oldest``."""
    ensure_aioboto3()
    ensure_moto_oldest()
    aws = VENV / "awscli" / "bin" / "aws"
    if not aws.exists():
        print(f"[bootstrap] installing {AWSCLI} into {VENV / 'awscli'}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV / "awscli")
        python = VENV / "awscli" / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", AWSCLI],
            check=True,
        )
    node = VENV / "node"
    names = [spec.rsplit("@", 1)[0] for spec in NPM_PACKAGES]
    if not all((node / "node_modules" / name / "package.json").exists() for name in names):
        print(f"[bootstrap] npm install {' '.join(NPM_PACKAGES)} into {node}", flush=True)
        node.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(node),
                "--no-audit",
                "--no-fund",
                "--silent",
                *NPM_PACKAGES,
            ],
            check=True,
        )


#: Debian's Chromium, which tests/endpoint/test_console_browser.py drives
#: through Playwright's executable_path (Playwright's own download is never used).
CHROMIUM = Path("/usr/bin/chromium")


def ensure_chromium() -> None:
    """Install Debian's ``chromium`` package once, as root with apt-get; a
    no-op when it is there. Where it cannot be installed (not root, no
    apt-get, no package), say so: the browser tests then skip, naming why."""
    if CHROMIUM.exists():
        return
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        print(
            f"[bootstrap] {CHROMIUM} is missing and cannot be installed here (needs root and "
            "apt-get): the console's browser tests will be skipped",
            flush=True,
        )
        return
    print("[bootstrap] apt-get install chromium (for the console's browser tests)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    out = subprocess.DEVNULL
    subprocess.run([apt, "update", "-q"], stdout=out, env=env, check=False)
    done = subprocess.run(
        [apt, "install", "-y", "-q", "chromium"], stdout=out, env=env, check=False
    )
    if done.returncode != 0 or not CHROMIUM.exists():
        print("[bootstrap] chromium could not be installed: browser tests will skip", flush=True)


def run(cmd: list[str]) -> int:
    print(f"[run] {' '.join(cmd)}", flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["aioboto3"]:
        print(ensure_aioboto3())
    elif sys.argv[1:] == ["moto-oldest"]:
        print(ensure_moto_oldest())
    elif sys.argv[1:] == ["chromium"]:
        ensure_chromium()
    else:
        print(ensure_venv(sys.argv[1] if len(sys.argv) > 1 else "dev"))
