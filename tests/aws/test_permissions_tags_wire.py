"""Permissions and tags through real boto3: AddPermission, RemovePermission,
TagQueue, UntagQueue, ListQueueTags, CreateQueue tags, AccessDenied
(docs/aws-behaviour.md §§1.4, 2.1, 3.2, 4)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsqueue import Broker
from sqsqueue.testing import mock_sqs
from tests.aws._helpers import arn_of, assert_aws_error, url_of

OTHER = "111122223333"


def _policy(sqs: Any, url: str) -> dict[str, Any] | None:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
    if "Attributes" not in attrs:
        return None
    policy: dict[str, Any] = json.loads(attrs["Attributes"]["Policy"])
    return policy


def test_add_permission_generates_aws_policy(sqs: Any, queue_url: str) -> None:
    """Section 2.1: AddPermission builds AWS's default policy: Principal.AWS a
    string for one account and a list for several, Action "SQS:<name>"."""
    assert set(
        sqs.add_permission(
            QueueUrl=queue_url, Label="one", AWSAccountIds=[OTHER], Actions=["ReceiveMessage"]
        )
    ) == {"ResponseMetadata"}
    sqs.add_permission(
        QueueUrl=queue_url,
        Label="two",
        AWSAccountIds=[OTHER, "444455556666"],
        Actions=["SendMessage", "DeleteMessage"],
    )
    assert _policy(sqs, queue_url) == {
        "Version": "2008-10-17",
        "Id": f"{arn_of('jobs')}/SQSDefaultPolicy",
        "Statement": [
            {
                "Sid": "one",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"},
                "Action": "SQS:ReceiveMessage",
                "Resource": arn_of("jobs"),
            },
            {
                "Sid": "two",
                "Effect": "Allow",
                "Principal": {
                    "AWS": [f"arn:aws:iam::{OTHER}:root", "arn:aws:iam::444455556666:root"]
                },
                "Action": ["SQS:SendMessage", "SQS:DeleteMessage"],
                "Resource": arn_of("jobs"),
            },
        ],
    }


def test_remove_permission_and_last_removes_policy(sqs: Any, queue_url: str) -> None:
    """Section 2.1 (AWS-obs): removing the last statement removes Policy."""
    for label in ("a", "b"):
        sqs.add_permission(
            QueueUrl=queue_url, Label=label, AWSAccountIds=[OTHER], Actions=["SendMessage"]
        )
    assert set(sqs.remove_permission(QueueUrl=queue_url, Label="a")) == {"ResponseMetadata"}
    policy = _policy(sqs, queue_url)
    assert policy is not None
    assert [s["Sid"] for s in policy["Statement"]] == ["b"]
    sqs.remove_permission(QueueUrl=queue_url, Label="b")
    assert _policy(sqs, queue_url) is None


def test_permission_label_errors(sqs: Any, queue_url: str) -> None:
    """Section 2.1 (AWS-obs): duplicate label "Already exists."; unknown label
    "can't find label."; both plain InvalidParameterValue ClientErrors."""
    sqs.add_permission(QueueUrl=queue_url, Label="dup", AWSAccountIds=[OTHER], Actions=["*"])
    with pytest.raises(ClientError) as exc:
        sqs.add_permission(QueueUrl=queue_url, Label="dup", AWSAccountIds=[OTHER], Actions=["*"])
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message="Value dup for parameter Label is invalid. Reason: Already exists.",
        operation="AddPermission",
    )
    with pytest.raises(ClientError) as exc:
        sqs.remove_permission(QueueUrl=queue_url, Label="nope")
    assert_aws_error(
        exc.value,
        code="InvalidParameterValue",
        query_code="InvalidParameterValueException",
        message="Value nope for parameter Label is invalid. Reason: can't find label.",
        operation="RemovePermission",
    )


def test_list_queue_tags_untagged_has_no_tags_key(sqs: Any, queue_url: str) -> None:
    """Section 1.3 (AWS-obs): ListQueueTags on an untagged queue has no Tags key."""
    response = sqs.list_queue_tags(QueueUrl=queue_url)
    assert set(response) == {"ResponseMetadata"}


def test_tag_untag_lifecycle(sqs: Any, queue_url: str) -> None:
    """Section 2.1 (AWS-obs): tags overwrite by key, values may be "", untagging
    a missing key is not an error, and after removing all there is no Tags key."""
    assert set(sqs.tag_queue(QueueUrl=queue_url, Tags={"team": "a", "env": ""})) == {
        "ResponseMetadata"
    }
    sqs.tag_queue(QueueUrl=queue_url, Tags={"team": "b"})
    assert sqs.list_queue_tags(QueueUrl=queue_url)["Tags"] == {"team": "b", "env": ""}
    assert set(sqs.untag_queue(QueueUrl=queue_url, TagKeys=["env", "missing"])) == {
        "ResponseMetadata"
    }
    assert sqs.list_queue_tags(QueueUrl=queue_url)["Tags"] == {"team": "b"}
    sqs.untag_queue(QueueUrl=queue_url, TagKeys=["team"])
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=queue_url)


def test_create_queue_with_lowercase_tags_parameter(sqs: Any) -> None:
    """Section 1.2/2: CreateQueue's tag parameter is lowercase "tags"."""
    url = sqs.create_queue(QueueName="tagged", tags={"owner": "me", "cost-center": "42"})[
        "QueueUrl"
    ]
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"owner": "me", "cost-center": "42"}


def test_reserved_tag_prefix_rejected(sqs: Any, queue_url: str) -> None:
    """Section 4: tag keys may not start with "aws:"."""
    with pytest.raises(ClientError) as exc:
        sqs.tag_queue(QueueUrl=queue_url, Tags={"aws:owner": "x"})
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=queue_url)


def test_access_denied_for_another_account_without_grant(
    broker: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Section 3.2: a caller from another account gets AccessDenied, a plain
    ClientError with QueryErrorCode AccessDeniedException (emu mapping, HTTP
    400 per the doc), until AddPermission grants the action; a grant of
    SendMessage implies SendMessageBatch and nothing else."""
    broker.create_queue("jobs")
    mock = mock_sqs(broker)
    monkeypatch.setattr(mock, "client_for", lambda region: broker.client(principal=OTHER))
    with mock:
        sqs = boto3.client("sqs", region_name="us-east-1")
        with pytest.raises(ClientError) as exc:
            sqs.send_message(QueueUrl=url_of("jobs"), MessageBody="x")
        assert type(exc.value) is ClientError
        assert_aws_error(
            exc.value,
            code="AccessDenied",
            query_code="AccessDeniedException",
            message=f"Access to the resource {url_of('jobs')} is denied.",
            operation="SendMessage",
        )
        broker.get_queue("jobs").add_permission("grant", [OTHER], ["SendMessage"])
        sqs.send_message(QueueUrl=url_of("jobs"), MessageBody="x")
        batch = sqs.send_message_batch(
            QueueUrl=url_of("jobs"), Entries=[{"Id": "a", "MessageBody": "y"}]
        )
        assert [s["Id"] for s in batch["Successful"]] == ["a"]
        with pytest.raises(ClientError) as exc:
            sqs.receive_message(QueueUrl=url_of("jobs"))
        assert exc.value.response["Error"]["Code"] == "AccessDenied"
    received = broker.get_queue("jobs").receive(10, attribute_names=["SenderId"])
    assert sorted(m.body for m in received) == ["x", "y"]
    assert {m.attributes["SenderId"] for m in received} == {OTHER}
