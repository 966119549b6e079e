"""Permissions: AddPermission / RemovePermission, the Policy attribute and
``principal=`` on every queue operation (docs/aws-behaviour.md §§2.1, 3.2, 4, 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from sqsqueue import (
    Broker,
    ChangeVisibilityEntry,
    DeleteEntry,
    FifoQueue,
    ManualClock,
    Queue,
    errors,
)
from sqsqueue._policy import OWNER_ONLY

OWNER = "123456789012"
OTHER = "111122223333"
THIRD = "444455556666"


def check_all(broker: Broker) -> None:
    for q in broker:
        q._check()


def policy_of(q: Queue | FifoQueue) -> dict[str, Any]:
    return json.loads(q.get_attributes(["Policy"])["Policy"])  # type: ignore[no-any-return]


def statement(
    actions: str | list[str], principal: object = None, effect: str = "Allow", **extra: object
) -> dict[str, object]:
    return {
        "Sid": f"s{abs(hash((str(actions), effect))) % 10_000}",
        "Effect": effect,
        "Principal": {"AWS": OTHER} if principal is None else principal,
        "Action": actions,
        "Resource": "*",
        **extra,
    }


def set_policy(q: Queue | FifoQueue, *statements: dict[str, object]) -> None:
    q.set_attributes(
        {"Policy": json.dumps({"Version": "2012-10-17", "Statement": list(statements)})}
    )


class TestAddPermission:
    def test_statement_shape_one_account(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs shape): Principal.AWS is a string for one
        account; Action "SQS:<Action>"; Resource the queue ARN."""
        q = broker.create_queue("jobs")
        broker.add_permission(q.url, "send", [OTHER], ["SendMessage"])
        doc = policy_of(q)
        assert doc["Version"] == "2008-10-17"
        assert doc["Id"] == f"{q.arn}/SQSDefaultPolicy"
        assert doc["Statement"] == [
            {
                "Sid": "send",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"},
                "Action": "SQS:SendMessage",
                "Resource": q.arn,
            }
        ]

    def test_statement_shape_several(self, broker: Broker) -> None:
        """Section 2.1: Principal.AWS is a list for several accounts; several
        actions are a list."""
        q = broker.create_queue("jobs")
        q.add_permission("both", [OTHER, THIRD], ["SendMessage", "ReceiveMessage"])
        [st] = policy_of(q)["Statement"]
        assert st["Principal"] == {
            "AWS": [f"arn:aws:iam::{OTHER}:root", f"arn:aws:iam::{THIRD}:root"]
        }
        assert st["Action"] == ["SQS:SendMessage", "SQS:ReceiveMessage"]

    def test_statements_accumulate(self, broker: Broker) -> None:
        """Section 2.1: each label adds one statement."""
        q = broker.create_queue("jobs")
        q.add_permission("a", [OTHER], ["SendMessage"])
        q.add_permission("b", [THIRD], ["ReceiveMessage"])
        assert [s["Sid"] for s in policy_of(q)["Statement"]] == ["a", "b"]

    def test_duplicate_label(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): "Value <label> for parameter Label is invalid.
        Reason: Already exists."; the policy is unchanged."""
        q = broker.create_queue("jobs")
        q.add_permission("dup", [OTHER], ["SendMessage"])
        before = policy_of(q)
        with pytest.raises(errors.InvalidParameterValue) as info:
            q.add_permission("dup", [THIRD], ["ReceiveMessage"])
        assert info.value.message == (
            "Value dup for parameter Label is invalid. Reason: Already exists."
        )
        assert policy_of(q) == before

    def test_remove_unknown(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): "... Reason: can't find label."."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidParameterValue) as info:
            broker.remove_permission(q.url, "nope")
        assert info.value.message == (
            "Value nope for parameter Label is invalid. Reason: can't find label."
        )
        q.add_permission("a", [OTHER], ["SendMessage"])
        with pytest.raises(errors.InvalidParameterValue, match="can't find label"):
            q.remove_permission("nope")
        assert len(policy_of(q)["Statement"]) == 1

    def test_remove_last_removes_policy(self, broker: Broker) -> None:
        """Section 2.1 (AWS-obs): removing the last statement removes Policy."""
        q = broker.create_queue("jobs")
        q.add_permission("a", [OTHER], ["SendMessage"])
        q.add_permission("b", [OTHER], ["ReceiveMessage"])
        q.remove_permission("a")
        assert [s["Sid"] for s in policy_of(q)["Statement"]] == ["b"]
        q.remove_permission("b")
        assert "Policy" not in q.get_attributes()
        with pytest.raises(errors.AccessDenied):
            q.send("x", principal=OTHER)
        q.add_permission("a", [OTHER], ["SendMessage"])  # the label is free again
        assert len(policy_of(q)["Statement"]) == 1

    @pytest.mark.parametrize(
        ("label", "accounts", "actions"),
        [
            ("", [OTHER], ["SendMessage"]),
            ("bad label", [OTHER], ["SendMessage"]),
            ("x" * 81, [OTHER], ["SendMessage"]),
            ("ok", ["12345"], ["SendMessage"]),
            ("ok", [], ["SendMessage"]),
            ("ok", [OTHER], []),
            ("ok", [OTHER], ["CreateQueue"]),
            ("ok", [OTHER], ["SetQueueAttributes"]),
        ],
    )
    def test_invalid_arguments(
        self, broker: Broker, label: str, accounts: list[str], actions: list[str]
    ) -> None:
        """Section 2.1: Label <= 80 of [A-Za-z0-9_-]; account ids; grantable
        action names only; nothing is added on error."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidParameterValue):
            q.add_permission(label, accounts, actions)
        assert "Policy" not in q.get_attributes()

    def test_at_most_seven_actions(self, broker: Broker) -> None:
        """Section 4: at most 7 actions per statement."""
        q = broker.create_queue("jobs")
        eight = [
            "SendMessage",
            "ReceiveMessage",
            "DeleteMessage",
            "ChangeMessageVisibility",
            "GetQueueAttributes",
            "GetQueueUrl",
            "PurgeQueue",
            "ListDeadLetterSourceQueues",
        ]
        with pytest.raises(errors.OverLimit):
            q.add_permission("many", [OTHER], eight)
        q.add_permission("seven", [OTHER], eight[:7])
        assert len(policy_of(q)["Statement"][0]["Action"]) == 7

    def test_at_most_twenty_statements(self, broker: Broker) -> None:
        """Section 4: a policy holds at most 20 statements."""
        q = broker.create_queue("jobs")
        for i in range(20):
            q.add_permission(f"l{i}", [OTHER], ["SendMessage"])
        with pytest.raises(errors.OverLimit):
            q.add_permission("l20", [OTHER], ["SendMessage"])
        assert len(policy_of(q)["Statement"]) == 20

    def test_unknown_queue(self, broker: Broker) -> None:
        """Section 2: AddPermission models QueueDoesNotExist."""
        with pytest.raises(errors.QueueDoesNotExist):
            broker.add_permission("nope", "l", [OTHER], ["SendMessage"])
        with pytest.raises(errors.QueueDoesNotExist):
            broker.remove_permission("nope", "l")


class TestGrants:
    def test_owner_and_no_principal(self, broker: Broker) -> None:
        """Section 2.1: the owner (or no principal) may do anything, no policy
        needed."""
        q = broker.create_queue("jobs")
        q.send("a", principal=OWNER)
        q.send("b")
        msgs = q.receive(10, principal=OWNER)
        assert sorted(m.body for m in msgs) == ["a", "b"]
        q.delete_batch([m.receipt_handle for m in msgs], principal=OWNER)
        q.set_attributes({"DelaySeconds": "1"}, principal=OWNER)
        broker.delete_queue(q.url, principal=OWNER)
        assert "jobs" not in broker

    def test_owner_as_iam_arn(self, broker: Broker) -> None:
        """Section 2.1: an IAM principal of the owner account acts as the owner."""
        q = broker.create_queue("jobs")
        q.send("a", principal=f"arn:aws:iam::{OWNER}:user/alice")
        assert q.receive()[0].body == "a"

    def test_granted_action_only(self, broker: Broker) -> None:
        """Section 2.1: another account may do exactly what a statement grants."""
        q = broker.create_queue("jobs")
        q.add_permission("send", [OTHER], ["SendMessage"])
        q.send("x", principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.receive(principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.send("y", principal=THIRD)
        assert [m.body for m in q.receive(10)] == ["x"]

    def test_sender_id(self, broker: Broker) -> None:
        """Section 6: SenderId of a message sent with principal= is that account."""
        q = broker.create_queue("jobs")
        q.add_permission("send", [OTHER], ["SendMessage"])
        q.send("theirs", principal=OTHER)
        q.send("mine")
        got = {m.body: m.attributes["SenderId"] for m in q.receive(10)}
        assert got == {"theirs": OTHER, "mine": OWNER}

    def test_sender_id_batch(self, broker: Broker) -> None:
        """Section 6: SendMessageBatch is covered by SendMessage and records
        the sender too."""
        q = broker.create_queue("jobs")
        q.add_permission("send", [OTHER], ["SendMessage"])
        assert q.send_batch(["a", "b"], principal=OTHER).ok
        assert {m.attributes["SenderId"] for m in q.receive(10)} == {OTHER}

    def test_batch_actions_implied(self, broker: Broker) -> None:
        """Section 2.1: SendMessage/DeleteMessage/ChangeMessageVisibility imply
        their batch variants."""
        q = broker.create_queue("jobs")
        q.add_permission(
            "p",
            [OTHER],
            ["SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility"],
        )
        q.send_batch(["a", "b", "c"], principal=OTHER)
        msgs = q.receive(10, principal=OTHER)
        assert len(msgs) == 3
        q.change_visibility_batch(
            [ChangeVisibilityEntry("0", msgs[0].receipt_handle, 100)], principal=OTHER
        )
        result = q.delete_batch(
            [DeleteEntry(str(i), m.receipt_handle) for i, m in enumerate(msgs)],
            principal=OTHER,
        )
        assert result.ok
        assert len(q) == 0
        check_all(broker)

    def test_star_action(self, broker: Broker) -> None:
        """Section 2.1: Actions may be "*"."""
        q = broker.create_queue("jobs")
        q.add_permission("all", [OTHER], ["*"])
        q.send("x", principal=OTHER)
        [m] = q.receive(principal=OTHER)
        q.delete(m.receipt_handle, principal=OTHER)
        q.purge(principal=OTHER)

    def test_policy_wildcard_sqs_star(self, broker: Broker) -> None:
        """Section 5: a Policy set directly with "sqs:*" grants every action that
        cross-account permissions apply to, and none of the owner-only ones."""
        q = broker.create_queue("jobs")
        set_policy(q, statement("sqs:*"))
        q.send("x", principal=OTHER)
        assert q.get_attributes(["DelaySeconds"], principal=OTHER) == {"DelaySeconds": "0"}
        with pytest.raises(errors.AccessDenied):
            q.tag({"k": "v"}, principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.list_tags(principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.send("y", principal=THIRD)

    def test_policy_wildcard_prefix(self, broker: Broker) -> None:
        """Section 5: "SQS:Send*" covers SendMessage and SendMessageBatch only."""
        q = broker.create_queue("jobs")
        set_policy(q, statement("SQS:Send*"))
        q.send("x", principal=OTHER)
        q.send_batch(["y"], principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.receive(principal=OTHER)
        assert len(q) == 2

    def test_policy_principal_star(self, broker: Broker) -> None:
        """Section 5: Principal "*" names every account."""
        q = broker.create_queue("jobs")
        set_policy(q, statement("sqs:SendMessage", principal="*"))
        q.send("x", principal=OTHER)
        q.send("y", principal=THIRD)
        assert len(q) == 2

    def test_deny_overrides_allow(self, broker: Broker) -> None:
        """Section 5: an applicable Deny wins over any Allow."""
        q = broker.create_queue("jobs")
        set_policy(
            q,
            statement("sqs:*"),
            statement("sqs:SendMessage", effect="Deny"),
        )
        with pytest.raises(errors.AccessDenied):
            q.send("x", principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.send_batch(["x"], principal=OTHER)
        assert len(q) == 0
        assert q.receive(principal=OTHER) == []
        q.send("owner's")  # the owner is not subject to the policy
        assert len(q) == 1

    def test_resource_must_match(self, broker: Broker) -> None:
        """Section 5: a statement whose Resource is another queue grants nothing here."""
        q = broker.create_queue("jobs")
        other = broker.create_queue("other")
        set_policy(q, {**statement("sqs:*"), "Resource": other.arn})
        with pytest.raises(errors.AccessDenied):
            q.send("x", principal=OTHER)

    def test_access_denied_is_sqs_error(self, broker: Broker) -> None:
        """Section 3.2: AccessDenied is an sqsqueue.errors.AccessDenied (code
        AccessDenied) and a PermissionError."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.AccessDenied) as info:
            q.send("x", principal=OTHER)
        err = info.value
        assert isinstance(err, errors.SQSError)
        assert isinstance(err, PermissionError)
        assert err.code == "AccessDenied"

    def test_invalid_principal(self, broker: Broker) -> None:
        """principal= is an account id or an IAM ARN."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidParameterValue):
            q.send("x", principal="nobody")
        assert len(q) == 0


def _operations(broker: Broker, q: Queue, handle: str) -> dict[str, Callable[[str], object]]:
    """Every principal-aware operation, keyed by the action it needs."""
    return {
        "SendMessage": lambda p: q.send("x", principal=p),
        "SendMessageBatch": lambda p: q.send_batch(["x"], principal=p),
        "ReceiveMessage": lambda p: q.receive(principal=p),
        "DeleteMessage": lambda p: q.delete(handle, principal=p),
        "DeleteMessageBatch": lambda p: q.delete_batch([handle], principal=p),
        "ChangeMessageVisibility": lambda p: q.change_visibility(handle, 300, principal=p),
        "ChangeMessageVisibilityBatch": lambda p: q.change_visibility_batch(
            [ChangeVisibilityEntry("a", handle, 300)], principal=p
        ),
        "PurgeQueue": lambda p: q.purge(principal=p),
        "GetQueueAttributes": lambda p: q.get_attributes(principal=p),
        "SetQueueAttributes": lambda p: q.set_attributes({"DelaySeconds": "7"}, principal=p),
        "TagQueue": lambda p: q.tag({"new": "tag"}, principal=p),
        "UntagQueue": lambda p: q.untag(["keep"], principal=p),
        "ListQueueTags": lambda p: q.list_tags(principal=p),
        "BrokerTagQueue": lambda p: broker.tag_queue(q.url, {"new": "tag"}, principal=p),
        "BrokerUntagQueue": lambda p: broker.untag_queue(q.url, ["keep"], principal=p),
        "BrokerListQueueTags": lambda p: broker.list_queue_tags(q.url, principal=p),
        "AddPermission": lambda p: q.add_permission("x", [THIRD], ["SendMessage"], principal=p),
        "RemovePermission": lambda p: q.remove_permission("existing", principal=p),
        "DeleteQueue": lambda p: broker.delete_queue(q.url, principal=p),
        "GetQueueUrl": lambda p: broker.get_queue_url("jobs", principal=p),
        "ListDeadLetterSourceQueues": lambda p: broker.list_dead_letter_source_queues(
            q.url, principal=p
        ),
    }


def _snapshot(broker: Broker, q: Queue, clock: ManualClock) -> object:
    """Everything a refused call must leave unchanged (time does not move)."""
    attrs = q.get_attributes()
    attrs.pop("LastModifiedTimestamp")
    return (
        sorted(u for u in broker.list_queues().queue_urls),
        attrs,
        q.list_tags(),
        len(q),
        clock.now(),
    )


OPERATIONS = [
    "SendMessage",
    "SendMessageBatch",
    "ReceiveMessage",
    "DeleteMessage",
    "DeleteMessageBatch",
    "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch",
    "PurgeQueue",
    "GetQueueAttributes",
    "SetQueueAttributes",
    "TagQueue",
    "UntagQueue",
    "ListQueueTags",
    "BrokerTagQueue",
    "BrokerUntagQueue",
    "BrokerListQueueTags",
    "AddPermission",
    "RemovePermission",
    "DeleteQueue",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
]


class TestEveryOperation:
    @pytest.fixture
    def world(self, broker: Broker) -> tuple[Queue, str]:
        q = broker.create_queue("jobs", tags={"keep": "1"})
        assert isinstance(q, Queue)
        q.add_permission("existing", [THIRD], ["GetQueueUrl"])
        q.send("held")
        q.send("waiting")
        [m] = q.receive(visibility_timeout=100)
        return q, m.receipt_handle

    @pytest.mark.parametrize("op", OPERATIONS)
    def test_other_account_denied_and_nothing_changes(
        self, broker: Broker, clock: ManualClock, world: tuple[Queue, str], op: str
    ) -> None:
        """Section 2.1/3.2: without a grant another account gets AccessDenied
        and the call changes nothing."""
        q, handle = world
        q.remove_permission("existing")
        q.add_permission("existing", [THIRD], ["GetQueueUrl"])
        before = _snapshot(broker, q, clock)
        in_flight_before = q.get_attributes(["ApproximateNumberOfMessagesNotVisible"])
        with pytest.raises(errors.AccessDenied):
            _operations(broker, q, handle)[op](OTHER)
        assert _snapshot(broker, q, clock) == before
        assert q.get_attributes(["ApproximateNumberOfMessagesNotVisible"]) == in_flight_before
        clock.advance(100)  # the held message's original timeout ends: both visible
        assert q.get_attributes(["ApproximateNumberOfMessages"]) == {
            "ApproximateNumberOfMessages": "2"
        }
        check_all(broker)

    @pytest.mark.parametrize("op", OPERATIONS)
    def test_owner_allowed(self, broker: Broker, world: tuple[Queue, str], op: str) -> None:
        """Section 2.1: the owner account may do everything."""
        q, handle = world
        _operations(broker, q, handle)[op](OWNER)
        check_all(broker)

    @pytest.mark.parametrize("op", OPERATIONS)
    def test_no_principal_allowed(self, broker: Broker, world: tuple[Queue, str], op: str) -> None:
        """Section 2.1: a call without principal acts as the owner."""
        q, handle = world
        _operations(broker, q, handle)[op](None)  # type: ignore[arg-type]
        check_all(broker)

    @pytest.mark.parametrize("op", OPERATIONS)
    def test_sqs_star_grants(self, broker: Broker, world: tuple[Queue, str], op: str) -> None:
        """Section 5: a statement with "sqs:*" for the account grants every queue
        action that cross-account permissions apply to; the owner-only ones
        ("Cross-account permissions don't apply to this action", [BM]) stay refused."""
        q, handle = world
        set_policy(q, {**statement("sqs:*"), "Sid": "existing"})
        if op.removeprefix("Broker") in OWNER_ONLY:
            with pytest.raises(errors.AccessDenied):
                _operations(broker, q, handle)[op](OTHER)
        else:
            _operations(broker, q, handle)[op](OTHER)
        check_all(broker)

    @pytest.mark.parametrize(
        ("grant", "op"),
        [
            ("SendMessage", "SendMessage"),
            ("ReceiveMessage", "ReceiveMessage"),
            ("DeleteMessage", "DeleteMessage"),
            ("ChangeMessageVisibility", "ChangeMessageVisibility"),
            ("PurgeQueue", "PurgeQueue"),
            ("GetQueueAttributes", "GetQueueAttributes"),
            ("GetQueueUrl", "GetQueueUrl"),
            ("ListDeadLetterSourceQueues", "ListDeadLetterSourceQueues"),
        ],
    )
    def test_add_permission_grants_exactly(
        self, broker: Broker, world: tuple[Queue, str], grant: str, op: str
    ) -> None:
        """Section 2.1: AddPermission with one action grants that action and
        not the others."""
        q, handle = world
        q.add_permission("g", [OTHER], [grant])
        ops = _operations(broker, q, handle)
        ops[op](OTHER)
        for name in ("SendMessage", "ReceiveMessage", "GetQueueAttributes", "GetQueueUrl"):
            if name != op:
                with pytest.raises(errors.AccessDenied):
                    ops[name](OTHER)
        check_all(broker)


class TestPolicyAttribute:
    def test_round_trip(self, broker: Broker) -> None:
        """Section 5: Policy is returned as the JSON document that was set."""
        q = broker.create_queue("jobs")
        doc = {"Version": "2012-10-17", "Statement": [statement("sqs:SendMessage")]}
        q.set_attributes(policy=json.dumps(doc))
        assert policy_of(q) == doc

    def test_invalid_json(self, broker: Broker) -> None:
        """Section 5: Policy must be valid JSON."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidAttributeValue):
            q.set_attributes({"Policy": "{nope"})
        assert "Policy" not in q.get_attributes()

    def test_too_big(self, broker: Broker) -> None:
        """Section 4: Policy <= 8,192 bytes."""
        q = broker.create_queue("jobs")
        big = statement("sqs:SendMessage", Condition={"StringEquals": {"x": "y" * 8200}})
        with pytest.raises(errors.SQSError):
            set_policy(q, big)
        assert "Policy" not in q.get_attributes()

    def test_too_many_statements(self, broker: Broker) -> None:
        """Section 4: at most 20 statements."""
        q = broker.create_queue("jobs")
        many = [{**statement("sqs:SendMessage"), "Sid": f"s{i}"} for i in range(21)]
        with pytest.raises(errors.SQSError):
            set_policy(q, *many)
        set_policy(q, *many[:20])
        assert len(policy_of(q)["Statement"]) == 20

    @pytest.mark.parametrize(
        "doc",
        [
            "[]",
            json.dumps({"Version": "2012-10-17"}),
            json.dumps({"Statement": [{"Effect": "Maybe", "Principal": "*", "Action": "*"}]}),
            json.dumps({"Statement": [{"Effect": "Allow", "Action": "*"}]}),
        ],
    )
    def test_malformed(self, broker: Broker, doc: str) -> None:
        """Section 5: a Policy must be a policy document with valid statements."""
        q = broker.create_queue("jobs")
        with pytest.raises(errors.InvalidAttributeValue):
            q.set_attributes({"Policy": doc})
        assert "Policy" not in q.get_attributes()

    def test_empty_string_removes(self, broker: Broker) -> None:
        """Section 2.1: setting Policy to "" removes it."""
        q = broker.create_queue("jobs")
        q.add_permission("a", [OTHER], ["SendMessage"])
        q.set_attributes({"Policy": ""})
        assert "Policy" not in q.get_attributes()
        with pytest.raises(errors.AccessDenied):
            q.send("x", principal=OTHER)

    def test_add_permission_extends_policy_set_directly(self, broker: Broker) -> None:
        """Section 2.1: AddPermission adds to an existing policy document."""
        q = broker.create_queue("jobs")
        set_policy(q, {**statement("sqs:ReceiveMessage"), "Sid": "direct"})
        q.add_permission("added", [OTHER], ["SendMessage"])
        assert [s["Sid"] for s in policy_of(q)["Statement"]] == ["direct", "added"]
        q.send("x", principal=OTHER)
        assert q.receive(principal=OTHER)[0].body == "x"

    def test_policy_at_creation(self, broker: Broker) -> None:
        """Section 5: Policy can be given to CreateQueue."""
        doc = {"Version": "2012-10-17", "Statement": [statement("sqs:SendMessage")]}
        q = broker.create_queue("jobs", attributes={"Policy": json.dumps(doc)})
        q.send("x", principal=OTHER)
        assert len(q) == 1


class TestFifoPrincipal:
    def test_fifo_sender_id_and_denial(self, broker: Broker) -> None:
        """Section 2.1/6: principal= works the same on FIFO queues."""
        q = broker.create_queue("o.fifo", fifo_queue=True, content_based_deduplication=True)
        with pytest.raises(errors.AccessDenied):
            q.send("x", group_id="g", principal=OTHER)
        q.add_permission("s", [OTHER], ["SendMessage"])
        q.send("x", group_id="g", principal=OTHER)
        [m] = q.receive()
        assert m.attributes["SenderId"] == OTHER
        check_all(broker)


class TestNegations:
    """NotAction and NotPrincipal, the IAM grammar's negations (docs/aws-behaviour.md
    §5, "Policy": the finding and its sources). IAM User Guide,
    reference_policies_elements: Action/NotAction and Principal/NotPrincipal
    are mutually exclusive; reference_policies_elements_notaction: with
    Allow, every action not listed; reference_policies_elements_notprincipal:
    NotPrincipal "must be used with "Effect":"Deny"", with Allow "not
    supported"."""

    def test_not_action_semantics(self, broker: Broker) -> None:
        q = broker.create_queue("jobs")
        allow = statement("x")
        del allow["Action"]
        set_policy(q, {**allow, "NotAction": ["sqs:ReceiveMessage", "sqs:PurgeQueue"]})
        q.send("x", principal=OTHER)  # every action but the two
        with pytest.raises(errors.AccessDenied):
            q.receive(principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.purge(principal=OTHER)
        with pytest.raises(errors.AccessDenied):  # the owner's alone, whatever a policy says
            q.set_attributes({"DelaySeconds": "1"}, principal=OTHER)
        assert len(q) == 1

    def test_not_action_deny(self, broker: Broker) -> None:
        """Deny with NotAction denies every action but those listed."""
        q = broker.create_queue("jobs")
        deny = statement("x", effect="Deny")
        del deny["Action"]
        set_policy(q, statement("sqs:*"), {**deny, "NotAction": "sqs:SendMessage"})
        q.send("x", principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.receive(principal=OTHER)

    def test_not_principal_deny(self, broker: Broker) -> None:
        """Deny with NotPrincipal denies every caller it does not name."""
        q = broker.create_queue("jobs")
        deny = statement("sqs:SendMessage", effect="Deny")
        del deny["Principal"]
        set_policy(
            q, statement("sqs:SendMessage", principal="*"), {**deny, "NotPrincipal": {"AWS": OTHER}}
        )
        q.send("x", principal=OTHER)
        with pytest.raises(errors.AccessDenied):
            q.send("y", principal=THIRD)
        assert len(q) == 1

    def test_not_principal_allow_grants_nothing(self, broker: Broker) -> None:
        """IAM: NotPrincipal with Allow is "not supported". sqsqueue stores
        such a policy (whether SQS refuses it is UNCONFIRMED) and it grants
        nothing to anyone."""
        q = broker.create_queue("jobs")
        allow = statement("sqs:SendMessage")
        del allow["Principal"]
        set_policy(q, {**allow, "NotPrincipal": {"AWS": OTHER}})
        for caller in (OTHER, THIRD):
            with pytest.raises(errors.AccessDenied):
                q.send("x", principal=caller)

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            ({"NotAction": "sqs:SendMessage"}, "both Action and NotAction"),
            ({"NotPrincipal": "*"}, "both Principal and NotPrincipal"),
            ({"Action": None}, "an Action or a NotAction"),
            ({"Principal": None}, "a Principal or a NotPrincipal"),
        ],
    )
    def test_exactly_one_of_each_pair(
        self, broker: Broker, change: dict[str, object], reason: str
    ) -> None:
        """IAM: the pairs are mutually exclusive, and a statement needs one of
        each (a statement without Action is refused by AWS; moto stores it:
        docs/moto.md, "What is stricter")."""
        q = broker.create_queue("jobs")
        st = {**statement("sqs:SendMessage"), **change}
        st = {k: v for k, v in st.items() if v is not None}
        with pytest.raises(errors.InvalidAttributeValue, match=reason):
            set_policy(q, st)
        assert "Policy" not in q.get_attributes()

    def test_not_action_counts_against_seven_actions(self, broker: Broker) -> None:
        q = broker.create_queue("jobs")
        allow = statement("x")
        del allow["Action"]
        with pytest.raises(errors.OverLimit):
            set_policy(q, {**allow, "NotAction": [f"sqs:A{i}" for i in range(8)]})

    def test_not_resource(self, broker: Broker) -> None:
        """IAM's third pair: NotResource applies to every resource it does not match."""
        q = broker.create_queue("jobs")
        other = broker.create_queue("other")
        allow = statement("sqs:SendMessage")
        del allow["Resource"]
        set_policy(q, {**allow, "NotResource": other.arn})
        q.send("x", principal=OTHER)
        set_policy(q, {**allow, "NotResource": q.arn})
        with pytest.raises(errors.AccessDenied):
            q.send("y", principal=OTHER)
        with pytest.raises(errors.InvalidAttributeValue, match="both Resource and NotResource"):
            set_policy(q, {**allow, "NotResource": q.arn, "Resource": "*"})
