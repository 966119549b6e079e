"""Where moto is lenient and AWS is not (docs/moto.md, "What is stricter").

Every row of the guide's two tables is a case here, run three ways: the
call under moto alone (accepted, or failing with moto's own code), the same
call under sqsqueue (AWS's error), and the guide's one-line fix under
sqsqueue (accepted). The guide's text is checked too: each row's AWS code
and fix appear in it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import moto
import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker, ManualClock
from sqsqueue._lenient import LENIENCIES
from sqsqueue.testing import mock_aws, mock_sqs

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "moto.md"
URL_OF = "https://sqs.us-east-1.amazonaws.com/123456789012/{}"

Call = Callable[[Any, ManualClock], None]


@dataclass(frozen=True)
class Rule:
    name: str
    code: str  # AWS's Error.Code
    call: Call  # what a moto suite does
    fixed: Call  # the guide's fix
    fix: str  # how the guide writes the fix
    moto_code: str | None = None  # moto's own error, for calls both refuse
    leniency: str | None = None  # the leniency that lets the call through


def _url(sqs: Any, name: str = "jobs", **attributes: str) -> str:
    url: str = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return url


def _purge_twice(advance: bool) -> Call:
    def call(sqs: Any, clock: ManualClock) -> None:
        url = _url(sqs)
        sqs.purge_queue(QueueUrl=url)
        if advance:
            clock.advance(60)
        sqs.purge_queue(QueueUrl=url)

    return call


def _recreate(advance: bool) -> Call:
    def call(sqs: Any, clock: ManualClock) -> None:
        sqs.delete_queue(QueueUrl=_url(sqs))
        if advance:
            clock.advance(60)
        _url(sqs)

    return call


def _retention(seconds: str) -> Call:
    """A message kept ``seconds``, then gone: the test a 1-second retention
    stood for (the expiry is checked on sqsqueue's clock only)."""

    def call(sqs: Any, clock: ManualClock) -> None:
        url = _url(sqs, MessageRetentionPeriod=seconds)
        sqs.send_message(QueueUrl=url, MessageBody="x")
        if seconds == "60":
            clock.advance(60)
            assert "Messages" not in sqs.receive_message(QueueUrl=url)

    return call


def _redrive(count: int) -> Call:
    def call(sqs: Any, clock: ManualClock) -> None:
        _url(sqs, "dlq")
        policy = {"deadLetterTargetArn": "arn:aws:sqs:us-east-1:123456789012:dlq"}
        _url(sqs, RedrivePolicy=json.dumps({**policy, "maxReceiveCount": count}))

    return call


def _change_visibility_after_delete(expect: str | None) -> Call:
    def call(sqs: Any, clock: ManualClock) -> None:
        url = _url(sqs)
        sqs.send_message(QueueUrl=url, MessageBody="x")
        handle = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
        if expect is None:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=5)
            return
        with pytest.raises(ClientError, match=expect):
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=5)

    return call


def _missing_dlq(create_first: bool) -> Call:
    def call(sqs: Any, clock: ManualClock) -> None:
        if create_first:
            _url(sqs, "dlq")
        arn = "arn:aws:sqs:us-east-1:123456789012:dlq"
        _url(sqs, RedrivePolicy=json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1}))

    return call


def _policy(with_action: bool) -> Call:
    """A queue policy whose statement lacks its Action (AWS refuses it; moto
    stores any JSON), and the same with it."""

    def call(sqs: Any, clock: ManualClock) -> None:
        statement: dict[str, Any] = {"Effect": "Allow", "Principal": "*", "Resource": "*"}
        if with_action:
            statement["Action"] = "sqs:SendMessage"
        policy = {"Version": "2012-10-17", "Statement": [statement]}
        sqs.set_queue_attributes(QueueUrl=_url(sqs), Attributes={"Policy": json.dumps(policy)})

    return call


RULES = [
    Rule(
        "FifoQueue false",
        "InvalidAttributeName",
        lambda sqs, _: sqs.create_queue(QueueName="jobs", Attributes={"FifoQueue": "false"}),
        lambda sqs, _: sqs.create_queue(QueueName="jobs"),
        '`create_queue(QueueName="jobs")`',
        leniency="fifo-queue-false",
    ),
    Rule(
        "second purge",
        "AWS.SimpleQueueService.PurgeQueueInProgress",
        _purge_twice(advance=False),
        _purge_twice(advance=True),
        "`clock.advance(60)` between the two purges",
        leniency="purge-interval",
    ),
    Rule(
        "deduplication id on a standard queue",
        "InvalidParameterValue",
        lambda sqs, _: sqs.send_message(
            QueueUrl=_url(sqs), MessageBody="x", MessageDeduplicationId="d"
        ),
        lambda sqs, _: sqs.send_message(QueueUrl=_url(sqs), MessageBody="x"),
        "leave `MessageDeduplicationId` out",
    ),
    Rule(
        "1-second retention",
        "InvalidAttributeValue",
        _retention("1"),
        _retention("60"),
        '`"MessageRetentionPeriod": "60"` then `clock.advance(60)`',
    ),
    Rule(
        "re-creation within 60 seconds",
        "AWS.SimpleQueueService.QueueDeletedRecently",
        _recreate(advance=False),
        _recreate(advance=True),
        "`clock.advance(60)` before creating it again",
        leniency="recreate-interval",
    ),
    Rule(
        "characters outside XML's",
        "InvalidMessageContents",
        lambda sqs, _: sqs.send_message(QueueUrl=_url(sqs), MessageBody="a\x00b"),
        lambda sqs, _: sqs.send_message(
            QueueUrl=_url(sqs), MessageBody=base64.b64encode(b"a\x00b").decode()
        ),
        "`base64.b64encode(data).decode()`",
    ),
    Rule(
        "unknown queue attribute",
        "InvalidAttributeName",
        lambda sqs, _: sqs.set_queue_attributes(QueueUrl=_url(sqs), Attributes={"Colour": "red"}),
        lambda sqs, _: sqs.tag_queue(QueueUrl=_url(sqs), Tags={"Colour": "red"}),
        '`tag_queue(QueueUrl=url, Tags={"Colour": "red"})`',
    ),
    Rule(
        "aws: tag prefix",
        "InvalidParameterValue",
        lambda sqs, _: sqs.tag_queue(QueueUrl=_url(sqs), Tags={"aws:team": "a"}),
        lambda sqs, _: sqs.tag_queue(QueueUrl=_url(sqs), Tags={"team": "a"}),
        '`Tags={"team": "a"}`',
    ),
    Rule(
        "visibility timeout over 12 hours",
        "InvalidAttributeValue",
        lambda sqs, _: _url(sqs, VisibilityTimeout="50000"),
        lambda sqs, _: _url(sqs, VisibilityTimeout="43200"),
        '`"VisibilityTimeout": "43200"`',
    ),
    Rule(
        "empty String attribute",
        "InvalidParameterValue",
        lambda sqs, _: sqs.send_message(
            QueueUrl=_url(sqs),
            MessageBody="x",
            MessageAttributes={"a": {"DataType": "String", "StringValue": ""}},
        ),
        lambda sqs, _: sqs.send_message(QueueUrl=_url(sqs), MessageBody="x"),
        "leave the attribute out",
    ),
    Rule(
        ".fifo name on a standard queue",
        "InvalidParameterValue",
        lambda sqs, _: sqs.create_queue(QueueName="jobs.fifo"),
        lambda sqs, _: sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"}),
        '`Attributes={"FifoQueue": "true"}`',
    ),
    Rule(
        "MaxResults 0",
        "InvalidParameterValue",
        lambda sqs, _: sqs.list_queues(MaxResults=0),
        lambda sqs, _: sqs.list_queues(MaxResults=1000),
        "`MaxResults=1000`",
    ),
    Rule(
        "maxReceiveCount 0",
        "InvalidAttributeValue",
        _redrive(0),
        _redrive(1),
        '`"maxReceiveCount": 1`',
    ),
    Rule(
        "policy statement without Action",
        "InvalidAttributeValue",
        _policy(with_action=False),
        _policy(with_action=True),
        '`"Action": "sqs:SendMessage"`',
    ),
    Rule(
        "visibility change of a deleted message",
        "InvalidParameterValue",
        _change_visibility_after_delete(None),
        _change_visibility_after_delete("InvalidParameterValue"),
        '`pytest.raises(ClientError, match="InvalidParameterValue")`',
        moto_code="ReceiptHandleIsInvalid",
    ),
    Rule(
        "missing dead-letter queue",
        "InvalidParameterValue",
        _missing_dlq(create_first=False),
        _missing_dlq(create_first=True),
        "create the dead-letter queue first",
        moto_code="AWS.SimpleQueueService.NonExistentQueue",
    ),
]
IDS = [rule.name for rule in RULES]


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # moto 5.1 on enforces the purge rule unless told not to; 5.0 never does.
    monkeypatch.setenv("MOTO_SQS_ENFORCE_STRICT_QUEUE_PURGE_BEHAVIOUR", "false")


def _sqs() -> Any:
    return boto3.client("sqs", region_name="us-east-1")


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_moto_alone(rule: Rule) -> None:
    """moto accepts the call (or refuses it with its own code)."""
    with moto.mock_aws():
        if rule.moto_code is None:
            rule.call(_sqs(), ManualClock())
        else:
            with pytest.raises(ClientError) as exc:
                rule.call(_sqs(), ManualClock())
            assert exc.value.response["Error"]["Code"] == rule.moto_code


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_sqsqueue_answers_as_aws_and_the_fix_passes(rule: Rule) -> None:
    """sqsqueue refuses the call with AWS's code; the guide's fix passes."""
    clock = ManualClock(start=1_700_000_000.0)
    with mock_sqs(Broker(clock=clock)):
        with pytest.raises(ClientError) as exc:
            rule.call(_sqs(), clock)
        assert exc.value.response["Error"]["Code"] == rule.code
    clock = ManualClock(start=1_700_000_000.0)
    with mock_sqs(Broker(clock=clock)):
        rule.fixed(_sqs(), clock)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_leniency_lets_the_call_through_and_counts_it(rule: Rule) -> None:
    """With its leniency on, sqsqueue accepts the call as moto does and counts
    it once; a rule without one is still refused with AWS's code with every
    leniency on, and nothing is counted (docs/serving.md, "Leniencies")."""
    clock = ManualClock(start=1_700_000_000.0)
    if rule.leniency is None:
        broker = Broker(clock=clock, lenient=sorted(LENIENCIES))
        with mock_sqs(broker), pytest.raises(ClientError) as exc:
            rule.call(_sqs(), clock)
        assert exc.value.response["Error"]["Code"] == rule.code
        assert set(broker.lenient_counts().values()) == {0}
        return
    with mock_aws(lenient=rule.leniency) as mock:
        rule.call(_sqs(), clock)
    assert mock.lenient_counts() == {rule.leniency: 1}


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_guide_lists_the_rule(rule: Rule) -> None:
    """docs/moto.md names AWS's code and the fix of every rule tested here."""
    guide = GUIDE.read_text(encoding="utf-8")
    assert f"`{rule.code}`" in guide
    assert rule.fix in guide
    if rule.moto_code is not None:
        assert f"`{rule.moto_code}`" in guide


def test_the_guide_has_no_untested_row() -> None:
    """Every row of the guide's two tables of stricter rules is a case here
    (the third table, of forms, is test_request_ids_have_awss_form's)."""
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide.split("## What is stricter")[1].split("\n## ")[0]
    section = section.split("| The test checks |")[0]
    rows = [
        line
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| The test does", "| ---"))
    ]
    assert len(rows) == len(RULES)
    for row, rule in zip(rows, RULES, strict=True):
        assert rule.fix in row, (rule.name, row)
        if rule.moto_code is None:  # the first table: its last column names the leniency
            last = row.rstrip(" |").rsplit(" | ", 1)[1]
            assert last == (f"`{rule.leniency}`" if rule.leniency else "none"), (rule.name, row)


def test_request_ids_have_awss_form() -> None:
    """AWS's request ids are UUIDs ("x-amzn-RequestId, which contains the
    Universal Unique Identifier (UUID) of the request": SQS Developer Guide,
    sqs-json-api-responses); moto's are 52 letters and digits, so a suite
    that matches moto's form fails under sqsqueue. The guide's third table
    says so, and its fix (parse it as a UUID) passes under sqsqueue."""
    import uuid

    with moto.mock_aws():
        moto_id = _sqs().list_queues()["ResponseMetadata"]["RequestId"]
    assert len(moto_id) == 52 and moto_id.isalnum()
    with mock_sqs(Broker(clock=ManualClock(start=1_700_000_000.0))):
        reply = _sqs().list_queues()["ResponseMetadata"]
    ours = reply["RequestId"]
    assert len(ours) == 36 and str(uuid.UUID(ours)) == ours
    assert reply["HTTPHeaders"]["x-amzn-requestid"] == ours
    guide = GUIDE.read_text(encoding="utf-8").split("## What is stricter")[1]
    table = guide.split("| The test checks |")[1].split("\n## ")[0]
    assert "a UUID, 36 characters" in table and "52 random letters and digits" in table
    assert 'uuid.UUID(response["ResponseMetadata"]["RequestId"])' in table
