"""mock_sqs inside moto's mock_aws (issue 12 section 3).

botocore runs every ``before-send`` handler, so without care moto would
execute each SQS call a second time behind sqsqueue's answer (and wait out long
polls twice). mock_sqs wins: while it is active moto passes SQS through, and
moto keeps serving every other service.
"""

from __future__ import annotations

import time
from typing import Any

import boto3
import moto
from moto.sqs.models import sqs_backends

from sqsqueue import Broker, ManualClock
from sqsqueue.testing import mock_sqs

ACCOUNT = "123456789012"
MOTO_ACCOUNT = "123456789012"  # moto's default account id


def _moto_queues() -> dict[str, Any]:
    """The queues of moto's own SQS backend (read past sqsqueue.moto's routing,
    which answers lookups with sqsqueue's queues while a mock_sqs is active)."""
    account = dict.get(sqs_backends, MOTO_ACCOUNT)
    region = dict.get(account, "us-east-1") if account is not None else None
    return dict(region.queues) if region is not None else {}


def test_mock_sqs_wins_inside_mock_aws() -> None:
    """Calls made with both mocks active reach the sqsqueue broker only; moto's
    SQS backend never sees them; moto still serves S3."""
    broker = Broker(clock=ManualClock(start=1_700_000_000.0), account_id=ACCOUNT)
    with moto.mock_aws(), mock_sqs(broker):
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        assert [m.body for m in broker.get_queue("jobs").receive()] == ["hello"]
        assert _moto_queues() == {}
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="still-moto")
        assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["still-moto"]


def test_a_long_poll_waits_once() -> None:
    """An empty 1-second long poll through both mocks lasts one wait (sqsqueue's,
    on its frozen clock: at most 0.1 s of wall time here), not sqsqueue's plus
    moto's full second."""
    clock = ManualClock(start=1_700_000_000.0, max_wall_wait=0.1)
    broker = Broker(clock=clock, account_id=ACCOUNT)
    with moto.mock_aws(), mock_sqs(broker):
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        started = time.perf_counter()
        assert "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        assert time.perf_counter() - started < 0.9


def test_moto_serves_sqs_again_once_mock_sqs_stops() -> None:
    """The passthrough lasts only while mock_sqs is active."""
    with moto.mock_aws():
        with mock_sqs():
            pass
        sqs = boto3.client("sqs", region_name="us-east-1")
        sqs.create_queue(QueueName="moto-queue")
        assert list(_moto_queues()) == ["moto-queue"]


def _moto_4(monkeypatch: Any) -> None:
    """moto 4 as sqsqueue sees it: a ``moto`` without ``mock_aws``, a
    botocore stubber without moto 5's ``passthrough_service``, and one of
    its per-service mocks (``mock_sqs``, ``mock_sns``...) active. The modules
    stand in for moto 4.2's (checked by hand against a real moto 4.2.14 in a
    venv of its own, whose ``moto.core.botocore_stubber`` has no
    ``passthrough_service``: both tests' messages came out as asserted)."""
    import sys
    import types

    fake = types.ModuleType("moto")
    fake.__version__ = "4.2.14"  # type: ignore[attr-defined]
    fake.mock_sqs = object()  # type: ignore[attr-defined]
    stubber_module = types.ModuleType("moto.core.botocore_stubber")
    models = types.ModuleType("moto.core.models")
    models.botocore_stubber = types.SimpleNamespace(enabled=True)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "moto", fake)
    monkeypatch.setitem(sys.modules, "moto.core.botocore_stubber", stubber_module)
    monkeypatch.setitem(sys.modules, "moto.core.models", models)


def test_moto_4_is_told_what_to_do(monkeypatch: Any) -> None:
    """With moto 4 installed and one of its mocks active, every SQS call says
    that moto 5.0 to 5.2 is needed and that the module moves to moto's
    mock_aws first (moto 5.0.0's CHANGELOG: "All decorators have been
    replaced with a single decorator: mock_aws"); it used to name a setting
    moto 4 does not have."""
    import pytest

    broker = Broker(clock=ManualClock(start=1_700_000_000.0), account_id=ACCOUNT)
    sqs = boto3.client("sqs", region_name="us-east-1")
    with mock_sqs(broker):
        _moto_4(monkeypatch)
        with pytest.raises(RuntimeError) as info:
            sqs.list_queues()
    message = str(info.value)
    assert "moto 4.2.14" in message
    assert "moto 5.0 to 5.2" in message
    assert "move the module to moto 5's mock_aws first" in message
    assert "passthrough" not in message  # moto 4 has no such setting


def test_mock_aws_under_moto_4_says_the_same(monkeypatch: Any) -> None:
    import pytest

    from sqsqueue.testing import mock_aws

    _moto_4(monkeypatch)
    with pytest.raises(RuntimeError, match=r"moto 4\.2\.14 is installed: .* moto 5\.0 to 5\.2"):
        mock_aws()
