"""Fixtures of the container tests: a Docker daemon (else every test here
skips, with one line saying why), the base image (made with debootstrap in CI,
cached), the two images built once per session from the repository's
Dockerfile, and the budgets the tests measure, printed at the end of the run
and written to tests/artifacts/container-budgets.json."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.container import _docker

#: What the budget tests measured: name -> (value, unit, limit).
BUDGETS: dict[str, tuple[float, str, float]] = {}
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


def record(name: str, value: float, unit: str, limit: float) -> None:
    """Keep a measured budget for the session's summary."""
    BUDGETS[name] = (value, unit, limit)


@pytest.fixture(scope="session")
def docker_daemon() -> Iterator[None]:
    reason = _docker.unavailable()
    if reason is not None:
        pytest.skip(f"container tests: {reason}")
    _docker.cleanup_leftovers()
    yield
    _docker.cleanup_leftovers()


@pytest.fixture(scope="session")
def base_image(docker_daemon: None) -> str:
    try:
        return _docker.ensure_base()
    except RuntimeError as exc:
        pytest.skip(f"container tests: {exc}")


@pytest.fixture(scope="session")
def images(base_image: str) -> None:
    """Both images (and the build stages, tagged as cache), built once."""
    record("build of both images (all stages)", _docker.build_all(base_image), "s", 0)
    _docker.remove_replaced()


@pytest.fixture(scope="session")
def sqs_image(images: None) -> str:
    """``docker build .``: the SQS image."""
    return _docker.SQS_IMAGE


@pytest.fixture(scope="session")
def moto_image(images: None) -> str:
    """``docker build --target with-moto .``."""
    return _docker.MOTO_IMAGE


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not BUDGETS:
        return
    terminalreporter.section("container budgets (docs/container.md)")
    for name, (value, unit, limit) in BUDGETS.items():
        bound = f" (budget {limit:g} {unit})" if limit else ""
        terminalreporter.write_line(f"{name}: {value:.2f} {unit}{bound}")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "container-budgets.json").write_text(
        json.dumps(
            {name: {"value": v, "unit": u, "limit": lim} for name, (v, u, lim) in BUDGETS.items()},
            indent=2,
        )
        + "\n"
    )
