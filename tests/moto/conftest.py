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

_AWS_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_SQS",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "MOTO_ACCOUNT_ID",
)


@pytest.fixture(autouse=True)
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in _AWS_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "missing-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "missing-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


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
