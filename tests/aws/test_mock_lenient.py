"""``mock_sqs(lenient=...)`` and ``mock_aws(lenient=...)`` (docs/testing.md,
"Leniencies"): every broker a mock makes gets its leniencies (every account
and region, every fresh state, after ``reset()``), ``mock.lenient_counts()``
sums what they let through over all of them, and a mock given a broker uses
that broker's own. The rule relaxed here is PurgeQueue's 60 seconds
(docs/aws-behaviour.md §2.1).
"""

from __future__ import annotations

import unittest
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker, ManualClock
from sqsqueue.testing import MockSQS, mock_aws, mock_sqs


def purge_twice(region: str = "us-east-1", name: str = "jobs") -> None:
    sqs = boto3.client("sqs", region_name=region)
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.purge_queue(QueueUrl=url)
    sqs.purge_queue(QueueUrl=url)


def test_strict_by_default() -> None:
    with mock_sqs() as mock, pytest.raises(ClientError, match="PurgeQueueInProgress"):
        purge_twice()
    assert mock.lenient == frozenset()
    assert mock.lenient_counts() == {}


def test_every_broker_of_every_region_and_state_counts() -> None:
    mock: MockSQS = mock_sqs(lenient="purge-interval")
    assert mock.lenient == {"purge-interval"}
    assert mock.lenient_counts() == {"purge-interval": 0}
    with mock:
        purge_twice()
        purge_twice("eu-west-1")
        assert mock.broker.lenient_counts() == {"purge-interval": 1}
        assert mock.broker_for(mock.broker.account_id, "eu-west-1").lenient == {"purge-interval"}
        mock.reset()
        assert mock.broker.lenient == {"purge-interval"}
        purge_twice()
    with mock:  # a fresh state at each start, with the same leniencies
        assert mock.broker.lenient_counts() == {"purge-interval": 0}
        purge_twice()
    assert mock.lenient_counts() == {"purge-interval": 4}


def test_as_a_decorator_across_calls() -> None:
    mock = mock_sqs(lenient=["purge-interval"])

    @mock
    def test() -> None:
        purge_twice()

    test()
    test()
    assert mock.lenient_counts() == {"purge-interval": 2}


def test_a_class_and_its_class_hooks() -> None:
    """The state ``setUpClass`` runs in is one of the mock's brokers too."""
    mock = mock_sqs(lenient="purge-interval")

    @mock
    class Case(unittest.TestCase):
        @classmethod
        def setUpClass(cls) -> None:
            purge_twice(name="shared")

        def test_one(self) -> None:
            purge_twice()

        def test_two(self) -> None:
            purge_twice()

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert result.wasSuccessful(), result.errors + result.failures
    assert mock.lenient_counts() == {"purge-interval": 3}


def test_a_given_broker_keeps_its_own_setting() -> None:
    broker = Broker(clock=ManualClock(start=1_700_000_000.0), lenient="purge-interval")
    broker.create_queue("early").purge()
    broker.get_queue("early").purge()  # counted by the broker before any mock
    with mock_sqs(broker) as mock:
        assert mock.lenient == {"purge-interval"}
        purge_twice()
        purge_twice("eu-west-1")  # a broker the mock makes, with the given one's setting
    assert broker.lenient_counts() == {"purge-interval": 2}
    assert mock.lenient_counts() == {"purge-interval": 3}
    strict = Broker()
    with mock_sqs(strict) as mock:
        pass
    assert mock.lenient_counts() == {}


def test_a_broker_and_lenient_together_are_refused() -> None:
    with pytest.raises(TypeError, match=r"Broker\(lenient=...\)"):
        mock_sqs(Broker(), lenient="purge-interval")
    with pytest.raises(TypeError, match=r"Broker\(lenient=...\)"):
        mock_sqs(Broker(), lenient=[])


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown leniency 'purge': known are"):
        mock_sqs(lenient="purge")
    with pytest.raises(TypeError, match="not int"):
        mock_sqs(lenient=5)


def test_mock_aws() -> None:
    pytest.importorskip("moto")
    mock: Any = mock_aws(lenient="fifo-queue-false")
    with mock:
        sqs = boto3.client("sqs", region_name="us-east-1")
        sqs.create_queue(QueueName="jobs", Attributes={"FifoQueue": "false"})
    assert mock.lenient_counts() == {"fifo-queue-false": 1}

    @mock_aws(lenient="purge-interval")
    def decorated() -> None:
        purge_twice()

    decorated()
    with pytest.raises(TypeError, match=r"Broker\(lenient=...\)"):
        mock_aws(broker=Broker(), lenient="purge-interval")
