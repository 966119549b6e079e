"""``sqsqueue check`` (issue 34, docs/check.md) against small boto3 consumers
with known verdicts, both ways: a correct consumer passes under duplicates
and kills, one that deletes before its work is caught losing messages under
kills, a non-idempotent one is caught under exactly-once, a FIFO consumer
that reverses its batches is caught under fifo-order, dead letters count as
not processed unless allowed, and usage errors exit 2 with one line.

Every run is seeded, uses a 1-second visibility timeout and a dozen
messages, and takes a few seconds; the verdicts do not depend on timing
(each consumer's bug shows whatever the machine's speed, as each test's
comment says).
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("boto3")

from sqsqueue.testing import check

CONSUMERS = Path(__file__).with_name("_consumers.py")


def consumer(kind: str) -> list[str]:
    return [sys.executable, str(CONSUMERS), kind]


def quick(kind: str, **options: object) -> object:
    options.setdefault("visibility_timeout", 1)
    options.setdefault("timeout", 40)
    options.setdefault("output", subprocess.DEVNULL)
    return check(consumer(kind), **options)  # type: ignore[arg-type]


def test_a_correct_consumer_passes_under_duplicates_and_kills() -> None:
    result = quick("correct", messages=12, faults="duplicate=0.3,kill=2", seed=11)
    assert result.ok, result.command_line
    (run,) = result.runs
    record = run.record
    kills = [i for i in record.incarnations if i.how == "killed"]
    assert len(kills) == 2
    # Each incarnation had its own pid, and the broker attributed receives to them.
    pids = {i.pid for i in record.incarnations}
    assert len(pids) == len(record.incarnations) == 3
    receivers = {record.pid(e.incarnation) for e in record.events if e.kind == "received"}
    assert receivers <= pids and len(receivers) >= 2
    assert record.count("effect") >= 12
    assert not record.timed_out


def test_deleting_before_the_work_loses_messages_under_kills() -> None:
    # The consumer deletes, then works 0.3 s, then reports. Seed 36's kills come
    # 48 and 49 ms after a receive: after the first delete (a few ms), inside
    # the work, with a margin of several times a delete's time on a loaded
    # machine; and either kill alone loses a message.
    result = quick(
        "delete-first",
        messages=12,
        faults="kill=2",
        seed=36,
        shrink=False,
        env=dict(os.environ, WORK="0.3"),
    )
    assert not result.ok
    assert result.exit_status == 1
    violation = result.violations[0]
    assert violation.expectation == "at-least-once"
    kinds = [e.kind for e in violation.history]
    assert kinds[0] == "sent"
    assert "deleted" in kinds and "killed" in kinds and "effect" not in kinds
    deleted = next(e for e in violation.history if e.kind == "deleted")
    killed = next(e for e in violation.history if e.kind == "killed")
    assert deleted.incarnation == killed.incarnation and deleted.time <= killed.time
    assert "--seed 36" in (result.command_line or "")
    assert "--faults kill=2" in (result.command_line or "")


def test_a_non_idempotent_consumer_is_caught_under_exactly_once() -> None:
    result = quick(
        "correct", messages=10, faults="duplicate=0.5", seed=3, expect="exactly-once", shrink=False
    )
    assert not result.ok
    violation = result.violations[0]
    assert violation.expectation == "exactly-once"
    assert "effects" in violation.reason
    effects = [e for e in violation.history if e.kind == "effect"]
    assert len(effects) >= 2
    lost = [e for e in violation.history if e.kind == "deleted" and "duplicate fault" in e.detail]
    assert lost, "the history names the delete the duplicate fault lost"


def test_an_idempotent_consumer_passes_exactly_once_under_duplicates() -> None:
    result = quick(
        "idempotent",
        messages=10,
        faults="duplicate=0.5",
        seed=3,
        expect=["exactly-once", "at-least-once"],
    )
    assert result.ok, result.command_line
    assert result.runs[0].record.count("received") > 10  # the duplicates were delivered


def test_a_fifo_consumer_reversing_its_batches_is_caught() -> None:
    result = quick(
        "fifo-reorder", messages=12, fifo=True, groups=2, seed=2, expect="fifo-order", shrink=False
    )
    assert not result.ok
    violation = result.violations[0]
    assert violation.expectation == "fifo-order"
    assert violation.message.group in ("g0", "g1")
    assert "sent before it in group" in violation.reason


def test_a_correct_fifo_consumer_keeps_order_under_kills() -> None:
    result = quick(
        "correct",
        messages=12,
        fifo=True,
        groups=3,
        seed=4,
        expect=["fifo-order", "at-least-once"],
        faults="kill=1",
    )
    assert result.ok, result.command_line


def test_dead_letters_count_as_not_processed_unless_allowed() -> None:
    # The consumer never handles bodies ending in 3: msg-00003 reaches the DLQ.
    failed = quick("poison", messages=6, seed=1, max_receive_count=1, shrink=False)
    assert not failed.ok
    (violation,) = failed.violations
    assert violation.message.body == "msg-00003"
    assert "dead-letter queue" in violation.reason
    assert violation.history[-1].kind == "dead_lettered"
    allowed = quick("poison", messages=6, seed=1, max_receive_count=1, allow_dead_letters=True)
    assert allowed.ok
    assert allowed.runs[0].record.dead_letters == {violation.message.message_id}


def test_runs_are_seeded_in_turn_and_the_report_has_a_timeline(tmp_path: Path) -> None:
    report = tmp_path / "check.md"
    result = quick("correct", messages=4, seed=40, runs=2, report=str(report), faults="kill=1")
    assert result.ok
    assert result.seeds == (40, 41)
    text = report.read_text()
    assert "| 2 | 41 |" in text and "![timeline](check.svg)" in text
    svg = ET.parse(tmp_path / "check.svg").getroot()
    circles = svg.findall(".//{http://www.w3.org/2000/svg}circle")
    assert len(circles) >= 1 + 4  # the legend's, then a receive per message at least


def test_the_command_reports_a_violation_with_exit_status_1(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sqsqueue",
            "check",
            "--messages",
            "6",
            "--seed",
            "7",
            "--visibility-timeout",
            "1",
            "--expect",
            "fifo-order",
            "--fifo",
            "--groups",
            "1",
            "--no-shrink",
            "--report",
            str(tmp_path / "r.md"),
            "--log",
            str(tmp_path / "log"),
            "--",
            *consumer("fifo-reorder"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "run 1/1 seed 7:" in out
    assert "expectation fifo-order: message msg-0000" in out
    assert "received by pid " in out
    assert "reproduce: sqsqueue check --messages 6 --fifo --groups 1 --seed 7" in out
    assert (tmp_path / "r.svg").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "no consumer command"),
        (["--faults", "explode", "--", "true"], "unknown fault 'explode'"),
        (["--faults", "duplicate=2", "--", "true"], "duplicate=2"),
        (["--faults", "kill=x", "--", "true"], "kill=x"),
        (["--expect", "most-once", "--", "true"], "invalid choice"),
        (["--expect", "fifo-order", "--", "true"], "needs --fifo"),
        (["--groups", "3", "--", "true"], "needs --fifo"),
        (["--messages", "0", "--", "true"], "at least 1 message"),
        (["--allow-dead-letters", "--", "true"], "needs --max-receive-count"),
        (["--messages", "ten", "--", "true"], "not a whole number"),
        (["--", "/nonexistent/consumer"], "cannot run '/nonexistent/consumer'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sqsqueue", "check", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("sqsqueue check: ") and says in lines[0]


def test_throttling_answers_sqs_throttling_error_so_the_sdk_retries() -> None:
    """RequestThrottled, HTTP 403, in the request's protocol (docs/aws-behaviour.md
    section 3; botocore's SQS retry policy names it): boto3 retries it."""
    import random
    import urllib.request

    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError

    from sqsqueue import Broker
    from sqsqueue.check._served import CheckEndpoint, Recorder, incarnation_key
    from sqsqueue.server._run import EndpointHandle, bind, uvicorn_server

    broker = Broker()
    queue = broker.create_queue("work")
    recorder = Recorder(broker.clock.now, "effects")
    endpoint = CheckEndpoint(
        broker, recorder, queue_name="work", slow_ms=0, throttle=1.0, rng=random.Random(1)
    )
    handle = EndpointHandle(
        uvicorn_server(endpoint, 30), endpoint, bind("127.0.0.1", 0), "127.0.0.1"
    )
    with handle.start():
        sqs = boto3.client(
            "sqs",
            endpoint_url=handle.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id=incarnation_key(4),
            aws_secret_access_key="x",
            config=Config(retries={"mode": "standard", "max_attempts": 3}),
        )
        url = f"{handle.endpoint_url}/{broker.account_id}/work"
        with pytest.raises(ClientError) as caught:
            sqs.send_message(QueueUrl=url, MessageBody="x")
        error = caught.value.response
        assert error["Error"]["Code"] == "RequestThrottled"
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
        retries = error["ResponseMetadata"]["RetryAttempts"]
        assert retries >= 2  # the SDK's retry code ran
        throttled = [e for e in recorder.events if e.kind == "throttled"]
        assert [e.incarnation for e in throttled] == [4] * (retries + 1)
        # The query protocol gets it as XML.
        form = f"Action=ReceiveMessage&QueueUrl={url}&Version=2012-11-05".encode()
        request = urllib.request.Request(handle.endpoint_url + "/", data=form, method="POST")
        with pytest.raises(urllib.error.HTTPError) as http:
            urllib.request.urlopen(request, timeout=10)
        assert http.value.code == 403
        assert b"<Code>RequestThrottled</Code>" in http.value.read()
    assert len(queue) == 0  # nothing throttled reached the queue


def test_the_query_protocol_is_recorded_as_json_is() -> None:
    """A consumer on the query protocol (older SDKs) is followed the same way:
    receives read from the XML answer, deletes mapped back through their
    receipt handles, effects from SendMessage's form, each with its caller."""
    import random
    import re
    import urllib.parse
    import urllib.request

    from sqsqueue import Broker
    from sqsqueue.check._served import CheckEndpoint, Recorder, incarnation_key
    from sqsqueue.server._run import EndpointHandle, bind, uvicorn_server

    broker = Broker()
    queue = broker.create_queue("work")
    broker.create_queue("effects")
    sent = queue.send("hello")
    recorder = Recorder(broker.clock.now, "effects")
    recorder.id_of_body["hello"] = sent.message_id
    endpoint = CheckEndpoint(
        broker, recorder, queue_name="work", slow_ms=0, throttle=0.0, rng=random.Random(1)
    )
    credential = (
        f"AWS4-HMAC-SHA256 Credential={incarnation_key(7)}/20260101/us-east-1/sqs/"
        "aws4_request, SignedHeaders=host, Signature=0"
    )
    handle = EndpointHandle(
        uvicorn_server(endpoint, 30), endpoint, bind("127.0.0.1", 0), "127.0.0.1"
    )

    def call(**form: str) -> bytes:
        data = urllib.parse.urlencode({**form, "Version": "2012-11-05"}).encode()
        request = urllib.request.Request(
            handle.endpoint_url + "/",
            data=data,
            method="POST",
            headers={"Authorization": credential},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return bytes(answer.read())

    with handle.start():
        base = f"{handle.endpoint_url}/{broker.account_id}"
        xml = call(Action="ReceiveMessage", QueueUrl=f"{base}/work").decode()
        receipt = re.search(r"<ReceiptHandle>([^<]+)</ReceiptHandle>", xml)
        assert receipt is not None
        call(Action="SendMessage", QueueUrl=f"{base}/effects", MessageBody="hello")
        call(Action="DeleteMessage", QueueUrl=f"{base}/work", ReceiptHandle=receipt.group(1))
    kinds = [(e.kind, e.message_id, e.incarnation) for e in recorder.events]
    assert kinds == [
        ("received", sent.message_id, 7),
        ("effect", sent.message_id, 7),
        ("deleted", sent.message_id, 7),
    ]
    assert recorder.effects[sent.message_id] == 1
