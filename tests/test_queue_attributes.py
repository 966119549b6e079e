"""GetQueueAttributes / SetQueueAttributes on a standard queue
(docs/aws-behaviour.md §§2.1, 5)."""

from __future__ import annotations

import json

import pytest

from sqsqueue import ManualClock, Queue, errors
from tests._helpers import new_queue_attributes

START = 1_700_000_000.0

#: GetQueueAttributes(All) of a new standard queue (section 2.1, AWS-observed).
DEFAULTS = new_queue_attributes("arn:aws:sqs:us-east-1:123456789012:jobs")


class TestGetAttributes:
    """GetQueueAttributes: All, specific names, none (section 2.1)."""

    def test_defaults_of_a_new_queue(self, queue: Queue) -> None:
        """Section 2.1: a new standard queue reports exactly AWS's defaults; Policy,
        RedrivePolicy, Kms* and FIFO attributes are absent."""
        assert queue.get_attributes(["All"]) == DEFAULTS

    def test_default_argument_is_all(self, queue: Queue) -> None:
        """Section 2.1: The Pythonic default (and the attributes property) is All."""
        assert queue.get_attributes() == DEFAULTS
        assert queue.attributes == DEFAULTS

    def test_no_names_returns_empty(self, queue: Queue) -> None:
        """Section 2.1: no AttributeNames -> empty result."""
        assert queue.get_attributes([]) == {}
        assert queue.get_attributes(None) == {}  # type: ignore[arg-type]

    def test_specific_names(self, queue: Queue) -> None:
        """Section 2.1: only the named attributes are returned."""
        assert queue.get_attributes(["VisibilityTimeout", "QueueArn"]) == {
            "VisibilityTimeout": "30",
            "QueueArn": "arn:aws:sqs:us-east-1:123456789012:jobs",
        }

    def test_all_with_other_names(self, queue: Queue) -> None:
        """Section 2.1: All together with other names still returns everything."""
        assert queue.get_attributes(["All", "VisibilityTimeout"]) == DEFAULTS

    def test_unset_optional_attribute_is_absent(self, queue: Queue) -> None:
        """Section 2.1: Policy, RedrivePolicy etc. are absent unless set, even when named."""
        assert queue.get_attributes(["Policy", "KmsMasterKeyId", "RedriveAllowPolicy"]) == {}

    def test_arn_and_url_use_region_and_account(self, clock: ManualClock) -> None:
        """Section 5: QueueArn is arn:aws:sqs:<region>:<account>:<name>."""
        q = Queue("orders", clock=clock, region="eu-west-1", account_id="123456789012")
        assert q.get_attributes(["QueueArn"]) == {
            "QueueArn": "arn:aws:sqs:eu-west-1:123456789012:orders"
        }
        assert q.arn == "arn:aws:sqs:eu-west-1:123456789012:orders"
        assert q.url == "https://sqs.eu-west-1.amazonaws.com/123456789012/orders"

    def test_timestamps_are_epoch_seconds(self, clock: ManualClock) -> None:
        """Section 1.3: CreatedTimestamp/LastModifiedTimestamp are whole epoch seconds."""
        clock.advance(0.75)
        q = Queue("q", clock=clock)
        got = q.get_attributes(["CreatedTimestamp", "LastModifiedTimestamp"])
        assert got == {"CreatedTimestamp": "1700000000", "LastModifiedTimestamp": "1700000000"}

    def test_set_attributes_updates_last_modified(self, clock: ManualClock, queue: Queue) -> None:
        """Section 5: SetQueueAttributes moves LastModifiedTimestamp, not CreatedTimestamp."""
        clock.advance(125.4)
        queue.set_attributes({"VisibilityTimeout": "45"})
        got = queue.get_attributes(["CreatedTimestamp", "LastModifiedTimestamp"])
        assert got == {"CreatedTimestamp": "1700000000", "LastModifiedTimestamp": "1700000125"}

    def test_failed_set_does_not_touch_last_modified(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Section 5: a refused SetQueueAttributes leaves LastModifiedTimestamp alone."""
        clock.advance(100)
        with pytest.raises(errors.InvalidAttributeValue):
            queue.set_attributes({"VisibilityTimeout": "-5"})
        assert queue.get_attributes(["LastModifiedTimestamp"]) == {
            "LastModifiedTimestamp": "1700000000"
        }

    def test_sending_does_not_touch_last_modified(self, clock: ManualClock, queue: Queue) -> None:
        """Section 5: messages are not attribute changes."""
        clock.advance(10)
        queue.send("a")
        queue.receive()
        assert queue.get_attributes(["LastModifiedTimestamp"]) == {
            "LastModifiedTimestamp": "1700000000"
        }


class TestSetAttributes:
    """SetQueueAttributes applies valid values (section 5)."""

    def test_every_mutable_attribute(self, queue: Queue) -> None:
        """Section 5: the standard queue's settable attributes apply and read back as strings."""
        queue.set_attributes(
            {
                "DelaySeconds": "5",
                "MaximumMessageSize": "2048",
                "MessageRetentionPeriod": "86400",
                "ReceiveMessageWaitTimeSeconds": "20",
                "VisibilityTimeout": "120",
            }
        )
        got = queue.get_attributes(["All"])
        assert got["DelaySeconds"] == "5"
        assert got["MaximumMessageSize"] == "2048"
        assert got["MessageRetentionPeriod"] == "86400"
        assert got["ReceiveMessageWaitTimeSeconds"] == "20"
        assert got["VisibilityTimeout"] == "120"
        queue._check()

    def test_keywords(self, queue: Queue) -> None:
        """Section 5: Pythonic keywords and AWS names can be mixed."""
        queue.set_attributes({"DelaySeconds": 3}, visibility_timeout=9)
        assert queue.get_attributes(["DelaySeconds", "VisibilityTimeout"]) == {
            "DelaySeconds": "3",
            "VisibilityTimeout": "9",
        }

    def test_policy_round_trip_and_removal(self, queue: Queue) -> None:
        """Section 2.1: Policy is returned as JSON text and "" removes it."""
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
                    "Action": "SQS:SendMessage",
                    "Resource": "arn:aws:sqs:us-east-1:123456789012:jobs",
                }
            ],
        }
        queue.set_attributes({"Policy": json.dumps(policy)})
        assert json.loads(queue.get_attributes(["Policy"])["Policy"]) == policy
        queue.set_attributes({"Policy": ""})
        assert "Policy" not in queue.get_attributes(["All"])

    def test_kms_attributes(self, queue: Queue) -> None:
        """Section 5: KmsMasterKeyId and KmsDataKeyReusePeriodSeconds are reported once set."""
        queue.set_attributes(
            {"KmsMasterKeyId": "alias/aws/sqs", "KmsDataKeyReusePeriodSeconds": "300"}
        )
        got = queue.get_attributes(["All"])
        assert got["KmsMasterKeyId"] == "alias/aws/sqs"
        assert got["KmsDataKeyReusePeriodSeconds"] == "300"
        assert got["SqsManagedSseEnabled"] == "false"

    def test_empty_kms_key_removes_reuse_period(self, queue: Queue) -> None:
        """Issue 12 §6 (recorded against real AWS): KmsMasterKeyId "" removes
        KmsMasterKeyId and KmsDataKeyReusePeriodSeconds from GetQueueAttributes."""
        queue.set_attributes(
            {"KmsMasterKeyId": "alias/aws/sqs", "KmsDataKeyReusePeriodSeconds": "300"}
        )
        queue.set_attributes({"KmsMasterKeyId": ""})
        got = queue.get_attributes(["All"])
        assert "KmsMasterKeyId" not in got
        assert "KmsDataKeyReusePeriodSeconds" not in got

    @pytest.mark.parametrize("before", [None, "alias/aws/sqs"])
    def test_empty_kms_key_wins_over_reuse_period_in_same_call(
        self, queue: Queue, before: str | None
    ) -> None:
        """Issue 12 §6 (recorded against real AWS): even when the same call sets
        KmsDataKeyReusePeriodSeconds, KmsMasterKeyId "" leaves it out."""
        if before is not None:
            queue.set_attributes({"KmsMasterKeyId": before, "SqsManagedSseEnabled": "false"})
        queue.set_attributes({"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "120"})
        got = queue.get_attributes(["All"])
        assert "KmsMasterKeyId" not in got
        assert "KmsDataKeyReusePeriodSeconds" not in got
        assert queue.get_attributes(["KmsDataKeyReusePeriodSeconds"]) == {}

    def test_empty_request_changes_nothing_but_timestamp(
        self, clock: ManualClock, queue: Queue
    ) -> None:
        """Section 5: an empty SetQueueAttributes is accepted."""
        before = queue.get_attributes(["All"])
        queue.set_attributes({})
        after = queue.get_attributes(["All"])
        assert before == after

    @pytest.mark.usefixtures("autojump")
    def test_receive_wait_time_attribute_is_used(self, clock: ManualClock, queue: Queue) -> None:
        """Section 2.1: a receive without WaitTimeSeconds uses ReceiveMessageWaitTimeSeconds."""
        queue.set_attributes(receive_message_wait_time_seconds=7)
        assert queue.receive() == []
        assert clock.now() == START + 7
