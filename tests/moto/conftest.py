"""Fixtures for the moto bridge tests (``sqsqueue.moto``, issue 23 point 2).

Each delivery test runs the same scenario twice, under moto alone and under
moto with ``mock_sqs`` (``world`` is parametrized: ``"moto"``, ``"sqsqueue"``),
and compares what arrives in the queue. No credentials and no network: AWS
variables are cleared as in tests/aws, and moto answers everything else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import moto
import pytest

from sqsqueue.testing import MockSQS, mock_sqs
from tests import _helpers


@pytest.fixture(autouse=True)
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials anywhere (tests/_helpers.py says which variables go)."""
    _helpers.no_aws_credentials(monkeypatch, tmp_path)


@pytest.fixture(params=["moto", "sqsqueue"])
def world(request: pytest.FixtureRequest) -> Iterator[MockSQS | None]:
    """moto's ``mock_aws`` alone (None), or with ``mock_sqs`` inside it (the mock)."""
    config = {"lambda": {"use_docker": False}}
    with moto.mock_aws(config=config):  # type: ignore[arg-type]
        if request.param == "moto":
            yield None
        else:
            with mock_sqs() as mock:
                yield mock
