"""Broker: the queue namespace (docs/aws-behaviour.md §§2, 2.1, 3, 4, 5).

Construction, CreateQueue (types, names, idempotency, the 60-second re-create
window, tags), GetQueueUrl and lookups, DeleteQueue, ListQueues and
ListDeadLetterSourceQueues paging. Dead-letter moves, move tasks, permissions
and tags have their own ``test_broker_*.py`` files.
"""

from __future__ import annotations

import threading

import pytest

from sqsqueue import Broker, FifoQueue, ManualClock, Queue, SystemClock, errors

from .conftest import START

ACCOUNT = "123456789012"


def check_all(broker: Broker) -> None:
    """Assert the internal invariants of every queue of ``broker``."""
    for q in broker:
        q._check()


def names_of(urls: tuple[str, ...] | list[str]) -> list[str]:
    return [u.rsplit("/", 1)[1] for u in urls]


# -- construction ------------------------------------------------------------------


class TestBrokerInit:
    def test_defaults(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Section 5: QueueArn is arn:aws:sqs:<region>:<account>:<name>; the
        broker defaults to the wall clock, us-east-1 and moto's default account
        123456789012."""
        monkeypatch.delenv("MOTO_ACCOUNT_ID", raising=False)
        b = Broker()
        assert isinstance(b.clock, SystemClock)
        assert b.region == "us-east-1"
        assert b.account_id == "123456789012"
        q = b.create_queue("jobs")
        assert q.url == "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"
        assert q.arn == "arn:aws:sqs:us-east-1:123456789012:jobs"
        assert Queue("alone").arn == "arn:aws:sqs:us-east-1:123456789012:alone"

    def test_default_account_follows_moto_account_id(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """moto's MOTO_ACCOUNT_ID names the default account of brokers and
        standalone queues created while it is set; a value that is not 12
        digits is refused naming the variable; an account given wins."""
        monkeypatch.setenv("MOTO_ACCOUNT_ID", "111122223333")
        assert Broker().account_id == "111122223333"
        assert Queue("q").arn == "arn:aws:sqs:us-east-1:111122223333:q"
        assert FifoQueue("q.fifo").arn == "arn:aws:sqs:us-east-1:111122223333:q.fifo"
        assert Broker(account_id="444455556666").account_id == "444455556666"
        monkeypatch.setenv("MOTO_ACCOUNT_ID", "not-an-account")
        with pytest.raises(errors.InvalidParameterValue, match="MOTO_ACCOUNT_ID"):
            Broker()

    def test_custom_region_and_account(self, clock: ManualClock) -> None:
        """Section 5: the URL and ARN carry the broker's region and account."""
        b = Broker(clock=clock, region="eu-west-1", account_id=ACCOUNT)
        q = b.create_queue("jobs")
        assert q.url == f"https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/jobs"
        assert q.arn == f"arn:aws:sqs:eu-west-1:{ACCOUNT}:jobs"
        assert q.clock is clock

    @pytest.mark.parametrize("account", ["12345678901", "1234567890123", "abcdefghijkl", "", 1])
    def test_invalid_account_rejected(self, account: object) -> None:
        """Section 4: an AWS account id is 12 digits; anything else is refused."""
        with pytest.raises(errors.InvalidParameterValue):
            Broker(account_id=account)  # type: ignore[arg-type]

    @pytest.mark.parametrize("region", ["", "US-EAST-1", "us east 1", "x" * 33, None])
    def test_invalid_region_rejected(self, region: object) -> None:
        """Section 5: the region is part of every URL and ARN, so it must be a
        plain region name."""
        with pytest.raises(errors.SQSError):
            Broker(region=region)  # type: ignore[arg-type]

    def test_invalid_clock_rejected(self) -> None:
        """Design: time only through a Clock; a non-clock is refused."""
        with pytest.raises(errors.InvalidParameterValue):
            Broker(clock=1.0)  # type: ignore[arg-type]


# -- CreateQueue ---------------------------------------------------------------------


class TestCreateQueueTypes:
    def test_standard(self, broker: Broker) -> None:
        """Section 2.1: CreateQueue without FifoQueue makes a standard queue."""
        q = broker.create_queue("jobs")
        assert type(q) is Queue
        assert q.name == "jobs"
        assert q.url == f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/jobs"
        assert q.arn == f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs"
        assert q.get_attributes(["QueueArn"]) == {"QueueArn": q.arn}
        assert "FifoQueue" not in q.get_attributes()

    def test_fifo_by_keyword(self, broker: Broker) -> None:
        """Section 2.1: fifo_queue=True and a .fifo name make a FIFO queue."""
        q = broker.create_queue("orders.fifo", fifo_queue=True)
        assert type(q) is FifoQueue
        assert q.get_attributes(["FifoQueue"]) == {"FifoQueue": "true"}
        assert q.arn == f"arn:aws:sqs:us-east-1:{ACCOUNT}:orders.fifo"

    def test_fifo_by_attribute(self, broker: Broker) -> None:
        """Section 2.1: the AWS attribute FifoQueue="true" makes a FIFO queue."""
        q = broker.create_queue("orders.fifo", attributes={"FifoQueue": "true"})
        assert type(q) is FifoQueue
        attrs = q.get_attributes()
        assert attrs["FifoQueue"] == "true"
        assert attrs["ContentBasedDeduplication"] == "false"
        assert attrs["DeduplicationScope"] == "queue"
        assert attrs["FifoThroughputLimit"] == "perQueue"

    def test_aws_names_and_keywords(self, broker: Broker) -> None:
        """Section 5: attributes given by AWS name and by snake_case keyword
        both apply."""
        q = broker.create_queue("jobs", attributes={"DelaySeconds": "5"}, visibility_timeout=45)
        attrs = q.get_attributes(["DelaySeconds", "VisibilityTimeout"])
        assert attrs == {"DelaySeconds": "5", "VisibilityTimeout": "45"}

    def test_fifo_keywords(self, broker: Broker) -> None:
        """Section 5: FIFO-only attributes by keyword on a FIFO queue."""
        q = broker.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
        assert q.get_attributes(["ContentBasedDeduplication"]) == {
            "ContentBasedDeduplication": "true"
        }
        q.send("a", group_id="g")  # no dedup id needed
        assert [m.body for m in q.receive()] == ["a"]
        q._check()

    def test_invalid_attribute_value_creates_nothing(self, broker: Broker) -> None:
        """Section 4: VisibilityTimeout 0..43,200; a bad value is refused and
        no queue is created."""
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("jobs", visibility_timeout=43_201)
        assert "jobs" not in broker
        assert broker.list_queues().queue_urls == ()

    def test_unknown_attribute(self, broker: Broker) -> None:
        """Section 2.1: an unknown attribute name is InvalidAttributeName."""
        with pytest.raises(errors.InvalidAttributeName, match=r"Unknown Attribute Colour\."):
            broker.create_queue("jobs", attributes={"Colour": "blue"})
        assert len(broker) == 0


class TestCreateQueueNames:
    @pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 80])
    def test_valid_standard_names(self, broker: Broker, name: str) -> None:
        """Section 4: <= 80 chars of [A-Za-z0-9_-]."""
        assert broker.create_queue(name).name == name

    def test_longest_fifo_name(self, broker: Broker) -> None:
        """Section 4: the .fifo suffix counts toward 80 characters."""
        name = "f" * 75 + ".fifo"
        assert broker.create_queue(name, fifo_queue=True).name == name
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("f" * 76 + ".fifo", fifo_queue=True)

    @pytest.mark.parametrize(
        "name", ["", "x" * 81, "has space", "dot.ted", "slash/ed", "ünïcode", "q!"]
    )
    def test_invalid_names(self, broker: Broker, name: str) -> None:
        """Section 2.1: invalid name -> InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue(name)
        assert len(broker) == 0

    def test_fifo_name_without_fifo_attribute(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): a .fifo name without FifoQueue=true is
        InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("orders.fifo")
        assert len(broker) == 0

    def test_fifo_attribute_without_fifo_name(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): FifoQueue=true without the .fifo suffix is
        InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("orders", attributes={"FifoQueue": "true"})
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("orders", fifo_queue=True)
        assert len(broker) == 0

    @pytest.mark.parametrize(
        "kwargs", [{"attributes": {"FifoQueue": "false"}}, {"fifo_queue": False}]
    )
    def test_standard_with_fifo_false(self, broker: Broker, kwargs: dict[str, object]) -> None:
        """Section 2.1 (AWS-obs): a standard queue refuses even FifoQueue=false:
        InvalidAttributeName "Unknown Attribute FifoQueue."."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            broker.create_queue("jobs", **kwargs)  # type: ignore[arg-type]
        assert info.value.message == "Unknown Attribute FifoQueue."
        assert len(broker) == 0

    def test_standard_with_content_based_deduplication(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): FIFO-only ContentBasedDeduplication on a
        standard queue is InvalidAttributeName."""
        with pytest.raises(errors.InvalidAttributeName) as info:
            broker.create_queue("jobs", attributes={"ContentBasedDeduplication": "false"})
        assert info.value.message == "Unknown Attribute ContentBasedDeduplication."

    def test_names_are_case_sensitive(self, broker: Broker) -> None:
        """Section 4: queue names are case-sensitive."""
        a = broker.create_queue("Jobs")
        b = broker.create_queue("jobs")
        assert a is not b
        assert names_of(broker.list_queues().queue_urls) == ["Jobs", "jobs"]


class TestCreateQueueIdempotency:
    def test_same_attributes_returns_existing(self, broker: Broker) -> None:
        """Section 2.1: same name and equal attributes return the existing queue."""
        q = broker.create_queue("jobs", attributes={"VisibilityTimeout": "45"})
        q.send("kept")
        again = broker.create_queue("jobs", attributes={"VisibilityTimeout": "45"})
        assert again is q
        assert broker.create_queue("jobs", visibility_timeout=45) is q
        assert len(broker) == 1
        assert [m.body for m in again.receive()] == ["kept"]
        check_all(broker)

    def test_default_value_given_explicitly(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): giving a default attribute value explicitly
        matches a queue created without it."""
        q = broker.create_queue("jobs")
        assert broker.create_queue("jobs", attributes={"VisibilityTimeout": "30"}) is q

    def test_kms_switched_off_twice_is_the_same_request(self, broker: Broker) -> None:
        """KmsMasterKeyId "" means "no KMS key" (section 2.1): creating the queue
        again with it is the same request, not a different value. UNCONFIRMED
        against AWS; the plausible reading of an idempotent CreateQueue."""
        q = broker.create_queue("jobs", attributes={"KmsMasterKeyId": ""})
        assert broker.create_queue("jobs", attributes={"KmsMasterKeyId": ""}) is q
        with pytest.raises(errors.QueueNameExists, match="KmsMasterKeyId"):
            broker.create_queue("jobs", attributes={"KmsMasterKeyId": "alias/key"})

    def test_no_attributes_always_returns_existing(self, broker: Broker) -> None:
        """Section 2.1: no attributes given -> always returns the queue."""
        q = broker.create_queue("jobs", visibility_timeout=45, delay_seconds=3)
        assert broker.create_queue("jobs") is q
        f = broker.create_queue("orders.fifo", fifo_queue=True)
        assert broker.create_queue("orders.fifo", fifo_queue=True) is f

    def test_different_value_raises(self, broker: Broker) -> None:
        """Section 2.1/3.1 (AWS-obs): a differing attribute -> QueueNameExists,
        legacy code QueueAlreadyExists, naming the attribute."""
        q = broker.create_queue("jobs", attributes={"VisibilityTimeout": "45"})
        with pytest.raises(errors.QueueNameExists) as info:
            broker.create_queue("jobs", attributes={"VisibilityTimeout": "46"})
        err = info.value
        assert err.message == (
            "A queue already exists with the same name and a different value for "
            "attribute VisibilityTimeout"
        )
        assert err.query_code == "QueueAlreadyExists"
        assert err.http_status == 400
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "45"}

    def test_different_keyword_value_raises(self, broker: Broker) -> None:
        """Section 2.1: the comparison also applies to keyword attributes."""
        broker.create_queue("jobs")
        with pytest.raises(errors.QueueNameExists, match="attribute DelaySeconds"):
            broker.create_queue("jobs", delay_seconds=1)

    def test_compares_current_values(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): the comparison is against current values,
        after SetQueueAttributes."""
        q = broker.create_queue("jobs", attributes={"VisibilityTimeout": "45"})
        q.set_attributes({"VisibilityTimeout": "50"})
        assert broker.create_queue("jobs", attributes={"VisibilityTimeout": "50"}) is q
        with pytest.raises(errors.QueueNameExists, match="attribute VisibilityTimeout"):
            broker.create_queue("jobs", attributes={"VisibilityTimeout": "45"})

    def test_fifo_attribute_mismatch(self, broker: Broker) -> None:
        """Section 2.1: a FIFO-only attribute differing on an existing FIFO
        queue -> QueueNameExists."""
        f = broker.create_queue("orders.fifo", fifo_queue=True)
        with pytest.raises(errors.QueueNameExists, match="ContentBasedDeduplication"):
            broker.create_queue("orders.fifo", fifo_queue=True, content_based_deduplication=True)
        assert f.get_attributes(["ContentBasedDeduplication"]) == {
            "ContentBasedDeduplication": "false"
        }


class TestCreateQueueTags:
    def test_tags_at_creation(self, broker: Broker) -> None:
        """Section 2 (CreateQueue tags): tags given at creation are listed by
        ListQueueTags."""
        q = broker.create_queue("jobs", tags={"team": "core", "env": ""})
        assert broker.list_queue_tags(q.url) == {"team": "core", "env": ""}
        assert q.list_tags() == {"team": "core", "env": ""}

    @pytest.mark.parametrize(
        "tags", [{"aws:x": "1"}, {"": "v"}, {"k" * 129: "v"}, {"k": "v" * 257}, {"k!": "v"}]
    )
    def test_invalid_tags_create_nothing(self, broker: Broker, tags: dict[str, str]) -> None:
        """Section 4: tag rules apply at creation; a refused create makes no queue."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("jobs", tags=tags)
        assert "jobs" not in broker

    def test_too_many_tags_create_nothing(self, broker: Broker) -> None:
        """Section 4: at most 50 tags."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.create_queue("jobs", tags={f"k{i}": "v" for i in range(51)})
        assert "jobs" not in broker
        q = broker.create_queue("jobs", tags={f"k{i}": "v" for i in range(50)})
        assert len(q.list_tags()) == 50


# -- lookups -------------------------------------------------------------------------


class TestLookup:
    def test_get_queue_by_name_url_and_arn(self, broker: Broker) -> None:
        """Section 5: a queue is addressed by URL (and ARN for move tasks)."""
        q = broker.create_queue("jobs")
        assert broker.get_queue("jobs") is q
        assert broker.get_queue(q.url) is q
        assert broker.get_queue(q.arn) is q
        assert broker.queue_for_url(q.url) is q
        assert q.url in broker and "jobs" in broker and q.arn in broker
        # The same queue under the other spellings of its region's host, and
        # under any host that is not AWS's (an endpoint serving the broker).
        for url in (
            f"https://queue.amazonaws.com/{ACCOUNT}/jobs",
            f"https://us-east-1.queue.amazonaws.com/{ACCOUNT}/jobs",
            f"https://sqs.amazonaws.com/{ACCOUNT}/jobs",
            f"http://127.0.0.1:9324/{ACCOUNT}/jobs",
        ):
            assert broker.get_queue(url) is q

    @pytest.mark.parametrize(
        "ref",
        [
            "nope",
            f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/nope",
            f"arn:aws:sqs:us-east-1:{ACCOUNT}:nope",
            "https://sqs.us-east-1.amazonaws.com/999999999999/jobs",
            "arn:aws:sqs:us-east-1:999999999999:jobs",
            "arn:aws:sqs:eu-west-1:123456789012:jobs",
            # A queue URL of another region is refused as its ARN is: AWS routes
            # by the endpoint reached (docs/aws-behaviour.md §2.1).
            "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs",
            "https://eu-west-1.queue.amazonaws.com/123456789012/jobs",
            "",
        ],
    )
    def test_unknown_queue(self, broker: Broker, ref: str) -> None:
        """Section 3.1: unknown queue -> QueueDoesNotExist, "The specified queue
        does not exist.", legacy code AWS.SimpleQueueService.NonExistentQueue."""
        broker.create_queue("jobs")
        with pytest.raises(errors.QueueDoesNotExist) as info:
            broker.get_queue(ref)
        assert info.value.message == "The specified queue does not exist."
        assert info.value.query_code == "AWS.SimpleQueueService.NonExistentQueue"
        assert ref not in broker

    def test_lookups_twice_and_after_delete(self, broker: Broker) -> None:
        """A reference parsed once answers the same the second time: the queue
        while it exists, QueueDoesNotExist once deleted, the new queue once the
        name is made again; unhashable references are refused, not crashed on;
        and the parsed references a broker keeps stay bounded."""
        from sqsqueue._broker import _NAMES_KEPT

        q = broker.create_queue("jobs")
        for _ in range(2):
            assert broker.get_queue(q.url) is q and broker.get_queue(q.arn) is q
        broker.delete_queue(q.url)
        for ref in (q.url, q.arn, q.url):
            with pytest.raises(errors.QueueDoesNotExist):
                broker.get_queue(ref)
        broker.clock.advance(61)  # QueueDeletedRecently: 60 s
        again = broker.create_queue("jobs")
        assert broker.get_queue(q.url) is again
        with pytest.raises(errors.QueueDoesNotExist):
            broker.get_queue(["jobs"])  # type: ignore[arg-type]
        for i in range(_NAMES_KEPT + 10):
            with pytest.raises(errors.QueueDoesNotExist):
                broker.get_queue(f"http://127.0.0.1:9324/{ACCOUNT}/q{i}")
        assert len(broker._names) <= _NAMES_KEPT
        assert broker.get_queue(q.url) is again

    def test_get_queue_url(self, broker: Broker) -> None:
        """Section 2.1: GetQueueUrl returns the URL; the owner account id is
        accepted."""
        q = broker.create_queue("jobs")
        assert broker.get_queue_url("jobs") == q.url
        assert broker.get_queue_url("jobs", queue_owner_account_id=ACCOUNT) == q.url

    def test_get_queue_url_other_account(self, broker: Broker) -> None:
        """Section 2.1: QueueOwnerAWSAccountId names another account, whose
        queue does not exist here -> QueueDoesNotExist."""
        broker.create_queue("jobs")
        with pytest.raises(errors.QueueDoesNotExist):
            broker.get_queue_url("jobs", queue_owner_account_id="999999999999")

    def test_get_queue_url_unknown(self, broker: Broker) -> None:
        """Section 2.1: unknown name -> QueueDoesNotExist."""
        with pytest.raises(errors.QueueDoesNotExist, match=r"The specified queue does not exist\."):
            broker.get_queue_url("nope")


# -- DeleteQueue ---------------------------------------------------------------------


class TestDeleteQueue:
    def test_delete_releases_messages(self, broker: Broker, clock: ManualClock) -> None:
        """Section 2.1: DeleteQueue deletes regardless of content; a re-created
        queue of the same name starts empty."""
        q = broker.create_queue("jobs")
        q.send("a")
        q.send("b")
        q.receive()
        broker.delete_queue(q.url)
        assert "jobs" not in broker
        assert len(q) == 0
        clock.advance(60)
        fresh = broker.create_queue("jobs")
        assert fresh is not q
        assert fresh.receive(10) == []
        check_all(broker)

    def test_old_reference_raises_everywhere(self, broker: Broker) -> None:
        """Section 3.1: operations on a deleted queue -> QueueDoesNotExist."""
        q = broker.create_queue("jobs")
        q.send("a")
        [m] = q.receive()
        broker.delete_queue(q.url)
        ops = [
            lambda: q.send("x"),
            lambda: q.send_batch(["x"]),
            q.receive,
            lambda: q.delete(m.receipt_handle),
            lambda: q.delete_batch([m.receipt_handle]),
            lambda: q.change_visibility(m.receipt_handle, 0),
            lambda: q.change_visibility_batch(
                [{"Id": "a", "ReceiptHandle": m.receipt_handle, "VisibilityTimeout": 0}]
            ),
            q.purge,
            q.get_attributes,
            lambda: q.set_attributes(delay_seconds=1),
            lambda: q.tag({"k": "v"}),
            lambda: q.untag(["k"]),
            q.list_tags,
            lambda: q.add_permission("l", ["111111111111"], ["SendMessage"]),
            lambda: q.remove_permission("l"),
            lambda: broker.get_queue(q.url),
            lambda: broker.get_queue_url("jobs"),
            lambda: broker.delete_queue(q.url),
            lambda: broker.list_queue_tags(q.url),
            lambda: broker.list_dead_letter_source_queues(q.url),
        ]
        for op in ops:
            with pytest.raises(errors.QueueDoesNotExist):
                op()

    def test_old_reference_stays_dead_after_recreate(
        self, broker: Broker, clock: ManualClock
    ) -> None:
        """Section 2.1: a re-created queue is a new queue; the old object does
        not come back to life."""
        q = broker.create_queue("jobs")
        broker.delete_queue("jobs")
        clock.advance(60)
        new = broker.create_queue("jobs")
        with pytest.raises(errors.QueueDoesNotExist):
            q.send("x")
        new.send("y")
        assert [m.body for m in new.receive()] == ["y"]

    def test_recreate_within_60_seconds(self, broker: Broker, clock: ManualClock) -> None:
        """Section 2.1 (AWS-obs): re-create within 60 s -> QueueDeletedRecently
        with AWS's message."""
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        clock.advance(59.999)
        with pytest.raises(errors.QueueDeletedRecently) as info:
            broker.create_queue("jobs")
        assert info.value.message == (
            "You must wait 60 seconds after deleting a queue before you can create "
            "another with the same name."
        )
        assert info.value.query_code == "AWS.SimpleQueueService.QueueDeletedRecently"
        assert "jobs" not in broker

    def test_recreate_at_exactly_60_seconds(self, broker: Broker, clock: ManualClock) -> None:
        """Section 4: wait 60 s; at exactly 60 s the name is free again."""
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        clock.advance(60)
        assert broker.create_queue("jobs").name == "jobs"

    def test_recreate_after_60_seconds(self, broker: Broker, clock: ManualClock) -> None:
        """Section 4: after 60 s re-creating is allowed, with new attributes."""
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        clock.advance(61)
        q = broker.create_queue("jobs", visibility_timeout=5)
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "5"}

    def test_other_names_unaffected(self, broker: Broker) -> None:
        """Section 2.1: the 60-second window is per name."""
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        assert broker.create_queue("jobs2").name == "jobs2"

    def test_delete_unknown(self, broker: Broker) -> None:
        """Section 2: DeleteQueue of an unknown queue -> QueueDoesNotExist."""
        with pytest.raises(errors.QueueDoesNotExist):
            broker.delete_queue("nope")

    def test_long_poll_ends_when_queue_deleted(self) -> None:
        """Section 12/3.1: a long poll blocked on a queue that is deleted ends
        with QueueDoesNotExist (the poll re-checks the queue when woken)."""
        clock = ManualClock(start=START, autojump_threshold=None)
        broker = Broker(clock=clock, account_id=ACCOUNT)
        q = broker.create_queue("jobs")
        outcome: list[object] = []

        def poll() -> None:
            try:
                outcome.append(q.receive(wait_time_seconds=20))
            except errors.SQSError as err:
                outcome.append(err)

        t = threading.Thread(target=poll, daemon=True)
        t.start()
        for _ in range(10_000):  # until the poll is parked on its waiter
            if q._waiters or not t.is_alive():
                break
            t.join(0.001)
        assert q._waiters, "the long poll should be waiting"
        broker.delete_queue(q.url)
        t.join(10)
        assert not t.is_alive()
        assert len(outcome) == 1
        assert isinstance(outcome[0], errors.QueueDoesNotExist)
        assert clock.now() == START  # virtual time never moved


# -- ListQueues ----------------------------------------------------------------------


class TestListQueues:
    def test_name_order_and_prefix(self, broker: Broker) -> None:
        """Section 2.1: URLs in name order; QueueNamePrefix is a case-sensitive
        prefix match."""
        for name in ["b-two", "a-one", "B-upper", "b-one", "c"]:
            broker.create_queue(name)
        assert names_of(broker.list_queues().queue_urls) == [
            "B-upper",
            "a-one",
            "b-one",
            "b-two",
            "c",
        ]
        assert names_of(broker.list_queues("b").queue_urls) == ["b-one", "b-two"]
        assert names_of(broker.list_queues("B").queue_urls) == ["B-upper"]
        assert broker.list_queues("zzz").queue_urls == ()
        assert broker.list_queues().queue_urls[0] == broker.get_queue("B-upper").url

    def test_no_token_without_max_results(self, broker: Broker) -> None:
        """Section 2.1: NextToken is only returned if MaxResults was set."""
        for i in range(25):
            broker.create_queue(f"q{i:02}")
        result = broker.list_queues()
        assert len(result.queue_urls) == 25
        assert result.next_token is None

    def test_paging(self, broker: Broker) -> None:
        """Section 2.1: paging 25 queues 10 at a time: 10, 10, 5, no duplicates,
        no gaps, no token on the last page."""
        expected = [f"q{i:02}" for i in range(25)]
        for name in reversed(expected):
            broker.create_queue(name)
        pages = []
        token = None
        while True:
            result = broker.list_queues(max_results=10, next_token=token)
            pages.append(names_of(result.queue_urls))
            token = result.next_token
            if token is None:
                break
        assert [len(p) for p in pages] == [10, 10, 5]
        assert [n for p in pages for n in p] == expected

    def test_paging_with_prefix(self, broker: Broker) -> None:
        """Section 2.1: the prefix applies on every page."""
        for i in range(5):
            broker.create_queue(f"a{i}")
            broker.create_queue(f"b{i}")
        first = broker.list_queues("b", max_results=3)
        assert names_of(first.queue_urls) == ["b0", "b1", "b2"]
        assert first.next_token is not None
        second = broker.list_queues("b", max_results=3, next_token=first.next_token)
        assert names_of(second.queue_urls) == ["b3", "b4"]
        assert second.next_token is None

    def test_token_survives_deletion_of_last_listed(self, broker: Broker) -> None:
        """Section 2.1: paging goes on after the last listed queue is deleted."""
        for name in "abcde":
            broker.create_queue(name)
        first = broker.list_queues(max_results=2)
        assert names_of(first.queue_urls) == ["a", "b"]
        broker.delete_queue("b")
        rest = broker.list_queues(max_results=10, next_token=first.next_token)
        assert names_of(rest.queue_urls) == ["c", "d", "e"]

    def test_exact_page_has_no_token(self, broker: Broker) -> None:
        """Section 2.1: NextToken only when more results exist."""
        for i in range(10):
            broker.create_queue(f"q{i}")
        assert broker.list_queues(max_results=10).next_token is None
        assert broker.list_queues(max_results=9).next_token is not None

    @pytest.mark.parametrize("max_results", [1, 1000])
    def test_max_results_bounds_accepted(self, broker: Broker, max_results: int) -> None:
        """Section 4: MaxResults 1..1000."""
        broker.create_queue("a")
        broker.create_queue("b")
        result = broker.list_queues(max_results=max_results)
        assert len(result.queue_urls) == min(2, max_results)

    @pytest.mark.parametrize("max_results", [0, 1001, -1])
    def test_max_results_out_of_range(self, broker: Broker, max_results: int) -> None:
        """Section 4: MaxResults outside 1..1000 -> InvalidParameterValue."""
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_queues(max_results=max_results)

    @pytest.mark.parametrize("token", ["garbage", "", "!!!", "e30="])
    def test_invalid_token(self, broker: Broker, token: str) -> None:
        """Section 2.1: a NextToken the service did not issue is refused."""
        broker.create_queue("a")
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_queues(max_results=5, next_token=token)

    def test_deleted_queue_not_listed(self, broker: Broker) -> None:
        """Section 2.1: a deleted queue is no longer listed."""
        broker.create_queue("a")
        broker.create_queue("b")
        broker.delete_queue("a")
        assert names_of(broker.list_queues().queue_urls) == ["b"]


class TestListDeadLetterSourceQueues:
    def _sources(self, broker: Broker, n: int) -> tuple[Queue | FifoQueue, list[str]]:
        dlq = broker.create_queue("dlq")
        names = [f"src{i:02}" for i in range(n)]
        for name in names:
            broker.create_queue(
                name,
                attributes={
                    "RedrivePolicy": {"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 3}
                },
            )
        return dlq, names

    def test_only_sources_of_this_queue(self, broker: Broker) -> None:
        """Section 2.1: returns the queues whose RedrivePolicy targets this queue."""
        dlq, names = self._sources(broker, 3)
        other = broker.create_queue("other-dlq")
        broker.create_queue("unrelated")
        broker.create_queue(
            "points-elsewhere",
            redrive_policy={"deadLetterTargetArn": other.arn, "maxReceiveCount": 1},
        )
        result = broker.list_dead_letter_source_queues(dlq.url)
        assert names_of(result.queue_urls) == names
        assert result.next_token is None
        assert names_of(broker.list_dead_letter_source_queues(other.arn).queue_urls) == [
            "points-elsewhere"
        ]
        assert broker.list_dead_letter_source_queues("unrelated").queue_urls == ()

    def test_removed_redrive_policy(self, broker: Broker) -> None:
        """Section 2.1: RedrivePolicy "" removes it; the queue is no longer a source."""
        dlq, names = self._sources(broker, 2)
        broker.get_queue(names[0]).set_attributes({"RedrivePolicy": ""})
        assert names_of(broker.list_dead_letter_source_queues(dlq.url).queue_urls) == [names[1]]

    def test_paging(self, broker: Broker) -> None:
        """Section 2.1: same paging as ListQueues: 25 sources 10 at a time."""
        dlq, names = self._sources(broker, 25)
        seen: list[str] = []
        sizes = []
        token = None
        while True:
            result = broker.list_dead_letter_source_queues(
                dlq.url, max_results=10, next_token=token
            )
            sizes.append(len(result.queue_urls))
            seen.extend(names_of(result.queue_urls))
            token = result.next_token
            if token is None:
                break
        assert sizes == [10, 10, 5]
        assert seen == names

    def test_no_token_without_max_results(self, broker: Broker) -> None:
        """Section 2.1: no NextToken when MaxResults is not given."""
        dlq, names = self._sources(broker, 12)
        result = broker.list_dead_letter_source_queues(dlq.url)
        assert names_of(result.queue_urls) == names
        assert result.next_token is None

    @pytest.mark.parametrize("max_results", [0, 1001])
    def test_max_results_out_of_range(self, broker: Broker, max_results: int) -> None:
        """Section 4: MaxResults 1..1000."""
        dlq, _ = self._sources(broker, 1)
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_dead_letter_source_queues(dlq.url, max_results=max_results)

    def test_invalid_token(self, broker: Broker) -> None:
        """Section 2.1: an unknown NextToken is refused."""
        dlq, _ = self._sources(broker, 1)
        with pytest.raises(errors.InvalidParameterValue):
            broker.list_dead_letter_source_queues(dlq.url, max_results=1, next_token="bad")

    def test_unknown_queue(self, broker: Broker) -> None:
        """Section 2: ListDeadLetterSourceQueues models QueueDoesNotExist."""
        with pytest.raises(errors.QueueDoesNotExist):
            broker.list_dead_letter_source_queues("nope")
