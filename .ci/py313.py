"""Run the whole test suite on Python 3.13, in a Debian 13 container.

``.ci/run`` runs this beside ``python3 tests`` (the machine's own Python), so
that CI tests both ends of what ``pyproject.toml`` claims. The image is Debian
13 ("trixie") made with debootstrap from the machine's own mirror (no registry
is reachable in CI) by ``tests/container/_docker.py``, with what ``python3
tests`` needs outside its venv: Node.js and npm (the JavaScript SDK's tests),
a Java runtime (Spark) and Chromium (the console's browser tests). The tree
goes in as a tarball, without the host's venv and caches, and the suite runs
there exactly as on a fresh machine: ``python3 tests`` makes its own venv and
clients. The container runs on the host's network (``--network host``): the
tests talk to 127.0.0.1 only. The container tests themselves skip inside it
(no Docker there); the host's run has them.

Needs root and a Docker daemon (``.ci/run`` starts one). Extra arguments go to
pytest, as with ``python3 tests``: ``python3 .ci/py313.py -k fifo -x``.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.container import _docker  # noqa: E402

#: The Python version this run exists to test: the classifiers in
#: pyproject.toml name it (tests/test_packaging.py holds the two together).
PYTHON = "3.13"
#: Debian 13's minimal base with its Python, made like the Dockerfile's base.
TRIXIE = _docker.Base(
    "trixie", "sqsqueue-ci-base:trixie", ("python3", "python3-venv", "ca-certificates")
)
#: The test image: that base, and what ``python3 tests`` needs outside its
#: venv, installed by apt in a build (debootstrap's own resolver cannot
#: choose among the alternatives that npm's and Chromium's dependencies offer).
IMAGE = "sqsqueue-ci-py313:trixie"
TOOLS = ("nodejs", "npm", "openjdk-21-jre-headless", "chromium", "procps")
DOCKERFILE = f"""\
FROM {TRIXIE.tag}
RUN apt-get update -q \\
 && DEBIAN_FRONTEND=noninteractive \\
    apt-get install -y -q --no-install-recommends {" ".join(TOOLS)} \\
 && rm -rf /var/lib/apt/lists/*
# npm reads its own CA file setting, Node.js the extra CAs: both get the
# machine's bundle (an egress proxy's CA among them), as pip does.
ENV NODE_EXTRA_CA_CERTS={_docker.CA_BUNDLE} NPM_CONFIG_CAFILE={_docker.CA_BUNDLE}
"""
#: The label holding what :data:`IMAGE` was built from (its base's id and
#: :data:`DOCKERFILE`): a rebuilt base or a changed recipe builds it anew.
RECIPE_LABEL = "org.sqsqueue.ci.py313-recipe"


def ensure_image() -> str:
    """:data:`IMAGE`, built once on :data:`TRIXIE` (made first if need be)."""
    base = _docker.ensure_debian(TRIXIE)
    recipe = hashlib.sha256(f"{_docker.image_id(base)}\n{DOCKERFILE}".encode()).hexdigest()
    if _docker.image_exists(IMAGE) and _docker.labels(IMAGE).get(RECIPE_LABEL) == recipe:
        return IMAGE
    build = subprocess.run(
        ["docker", "build", "--network", "host", "--label", f"{RECIPE_LABEL}={recipe}",
         "-t", IMAGE, "-"],
        input=DOCKERFILE.encode(),
        capture_output=True,
        check=False,
    )  # fmt: skip
    if build.returncode != 0:
        raise RuntimeError(build.stderr.decode(errors="replace")[-3000:])
    return IMAGE


#: Kept between local runs: pip's downloads (CI starts with none).
PIP_CACHE = "sqsqueue-ci-py313-pip-cache"


def tree() -> bytes:
    """The checkout as a tarball under ``src/``: the files git tracks and
    the new ones it does not ignore (not the host's venv, caches or bytecode)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name in sorted(filter(None, listed.split("\0"))):
            path = ROOT / name
            if path.is_file():  # a file deleted from the work tree is still listed
                tar.add(path, arcname=f"src/{name}", recursive=False)
    return out.getvalue()


def say(text: str) -> None:
    print(f"[py313] {text}", flush=True)


def main(pytest_args: list[str]) -> int:
    why = _docker.unavailable()
    if why is not None:
        say(f"cannot run the suite on Python {PYTHON}: {why}")
        return 1
    started = time.monotonic()
    try:
        image = ensure_image()
    except (RuntimeError, subprocess.CalledProcessError, AssertionError) as exc:
        say(f"cannot make the Debian 13 image: {exc}")
        return 1
    say(f"image {image} ready in {time.monotonic() - started:.0f} s")
    version = _docker.docker(
        "run", "--rm", "--network", "host", image,
        "python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])",
    ).strip()  # fmt: skip
    if version != PYTHON:
        say(f"the Debian 13 image has Python {version}, not {PYTHON}")
        return 1
    name = f"sqsqueue-ci-py313-{os.getpid()}"
    script = 'tar -x -C / && cd /src && exec python3 tests "$@"'
    command = [
        "docker", "run", "--rm", "-i", "--network", "host", "--name", name,
        "-e", "SQSQUEUE_VENV=/venv",
        "-e", f"SQSQUEUE_HYPOTHESIS_PROFILE={os.environ.get('SQSQUEUE_HYPOTHESIS_PROFILE', '')}",
        "-v", f"{PIP_CACHE}:/root/.cache/pip",
        image, "sh", "-c", script, "sh", *pytest_args,
    ]  # fmt: skip
    say(f"python3 tests on Python {version} in {image}")
    try:
        done = subprocess.run(command, input=tree(), check=False)
    except KeyboardInterrupt:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        raise
    say(f"exit {done.returncode} after {time.monotonic() - started:.0f} s")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
