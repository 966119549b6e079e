"""Docker for the container tests: is a daemon there, the CI base image made
with debootstrap (no registry is reachable in CI), the two images built from
the repository's Dockerfile, and containers run on the host's network.

Every container and every build runs with ``--network host`` (CI's daemon
runs with ``--bridge=none``): the tests talk to 127.0.0.1 only. Names of what
the tests create start with ``sqsqueue-test-`` so that a run removes what an
interrupted one left.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Base:
    """A Debian image made with debootstrap from the machine's own mirror (no
    registry is reachable in CI), with the machine's CA bundle: its ``suite``,
    the ``tag`` it is imported as, and the ``packages`` debootstrap adds to
    the minimal base (their dependencies resolved)."""

    suite: str
    tag: str
    packages: tuple[str, ...]
    #: ``docker import --change`` lines beyond the ones every base gets.
    changes: tuple[str, ...] = ()


#: The base image CI makes for the Dockerfile: Debian 12's python3 (3.11) and
#: python3-venv, the machine's CA bundle (pip in the build reaches the package
#: index as the machine's own pip does). ``SQSQUEUE_CONTAINER_BASE`` names
#: another base instead (``python:3.13-slim`` where a registry is reachable).
BOOKWORM = Base(
    "bookworm", "sqsqueue-ci-base:bookworm", ("python3", "python3-venv", "ca-certificates")
)
CI_BASE = BOOKWORM.tag
#: The Debian release of the machine, whose apt sources name the mirror.
MACHINE_SUITE = "bookworm"
#: Where the debootstrapped tree's tarball is kept between runs (the image
#: itself is also kept, in the daemon's store).
CACHE = Path(os.environ.get("SQSQUEUE_CI_CACHE", "/var/cache/sqsqueue-ci"))
#: The bundle of CAs this machine trusts (an egress proxy's among them): the
#: base image gets it, and pip there is pointed at it (Debian's pip in a venv
#: reads certifi's bundle otherwise).
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")

SQS_IMAGE = "sqsqueue-test:sqs"
MOTO_IMAGE = "sqsqueue-test:with-moto"
PREFIX = "sqsqueue-test-"
#: The uid the Dockerfile runs the server as.
UID = 10001


def docker(*args: str, timeout: float = 120, check: bool = True, **kw: object) -> str:
    """``docker ARGS``: its standard output; a failure raises with stderr shown."""
    done = subprocess.run(
        ["docker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kw,  # type: ignore[call-overload]
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} -> {done.returncode}\n{done.stderr}")
    return str(done.stdout)


def unavailable() -> str | None:
    """Why the container tests cannot run here, or None when a daemon answers."""
    if shutil.which("docker") is None:
        return "no docker command (.ci/run installs Debian's docker.io as root)"
    try:
        done = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "the Docker daemon did not answer in 20 s"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no answer"])[0]
        return f"no Docker daemon answers ({first})"
    return None


def image_exists(ref: str) -> bool:
    return (
        subprocess.run(
            ["docker", "image", "inspect", ref], capture_output=True, check=False
        ).returncode
        == 0
    )


def debian_mirror() -> str:
    """The machine's own Debian mirror: the first source of the ``bookworm``
    suite in /etc/apt (deb822 ``.sources`` files or one-line lists). Every
    :class:`Base` is made from it, whatever its suite: one archive holds them all."""
    found: list[str] = []
    apt = Path("/etc/apt")
    for path in sorted(apt.glob("sources.list.d/*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            fields = {
                m.group(1).lower(): m.group(2).strip()
                for m in re.finditer(r"^([A-Za-z-]+):[ \t]*(.*)$", stanza, re.M)
            }
            if fields.get("enabled", "yes").lower() == "no":
                continue
            suites, types = fields.get("suites", "").split(), fields.get("types", "")
            if MACHINE_SUITE in suites and "deb" in types:
                found += fields.get("uris", "").split()
    for path in [apt / "sources.list", *sorted(apt.glob("sources.list.d/*.list"))]:
        if not path.exists():
            continue
        for line in path.read_text(errors="replace").splitlines():
            words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] == MACHINE_SUITE:
                found.append(words[1])
    return found[0] if found else "http://deb.debian.org/debian"


#: The label of a :class:`Base` holding a digest of the CA bundle it carries
#: and of its recipe (suite, packages, changes): a machine whose bundle changed
#: (a new proxy CA), or a changed recipe, gets a new base.
CA_LABEL = "org.sqsqueue.ci.base-sha256"


def ensure_base() -> str:
    """The base image to build the Dockerfile on: ``SQSQUEUE_CONTAINER_BASE``
    when set, else :data:`BOOKWORM`, made by :func:`ensure_debian`."""
    given = os.environ.get("SQSQUEUE_CONTAINER_BASE")
    if given:
        return given
    return ensure_debian(BOOKWORM)


def ensure_debian(base: Base) -> str:
    """``base.tag``, made once (debootstrap, then ``docker import`` with the
    machine's CA bundle) and cached as an image and, without the machine's
    CAs, as a tarball under :data:`CACHE`; remade when the packages asked
    for or the machine's CA bundle changed (a new egress proxy's CA)."""
    recipe = repr((base.suite, sorted(base.packages), base.changes)).encode()
    digest = hashlib.sha256(_bundle() + recipe).hexdigest()
    if image_exists(base.tag) and labels(base.tag).get(CA_LABEL) == digest:
        return base.tag
    _replaced.append(image_id(base.tag) or "")
    tarball = CACHE / f"{base.suite}-{hashlib.sha256(recipe).hexdigest()[:12]}.tar"
    if not tarball.exists():
        _debootstrap(base, tarball)
    changes = [
        # What `docker import` leaves unset, and Debian's pip in a venv reads
        # certifi's bundle, not the system's: point it at the machine's CAs.
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        f"ENV PIP_CERT={CA_BUNDLE}",
        *base.changes,
        f"LABEL {CA_LABEL}={digest}",
    ]
    args = [arg for change in changes for arg in ("--change", change)]
    _import_with_machine_cas(tarball, [*args, "-", base.tag])
    return base.tag


#: Base images that :func:`ensure_base` replaced (a changed CA bundle): removed
#: by :func:`remove_replaced` once the images built on them are rebuilt.
_replaced: list[str] = []


def _bundle() -> bytes:
    """The machine's CA bundle; none where the machine has none."""
    return CA_BUNDLE.read_bytes() if CA_BUNDLE.exists() else b""


def remove_replaced() -> None:
    for old in _replaced:
        if old:
            subprocess.run(["docker", "rmi", old], capture_output=True, check=False)
    _replaced.clear()


def labels(ref: str) -> dict[str, str]:
    labels = json.loads(docker("image", "inspect", "--format", "{{json .Config.Labels}}", ref))
    return dict(labels or {})


def _import_with_machine_cas(tarball: Path, import_args: list[str]) -> None:
    """``docker import`` of ``tarball`` with the machine's CA bundle (a
    superset of Debian's, with any egress proxy's CA) in place of Debian's."""
    bundle = _bundle()
    inside = {str(CA_BUNDLE).lstrip("/"), "." + str(CA_BUNDLE)}
    proc = subprocess.Popen(
        ["docker", "import", *import_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    with tarfile.open(tarball, "r:") as src, tarfile.open(fileobj=proc.stdin, mode="w|") as out:
        for member in src:
            if member.name in inside and member.isreg() and bundle:
                member.size = len(bundle)
                out.addfile(member, io.BytesIO(bundle))
            elif member.isreg():
                out.addfile(member, src.extractfile(member))
            else:
                out.addfile(member)
    _, stderr = proc.communicate(timeout=600)  # closes stdin: the end of the tar
    if proc.returncode != 0:
        raise AssertionError(f"docker import failed: {stderr.decode(errors='replace')}")


def _debootstrap(base: Base, tarball: Path) -> None:
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        raise RuntimeError(
            f"no base image {base.tag}: making it needs root and debootstrap "
            "(or set SQSQUEUE_CONTAINER_BASE to an image with python3 and python3-venv)"
        )
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix="rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(base.packages)}",
                base.suite,
                str(rootfs),
                debian_mirror(),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=1800,
        )
        # Debian's own CAs stay in the tarball: the machine's go in at import.
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / junk).glob("*"):
                if entry.is_file():
                    entry.unlink()
        partial = tarball.with_suffix(".partial")
        subprocess.run(
            ["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(partial), "."],
            check=True,
            timeout=600,
        )
        partial.replace(tarball)


#: What :func:`build_all` tags, in build order: ``docker build .`` first (the
#: classic builder builds every stage before the target, so the others are
#: then cache hits). The build stages are tagged too, so that a rerun on an
#: unchanged tree finds them as its cache, and so that a rebuild leaves no
#: untagged stage behind: the images a tag held before are removed.
TARGETS = (
    (None, SQS_IMAGE),
    ("with-moto", MOTO_IMAGE),
    ("build", "sqsqueue-test:build-stage"),
    ("venv-moto", "sqsqueue-test:venv-moto-stage"),
)


def image_id(ref: str) -> str | None:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", ref],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def build(base: str, tag: str, target: str | None = None) -> None:
    """``docker build --network host`` of the repository's Dockerfile on ``base``."""
    args = ["build", "--network", "host", "--build-arg", f"BASE={base}", "-t", tag]
    if target:
        args += ["--target", target]
    # The classic builder: BuildKit needs the buildx plugin on newer clients,
    # and the Dockerfile uses nothing the classic builder lacks.
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    done = subprocess.run(
        ["docker", *args, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"docker build {target or ''} failed:\n{done.stdout[-4000:]}\n{done.stderr}"
        )


def build_all(base: str) -> float:
    """Build and tag every target of :data:`TARGETS`; remove what the tags
    held before (a previous run's images); the seconds taken."""
    import time

    started = time.perf_counter()
    before = {tag: image_id(tag) for _, tag in TARGETS}
    for target, tag in TARGETS:
        build(base, tag, target)
    for tag, old in before.items():
        if old is not None and old != image_id(tag):
            # Fails harmlessly when another tag or a container still uses it.
            subprocess.run(["docker", "rmi", old], capture_output=True, check=False)
    return time.perf_counter() - started


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (not 9324, which a developer may be using)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Container:
    """A container the tests started, on the host's network."""

    name: str
    port: int
    removed: bool = field(default=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def inspect(self) -> dict[str, Any]:
        [doc] = json.loads(docker("inspect", self.name))
        return dict(doc)

    def state(self) -> dict[str, Any]:
        return dict(self.inspect()["State"])

    def logs(self) -> str:
        done = subprocess.run(
            ["docker", "logs", self.name], capture_output=True, text=True, check=False
        )
        return done.stdout + done.stderr

    def remove(self) -> None:
        if not self.removed:
            subprocess.run(
                ["docker", "rm", "-f", "-v", self.name], capture_output=True, check=False
            )
            self.removed = True


_counter = [0]


def new_name(what: str) -> str:
    _counter[0] += 1
    return f"{PREFIX}{what}-{os.getpid()}-{_counter[0]}"


def start(
    image: str,
    *args: str,
    env: dict[str, str] | None = None,
    volumes: Sequence[str] = (),
    port: int | None = None,
    name: str = "c",
    host: str | None = "127.0.0.1",
) -> Container:
    """``docker run -d --network host`` of ``image`` with serve options
    ``args``; the port is a free one, given as SQSQUEUE_PORT. On the host's
    network the image's 0.0.0.0 would be every address of the machine: the
    server binds ``host`` (SQSQUEUE_HOST), loopback unless a test asks for
    the image's own default (None)."""
    port = free_port() if port is None else port
    container = Container(new_name(name), port)
    flags = ["--network", "host", "--name", container.name, "-e", f"SQSQUEUE_PORT={port}"]
    if host is not None:
        flags += ["-e", f"SQSQUEUE_HOST={host}"]
    for key, value in (env or {}).items():
        flags += ["-e", f"{key}={value}"]
    for volume in volumes:
        flags += ["-v", volume]
    docker("run", "-d", *flags, image, *args)
    return container


@contextlib.contextmanager
def running(image: str, *args: str, **kw: object) -> Iterator[Container]:
    """:func:`start`, then removed (with its anonymous volumes) on exit."""
    container = start(image, *args, **kw)  # type: ignore[arg-type]
    try:
        yield container
    finally:
        container.remove()


def health(url: str, timeout: float = 1.0) -> int | None:
    """The status of ``GET /_sqsqueue/health``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url}/_sqsqueue/health", timeout=timeout) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return int(err.code)
    except (OSError, ValueError):
        return None


def wait_health(container: Container, within: float = 30.0) -> float:
    """Seconds until the health endpoint answers 200; fails (with the logs)
    when the container stops or ``within`` passes first."""
    import time

    started = time.perf_counter()
    while time.perf_counter() - started < within:
        if health(container.url, timeout=0.5) == 200:
            return time.perf_counter() - started
        state = container.state()
        if not state.get("Running"):
            raise AssertionError(f"container exited {state.get('ExitCode')}:\n{container.logs()}")
        time.sleep(0.02)
    raise AssertionError(f"no health 200 within {within} s:\n{container.logs()}")


def cleanup_leftovers() -> None:
    """Remove containers and volumes an interrupted run left behind."""
    names = docker("ps", "-a", "--filter", f"name={PREFIX}", "--format", "{{.Names}}", check=False)
    for name in names.split():
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)
    volumes = docker("volume", "ls", "-q", "--filter", f"name={PREFIX}", check=False)
    for volume in volumes.split():
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True, check=False)
    # Untagged images built on the CI base (every stage inherits its label)
    # that no tag holds any more: an interrupted or concurrent run's. Only
    # those older than any build, so that a build under way keeps its steps.
    docker(
        "image",
        "prune",
        "-f",
        "--filter",
        f"label={CA_LABEL}",
        "--filter",
        "until=45m",
        check=False,
    )
