"""Queues from a configuration file: ``Broker.from_config`` and ``sqsqueue serve
--config`` (docs/console.md, "Queues from a file").

A valid file makes its queues (attributes, tags, FIFO settings, redrive
policies by name, faults); an invalid one is refused with the file, the line
and the reason, before anything exists; a durable directory opened again with
the same file is left as it was, and one whose queue differs is refused naming
the attribute, with nothing changed (the CreateQueue rule of
docs/aws-behaviour.md §2.1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sqsqueue import Broker, ConfigError, Faults, FifoQueue, ManualClock, Queue

START = 1_700_000_000.0

EXAMPLE = """\
[[queue]]
name = "orders-dlq"

[[queue]]
name = "orders"
visibility_timeout = 45
redrive_policy = { dead_letter_queue = "orders-dlq", max_receive_count = 3 }
tags = { team = "shop" }

[[queue]]
name = "events.fifo"
fifo_queue = true
content_based_deduplication = true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "queues.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path | dict[str, Any], **options: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        Broker.from_config(path, clock=ManualClock(start=START), **options)
    return str(caught.value)


class TestValid:
    def test_the_documented_example(self, tmp_path: Path) -> None:
        """The issue's example: attributes, a redrive policy naming its DLQ by
        name, tags and a FIFO queue with content-based deduplication."""
        broker = Broker.from_config(write(tmp_path, EXAMPLE), clock=ManualClock(start=START))
        assert sorted(q.name for q in broker) == ["events.fifo", "orders", "orders-dlq"]
        orders = broker.get_queue("orders")
        assert orders.attributes["VisibilityTimeout"] == "45"
        assert json.loads(orders.attributes["RedrivePolicy"]) == {
            "deadLetterTargetArn": broker.get_queue("orders-dlq").arn,
            "maxReceiveCount": 3,
        }
        assert orders.list_tags() == {"team": "shop"}
        events = broker.get_queue("events.fifo")
        assert isinstance(events, FifoQueue)
        assert events.attributes["ContentBasedDeduplication"] == "true"
        # The redrive policy works: the fourth receive moves the message.
        orders.send("poison")
        for _ in range(3):
            assert orders.receive(visibility_timeout=0)
        assert orders.receive() == []
        assert [m.body for m in broker.get_queue("orders-dlq").receive()] == ["poison"]

    def test_a_dead_letter_queue_declared_after_its_source(self, tmp_path: Path) -> None:
        """Order in the file does not matter: DLQs are created first."""
        text = """
[[queue]]
name = "a"
redrive_policy = { dead_letter_queue = "z", max_receive_count = 1 }
redrive_allow_policy = { redrive_permission = "byQueue", source_queues = ["a"] }

[[queue]]
name = "z"
"""
        broker = Broker.from_config(write(tmp_path, text))
        assert json.loads(broker.get_queue("a").attributes["RedriveAllowPolicy"]) == {
            "redrivePermission": "byQueue",
            "sourceQueueArns": [broker.get_queue("a").arn],
        }
        broker.close()

    def test_faults_per_queue(self) -> None:
        """A queue's faults table turns fault emulation on for that queue alone:
        with duplicate_rate 1 every delete is acknowledged and lost."""
        broker = Broker.from_config(
            {
                "queue": [
                    {"name": "flaky", "faults": {"duplicate_rate": 1.0, "seed": 7}},
                    {"name": "exact"},
                ]
            },
            clock=ManualClock(start=START),
        )
        flaky, exact = broker.get_queue("flaky"), broker.get_queue("exact")
        assert isinstance(flaky, Queue) and isinstance(exact, Queue)
        assert flaky.faults == Faults(seed=7, duplicate_rate=1.0)
        assert exact.faults is None
        for q in (flaky, exact):
            q.send("x")
            [m] = q.receive(visibility_timeout=1)
            q.delete(m.receipt_handle)
        broker.clock.advance(1)
        assert [m.body for m in flaky.receive()] == ["x"]  # delivered again
        assert exact.receive() == []

    def test_attributes_by_aws_name_and_history(self) -> None:
        broker = Broker.from_config(
            {"queue": [{"name": "q", "attributes": {"DelaySeconds": "5"}, "keep_history": True}]}
        )
        q = broker.get_queue("q")
        assert q.attributes["DelaySeconds"] == "5"
        assert q.keep_history
        broker.close()

    def test_reset_makes_the_configured_queues_again_empty(self, tmp_path: Path) -> None:
        broker = Broker.from_config(write(tmp_path, EXAMPLE), clock=ManualClock(start=START))
        broker.get_queue("orders").send("x")
        broker.create_queue("extra")
        broker.reset()
        assert sorted(q.name for q in broker) == ["events.fifo", "orders", "orders-dlq"]
        assert len(broker.get_queue("orders")) == 0
        assert broker.get_queue("orders").list_tags() == {"team": "shop"}
        broker.create_queue("extra")  # no 60-second re-create window after a reset


class TestInvalid:
    """Each refusal names the file, the line and the reason."""

    def test_syntax_error_gives_tomllib_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, '[[queue]]\nname = "a"\nvisibility_timeout = \n')
        message = refused(path)
        assert message.startswith(f"{path}, line 3: ")

    def test_unknown_key_at_its_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, '[[queue]]\nname = "a"\n\n[[queue]]\nname = "b"\nvisibilty = 3\n')
        message = refused(path)
        assert message.startswith(f"{path}, line 6: queue 'b': unknown key 'visibilty'")

    def test_value_aws_refuses_at_its_line_with_aws_message(self, tmp_path: Path) -> None:
        """An attribute AWS would refuse: AWS's message, at that key's line."""
        path = write(
            tmp_path, '[[queue]]\nname = "a"\ntags = { x = "y" }\nvisibility_timeout = 99999\n'
        )
        message = refused(path)
        assert message == (
            f"{path}, line 4: queue 'a': Invalid value for the parameter VisibilityTimeout."
        )

    def test_an_undeclared_dead_letter_queue(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            '[[queue]]\nname = "a"\nredrive_policy = { dead_letter_queue = "nope", '
            "max_receive_count = 2 }\n",
        )
        message = refused(path)
        assert message.startswith(f"{path}, line 3: queue 'a': the dead-letter queue 'nope'")

    @pytest.mark.parametrize(
        ("text", "line", "reason"),
        [
            ("[[queue]]\nvisibility_timeout = 3\n", 1, "needs a name"),
            ('[[queue]]\nname = "a"\n[[queue]]\nname = "a"\n', 3, "declared twice"),
            ('[[queue]]\nname = "bad name"\n', 1, "Can only include alphanumeric"),
            ('[[queue]]\nname = "f"\nfifo_queue = true\n', 2, "FIFO"),
            ('[[queue]]\nname = "a"\nfaults = { duplicate_rate = 2 }\n', 3, "probability"),
            ('[[queue]]\nname = "a"\nfaults = { oops = true }\n', 3, "unknown fault"),
            (
                '[[queue]]\nname = "a.fifo"\nfifo_queue = true\nfaults = { reorder = true }\n',
                4,
                "FIFO queues stay exact",
            ),
            ('[[queue]]\nname = "a"\ntags = { t = 1 }\n', 3, "tags must be"),
            ('[[queue]]\nname = "a"\ndead_letter_queue = "b"\n', 3, "standalone"),
            ('[broker]\nregion = "x"\n', 1, "unknown key 'broker'"),
            (
                '[[queue]]\nname = "a"\nredrive_policy = { dead_letter_queue = "b", '
                'max_receive_count = 1 }\n[[queue]]\nname = "b"\nredrive_policy = '
                '{ dead_letter_queue = "a", max_receive_count = 1 }\n',
                3,
                "cycle",
            ),
        ],
    )
    def test_refusals(self, tmp_path: Path, text: str, line: int, reason: str) -> None:
        path = write(tmp_path, text)
        message = refused(path)
        assert message.startswith(f"{path}, line {line}: "), message
        assert reason in message

    @pytest.mark.parametrize(
        ("config", "says"),
        [
            (42, "a TOML file's path or a mapping"),
            ({"queue": {"name": "a"}}, "array of tables"),
            ({"queue": [{"name": "a", "tags": ["x"]}]}, "tags must be"),
            ({"queue": [{"name": 3}]}, "needs a name"),
            ({"queue": [{"name": "a", "attributes": 1}]}, "attributes must be"),
            ({"queue": [{"name": "a", "visibility_timeout": "x"}]}, "VisibilityTimeout"),
        ],
    )
    def test_refused_values(self, config: Any, says: str) -> None:
        """Any value given is refused with a ConfigError saying why, never a
        bare TypeError."""
        assert says in refused(config)

    def test_missing_and_unreadable_files(self, tmp_path: Path) -> None:
        assert refused(tmp_path / "none.toml").endswith("none.toml: no such file")
        bad = tmp_path / "latin.toml"
        bad.write_bytes(b'[[queue]]\nname = "\xe9"\n')
        assert "not UTF-8" in refused(bad)

    def test_a_refused_file_touches_no_data_directory(self, tmp_path: Path) -> None:
        """The scratch broker sees the bad attribute first: the durable
        directory is never created."""
        path = write(tmp_path, EXAMPLE + '\n[[queue]]\nname = "x"\ndelay_seconds = 901\n')
        refused(path, data_dir=tmp_path / "data")
        assert not (tmp_path / "data").exists()


class TestDurableRestart:
    def test_same_file_twice_is_idempotent(self, tmp_path: Path) -> None:
        path = write(tmp_path, EXAMPLE)
        with Broker.from_config(path, data_dir=tmp_path / "data") as broker:
            broker.get_queue("orders").send("kept")
            created = broker.get_queue("orders").attributes["CreatedTimestamp"]
        with Broker.from_config(path, data_dir=tmp_path / "data") as broker:
            orders = broker.get_queue("orders")
            assert orders.attributes["CreatedTimestamp"] == created
            assert [m.body for m in orders.receive()] == ["kept"]
            assert len(broker) == 3

    @pytest.mark.parametrize(
        ("old", "new", "line", "named"),
        [
            (
                "visibility_timeout = 45",
                "visibility_timeout = 60",
                6,
                "attribute VisibilityTimeout",
            ),
            ("max_receive_count = 3", "max_receive_count = 4", 7, "attribute RedrivePolicy"),
            ('tags = { team = "shop" }', 'tags = { team = "ops" }', 8, "tag 'team'"),
        ],
    )
    def test_a_differing_queue_is_refused_and_nothing_changes(
        self, tmp_path: Path, old: str, new: str, line: int, named: str
    ) -> None:
        with Broker.from_config(write(tmp_path, EXAMPLE), data_dir=tmp_path / "data"):
            pass
        changed = write(tmp_path, EXAMPLE.replace(old, new) + '\n[[queue]]\nname = "new"\n')
        message = refused(changed, data_dir=tmp_path / "data")
        assert message.startswith(f"{changed}, line {line}: queue 'orders'"), message
        assert named in message and "nothing was changed" in message
        with Broker(data_dir=tmp_path / "data") as broker:
            assert "new" not in broker  # the missing queue was not created either
            assert broker.get_queue("orders").attributes["VisibilityTimeout"] == "45"

    def test_defaults_declared_match_and_a_delay_differs(self, tmp_path: Path) -> None:
        with Broker(data_dir=tmp_path / "data") as broker:
            broker.create_queue("q")
        path = write(tmp_path, '[[queue]]\nname = "q"\nvisibility_timeout = 30\n')
        with Broker.from_config(path, data_dir=tmp_path / "data"):
            pass  # the same as the defaults: accepted
        path = write(tmp_path, '[[queue]]\nname = "q"\ndelay_seconds = 4\n')
        assert "attribute DelaySeconds" in refused(path, data_dir=tmp_path / "data")


class TestCommandLine:
    def test_an_invalid_file_is_refused_before_serving(self, tmp_path: Path) -> None:
        path = write(tmp_path, '[[queue]]\nname = "a"\nvisibility_timeout = -1\n')
        result = subprocess.run(
            [sys.executable, "-m", "sqsqueue", "serve", "--port", "0", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 2
        assert f"{path}, line 3: queue 'a':" in result.stderr
        assert "serving" not in result.stdout
        assert "Traceback" not in result.stderr
