"""Queue operations through real boto3: CreateQueue, GetQueueUrl, ListQueues,
GetQueueAttributes, SetQueueAttributes, PurgeQueue, DeleteQueue
(docs/aws-behaviour.md §§1.3, 2, 2.1, 4, 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsqueue import Broker, ManualClock
from tests._helpers import new_queue_attributes
from tests.aws._helpers import arn_of, assert_aws_error, url_of

STANDARD_DEFAULTS = new_queue_attributes(arn_of("jobs"))


def test_create_queue_returns_the_aws_queue_url(sqs: Any, broker: Broker) -> None:
    """Section 1.3/2: CreateQueue answers HTTP 200 with only QueueUrl, the
    regional URL with the account id; the queue exists in the broker."""
    response = sqs.create_queue(QueueName="jobs")
    assert response["QueueUrl"] == url_of("jobs")
    assert set(response) == {"QueueUrl", "ResponseMetadata"}
    meta = response["ResponseMetadata"]
    assert meta["HTTPStatusCode"] == 200
    assert meta["RequestId"] == meta["HTTPHeaders"]["x-amzn-requestid"]
    assert meta["HTTPHeaders"]["content-type"] == "application/x-amz-json-1.0"
    assert url_of("jobs") in broker


def test_request_ids_are_unique_per_call(sqs: Any) -> None:
    """Section 1.3: every response carries its own x-amzn-RequestId."""
    ids = {sqs.list_queues()["ResponseMetadata"]["RequestId"] for _ in range(5)}
    assert len(ids) == 5


def test_create_queue_is_idempotent_with_equal_attributes(sqs: Any) -> None:
    """Section 2.1: same name with no attributes, or with attributes equal to
    the current values, returns the existing URL."""
    url = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "45"})["QueueUrl"]
    assert sqs.create_queue(QueueName="jobs")["QueueUrl"] == url
    again = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "45"})
    assert again["QueueUrl"] == url
    assert sqs.list_queues()["QueueUrls"] == [url]


def test_create_queue_compares_against_current_values(sqs: Any) -> None:
    """Section 2.1: the comparison uses current values (after SetQueueAttributes)."""
    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "5"})
    assert sqs.create_queue(QueueName="jobs", Attributes={"DelaySeconds": "5"})["QueueUrl"] == url
    with pytest.raises(sqs.exceptions.QueueNameExists) as exc:
        sqs.create_queue(QueueName="jobs", Attributes={"DelaySeconds": "0"})
    assert_aws_error(
        exc.value,
        code="QueueAlreadyExists",
        query_code="QueueNameExists",
        message="A queue already exists with the same name and a different value for "
        "attribute DelaySeconds",
        operation="CreateQueue",
    )


def test_get_queue_url(sqs: Any, queue_url: str) -> None:
    """Section 2.1: GetQueueUrl returns the URL of an existing queue, also with
    the owner's own account id."""
    assert sqs.get_queue_url(QueueName="jobs")["QueueUrl"] == queue_url
    owned = sqs.get_queue_url(QueueName="jobs", QueueOwnerAWSAccountId="123456789012")
    assert owned["QueueUrl"] == queue_url


def test_get_queue_url_of_other_account_does_not_exist(sqs: Any, queue_url: str) -> None:
    """Section 2.1: a queue of another account is not found here."""
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName="jobs", QueueOwnerAWSAccountId="210987654321")


def test_queue_url_of_another_region_does_not_exist(sqs: Any, queue_url: str) -> None:
    """Section 2.1: a request reaches one region's endpoint; a queue URL naming
    another region names no queue there (its ARN does not either)."""
    other = "https://sqs.eu-west-1.amazonaws.com/" + queue_url.rsplit("/", 2)[-2] + "/jobs"
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=other, MessageBody="x")
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_attributes(QueueUrl=other)


def test_list_queues_with_no_queues_has_no_queueurls_key(sqs: Any) -> None:
    """Section 1.3: empty collections are omitted: no "QueueUrls" key at all."""
    response = sqs.list_queues()
    assert "QueueUrls" not in response
    assert "NextToken" not in response


def test_list_queues_prefix_is_case_sensitive(sqs: Any) -> None:
    """Section 2.1: QueueNamePrefix is a case-sensitive prefix match."""
    for name in ("alpha", "alpine", "Alps", "beta"):
        sqs.create_queue(QueueName=name)
    assert sqs.list_queues(QueueNamePrefix="al")["QueueUrls"] == [
        url_of("alpha"),
        url_of("alpine"),
    ]
    assert sqs.list_queues(QueueNamePrefix="Al")["QueueUrls"] == [url_of("Alps")]
    assert "QueueUrls" not in sqs.list_queues(QueueNamePrefix="gamma")


def test_list_queues_next_token_only_with_max_results(sqs: Any) -> None:
    """Section 2.1: NextToken is only returned if MaxResults was set and more
    results exist."""
    for i in range(3):
        sqs.create_queue(QueueName=f"q{i}")
    assert "NextToken" not in sqs.list_queues()
    first = sqs.list_queues(MaxResults=2)
    assert first["QueueUrls"] == [url_of("q0"), url_of("q1")]
    second = sqs.list_queues(MaxResults=2, NextToken=first["NextToken"])
    assert second["QueueUrls"] == [url_of("q2")]
    assert "NextToken" not in second
    assert "NextToken" not in sqs.list_queues(MaxResults=3)


def test_list_queues_paginator_across_25_queues(sqs: Any) -> None:
    """Section 2 (paginators-1.json): ListQueues pages by NextToken/MaxResults;
    PageSize 10 over 25 queues gives pages of 10, 10 and 5, covering each
    queue exactly once."""
    names = [f"queue-{i:02d}" for i in range(25)]
    for name in names:
        sqs.create_queue(QueueName=name)
    paginator = sqs.get_paginator("list_queues")
    pages = list(paginator.paginate(PaginationConfig={"PageSize": 10}))
    assert [len(p["QueueUrls"]) for p in pages] == [10, 10, 5]
    assert [u for p in pages for u in p["QueueUrls"]] == [url_of(n) for n in names]
    assert "NextToken" not in pages[-1]
    built = paginator.paginate(PaginationConfig={"PageSize": 7}).build_full_result()
    assert built["QueueUrls"] == [url_of(n) for n in names]


def test_list_queues_max_results_out_of_range(sqs: Any) -> None:
    """Section 2.1/4: MaxResults is 1..1000."""
    with pytest.raises(sqs.exceptions.ClientError) as exc:
        sqs.list_queues(MaxResults=0)
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_get_queue_attributes_without_names_returns_no_attributes(sqs: Any, queue_url: str) -> None:
    """Section 2.1: GetQueueAttributes with no AttributeNames "returns empty
    results": the response has no Attributes key."""
    response = sqs.get_queue_attributes(QueueUrl=queue_url)
    assert "Attributes" not in response


def test_get_queue_attributes_all_defaults(sqs: Any, queue_url: str) -> None:
    """Section 2.1: the default attributes of a new standard queue, as AWS lists
    them for All; Policy, RedrivePolicy, Kms* are absent. CreatedTimestamp and
    LastModifiedTimestamp are epoch seconds (section 1.3)."""
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs == STANDARD_DEFAULTS


def test_get_queue_attributes_by_name(sqs: Any, queue_url: str) -> None:
    """Section 5: named attributes return only those names."""
    attrs = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["QueueArn", "VisibilityTimeout"]
    )["Attributes"]
    assert attrs == {"QueueArn": arn_of("jobs"), "VisibilityTimeout": "30"}


def test_approximate_counters(sqs: Any, queue_url: str) -> None:
    """Section 5: visible, in-flight and delayed counts."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="a")
    sqs.send_message(QueueUrl=queue_url, MessageBody="b")
    sqs.send_message(QueueUrl=queue_url, MessageBody="c", DelaySeconds=60)
    sqs.receive_message(QueueUrl=queue_url)
    attrs = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    )["Attributes"]
    assert attrs == {
        "ApproximateNumberOfMessages": "1",
        "ApproximateNumberOfMessagesNotVisible": "1",
        "ApproximateNumberOfMessagesDelayed": "1",
    }


def test_set_queue_attributes_round_trip(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1: SetQueueAttributes returns an empty response and the values
    are read back as strings; LastModifiedTimestamp moves, CreatedTimestamp
    does not."""
    clock.advance(100)
    response = sqs.set_queue_attributes(
        QueueUrl=queue_url,
        Attributes={"VisibilityTimeout": "60", "MaximumMessageSize": "2048"},
    )
    assert set(response) == {"ResponseMetadata"}
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs["VisibilityTimeout"] == "60"
    assert attrs["MaximumMessageSize"] == "2048"
    assert attrs["CreatedTimestamp"] == "1700000000"
    assert attrs["LastModifiedTimestamp"] == "1700000100"


def test_set_policy_and_clear_with_empty_string(sqs: Any, queue_url: str) -> None:
    """Section 2.1: setting Policy (or RedrivePolicy) to "" removes it."""
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "s",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "sqs:SendMessage",
                "Resource": arn_of("jobs"),
            }
        ],
    }
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"Policy": json.dumps(policy)})
    got = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["Policy"])
    assert json.loads(got["Attributes"]["Policy"]) == policy
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={"Policy": ""})
    assert "Attributes" not in sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["Policy"]
    )


def test_purge_queue_removes_everything(sqs: Any, queue_url: str) -> None:
    """Section 2.1: PurgeQueue deletes all messages, in-flight and delayed
    included; empty response."""
    sqs.send_message(QueueUrl=queue_url, MessageBody="visible")
    sqs.send_message(QueueUrl=queue_url, MessageBody="delayed", DelaySeconds=30)
    sqs.send_message(QueueUrl=queue_url, MessageBody="in flight")
    sqs.receive_message(QueueUrl=queue_url)
    assert set(sqs.purge_queue(QueueUrl=queue_url)) == {"ResponseMetadata"}
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "0"
    assert attrs["ApproximateNumberOfMessagesDelayed"] == "0"


def test_purge_again_after_60_seconds(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1: one purge per 60 s; after that a purge is allowed again."""
    sqs.purge_queue(QueueUrl=queue_url)
    clock.advance(59)
    with pytest.raises(sqs.exceptions.PurgeQueueInProgress):
        sqs.purge_queue(QueueUrl=queue_url)
    clock.advance(1)
    sqs.purge_queue(QueueUrl=queue_url)


def test_delete_queue(sqs: Any, queue_url: str, broker: Broker) -> None:
    """Section 2.1: DeleteQueue returns an empty response; the queue is gone."""
    assert set(sqs.delete_queue(QueueUrl=queue_url)) == {"ResponseMetadata"}
    assert queue_url not in broker
    assert "QueueUrls" not in sqs.list_queues()
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName="jobs")


def test_recreate_after_60_seconds(sqs: Any, queue_url: str, clock: ManualClock) -> None:
    """Section 2.1: the name is reusable 60 s after DeleteQueue, not before."""
    sqs.delete_queue(QueueUrl=queue_url)
    clock.advance(59)
    with pytest.raises(sqs.exceptions.QueueDeletedRecently):
        sqs.create_queue(QueueName="jobs")
    clock.advance(1)
    assert sqs.create_queue(QueueName="jobs")["QueueUrl"] == queue_url
