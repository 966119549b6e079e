"""The pytest plugin (``sqsqueue.testing.plugin``), used the way a user would:
installed through the ``pytest11`` entry point and run in a separate pytest
process (``sqsqueue_clock``, ``sqsqueue_broker`` and ``sqsqueue_client`` fixtures; sections 1.5
and 8 of docs/aws-behaviour.md for what the boto3 flow must show).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = textwrap.dedent(
    '''
    """A user's test module: no imports of sqsqueue fixtures, no conftest."""

    from sqsqueue import Broker, ManualClock, Queue


    def test_clock_is_manual(sqsqueue_clock):
        assert isinstance(sqsqueue_clock, ManualClock)
        assert sqsqueue_clock.now() == 1_700_000_000.0
        sqsqueue_clock.advance(5)
        assert sqsqueue_clock.now() == 1_700_000_005.0


    def test_broker_uses_the_clock(sqsqueue_broker, sqsqueue_clock):
        assert isinstance(sqsqueue_broker, Broker)
        assert sqsqueue_broker.clock is sqsqueue_clock
        assert sqsqueue_broker.account_id == "123456789012"
        assert sqsqueue_broker.region == "us-east-1"
        q = sqsqueue_broker.create_queue("direct", visibility_timeout=10)
        assert isinstance(q, Queue)
        q.send("x")
        [m] = q.receive()
        sqsqueue_clock.advance(10)
        [again] = q.receive()
        assert again.message_id == m.message_id
        assert [e.event for e in q.history(m.message_id)] == ["sent", "received", "received"]


    def test_boto3_flow(sqsqueue_client, sqsqueue_broker, sqsqueue_clock):
        url = sqsqueue_client.create_queue(
            QueueName="jobs", Attributes={"VisibilityTimeout": "30"}
        )["QueueUrl"]
        assert url == "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"
        assert "jobs" in sqsqueue_broker
        sent = sqsqueue_client.send_message(QueueUrl=url, MessageBody="hello")
        first = sqsqueue_client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
        )["Messages"]
        assert [m["Body"] for m in first] == ["hello"]
        assert first[0]["MessageId"] == sent["MessageId"]
        assert first[0]["Attributes"]["ApproximateReceiveCount"] == "1"
        # In flight: nothing to receive until the visibility timeout passes.
        assert "Messages" not in sqsqueue_client.receive_message(QueueUrl=url)
        sqsqueue_clock.advance(29)
        assert "Messages" not in sqsqueue_client.receive_message(QueueUrl=url)
        sqsqueue_clock.advance(1)
        second = sqsqueue_client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
        )["Messages"]
        assert [m["MessageId"] for m in second] == [sent["MessageId"]]
        assert second[0]["Attributes"]["ApproximateReceiveCount"] == "2"
        sqsqueue_client.delete_message(QueueUrl=url, ReceiptHandle=second[0]["ReceiptHandle"])
        assert len(sqsqueue_broker.get_queue(url)) == 0


    def test_each_test_gets_a_fresh_broker(sqsqueue_client, sqsqueue_broker):
        assert sqsqueue_client.list_queues().get("QueueUrls", []) == []
        assert len(sqsqueue_broker) == 0


    def test_client_errors_are_botocore_errors(sqsqueue_client):
        import pytest

        with pytest.raises(sqsqueue_client.exceptions.QueueDoesNotExist):
            sqsqueue_client.get_queue_url(QueueName="missing")
    '''
)


def test_plugin_fixtures_through_entry_point(pytester: pytest.Pytester) -> None:
    """The plugin is found through the installed pytest11 entry point (no
    ``-p``, no conftest) and its three fixtures drive a full boto3 flow: a
    received message comes back after the visibility timeout with
    ApproximateReceiveCount "2" (section 8)."""
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


def test_plugin_is_listed_as_entry_point() -> None:
    """``pyproject.toml`` registers ``sqsqueue.testing.plugin`` under
    ``[project.entry-points.pytest11]``: the installed distribution exposes it."""
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="pytest11") if ep.name == "sqsqueue"]
    assert [ep.value for ep in found] == ["sqsqueue.testing.plugin"]


def test_state_does_not_leak_between_tests(pytester: pytest.Pytester) -> None:
    """Each test gets its own clock and broker, so an advance or a queue in one
    test is invisible to the next (function-scoped fixtures)."""
    pytester.makepyfile(
        test_leak=textwrap.dedent(
            """
            def test_a(sqsqueue_broker, sqsqueue_clock):
                sqsqueue_broker.create_queue("a")
                sqsqueue_clock.advance(3600)

            def test_b(sqsqueue_broker, sqsqueue_clock):
                assert "a" not in sqsqueue_broker
                assert sqsqueue_clock.now() == 1_700_000_000.0
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def _fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def test_plugin_import_is_light() -> None:
    """Loading the plugin registers mock_sqs's botocore handlers (issue 12: no
    client created during the test session may reach AWS) but imports neither
    boto3 nor hypothesis."""
    result = _fresh_python(
        "import sys, sqsqueue.testing.plugin, botocore.handlers; "
        "assert 'boto3' not in sys.modules, 'boto3'; "
        "assert 'hypothesis' not in sys.modules, 'hypothesis'; "
        "names = {getattr(e[1], '__module__', '') for e in botocore.handlers.BUILTIN_HANDLERS}; "
        "assert 'sqsqueue.testing._hooks' in names, names"
    )
    assert result.returncode == 0, result.stderr


def test_package_import_is_light() -> None:
    """``import sqsqueue`` pulls in neither boto3, botocore, pyspark nor
    hypothesis (optional extras), nor asyncio (some 4,200 tracked objects every
    full collection would walk, for a process that may run no loop: issue 35);
    ``sqsqueue.testing`` adds botocore only, to register its handlers."""
    result = _fresh_python(
        "import sys, sqsqueue; "
        "bad = [m for m in ('boto3', 'botocore', 'pyspark', 'hypothesis', 'asyncio') "
        "if m in sys.modules]; "
        "assert not bad, bad; "
        "import sqsqueue.testing; "
        "bad = [m for m in ('boto3', 'pyspark', 'hypothesis') if m in sys.modules]; "
        "assert not bad, bad; "
        "assert 'botocore' in sys.modules"
    )
    assert result.returncode == 0, result.stderr


def test_a_module_level_client_cannot_reach_aws(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12: application code that makes ``boto3.client("sqs")`` at import
    time, imported by a test module that never imports sqsqueue, is served by
    the ``sqsqueue_client`` fixture's broker: the plugin registered the hooks before
    the client existed. A proxy on a closed port makes any escape fail loudly."""
    pytester.makepyfile(
        app=textwrap.dedent(
            """
            import boto3

            sqs = boto3.client(
                "sqs", region_name="us-east-1",
                aws_access_key_id="AKIAREAL", aws_secret_access_key="real-secret",
            )

            def enqueue(body):
                url = sqs.create_queue(QueueName="app")["QueueUrl"]
                return sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"]
            """
        ),
        test_app=textwrap.dedent(
            """
            import app

            def test_enqueue(sqsqueue_client, sqsqueue_broker):
                message_id = app.enqueue("hello")
                [m] = sqsqueue_broker.get_queue("app").receive()
                assert (m.message_id, m.body) == (message_id, "hello")
            """
        ),
    )
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_importing_sqsqueue_testing_registers_the_hooks() -> None:
    """Outside pytest: a client created after ``import sqsqueue.testing`` but
    before ``mock_sqs`` starts is served by the mock once it is active."""
    result = _fresh_python(
        textwrap.dedent(
            """
            import boto3, sqsqueue, sqsqueue.testing
            sqs = boto3.client("sqs", region_name="us-east-1",
                               aws_access_key_id="x", aws_secret_access_key="y")
            broker = sqsqueue.Broker(account_id="123456789012")
            with sqsqueue.testing.mock_sqs(broker):
                sqs.create_queue(QueueName="early")
            assert "early" in broker, list(broker)
            """
        )
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module", ["sqsqueue", "sqsqueue.aws", "sqsqueue.server"])
def test_importing_the_engine_or_the_endpoint_registers_nothing(module: str) -> None:
    """Only ``sqsqueue.testing`` (and the plugin, and a mock starting) add
    handlers to botocore; importing the engine, the codecs or the endpoint
    leaves botocore as it was."""
    result = _fresh_python(
        f"import botocore.handlers; before = list(botocore.handlers.BUILTIN_HANDLERS); "
        f"import {module}; "
        "assert botocore.handlers.BUILTIN_HANDLERS == before"
    )
    assert result.returncode == 0, result.stderr


def test_another_plugins_sqs_fixtures_keep_their_place(pytester: pytest.Pytester) -> None:
    """Installing sqsqueue changes no other test suite: a plugin (here a local
    one, loaded like any installed plugin) that provides ``sqs_client``,
    ``sqs_broker`` and ``sqs_clock`` still serves them, and its tests get its
    objects, not sqsqueue's; sqsqueue's own fixtures carry the ``sqsqueue_``
    prefix and are there too."""
    pytester.makepyfile(
        other_plugin=textwrap.dedent(
            """
            import pytest

            @pytest.fixture
            def sqs_client():
                return "the other plugin's client"

            @pytest.fixture
            def sqs_broker():
                return "the other plugin's broker"

            @pytest.fixture
            def sqs_clock():
                return "the other plugin's clock"
            """
        ),
        test_other=textwrap.dedent(
            """
            import sqsqueue

            def test_theirs(sqs_client, sqs_broker, sqs_clock):
                assert sqs_client == "the other plugin's client"
                assert sqs_broker == "the other plugin's broker"
                assert sqs_clock == "the other plugin's clock"

            def test_ours_beside_them(sqsqueue_broker, sqsqueue_clock):
                assert isinstance(sqsqueue_broker, sqsqueue.Broker)
                assert sqsqueue_broker.clock is sqsqueue_clock
            """
        ),
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "other_plugin")
    result.assert_outcomes(passed=2)


def test_the_plugin_defines_only_prefixed_fixtures() -> None:
    """Every fixture the plugin defines starts with ``sqsqueue_``."""
    from sqsqueue.testing import plugin

    names = [
        name
        for name, value in vars(plugin).items()
        if hasattr(value, "_fixture_function_marker")
        or type(value).__name__ == "FixtureFunctionDefinition"
    ]
    assert sorted(names) == [
        "sqsqueue_broker",
        "sqsqueue_client",
        "sqsqueue_clock",
        "sqsqueue_endpoint_url",
    ]


LENIENT_TESTS = textwrap.dedent(
    """
    import pytest


    def purge_twice(sqsqueue_client):
        url = sqsqueue_client.create_queue(QueueName="jobs")["QueueUrl"]
        sqsqueue_client.purge_queue(QueueUrl=url)
        sqsqueue_client.purge_queue(QueueUrl=url)


    def test_through_boto3(sqsqueue_client, sqsqueue_broker):
        purge_twice(sqsqueue_client)
        assert sqsqueue_broker.lenient_counts()["purge-interval"] == 1


    def test_through_the_broker(sqsqueue_broker):
        q = sqsqueue_broker.create_queue("jobs")
        for _ in range(3):
            q.purge()


    def test_no_request_aws_refuses(sqsqueue_broker):
        sqsqueue_broker.create_queue("jobs").purge()
    """
)


def test_lenient_ini_option_and_summary(pytester: pytest.Pytester) -> None:
    """``sqsqueue_lenient`` gives the fixtures' brokers the leniency (docs/testing.md),
    and the session ends with one line counting what it let through: 1 + 2
    purges AWS would have refused (docs/aws-behaviour.md §2.1)."""
    pytester.makeini("[pytest]\nsqsqueue_lenient = purge-interval, fifo-queue-false\n")
    pytester.makepyfile(test_lenient=LENIENT_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    lines = [line for line in result.outlines if line.startswith("sqsqueue:")]
    assert lines == [
        "sqsqueue: 3 requests AWS would have refused: fifo-queue-false 0, purge-interval 3"
    ]


def test_lenient_in_pyproject_says_zero_when_unused(pytester: pytest.Pytester) -> None:
    """The pyproject form takes a list; a leniency on that let nothing through
    is reported with 0, so it shows it is no longer needed."""
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nsqsqueue_lenient = ["purge-interval"]\n')
    pytester.makepyfile(test_unused="def test_a(sqsqueue_broker):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["sqsqueue: 0 requests AWS would have refused: purge-interval 0"])


def test_strict_without_the_option(pytester: pytest.Pytester) -> None:
    """Without the option the fixtures are strict (AWS's PurgeQueueInProgress)
    and no summary line is printed."""
    pytester.makepyfile(test_lenient=LENIENT_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    assert "PurgeQueueInProgress" in result.stdout.str()
    assert not [line for line in result.outlines if line.startswith("sqsqueue:")]


def test_an_unknown_leniency_stops_the_run(pytester: pytest.Pytester) -> None:
    """An unknown name is a usage error naming the known ones, before any test."""
    pytester.makeini("[pytest]\nsqsqueue_lenient = purge-intervals\n")
    pytester.makepyfile(test_lenient=LENIENT_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*sqsqueue_lenient: unknown leniency 'purge-intervals': known are "
            "fifo-queue-false, purge-interval, recreate-interval"
        ]
    )
    assert "Traceback" not in result.stderr.str()
