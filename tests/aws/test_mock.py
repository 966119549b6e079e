"""mock_sqs itself: no credentials, what it intercepts and what it leaves
alone, decorator forms, nesting and regions (docs/aws-behaviour.md §1.5)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError, NoCredentialsError

from sqsqueue import Broker, ManualClock
from sqsqueue.testing import MockSQS, mock_sqs
from tests._helpers import run_python
from tests.aws._helpers import url_of

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, refused at once
ONE_TRY = Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=1)
FAKE_KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def _closed_port_sqs() -> Any:
    return boto3.client(
        "sqs", region_name="us-east-1", endpoint_url=CLOSED, config=ONE_TRY, **FAKE_KEYS
    )


def test_works_without_any_credentials(broker: Broker) -> None:
    """Section 1.5: with no credentials configured at all (env, files, instance
    metadata), SQS calls are served inside the mock (request signing is turned
    off for SQS); the same client outside the mock cannot even sign."""
    session = boto3.session.Session()
    assert session.get_credentials() is None
    with mock_sqs(broker):
        sqs = session.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="nocreds")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="x")
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x"
    with pytest.raises(NoCredentialsError):
        sqs.list_queues()


def test_sqs_fixture_without_credentials(sqs: Any) -> None:
    """Section 1.5: the shared ``sqs`` fixture has no credentials either."""
    assert sqs._request_signer._credentials is None
    assert sqs.create_queue(QueueName="q")["QueueUrl"] == url_of("q")


def test_other_services_are_not_intercepted(broker: Broker) -> None:
    """Section 1.5: requests to other services pass through untouched (here they
    really try to connect, to a closed local port) while SQS calls in the same
    block are served."""
    with mock_sqs(broker):
        s3 = boto3.client(
            "s3", region_name="us-east-1", endpoint_url=CLOSED, config=ONE_TRY, **FAKE_KEYS
        )
        sqs = boto3.client("sqs", region_name="us-east-1")
        with pytest.raises(EndpointConnectionError):
            s3.list_buckets()
        assert sqs.create_queue(QueueName="served")["QueueUrl"] == url_of("served")
        with pytest.raises(EndpointConnectionError):
            s3.head_bucket(Bucket="anything")
    assert "served" in broker


def test_sqs_outside_the_mock_is_not_served(broker: Broker) -> None:
    """Section 1.5: SQS requests pass through when no mock is active: the same
    closed-port client is served inside the mock and hits the network outside."""
    client = _closed_port_sqs()
    with pytest.raises(EndpointConnectionError):
        client.create_queue(QueueName="outside")
    with mock_sqs(broker):
        client.create_queue(QueueName="inside")
    with pytest.raises(EndpointConnectionError):
        client.list_queues()
    assert [q.name for q in broker] == ["inside"]


def test_decorator_on_sync_function(broker: Broker) -> None:
    """Section 1.5: mock_sqs(broker) decorates a plain function: active only during the call,
    the return value passes through."""

    @mock_sqs(broker)
    def work(name: str) -> str:
        sqs = boto3.client("sqs", region_name="us-east-1")
        url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
        return url

    assert work.__name__ == "work"
    assert work("decorated") == url_of("decorated")
    assert "decorated" in broker
    with pytest.raises(EndpointConnectionError):
        _closed_port_sqs().list_queues()


def test_decorator_on_async_function(broker: Broker) -> None:
    """Section 1.5: mock_sqs(broker) decorates a coroutine function: the result is still a
    coroutine function and the mock is active while it runs."""

    @mock_sqs(broker)
    async def work(name: str) -> str:
        await asyncio.sleep(0)
        sqs = boto3.client("sqs", region_name="us-east-1")
        url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
        return url

    assert inspect.iscoroutinefunction(work)
    assert asyncio.run(work("async-decorated")) == url_of("async-decorated")
    assert "async-decorated" in broker
    with pytest.raises(EndpointConnectionError):
        _closed_port_sqs().list_queues()


def test_decorator_exits_on_exception(broker: Broker) -> None:
    """Section 1.5: the mock stops even when the decorated function raises."""

    @mock_sqs(broker)
    def boom() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        boom()
    with pytest.raises(EndpointConnectionError):
        _closed_port_sqs().list_queues()


def test_nested_mocks_innermost_wins(clock: ManualClock) -> None:
    """Section 1.5: nested mocks: the innermost active one serves; leaving it restores the
    outer one."""
    outer = Broker(clock=clock, account_id="123456789012")
    inner = Broker(clock=clock, account_id="123456789012")
    with mock_sqs(outer):
        sqs = boto3.client("sqs", region_name="us-east-1")
        sqs.create_queue(QueueName="outer-1")
        with mock_sqs(inner):
            sqs.create_queue(QueueName="inner")
            assert sqs.list_queues()["QueueUrls"] == [url_of("inner")]
        sqs.create_queue(QueueName="outer-2")
        assert sqs.list_queues()["QueueUrls"] == [url_of("outer-1"), url_of("outer-2")]
    assert [q.name for q in inner] == ["inner"]


def test_sequential_mocks_and_start_stop(clock: ManualClock) -> None:
    """Section 1.5: sequential mocks each serve their own broker; start()/stop() work like the
    context manager, and both give the mock (as moto's mock_aws does), whose
    ``broker`` is the one served."""
    first = Broker(clock=clock, account_id="123456789012")
    second = Broker(clock=clock, account_id="123456789012")
    with mock_sqs(first) as entered:
        assert isinstance(entered, MockSQS)
        assert entered.broker is first
        boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="one")
    mock = mock_sqs(second).start()
    try:
        assert isinstance(mock, MockSQS)
        sqs = boto3.client("sqs", region_name="us-east-1")
        assert sqs.list_queues().get("QueueUrls") is None
        sqs.create_queue(QueueName="two")
    finally:
        mock.stop()
    assert [q.name for q in first] == ["one"]
    assert [q.name for q in second] == ["two"]


def test_default_broker_when_none_given() -> None:
    """Section 1.5: mock_sqs() without a broker makes a fresh one."""
    mock = mock_sqs()
    with mock:
        url = boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="q")["QueueUrl"]
    assert url == "https://sqs.us-east-1.amazonaws.com/123456789012/q"
    assert "q" in mock.broker


@pytest.mark.in_process
def test_second_region_gets_its_own_queues(sqs: Any, broker: Broker) -> None:
    """Section 2.1/5: a client of another region in the same mock talks to that
    region's queues: its own URLs and ARNs, its own namespace."""
    west = boto3.client("sqs", region_name="us-west-2")
    east_url = sqs.create_queue(QueueName="shared-name")["QueueUrl"]
    west_url = west.create_queue(QueueName="shared-name")["QueueUrl"]
    assert east_url == url_of("shared-name")
    assert west_url == url_of("shared-name", region="us-west-2")
    west.create_queue(QueueName="west-only")
    assert sqs.list_queues()["QueueUrls"] == [east_url]
    assert west.list_queues()["QueueUrls"] == [west_url, url_of("west-only", region="us-west-2")]
    arn = west.get_queue_attributes(QueueUrl=west_url, AttributeNames=["QueueArn"])
    assert arn["Attributes"]["QueueArn"] == "arn:aws:sqs:us-west-2:123456789012:shared-name"
    west.send_message(QueueUrl=west_url, MessageBody="west")
    assert "Messages" not in sqs.receive_message(QueueUrl=east_url)
    assert west.receive_message(QueueUrl=west_url)["Messages"][0]["Body"] == "west"
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName="west-only")
    assert [q.name for q in broker] == ["shared-name"]


def test_botocore_session_directly(broker: Broker) -> None:
    """Section 1.5: plain botocore (no boto3 session) is intercepted too."""
    session = botocore.session.get_session()
    with mock_sqs(broker):
        client = session.create_client("sqs", region_name="us-east-1")
        assert client.create_queue(QueueName="raw")["QueueUrl"] == url_of("raw")
    assert "raw" in broker


def test_session_created_before_the_first_mock_is_intercepted(tmp_path: Any) -> None:
    """Section 1.5: a session created after importing sqsqueue.aws but before any
    mock was ever started is still served (fresh interpreter; the client points
    at a closed local port, so an escaped call fails instead of reaching AWS)."""
    script = (
        "import boto3\n"
        "from botocore.config import Config\n"
        "from sqsqueue.testing import mock_sqs\n"
        "s = boto3.session.Session(aws_access_key_id='t', aws_secret_access_key='t',"
        " region_name='us-east-1')\n"
        f"c = s.client('sqs', endpoint_url='{CLOSED}',"
        " config=Config(retries={'total_max_attempts': 1}))\n"
        "with mock_sqs():\n"
        "    print(c.create_queue(QueueName='early')['QueueUrl'].rsplit('/', 1)[1])\n"
    )
    assert run_python(script).strip() == "early"


def test_testing_module_exposes_the_same_mock(broker: Broker) -> None:
    """Section 1.5: sqsqueue.testing.mock_sqs is the same facade."""
    from sqsqueue.testing import mock_sqs as testing_mock_sqs

    with testing_mock_sqs(broker):
        boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="via-testing")
    assert "via-testing" in broker
