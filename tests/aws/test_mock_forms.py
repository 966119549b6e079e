"""mock_sqs in every form moto's ``mock_aws`` is used: bare and called
decorator, on functions, methods, coroutine and generator functions and
classes (unittest and pytest), context manager, start()/stop(), a fresh state
at each start, reset(), and one default account (moto's, or MOTO_ACCOUNT_ID).

A class decorator that turned a class into a function would make pytest skip
its tests silently: the class tests run the decorated classes under pytest
and unittest and check that a failing test method is reported as failed.
"""

from __future__ import annotations

import asyncio
import io
import json
import textwrap
import unittest
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsqueue import Broker, ManualClock
from sqsqueue.testing import MockSQS, mock_sqs
from tests._helpers import run_python

pytest_plugins = ["pytester"]

URL = "https://sqs.us-east-1.amazonaws.com/123456789012/{}"


def _sqs() -> Any:
    return boto3.client("sqs", region_name="us-east-1")


def _names() -> list[str]:
    return [u.rsplit("/", 1)[1] for u in _sqs().list_queues().get("QueueUrls", [])]


# -- functions ----------------------------------------------------------------------


def test_bare_decorator_on_a_function() -> None:
    """``@mock_sqs`` without parentheses (as ``@mock_aws`` is written) works and
    keeps the function's name; each call starts from no queue."""

    @mock_sqs
    def work(name: str) -> list[str]:
        _sqs().create_queue(QueueName=name)
        return _names()

    assert work.__name__ == "work"
    assert work("a") == ["a"]
    assert work("b") == ["b"]  # not ["a", "b"]: a fresh broker per call


def test_called_decorator_starts_each_call_clean() -> None:
    """``@mock_sqs()``: the calls of a parametrized test each see an empty broker."""
    seen: list[list[str]] = []

    @mock_sqs()
    def one_case(i: int) -> None:
        _sqs().create_queue(QueueName=f"q{i}")
        seen.append(_names())

    for i in range(3):
        one_case(i)
    assert seen == [["q0"], ["q1"], ["q2"]]


def test_decorator_with_a_broker_keeps_it() -> None:
    """``@mock_sqs(broker)``: every call serves that broker, so state persists."""
    broker = Broker(clock=ManualClock(start=1_700_000_000.0))

    @mock_sqs(broker)
    def add(name: str) -> None:
        _sqs().create_queue(QueueName=name)

    add("a")
    add("b")
    assert [q.name for q in broker] == ["a", "b"]


def test_method_coroutine_and_generator_functions() -> None:
    """A decorated method gets its ``self``; a coroutine function stays one and
    is served while it runs; a generator function (a pytest fixture) is served
    until it is exhausted, across its ``yield``."""

    class Service:
        prefix = "svc"

        @mock_sqs
        def make(self) -> str:
            url: str = _sqs().create_queue(QueueName=f"{self.prefix}-q")["QueueUrl"]
            return url

    assert Service().make() == URL.format("svc-q")

    @mock_sqs
    async def work() -> list[str]:
        await asyncio.sleep(0)
        _sqs().create_queue(QueueName="async")
        return _names()

    assert asyncio.iscoroutinefunction(work)
    assert asyncio.run(work()) == ["async"]

    broker = Broker(clock=ManualClock(start=1_700_000_000.0))

    @mock_sqs(broker)
    def fixture_like() -> Iterator[str]:
        url: str = _sqs().create_queue(QueueName="fixture")["QueueUrl"]
        yield url
        _sqs().delete_queue(QueueUrl=url)  # still inside the mock after the yield

    gen = fixture_like()
    assert next(gen) == URL.format("fixture")
    assert _names() == ["fixture"]  # served between the yield and the end
    assert list(gen) == []
    assert "fixture" not in broker


def test_a_bad_argument_is_refused() -> None:
    with pytest.raises(TypeError, match="Broker"):
        mock_sqs("not a broker")


# -- context manager, start/stop, state ----------------------------------------------


def test_context_manager_and_start_give_the_mock() -> None:
    """``with mock_sqs() as mock`` and ``mock_sqs().start()`` both give the
    mock, as moto's do; ``mock.broker`` is the broker being served."""
    with mock_sqs() as mock:
        assert isinstance(mock, MockSQS)
        _sqs().create_queue(QueueName="ctx")
        assert "ctx" in mock.broker
    started = mock_sqs().start()
    try:
        assert isinstance(started, MockSQS)
        assert _names() == []
    finally:
        started.stop()


def test_every_start_is_fresh_and_nested_starts_join() -> None:
    """The outermost start of a mock of its own begins a fresh broker; a start
    while the mock is active joins it; after stop the last broker stays
    readable."""
    mock = mock_sqs()
    with mock:
        _sqs().create_queue(QueueName="first")
        with mock:  # joined: same broker
            assert _names() == ["first"]
        assert _names() == ["first"]  # the inner exit did not stop the mock
    assert [q.name for q in mock.broker] == ["first"]
    with mock:
        assert _names() == []


def test_reset_empties_the_mock() -> None:
    """``reset()`` forgets every queue mid-test, as moto's reset does; a mock
    serving a broker it was given refuses to reset (it is the user's)."""
    with mock_sqs() as mock:
        _sqs().create_queue(QueueName="before")
        mock.reset()
        assert _names() == []
        _sqs().create_queue(QueueName="after")
        assert [q.name for q in mock.broker] == ["after"]
    given = mock_sqs(Broker())
    with pytest.raises(RuntimeError, match="given"):
        given.reset()


# -- accounts -----------------------------------------------------------------------


def test_default_account_is_motos(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queues of ``mock_sqs()`` are in 123456789012, so a moto-style DLQ ARN
    written by hand names the queue created in the test."""
    monkeypatch.delenv("MOTO_ACCOUNT_ID", raising=False)
    with mock_sqs():
        sqs = _sqs()
        sqs.create_queue(QueueName="dlq")
        url = sqs.create_queue(
            QueueName="work",
            Attributes={
                "RedrivePolicy": json.dumps(
                    {
                        "deadLetterTargetArn": "arn:aws:sqs:us-east-1:123456789012:dlq",
                        "maxReceiveCount": "1",
                    }
                )
            },
        )["QueueUrl"]
        assert url == URL.format("work")


def test_moto_account_id_is_honoured_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MOTO_ACCOUNT_ID`` names the account of requests made while it is set,
    as moto reads it; unsetting it returns to the default account."""
    monkeypatch.setenv("MOTO_ACCOUNT_ID", "111111111111")
    with mock_sqs() as mock:
        sqs = _sqs()
        assert sqs.create_queue(QueueName="q")["QueueUrl"].split("/")[3] == "111111111111"
        assert mock.broker.account_id == "111111111111"
        monkeypatch.delenv("MOTO_ACCOUNT_ID")
        assert sqs.create_queue(QueueName="q")["QueueUrl"].split("/")[3] == "123456789012"
        assert sqs.list_queues()["QueueUrls"] == [URL.format("q")]
        assert "q" in mock.broker_for("111111111111", "us-east-1")


# -- classes ------------------------------------------------------------------------


@mock_sqs
class DecoratedCase(unittest.TestCase):
    """A moto-style TestCase: state made in setUpClass and setUp."""

    order: list[str] = []

    @classmethod
    def setUpClass(cls) -> None:
        _sqs().create_queue(QueueName="class-level")
        cls.order.append("setUpClass:" + ",".join(_names()))

    def setUp(self) -> None:
        _sqs().create_queue(QueueName="from-setup")
        self.addCleanup(lambda: self.order.append("cleanup:" + ",".join(_names())))

    def tearDown(self) -> None:
        self.order.append("tearDown:" + ",".join(_names()))

    def test_one(self) -> None:
        _sqs().create_queue(QueueName="one")
        assert _names() == ["from-setup", "one"]

    def test_two(self) -> None:
        assert _names() == ["from-setup"]  # nothing of test_one

    @classmethod
    def tearDownClass(cls) -> None:
        cls.order.append("tearDownClass:" + ",".join(_names()))


def test_unittest_class_runs_each_test_in_one_fresh_state() -> None:
    """Run by unittest's runner: the class is still a TestCase; setUp, the
    test, tearDown and cleanups share one state per test; setUpClass and
    tearDownClass share a state of their own that tests never see."""
    assert isinstance(DecoratedCase, type) and issubclass(DecoratedCase, unittest.TestCase)
    DecoratedCase.order.clear()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(DecoratedCase)
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    assert result.testsRun == 2
    assert result.wasSuccessful(), result.failures + result.errors
    assert DecoratedCase.order == [
        "setUpClass:class-level",
        "tearDown:from-setup,one",
        "cleanup:from-setup,one",
        "tearDown:from-setup",
        "cleanup:from-setup",
        "tearDownClass:class-level",
    ]


def test_a_failing_method_of_a_decorated_testcase_fails_under_unittest() -> None:
    """A test method that fails is reported as failed, not skipped or lost."""

    @mock_sqs
    class Failing(unittest.TestCase):
        def test_passes(self) -> None:
            _sqs().create_queue(QueueName="x")

        def test_fails(self) -> None:
            raise AssertionError("this test must be reported")

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Failing)
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    assert result.testsRun == 2
    assert [test.id().rsplit(".", 1)[1] for test, _ in result.failures] == ["test_fails"]


CLASSES_UNDER_PYTEST = textwrap.dedent(
    """
    import unittest

    import boto3
    import pytest

    from sqsqueue.testing import mock_sqs


    def names():
        sqs = boto3.client("sqs", region_name="us-east-1")
        return [u.rsplit("/", 1)[1] for u in sqs.list_queues().get("QueueUrls", [])]


    def make(name):
        boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=name)


    @mock_sqs
    class TestCaseStyle(unittest.TestCase):
        def setUp(self):
            make("setup")

        def test_sees_setup(self):
            make("mine")
            assert names() == ["mine", "setup"]

        def test_starts_fresh(self):
            assert names() == ["setup"]

        def test_fails(self):
            assert False, "reported"


    @mock_sqs()
    class TestPytestStyle:
        @classmethod
        def setup_class(cls):
            make("class-level")
            cls.at_class = names()

        def setup_method(self, method):
            make("setup-" + method.__name__)

        def teardown_method(self):
            assert names()[-1].startswith("setup-")

        def test_sees_setup_method(self):
            assert names() == ["setup-test_sees_setup_method"]
            assert self.at_class == ["class-level"]

        def test_again_fresh(self):
            make("more")
            assert names() == ["more", "setup-test_again_fresh"]

        @pytest.mark.parametrize("i", [1, 2])
        def test_parametrized(self, i):
            make(f"p{i}")
            assert names() == [f"p{i}", "setup-test_parametrized"]

        def test_fails(self):
            assert False, "reported"


    @mock_sqs
    class TestWithoutHooks:
        def test_served(self):
            make("plain")
            assert names() == ["plain"]


    def test_not_served_after_the_classes():
        from botocore.exceptions import NoCredentialsError, EndpointConnectionError
        sqs = boto3.client(
            "sqs", region_name="us-east-1", endpoint_url="http://127.0.0.1:9",
            aws_access_key_id="x", aws_secret_access_key="y",
        )
        with pytest.raises(EndpointConnectionError):
            sqs.list_queues()
    """
)


def test_decorated_classes_under_pytest(pytester: pytest.Pytester) -> None:
    """pytest collects every test of a decorated TestCase and of a decorated
    plain class (the issue's worst defect was a class silently turned into a
    function), runs setUp / setup_method in the test's state, reports each
    failing method as failed, and leaves no mock active afterwards."""
    pytester.makepyfile(test_classes=CLASSES_UNDER_PYTEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=8, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*FAILED test_classes.py::TestCaseStyle::test_fails*",
            "*FAILED test_classes.py::TestPytestStyle::test_fails*",
        ],
        consecutive=False,
    )


def test_mock_aws_without_moto_names_the_extra() -> None:
    """``sqsqueue.testing.mock_aws`` is moto's mock with sqsqueue's SQS: without
    moto it says what to install (fresh interpreter, moto hidden)."""
    script = (
        "import sys; sys.modules['moto'] = None\n"
        "from sqsqueue.testing import mock_aws\n"
        "try:\n"
        "    mock_aws()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert "pip install 'sqsqueue[moto]'" in run_python(script)
