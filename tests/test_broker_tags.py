"""Queue tags: TagQueue, UntagQueue, ListQueueTags (docs/aws-behaviour.md sections
2.1 and 4)."""

from __future__ import annotations

import pytest

from sqsqueue import Broker, Queue, errors


@pytest.fixture
def q(broker: Broker) -> Queue:
    queue = broker.create_queue("jobs")
    assert isinstance(queue, Queue)
    return queue


class TestTagLifecycle:
    def test_tag_list_untag(self, broker: Broker, q: Queue) -> None:
        """Section 2.1: TagQueue adds, ListQueueTags lists, UntagQueue removes."""
        assert broker.list_queue_tags(q.url) == {}
        broker.tag_queue(q.url, {"team": "core", "env": "prod"})
        assert broker.list_queue_tags(q.url) == {"team": "core", "env": "prod"}
        broker.untag_queue(q.url, ["env"])
        assert broker.list_queue_tags(q.url) == {"team": "core"}
        q._check()

    def test_queue_methods(self, q: Queue) -> None:
        """Section 2.1: the same through the queue object."""
        q.tag({"a": "1"})
        q.tag({"b": "2"})
        assert q.list_tags() == {"a": "1", "b": "2"}
        q.untag(["a", "b"])
        assert q.list_tags() == {}

    def test_overwrite_same_key(self, q: Queue) -> None:
        """Section 2.1 (AWS-obs): a tag with an existing key overwrites it."""
        q.tag({"k": "old", "other": "x"})
        q.tag({"k": "new"})
        assert q.list_tags() == {"k": "new", "other": "x"}

    def test_untag_missing_key(self, q: Queue) -> None:
        """Section 2.1 (AWS-obs): untagging a non-existent key is not an error."""
        q.tag({"k": "v"})
        q.untag(["missing", "k"])
        assert q.list_tags() == {}
        q.untag(["still-missing"])

    def test_empty_value(self, q: Queue) -> None:
        """Section 2.1 (AWS-obs): tag values may be ""."""
        q.tag({"k": ""})
        assert q.list_tags() == {"k": ""}

    def test_keys_case_sensitive(self, q: Queue) -> None:
        """Section 4: tags are case-sensitive."""
        q.tag({"Key": "1", "key": "2"})
        assert q.list_tags() == {"Key": "1", "key": "2"}
        q.untag(["KEY"])
        assert len(q.list_tags()) == 2

    def test_list_is_a_copy(self, q: Queue) -> None:
        """Values out: mutating the returned dict does not change the tags."""
        q.tag({"k": "v"})
        got = q.list_tags()
        got["x"] = "y"
        assert q.list_tags() == {"k": "v"}

    def test_unknown_queue(self, broker: Broker) -> None:
        """Section 2: tag operations model QueueDoesNotExist."""
        for op in (
            lambda: broker.tag_queue("nope", {"k": "v"}),
            lambda: broker.untag_queue("nope", ["k"]),
            lambda: broker.list_queue_tags("nope"),
        ):
            with pytest.raises(errors.QueueDoesNotExist):
                op()


class TestTagRules:
    @pytest.mark.parametrize(
        "key",
        ["k", "k" * 128, "with space", "a_b.c:d/e=f+g-h@i", "ünïcödé", "数字"],
    )
    def test_valid_keys(self, q: Queue, key: str) -> None:
        """Section 4: keys of 1..128 Unicode letters, digits, whitespace and
        ``_ . : / = + - @``."""
        q.tag({key: "v"})
        assert q.list_tags() == {key: "v"}

    @pytest.mark.parametrize(
        "key", ["", "k" * 129, "aws:reserved", "AWS:reserved", "bad!", "semi;colon", "a*b"]
    )
    def test_invalid_keys(self, q: Queue, key: str) -> None:
        """Section 4: empty, > 128 chars, the "aws:" prefix and other
        characters are refused."""
        q.tag({"keep": "1"})
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({key: "v"})
        assert q.list_tags() == {"keep": "1"}

    def test_aws_inside_key_allowed(self, q: Queue) -> None:
        """Section 4: only the "aws:" prefix is reserved."""
        q.tag({"my-aws:key": "v"})
        assert "my-aws:key" in q.list_tags()

    def test_value_length(self, q: Queue) -> None:
        """Section 4: values <= 256 characters."""
        q.tag({"k": "v" * 256})
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({"k": "w" * 257})
        assert q.list_tags() == {"k": "v" * 256}

    @pytest.mark.parametrize("value", ["bad!", "semi;colon", 5, None])
    def test_invalid_values(self, q: Queue, value: object) -> None:
        """Section 4: values use the same character set and must be strings."""
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({"k": value})  # type: ignore[dict-item]
        assert q.list_tags() == {}

    def test_at_most_50(self, q: Queue) -> None:
        """Section 4: at most 50 tags; the 51st is refused and nothing changes."""
        q.tag({f"k{i}": "v" for i in range(49)})
        q.tag({"k49": "v"})
        assert len(q.list_tags()) == 50
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({"k50": "v"})
        assert len(q.list_tags()) == 50
        q.tag({"k0": "overwritten"})  # overwriting does not add
        assert q.list_tags()["k0"] == "overwritten"
        q.untag(["k1"])
        q.tag({"k50": "v"})
        assert len(q.list_tags()) == 50

    def test_batch_over_limit_adds_nothing(self, q: Queue) -> None:
        """Section 4: a request that would exceed 50 tags changes nothing."""
        q.tag({f"k{i}": "v" for i in range(45)})
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({f"n{i}": "v" for i in range(6)})
        assert len(q.list_tags()) == 45
        assert not any(k.startswith("n") for k in q.list_tags())

    def test_validated_before_any_change(self, q: Queue) -> None:
        """Section 4 / design principle 6: one bad tag refuses the whole
        request, valid ones included."""
        q.tag({"keep": "1"})
        with pytest.raises(errors.InvalidParameterValue):
            q.tag({"good": "v", "keep": "changed", "aws:bad": "v"})
        assert q.list_tags() == {"keep": "1"}

    def test_untag_keys_must_be_a_list(self, q: Queue) -> None:
        """Section 2: TagKeys is a list of strings."""
        q.tag({"abc": "1", "a": "2"})
        with pytest.raises(errors.InvalidParameterValue):
            q.untag("abc")
        with pytest.raises(errors.InvalidParameterValue):
            q.untag(["a", 5])  # type: ignore[list-item]
        assert q.list_tags() == {"abc": "1", "a": "2"}

    def test_tags_must_be_a_mapping(self, q: Queue) -> None:
        """Section 2: Tags is a map of string to string."""
        with pytest.raises(errors.InvalidParameterValue):
            q.tag([("k", "v")])  # type: ignore[arg-type]
        assert q.list_tags() == {}

    def test_tags_not_shared_between_queues(self, broker: Broker, q: Queue) -> None:
        """Section 2.1: tags belong to one queue."""
        other = broker.create_queue("other")
        q.tag({"k": "v"})
        assert other.list_tags() == {}
