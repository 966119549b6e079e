"""Named leniencies (``sqsqueue/_lenient.py``; docs/serving.md, "Leniencies").

Strict is the default: each rule a leniency relaxes is refused with AWS's
exact error unless that leniency is on (docs/aws-behaviour.md §2.1:
PurgeQueue's 60 seconds, CreateQueue's and SetQueueAttributes' FifoQueue on a
standard queue, CreateQueue's 60 seconds after DeleteQueue). With it on, the
request succeeds and is counted exactly once; a request AWS would accept is
never counted, and one that fails for another reason counts nothing and
changes nothing.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import Broker, ConfigError, FifoQueue, ManualClock, Queue, errors
from sqsqueue._lenient import LENIENCIES, parse_lenient, summary

START = 1_700_000_000.0
ROOT = Path(__file__).resolve().parent.parent
KNOWN = "known are fifo-queue-false, purge-interval, recreate-interval"
ALL = "purge-interval,fifo-queue-false,recreate-interval"


def lenient_broker(names: str = ALL, **options: Any) -> Broker[ManualClock]:
    return Broker(clock=ManualClock(start=START), lenient=names, **options)


# -- the parser ---------------------------------------------------------------------


class TestParse:
    @pytest.mark.parametrize(
        ("given", "names"),
        [
            (None, set()),
            ("", set()),
            (" , ,", set()),
            ("purge-interval", {"purge-interval"}),
            (" purge-interval ,fifo-queue-false,", {"purge-interval", "fifo-queue-false"}),
            (["purge-interval", " recreate-interval "], {"purge-interval", "recreate-interval"}),
            (("purge-interval,fifo-queue-false", ""), {"purge-interval", "fifo-queue-false"}),
            (frozenset({"purge-interval"}), {"purge-interval"}),
            ("purge-interval,purge-interval", {"purge-interval"}),
            ([], set()),
        ],
    )
    def test_names(self, given: Any, names: set[str]) -> None:
        assert parse_lenient(given) == frozenset(names)

    @pytest.mark.parametrize(
        ("given", "name"),
        [
            ("x", "x"),
            ("purge-interval, Purge-Interval", "Purge-Interval"),
            (["purge-interval", "purge_interval"], "purge_interval"),
            ("purge-interval fifo-queue-false", "purge-interval fifo-queue-false"),
        ],
    )
    def test_an_unknown_name_lists_the_known_ones(self, given: Any, name: str) -> None:
        with pytest.raises(ValueError) as caught:
            parse_lenient(given)
        assert str(caught.value) == f"unknown leniency {name!r}: {KNOWN}"

    @pytest.mark.parametrize(
        ("given", "says"),
        [
            (3, "not int"),
            (b"purge-interval", "not bytes"),
            ({"purge-interval": True}, "not dict"),
            (["purge-interval", 7], "as str, not int"),
            ([None], "not NoneType"),
        ],
    )
    def test_a_value_that_is_no_names(self, given: Any, says: str) -> None:
        with pytest.raises(TypeError) as caught:
            parse_lenient(given)
        assert says in str(caught.value)

    def test_summary_line(self) -> None:
        assert summary({"purge-interval": 12}) == (
            "12 requests AWS would have refused: purge-interval 12"
        )
        assert summary({"purge-interval": 1, "fifo-queue-false": 0}) == (
            "1 request AWS would have refused: fifo-queue-false 0, purge-interval 1"
        )
        assert summary({"purge-interval": 0}) == (
            "0 requests AWS would have refused: purge-interval 0"
        )


class TestRegistry:
    def test_each_leniency_names_its_rule_in_aws_behaviour(self) -> None:
        """Each leniency's section of docs/aws-behaviour.md exists, and the
        paragraph of each operation it names there states the rule with
        AWS's error."""
        reference = (ROOT / "docs" / "aws-behaviour.md").read_text(encoding="utf-8")
        assert sorted(LENIENCIES) == ["fifo-queue-false", "purge-interval", "recreate-interval"]
        for name, rule in LENIENCIES.items():
            number, operations = rule.section.split(" ", 1)
            heading = re.search(rf"^### {re.escape(number)} .*$", reference, re.MULTILINE)
            assert heading is not None, (name, number)
            section = reference[heading.end() :].split("\n### ")[0]
            code = rule.error.removeprefix("AWS.SimpleQueueService.")
            for operation in operations.split(", "):
                paragraph = section.split(f"**{operation}**")[1].split("\n**")[0]
                assert code in paragraph, (name, operation)
                assert f"`{name}`" in paragraph, (name, operation, "no cross-reference")

    def test_the_guides_name_every_leniency(self) -> None:
        for guide in ("serving.md", "moto.md", "testing.md"):
            text = (ROOT / "docs" / guide).read_text(encoding="utf-8")
            for name in LENIENCIES:
                assert f"`{name}`" in text, (guide, name)


# -- the broker ---------------------------------------------------------------------


class TestBroker:
    def test_strict_by_default(self, broker: Broker[ManualClock]) -> None:
        assert broker.lenient == frozenset()
        assert broker.lenient_counts() == {}
        q = broker.create_queue("jobs")
        q.purge()
        with pytest.raises(errors.PurgeQueueInProgress):
            q.purge()
        assert broker.lenient_counts() == {}

    def test_names_on_and_counts_at_zero(self) -> None:
        broker = Broker(lenient=["recreate-interval", "purge-interval"])
        assert broker.lenient == {"purge-interval", "recreate-interval"}
        assert broker.lenient_counts() == {"purge-interval": 0, "recreate-interval": 0}

    def test_an_unknown_name_is_refused_before_anything_exists(self, tmp_path: Path) -> None:
        """As the constructor's other keywords: InvalidParameterValue (a
        ValueError) saying why."""
        with pytest.raises(errors.InvalidParameterValue) as caught:
            Broker(lenient="purge", data_dir=tmp_path / "data")
        assert isinstance(caught.value, ValueError)
        assert caught.value.message == (
            f"Value 'purge' for parameter lenient is invalid. Reason: unknown leniency "
            f"'purge': {KNOWN}."
        )
        assert not (tmp_path / "data").exists()
        with pytest.raises(errors.InvalidParameterValue) as caught:
            Broker(lenient=1)
        assert caught.value.message == (
            "Value 1 for parameter lenient is invalid. Reason: lenient takes leniency names, "
            "a comma-separated str or an iterable of str, not int."
        )

    def test_counts_are_a_copy(self) -> None:
        broker = lenient_broker("purge-interval")
        broker.lenient_counts()["purge-interval"] = 5
        assert broker.lenient_counts() == {"purge-interval": 0}

    def test_reset_keeps_leniencies_and_counts(self) -> None:
        broker = lenient_broker("purge-interval")
        q = broker.create_queue("jobs")
        q.purge()
        q.purge()
        broker.reset()
        assert broker.lenient_counts() == {"purge-interval": 1}
        q = broker.create_queue("jobs")  # the name is free at once after a reset
        q.purge()
        q.purge()
        assert broker.lenient_counts() == {"purge-interval": 2}

    def test_a_standalone_queue_is_strict(self, queue: Queue) -> None:
        queue.purge()
        with pytest.raises(errors.PurgeQueueInProgress):
            queue.purge()
        with pytest.raises(errors.InvalidAttributeName):
            queue.set_attributes({"FifoQueue": "false"})
        with pytest.raises(errors.InvalidAttributeName):
            Queue("other", fifo_queue=False)


class TestPurgeInterval:
    """§2.1 PurgeQueue: one purge per queue every 60 seconds."""

    def test_strict_refuses_with_aws_error_and_deletes_nothing(
        self, clock: ManualClock, broker: Broker[ManualClock]
    ) -> None:
        q = broker.create_queue("jobs")
        q.purge()
        clock.advance(59.999)
        q.send("kept")
        with pytest.raises(errors.PurgeQueueInProgress) as caught:
            q.purge()
        assert (caught.value.code, caught.value.http_status) == ("PurgeQueueInProgress", 403)
        assert caught.value.message == (
            "Only one PurgeQueue operation on jobs is allowed every 60 seconds."
        )
        assert len(q) == 1

    def test_lenient_purges_and_counts_once(self) -> None:
        broker = lenient_broker("purge-interval")
        q = broker.create_queue("jobs")
        q.send("a")
        q.purge()
        assert broker.lenient_counts() == {"purge-interval": 0}
        q.send("visible")
        q.send("delayed", delay_seconds=100)
        q.send("in flight")
        q.receive()
        broker.clock.advance(10)
        q.purge()
        assert len(q) == 0
        assert broker.lenient_counts() == {"purge-interval": 1}
        q._check()

    def test_the_window_runs_from_the_last_purge_aws_would_accept(self) -> None:
        """A purge AWS would refuse does not move the 60 seconds: at 0 (accepted),
        30 (let through), 60 (accepted: not counted), 90 (let through)."""
        broker = lenient_broker("purge-interval")
        q = broker.create_queue("jobs")
        expected = []
        for at in (0, 30, 60, 90, 119.999, 120):
            broker.clock.advance(at - (broker.clock.now() - START))
            q.purge()
            expected.append(broker.lenient_counts()["purge-interval"])
        assert expected == [0, 1, 1, 2, 3, 3]

    def test_a_fifo_purge_clears_deduplication_too(self) -> None:
        broker = lenient_broker("purge-interval")
        q = broker.create_queue("orders.fifo", fifo_queue=True)
        assert isinstance(q, FifoQueue)
        q.purge()
        q.send("x", group_id="g", deduplication_id="d")
        q.purge()
        q.send("x", group_id="g", deduplication_id="d")
        assert len(q) == 1  # the purge forgot "d" (section 2.1)
        assert broker.lenient_counts() == {"purge-interval": 1}

    def test_a_purge_failing_otherwise_counts_nothing(self) -> None:
        """A purge of a deleted queue, or one its policy denies, fails as AWS
        fails it; neither is counted."""
        broker = lenient_broker("purge-interval")
        q = broker.create_queue("jobs")
        q.purge()
        with pytest.raises(errors.AccessDenied):
            q.purge(principal="210987654321")
        broker.delete_queue("jobs")
        with pytest.raises(errors.QueueDoesNotExist):
            q.purge()
        assert broker.lenient_counts() == {"purge-interval": 0}

    def test_queues_of_other_leniencies_stay_strict_here(self) -> None:
        broker = lenient_broker("fifo-queue-false,recreate-interval")
        q = broker.create_queue("jobs")
        q.purge()
        with pytest.raises(errors.PurgeQueueInProgress):
            q.purge()

    def test_concurrent_purges_are_counted_exactly(self) -> None:
        """Counting is exact from many threads: every purge after the first of
        each queue within its 60 seconds is one count."""
        broker = lenient_broker("purge-interval")
        queues = [broker.create_queue(f"q{i}") for i in range(4)]
        for q in queues:
            q.purge()
        per_thread = 50
        barrier = threading.Barrier(8)

        def purge(q: Queue | FifoQueue) -> None:
            barrier.wait()
            for _ in range(per_thread):
                q.purge()

        threads = [threading.Thread(target=purge, args=(queues[i % 4],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert broker.lenient_counts() == {"purge-interval": 8 * per_thread}


class TestFifoQueueFalse:
    """§2.1 CreateQueue and SetQueueAttributes: FifoQueue is a FIFO queue's
    attribute only, even ``false``."""

    def test_strict_create_refuses_and_makes_nothing(self, broker: Broker[ManualClock]) -> None:
        for request in ({"attributes": {"FifoQueue": "false"}}, {"fifo_queue": False}):
            with pytest.raises(errors.InvalidAttributeName) as caught:
                broker.create_queue("jobs", **request)
            assert caught.value.message == "Unknown Attribute FifoQueue."
            assert "jobs" not in broker

    @pytest.mark.parametrize(
        "request_",
        [
            {"attributes": {"FifoQueue": "false"}},
            {"attributes": {"FifoQueue": "FALSE"}},
            {"fifo_queue": False},
            {"attributes": {"FifoQueue": "false", "VisibilityTimeout": "45"}},
        ],
    )
    def test_lenient_create_makes_a_standard_queue(self, request_: dict[str, Any]) -> None:
        broker = lenient_broker("fifo-queue-false")
        q = broker.create_queue("jobs", **request_)
        assert type(q) is Queue
        assert "FifoQueue" not in q.get_attributes(["All"])
        if "VisibilityTimeout" in request_.get("attributes", {}):
            assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "45"}
        assert broker.lenient_counts() == {"fifo-queue-false": 1}

    def test_an_existing_queue_is_returned_and_counted(self) -> None:
        broker = lenient_broker("fifo-queue-false")
        q = broker.create_queue("jobs")
        assert broker.create_queue("jobs", attributes={"FifoQueue": "false"}) is q
        assert broker.create_queue("jobs") is q
        assert broker.lenient_counts() == {"fifo-queue-false": 1}

    @pytest.mark.parametrize(
        ("name", "attributes", "error"),
        [
            # Refused for another reason: AWS would refuse it whatever the rule.
            ("jobs", {"FifoQueue": "false", "VisibilityTimeout": "99999"}, "InvalidAttributeValue"),
            ("jobs.fifo", {"FifoQueue": "false"}, "InvalidParameterValue"),
            ("jobs", {"FifoQueue": "maybe"}, "InvalidAttributeValue"),
            ("jobs", {"FifoQueue": "false", "ContentBasedDeduplication": "true"}, "Unknown"),
        ],
    )
    def test_other_refusals_stay_and_count_nothing(
        self, name: str, attributes: dict[str, str], error: str
    ) -> None:
        broker = lenient_broker("fifo-queue-false")
        with pytest.raises(errors.SQSError) as caught:
            broker.create_queue(name, attributes=attributes)
        assert error in f"{caught.value.code} {caught.value.message}"
        assert name not in broker
        assert broker.lenient_counts() == {"fifo-queue-false": 0}

    def test_a_fifo_queue_is_untouched(self) -> None:
        """FifoQueue=true makes a FIFO queue (AWS accepts it: no count); false on
        an existing FIFO queue is still refused."""
        broker = lenient_broker("fifo-queue-false")
        q = broker.create_queue("orders.fifo", attributes={"FifoQueue": "true"})
        with pytest.raises(errors.InvalidAttributeValue, match="Modifying queue type"):
            q.set_attributes({"FifoQueue": "false"})
        q.set_attributes({"FifoQueue": "true"})
        assert broker.lenient_counts() == {"fifo-queue-false": 0}

    def test_strict_set_attributes_refuses_and_changes_nothing(
        self, broker: Broker[ManualClock]
    ) -> None:
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidAttributeName) as caught:
            q.set_attributes({"FifoQueue": "false", "VisibilityTimeout": "45"})
        assert caught.value.message == "Unknown Attribute FifoQueue."
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}

    def test_lenient_set_attributes_applies_the_rest_and_counts(self) -> None:
        broker = lenient_broker("fifo-queue-false")
        q = broker.create_queue("jobs")
        q.set_attributes({"FifoQueue": "false", "VisibilityTimeout": "45"})
        q.set_attributes(fifo_queue=False)
        q.set_attributes({"VisibilityTimeout": "46"})  # AWS accepts: no count
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "46"}
        assert "FifoQueue" not in q.get_attributes(["All"])
        assert broker.lenient_counts() == {"fifo-queue-false": 2}

    def test_lenient_set_attributes_refused_otherwise_changes_nothing(self) -> None:
        broker = lenient_broker("fifo-queue-false")
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidAttributeValue):
            q.set_attributes({"FifoQueue": "false", "VisibilityTimeout": "99999"})
        with pytest.raises(errors.InvalidAttributeName):
            q.set_attributes({"FifoQueue": "true"})
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}
        assert broker.lenient_counts() == {"fifo-queue-false": 0}


class TestRecreateInterval:
    """§2.1 CreateQueue: a deleted queue's name is free again after 60 seconds."""

    def test_strict_refuses(self, clock: ManualClock, broker: Broker[ManualClock]) -> None:
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        clock.advance(59.999)
        with pytest.raises(errors.QueueDeletedRecently) as caught:
            broker.create_queue("jobs")
        assert caught.value.message == (
            "You must wait 60 seconds after deleting a queue before you can create another "
            "with the same name."
        )
        assert "jobs" not in broker

    def test_lenient_creates_again_empty_and_counts(self) -> None:
        broker = lenient_broker("recreate-interval")
        broker.create_queue("jobs", visibility_timeout=45).send("old")
        broker.delete_queue("jobs")
        q = broker.create_queue("jobs")
        assert len(q) == 0
        assert q.get_attributes(["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}
        assert broker.lenient_counts() == {"recreate-interval": 1}
        broker.delete_queue("jobs")
        broker.clock.advance(60)
        broker.create_queue("jobs")  # AWS accepts: no count
        assert broker.lenient_counts() == {"recreate-interval": 1}

    def test_a_recreation_refused_otherwise_counts_nothing(self) -> None:
        broker = lenient_broker("recreate-interval")
        broker.create_queue("jobs")
        broker.delete_queue("jobs")
        with pytest.raises(errors.InvalidAttributeValue):
            broker.create_queue("jobs", visibility_timeout=99999)
        assert "jobs" not in broker
        assert broker.lenient_counts() == {"recreate-interval": 0}

    def test_two_leniencies_in_one_request_count_once_each(self) -> None:
        broker = lenient_broker()
        broker.delete_queue(broker.create_queue("jobs").url)
        broker.create_queue("jobs", attributes={"FifoQueue": "false"})
        assert broker.lenient_counts() == {
            "fifo-queue-false": 1,
            "purge-interval": 0,
            "recreate-interval": 1,
        }


# -- durable brokers and config files ------------------------------------------------


class TestDurable:
    def test_leniency_is_not_stored(self, tmp_path: Path) -> None:
        """A data directory written with leniencies opens without them (strict)
        and with them (counts from 0): leniency belongs to the process."""
        clock = ManualClock(start=START)
        data = tmp_path / "data"
        with Broker(clock=clock, data_dir=data, lenient=ALL) as broker:
            q = broker.create_queue("jobs", attributes={"FifoQueue": "false"})
            q.send("a")
            q.purge()
            q.send("b")
            q.purge()
            broker.delete_queue(broker.create_queue("gone").url)
            broker.create_queue("gone")
            broker.delete_queue("gone")
            assert sum(broker.lenient_counts().values()) == 3
        with Broker(clock=clock, data_dir=data) as broker:
            assert broker.lenient == frozenset()
            q = broker.get_queue("jobs")
            assert len(q) == 0
            with pytest.raises(errors.PurgeQueueInProgress):
                q.purge()
            with pytest.raises(errors.QueueDeletedRecently):
                broker.create_queue("gone")
        with Broker(clock=clock, data_dir=data, lenient="purge-interval") as broker:
            assert broker.lenient_counts() == {"purge-interval": 0}
            broker.get_queue("jobs").purge()
            assert broker.lenient_counts() == {"purge-interval": 1}
        clock.advance(60)
        with Broker(clock=clock, data_dir=data) as broker:
            broker.get_queue("jobs").purge()  # 60 s after the last accepted purge
            broker.create_queue("gone")


class TestConfig:
    def test_the_file_key_and_the_keyword_together(self, tmp_path: Path) -> None:
        path = tmp_path / "queues.toml"
        path.write_text('lenient = ["purge-interval"]\n\n[[queue]]\nname = "a"\n')
        broker = Broker.from_config(path, lenient="recreate-interval")
        assert broker.lenient == {"purge-interval", "recreate-interval"}
        q = broker.get_queue("a")
        q.purge()
        q.purge()
        assert broker.lenient_counts() == {"purge-interval": 1, "recreate-interval": 0}

    def test_a_mapping_and_no_queues(self) -> None:
        broker = Broker.from_config({"lenient": ["fifo-queue-false"]})
        assert broker.lenient == {"fifo-queue-false"}
        assert len(broker) == 0

    def test_a_queue_the_file_declares_with_a_leniency(self) -> None:
        """The scratch broker that checks the file has the leniencies too."""
        config = {
            "lenient": ["fifo-queue-false"],
            "queue": [{"name": "a", "attributes": {"FifoQueue": "false"}}],
        }
        broker = Broker.from_config(config)
        assert type(broker.get_queue("a")) is Queue
        with pytest.raises(ConfigError, match="Unknown Attribute FifoQueue"):
            Broker.from_config({"queue": config["queue"]})

    @pytest.mark.parametrize(
        ("text", "line", "reason"),
        [
            ('lenient = ["purge-intervals"]\n', 1, f"unknown leniency 'purge-intervals': {KNOWN}"),
            (
                '\n# leniencies\nlenient = "purge-interval"\n',
                3,
                'lenient must be a list of leniency names, e.g. lenient = ["purge-interval"]',
            ),
            ("lenient = [1]\n", 1, "lenient must be a list of leniency names"),
            (
                '[[queue]]\nname = "a"\nlenient = ["purge-interval"]\n',
                3,
                "queue 'a': lenient is a key of the whole file, not of a queue",
            ),
            ('lenients = ["purge-interval"]\n', 1, "unknown key 'lenients'"),
        ],
    )
    def test_refusals(self, tmp_path: Path, text: str, line: int, reason: str) -> None:
        path = tmp_path / "queues.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            Broker.from_config(path)
        assert str(caught.value).startswith(f"{path}, line {line}: {reason}"), caught.value

    def test_an_unknown_keyword_name_is_refused(self) -> None:
        with pytest.raises(errors.InvalidParameterValue, match=KNOWN):
            Broker.from_config({}, lenient="nope")
