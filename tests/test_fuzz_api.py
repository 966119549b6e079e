"""Hostile input to every public entry point of the Pythonic API
(``docs/design.md`` principle 6; ``docs/aws-behaviour.md`` §§1.4, 2, 3, 4).

Each test draws a method and arguments: plausible values (so calls get past
the first check and deep into the engine) mixed with wrong types (None, bools,
floats, NaN, huge ints, bytes, lists, dicts, sets, plain objects, str and int
subclasses, Decimal NaNs), huge and empty values, lone surrogates, and deeply
nested or oversized structures. The contract: a call either succeeds or raises
an :class:`sqsqueue.errors.SQSError` subclass, never another exception; the
queues' ``_check()`` passes after every call; and a call that raised changed
nothing a caller can observe (``inspect()``, ``get_attributes()``, tags,
queue list, move tasks).

Entry points: every :class:`Queue` and :class:`FifoQueue` method (sync and
async), their constructors, every :class:`Broker` method and its constructor,
:class:`ManualClock`, :class:`Faults`, and ``broker.client().call`` with random
operation names and random parameter dicts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import inspect as pyinspect
import json
import random
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sqsqueue import (
    Broker,
    ChangeVisibilityEntry,
    DeleteEntry,
    Faults,
    FifoQueue,
    ManualClock,
    MessageAttributeValue,
    Queue,
    SendEntry,
)
from sqsqueue.aws._client import OPERATIONS
from sqsqueue.errors import SQSError
from tests._profiles import LONG

START = 1_700_000_000.0
ACCOUNT = "123456789012"
OTHER_ACCOUNT = "210987654321"
DLQ_ARN = f"arn:aws:sqs:us-east-1:{ACCOUNT}:dlq"

FUZZ = settings(
    max_examples=2_000 if LONG else 150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- hostile values ------------------------------------------------------------------


class Opaque:
    """A plain object of a class sqsqueue has never heard of."""


class SubStr(str):
    """A str subclass: passes isinstance checks."""


class SubInt(int):
    """An int subclass: passes isinstance checks."""


def _nested_list(depth: int) -> Any:
    return functools.reduce(lambda acc, _: [acc], range(depth), 0)


def _nested_dict(depth: int) -> Any:
    return functools.reduce(lambda acc, _: {"k": acc}, range(depth), "v")


#: Built once: deep enough to overflow any recursive repr, comparison or JSON
#: encoder, big enough to be expensive to echo back in an error message.
DEEP_LIST = _nested_list(50_000)
DEEP_DICT = _nested_dict(50_000)
HUGE_TEXT = "x" * (2 * 1024 * 1024 + 1)
HUGE_LIST = ["a"] * 200_000
HUGE_DICT = {f"k{i}": "v" for i in range(50_000)}
BIG_VALUES: dict[str, Any] = {
    "deep_list": DEEP_LIST,
    "deep_dict": DEEP_DICT,
    "huge_text": HUGE_TEXT,
    "huge_list": HUGE_LIST,
    "huge_dict": HUGE_DICT,
    "huge_int": 10**5000,  # more digits than int -> str allows
    "deep_json_b64": base64.b64encode(b"[" * 100_000).decode(),
    "deep_json_b64url": base64.urlsafe_b64encode(b"[" * 100_000).decode(),
    "deep_object_b64": base64.b64encode(b'{"taskId":' * 50_000).decode(),
    "deep_json": "[" * 100_000,
    "deep_policy": '{"Statement": ' + "[" * 5_000 + "]" * 5_000 + "}",
    "deep_statement": {"Statement": DEEP_LIST},
    "deep_principal": {"Statement": [{"Effect": "Allow", "Principal": DEEP_DICT, "Action": "*"}]},
    "deep_sources": {"redrivePermission": "byQueue", "sourceQueueArns": [1, None, DEEP_LIST]},
    "deep_entries": [{"Id": "0", "MessageBody": "b", "MessageAttributes": DEEP_DICT}],
    "deep_attribute": {"a": {"DataType": "String", "StringValue": DEEP_LIST}},
}


@attrs.frozen
class Big:
    """Stands for one of :data:`BIG_VALUES` while hypothesis draws and reports
    (it cannot print them); :func:`resolve` swaps the real value in."""

    name: str


def resolve(value: Any) -> Any:
    """``value`` with every :class:`Big` replaced by the object it names."""
    if isinstance(value, Big):
        return BIG_VALUES[value.name]
    if isinstance(value, list):
        return [resolve(v) for v in value]
    if type(value) is tuple:
        return tuple(resolve(v) for v in value)
    if type(value) is dict:
        return {k: resolve(v) for k, v in value.items()}  # keys stay hashable
    if attrs.has(type(value)) and not isinstance(value, Faults):
        return type(value)(*(resolve(getattr(value, f.name)) for f in attrs.fields(type(value))))
    return value


ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**64, -(2**63), 10**400, -(10**400)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.text(
        st.characters(codec="utf-8") | st.sampled_from(["\ud800", "\udfff", "\x00"]), max_size=5
    ),
    st.binary(max_size=20),
    st.sampled_from(
        [
            "",
            "\ud800",
            "a\udfffb",
            "\x00",
            object(),
            Opaque(),
            SubStr("All"),
            SubStr("x"),
            SubInt(5),
            Decimal("NaN"),
            Decimal("sNaN"),
            Decimal("Infinity"),
            Fraction(1, 3),
            1j,
            bytearray(b"xy"),
            memoryview(b"z"),
            frozenset({"a"}),
            {"a"},
            (),
            [],
            {},
            Ellipsis,
            NotImplemented,
            int,
            print,
        ]
    ),
)
JUNK = st.recursive(
    ATOMS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=4)
    ),
    max_leaves=12,
)
BIG = st.sampled_from(sorted(BIG_VALUES)).map(Big)
ANY = st.one_of(JUNK, JUNK, BIG)


#: Anything hashable, to use as a dict key.
KEY = st.one_of(
    st.text(max_size=10),
    st.integers(),
    st.none(),
    st.sampled_from([SubStr("k"), (), ("a", 1), frozenset({"a"}), Opaque(), 1.5, b"k"]),
)


def plausible(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly (3 in 4) the plausible values given, sometimes anything at all, so
    that calls get past their first check and deep into the engine."""
    # Distinct objects: one_of counts a strategy object given twice only once.
    return st.one_of(*(s.map(_same) for s in strategies for _ in range(3)), ANY)


def _same(value: Any) -> Any:
    return value


BODY = plausible(st.text(min_size=1, max_size=30), st.just("hello"))
INT = plausible(st.integers(-5, 50), st.sampled_from([0, 1, 10, 20, 900, 43_200, 43_201]))
TEXT = plausible(st.text(max_size=20))
FIFO_ID = plausible(st.sampled_from(["g1", "g2", "d1", "x" * 128, "x" * 129, "a b"]))
PRINCIPAL = st.one_of(st.none(), st.none(), st.sampled_from([ACCOUNT, OTHER_ACCOUNT]), ANY)
ATTRIBUTE_VALUE = plausible(
    st.text(max_size=10),
    st.binary(max_size=10),
    st.integers(),
    st.floats(),
    st.fixed_dictionaries(
        {"DataType": st.sampled_from(["String", "Number", "Binary", "String.x", "Bogus", ""])},
        optional={"StringValue": TEXT, "BinaryValue": plausible(st.binary(max_size=5))},
    ),
    st.builds(MessageAttributeValue, TEXT, TEXT, plausible(st.binary(max_size=5))),
)
MESSAGE_ATTRIBUTES = plausible(
    st.dictionaries(
        st.sampled_from(["a", "b.c", "AWS.x", "", ".a", "a" * 257]) | KEY,
        ATTRIBUTE_VALUE,
        max_size=12,
    )
)
SYSTEM_NAMES = plausible(
    st.lists(
        st.sampled_from(["All", "SenderId", "ApproximateReceiveCount", "SequenceNumber", "x"]),
        max_size=4,
    ),
    st.just("All"),
)
QUEUE_ATTRIBUTE_NAMES = [
    "VisibilityTimeout",
    "DelaySeconds",
    "MessageRetentionPeriod",
    "MaximumMessageSize",
    "ReceiveMessageWaitTimeSeconds",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "visibility_timeout",
    "ApproximateNumberOfMessages",
    "QueueArn",
    "Bogus",
]
QUEUE_ATTRIBUTE_VALUE = plausible(
    st.sampled_from(["0", "30", "-1", "43201", "true", "false", "queue", "perQueue", "{}", ""]),
    st.integers(-10, 100),
    st.sampled_from(
        [
            json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 2}),
            {"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 0},
            {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "*"}]},
            {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": ["*"] * 8}]},
        ]
    ),
)
QUEUE_ATTRIBUTES = plausible(
    st.dictionaries(st.sampled_from(QUEUE_ATTRIBUTE_NAMES) | KEY, QUEUE_ATTRIBUTE_VALUE, max_size=4)
)
TAGS = plausible(
    st.dictionaries(
        st.one_of(st.text(max_size=10), st.sampled_from(["aws:x", "k" * 129]), KEY),
        plausible(st.text(max_size=10)),
        max_size=5,
    ),
    st.just({f"k{i}": "v" for i in range(51)}),
)
STRINGS = plausible(st.lists(st.text(max_size=10), max_size=5), st.text(max_size=5))
ACTIONS = plausible(
    st.lists(
        st.sampled_from(["SendMessage", "ReceiveMessage", "*", "DeleteQueue", "x"]), max_size=8
    )
)


class World:
    """A broker with a standard queue, its DLQ and a FIFO queue, some messages
    sent and some received, and the handles, ids and ARNs a fuzzer can aim at."""

    def __init__(self) -> None:
        self.clock = ManualClock(start=START)
        self.broker = Broker(clock=self.clock, account_id=ACCOUNT, random=random.Random(7))
        self.dlq = self.broker.create_queue("dlq")
        self.q = self.broker.create_queue(
            "q",
            attributes={
                "RedrivePolicy": {"deadLetterTargetArn": self.dlq.arn, "maxReceiveCount": 1}
            },
            tags={"team": "a"},
        )
        self.fifo = self.broker.create_queue(
            "f.fifo", fifo_queue=True, content_based_deduplication=True
        )
        for i in range(4):
            self.q.send(f"m{i}", message_attributes={"n": i})
            self.fifo.send(f"f{i}", group_id=f"g{i % 2}")
        self.q.keep_history = True
        self.handles = [m.receipt_handle for m in self.q.receive(2)]
        self.handles += [m.receipt_handle for m in self.fifo.receive(2)]
        self.message_ids = [info.message_id for info in self.q.inspect()]
        self.q.receive(1, visibility_timeout=0)
        self.q.receive(1)  # the first message is dead-lettered now
        self.task_handle = self.broker.start_message_move_task(
            self.dlq.arn, max_number_of_messages_per_second=1
        )
        self.queues = [self.q, self.dlq, self.fifo]

    def handle_strategy(self) -> st.SearchStrategy[Any]:
        real = st.sampled_from(self.handles)
        return st.one_of(real, real.map(_mutate), TEXT, ANY)

    def snapshot(self) -> Any:
        """Everything a caller can observe, read without changing anything."""
        queues = []
        for q in self.queues:
            if q._deleted:
                queues.append(None)
                continue
            queues.append(
                (
                    tuple(q.inspect()),
                    q.get_attributes(),
                    q.list_tags(),
                    q.keep_history,
                    getattr(q, "faults", None),
                    q._last_purge,
                )
            )
        return (
            self.clock.now(),
            self.broker.list_queues().queue_urls,
            queues,
            self.broker.list_message_move_tasks(self.dlq.arn, max_results=10),
        )

    def check(self) -> None:
        for q in self.queues:
            q._check()


def _mutate(handle: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(handle + "=" * (-len(handle) % 4)))
    raw[len(raw) // 2] ^= 0x10
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def attempt(world: World, call: Any) -> None:
    """The contract: success, or an SQSError that changed nothing; _check() holds."""
    world.check()
    before = world.snapshot()
    try:
        call()
    except SQSError as err:
        event(f"raised {err.code}")
        assert world.snapshot() == before, "a call that raised changed the world"
    else:
        event("succeeded")
    world.check()


def draw_kwargs(
    data: st.DataObject, params: dict[str, st.SearchStrategy[Any]], method: Any = None
) -> dict[str, Any]:
    """Each parameter drawn from its strategy, or left out when the signature of
    ``method`` gives it a default (leaving out a required argument is a Python
    TypeError, not malformed input)."""
    required = set()
    if method is not None:
        for p in pyinspect.signature(method).parameters.values():
            if p.default is p.empty and p.kind is not p.VAR_KEYWORD:
                required.add(p.name)
    out = {}
    for name, strategy in params.items():
        if name in required or data.draw(st.integers(0, 3), label=f"give {name}") != 3:
            out[name] = data.draw(strategy, label=name)
    return out


def send_entries(world: World) -> st.SearchStrategy[Any]:
    entry = st.one_of(
        st.builds(
            SendEntry,
            plausible(st.sampled_from(["0", "1", "a-b", "x" * 81, "bad id"])),
            BODY,
            INT | st.none(),
            MESSAGE_ATTRIBUTES | st.none(),
            FIFO_ID | st.none(),
            FIFO_ID | st.none(),
            TEXT | st.none(),
        ),
        BODY,
        st.dictionaries(
            st.sampled_from(
                [
                    "Id",
                    "MessageBody",
                    "DelaySeconds",
                    "MessageAttributes",
                    "MessageGroupId",
                    "MessageSystemAttributes",
                    "Bogus",
                ]
            ),
            ANY | BODY,
            max_size=4,
        ),
        ANY,
    )
    return plausible(st.lists(entry, max_size=12))


def handle_entries(world: World, change: bool) -> st.SearchStrategy[Any]:
    handle = world.handle_strategy()
    ids = plausible(st.sampled_from(["0", "1", "2"]))
    entry = st.one_of(
        st.builds(ChangeVisibilityEntry, ids, handle, INT)
        if change
        else st.builds(DeleteEntry, ids, handle),
        handle,
        st.fixed_dictionaries(
            {"Id": ids, "ReceiptHandle": handle}, optional={"VisibilityTimeout": INT}
        ),
        ANY,
    )
    return plausible(st.lists(entry, max_size=12))


def queue_method_params(world: World, name: str) -> dict[str, st.SearchStrategy[Any]]:
    handle = world.handle_strategy()
    table: dict[str, dict[str, st.SearchStrategy[Any]]] = {
        "send": {
            "body": BODY,
            "delay_seconds": INT,
            "message_attributes": MESSAGE_ATTRIBUTES,
            "trace_header": plausible(TEXT, st.just({"DataType": "String", "StringValue": "x"})),
            "group_id": FIFO_ID,
            "deduplication_id": FIFO_ID,
            "sender_id": TEXT,
            "principal": PRINCIPAL,
        },
        "send_batch": {"entries": send_entries(world), "sender_id": TEXT, "principal": PRINCIPAL},
        "receive": {
            "max_messages": INT,
            "visibility_timeout": INT,
            "wait_time_seconds": INT,
            "attribute_names": SYSTEM_NAMES,
            "message_attribute_names": SYSTEM_NAMES,
            "receive_request_attempt_id": FIFO_ID,
            "principal": PRINCIPAL,
        },
        "delete": {"receipt_handle": handle, "principal": PRINCIPAL},
        "delete_batch": {"entries": handle_entries(world, False), "principal": PRINCIPAL},
        "change_visibility": {
            "receipt_handle": handle,
            "visibility_timeout": INT,
            "principal": PRINCIPAL,
        },
        "change_visibility_batch": {
            "entries": handle_entries(world, True),
            "principal": PRINCIPAL,
        },
        "purge": {"principal": PRINCIPAL},
        "get_attributes": {"names": SYSTEM_NAMES | STRINGS, "principal": PRINCIPAL},
        "tag": {"tags": TAGS, "principal": PRINCIPAL},
        "untag": {"keys": STRINGS, "principal": PRINCIPAL},
        "list_tags": {"principal": PRINCIPAL},
        "add_permission": {
            "label": TEXT,
            "account_ids": plausible(st.just([OTHER_ACCOUNT]), STRINGS),
            "actions": ACTIONS,
            "principal": PRINCIPAL,
        },
        "remove_permission": {"label": TEXT, "principal": PRINCIPAL},
        "history": {"message_id": plausible(st.sampled_from(world.message_ids), TEXT)},
        "inspect": {},
        "browse": {
            "after": plausible(st.integers(-2, 2**70), ANY),
            "limit": INT,
            "states": plausible(st.just(["visible", "in_flight"]), STRINGS),
            "principal": PRINCIPAL,
        },
        "remove": {
            "position": plausible(st.integers(0, 5), ANY),
            "message_id": plausible(st.sampled_from(world.message_ids), TEXT),
            "principal": PRINCIPAL,
        },
        "metrics": {},
    }
    return table[name]


QUEUE_METHODS = [
    "send",
    "send_batch",
    "receive",
    "receive_async",
    "delete",
    "delete_batch",
    "change_visibility",
    "change_visibility_batch",
    "purge",
    "get_attributes",
    "set_attributes",
    "tag",
    "untag",
    "list_tags",
    "add_permission",
    "remove_permission",
    "history",
    "inspect",
    "browse",
    "remove",
    "metrics",
    "keep_history",
    "faults",
    "len",
]


#: Queue and FifoQueue constructor keywords, each with plausible values.
CONSTRUCTOR_KEYWORDS: dict[str, st.SearchStrategy[Any]] = {
    "clock": plausible(st.builds(ManualClock, st.just(START))),
    "visibility_timeout": INT,
    "delay_seconds": INT,
    "message_retention_period": INT,
    "maximum_message_size": INT,
    "receive_message_wait_time_seconds": INT,
    "attributes": QUEUE_ATTRIBUTES,
    "random": plausible(st.builds(random.Random, st.integers())),
    "region": plausible(st.just("eu-west-1")),
    "account_id": plausible(st.just(ACCOUNT)),
    "dead_letter_queue": plausible(st.builds(Queue, st.just("dlq"))),
    "max_receive_count": INT,
    "faults": plausible(st.builds(Faults, st.integers(0, 9), st.floats(0, 1))),
    "content_based_deduplication": plausible(st.booleans()),
    "deduplication_scope": plausible(st.sampled_from(["queue", "messageGroup"])),
    "fifo_throughput_limit": plausible(st.sampled_from(["perQueue", "x"])),
    "policy": QUEUE_ATTRIBUTE_VALUE,
    "Bogus": ANY,
}


class TestQueueMethods:
    """Every Queue and FifoQueue method, sync and async."""

    @FUZZ
    @given(
        data=st.data(), which=st.sampled_from([0, 0, 1, 2]), method=st.sampled_from(QUEUE_METHODS)
    )
    def test_method(self, data: st.DataObject, which: int, method: str) -> None:
        """Design principle 6: any arguments to any queue method either work or
        raise an SQSError that changed nothing; the queue's invariants hold."""
        world = World()
        q = world.queues[which]
        call: Any
        if method == "receive_async":
            kwargs = resolve(draw_kwargs(data, queue_method_params(world, "receive"), q.receive))
            call = lambda: asyncio.run(q.receive_async(**kwargs))  # noqa: E731
        elif method == "set_attributes":
            positional = resolve(data.draw(QUEUE_ATTRIBUTES | st.none(), label="attributes"))
            kwargs = resolve(
                data.draw(
                    st.dictionaries(
                        st.sampled_from([*QUEUE_ATTRIBUTE_NAMES, "principal"]),
                        QUEUE_ATTRIBUTE_VALUE,
                    ),
                    label="kwargs",
                )
            )
            call = lambda: q.set_attributes(positional, **kwargs)  # noqa: E731
        elif method == "keep_history":
            value = resolve(data.draw(ANY | st.booleans(), label="value"))
            call = lambda: setattr(q, "keep_history", value)  # noqa: E731
        elif method == "faults":
            value = resolve(
                data.draw(
                    st.none() | st.builds(Faults, st.integers(0, 9), st.floats(0, 1)) | ANY,
                    label="value",
                )
            )
            call = lambda: setattr(q, "faults", value)  # noqa: E731
        elif method == "len":
            call = lambda: len(q)  # noqa: E731
        else:
            kwargs = resolve(
                draw_kwargs(data, queue_method_params(world, method), getattr(q, method))
            )
            call = functools.partial(getattr(q, method), **kwargs)
        attempt(world, call)

    @FUZZ
    @given(
        fifo=st.booleans(),
        data=st.data(),
    )
    def test_constructor(self, fifo: bool, data: st.DataObject) -> None:
        """Design principle 6: a queue is built from any arguments, or an SQSError
        says why not; a built queue works and its invariants hold."""
        name = data.draw(
            plausible(
                st.just("jobs.fifo" if fifo else "jobs"),
                st.sampled_from(["jobs", "jobs.fifo", "", "x" * 81, "a b"]),
            ),
            label="name",
        )
        keywords = data.draw(
            st.lists(st.sampled_from(sorted(CONSTRUCTOR_KEYWORDS)), max_size=3, unique=True),
            label="keywords",
        )
        kwargs = {k: data.draw(CONSTRUCTOR_KEYWORDS[k], label=k) for k in keywords}
        cls = FifoQueue if fifo else Queue
        name, kwargs = resolve(name), resolve(kwargs)
        try:
            q = cls(name, **kwargs)
        except SQSError:
            return
        q._check()
        world = World()
        world.queues = [q]
        attempt(world, lambda: q.send("x", group_id="g", deduplication_id="d"))
        # A short poll: with a drawn ReceiveMessageWaitTimeSeconds on the real
        # clock, a message still delayed would hold the default receive for
        # up to 20 wall seconds (48 s of CI's run went there); long polls are
        # tested in test_long_poll.py.
        attempt(world, lambda: q.receive(10, wait_time_seconds=0))
        attempt(world, q.get_attributes)


BROKER_METHODS = [
    "create_queue",
    "delete_queue",
    "get_queue",
    "get_queue_url",
    "list_queues",
    "list_dead_letter_source_queues",
    "tag_queue",
    "untag_queue",
    "list_queue_tags",
    "add_permission",
    "remove_permission",
    "start_message_move_task",
    "list_message_move_tasks",
    "cancel_message_move_task",
    "client",
    "contains",
    "backup",
    "metrics",
    "reset",
    "lenient_counts",
]


def broker_params(world: World, name: str) -> tuple[list[st.SearchStrategy[Any]], dict[str, Any]]:
    """(positional strategies, keyword strategies) of a Broker method."""
    ref = plausible(
        st.sampled_from(
            [
                world.q.url,
                world.q.arn,
                "q",
                world.dlq.arn,
                world.fifo.url,
                "arn:aws:sqs:us-east-1:123456789012:nope",
                "https://sqs.us-east-1.amazonaws.com/000000000000/q",
                "/",
                "q/",
            ]
        )
    )
    arn = plausible(st.sampled_from([world.dlq.arn, world.q.arn, world.fifo.arn, "arn:x"]))
    table: dict[str, tuple[list[Any], dict[str, Any]]] = {
        "create_queue": (
            [plausible(st.sampled_from(["new", "q", "dlq", "new.fifo", "f.fifo"]))],
            {
                "attributes": QUEUE_ATTRIBUTES,
                "tags": TAGS,
                "fifo_queue": ANY | st.booleans(),
                "visibility_timeout": INT,
            },
        ),
        "delete_queue": ([ref], {"principal": PRINCIPAL}),
        "get_queue": ([ref], {}),
        "get_queue_url": ([ref], {"queue_owner_account_id": TEXT, "principal": PRINCIPAL}),
        "list_queues": ([TEXT], {"max_results": INT, "next_token": TEXT}),
        "list_dead_letter_source_queues": (
            [ref],
            {"max_results": INT, "next_token": TEXT, "principal": PRINCIPAL},
        ),
        "tag_queue": ([ref, TAGS], {"principal": PRINCIPAL}),
        "untag_queue": ([ref, STRINGS], {"principal": PRINCIPAL}),
        "list_queue_tags": ([ref], {"principal": PRINCIPAL}),
        "add_permission": ([ref, TEXT, STRINGS, ACTIONS], {"principal": PRINCIPAL}),
        "remove_permission": ([ref, TEXT], {"principal": PRINCIPAL}),
        "start_message_move_task": (
            [arn],
            {"destination_arn": arn, "max_number_of_messages_per_second": INT},
        ),
        "list_message_move_tasks": ([arn], {"max_results": INT}),
        "cancel_message_move_task": (
            [
                plausible(
                    st.just(world.task_handle),
                    TEXT,
                    st.just(base64.b64encode(b'{"taskId": 1, "sourceArn": []}').decode()),
                    st.just(base64.b64encode(b"[]").decode()),
                )
            ],
            {},
        ),
        "client": ([], {"principal": PRINCIPAL}),
        "contains": ([ANY | ref], {}),
        # The fuzzed broker is in memory: every backup is refused before any file
        # is touched (tests/test_durable.py::TestBackup backs up durable ones).
        "backup": ([ANY | TEXT], {}),
        "metrics": ([], {}),
        "reset": ([], {}),
        "lenient_counts": ([], {}),
    }
    return table[name]


class TestBrokerMethods:
    """Every Broker method, its constructor, ManualClock and Faults."""

    @FUZZ
    @given(data=st.data(), method=st.sampled_from(BROKER_METHODS))
    def test_method(self, data: st.DataObject, method: str) -> None:
        """Design principle 6: any arguments to any broker method either work or
        raise an SQSError that changed nothing; every queue's invariants hold."""
        world = World()
        positional, keywords = broker_params(world, method)
        args = resolve([data.draw(s, label=f"arg{i}") for i, s in enumerate(positional)])
        kwargs = resolve(draw_kwargs(data, keywords))
        if method == "contains":
            call: Any = lambda: args[0] in world.broker  # noqa: E731
        else:
            call = functools.partial(getattr(world.broker, method), *args, **kwargs)
        attempt(world, call)

    @FUZZ
    @given(
        kwargs=st.dictionaries(
            st.sampled_from(
                ["clock", "region", "account_id", "random", "faults", "keep_history", "lenient"]
            ),
            ANY | st.sampled_from(["us-east-1", ACCOUNT, "purge-interval", ["fifo-queue-false"]]),
            max_size=3,
        )
    )
    def test_constructor(self, kwargs: dict[str, Any]) -> None:
        """Design principle 6: a Broker is built from any arguments or an SQSError
        says why not; a built broker creates queues and runs operations."""
        kwargs = resolve(kwargs)
        try:
            broker = Broker(**kwargs)
        except SQSError:
            return
        for name, extra in (("a", {}), ("b.fifo", {"fifo_queue": True})):
            try:
                q = broker.create_queue(name, **extra)
            except SQSError:
                continue
            for op in (
                lambda q=q: q.send("x", group_id="g", deduplication_id="d"),
                lambda q=q: q.receive(10),
                lambda q=q: q.get_attributes(),
            ):
                with contextlib.suppress(SQSError):
                    op()
            q._check()

    @FUZZ
    @given(
        start=plausible(st.floats(-1e12, 1e12), st.just(1e308)),
        threshold=plausible(st.none(), st.floats(0, 1)),
        steps=st.lists(
            st.tuples(
                st.sampled_from(["advance", "advance_to"]),
                plausible(st.floats(0, 1e9), st.just(1e308)),
            ),
            max_size=4,
        ),
    )
    def test_manual_clock(self, start: Any, threshold: Any, steps: list[tuple[str, Any]]) -> None:
        """Design principle 1: a ManualClock is built and moved with any values, or
        an SQSError says why not; time never goes backwards or out of range, and a
        queue on it keeps working."""
        start, threshold, steps = resolve(start), resolve(threshold), resolve(steps)
        try:
            clock = ManualClock(start=start, autojump_threshold=threshold)
        except SQSError:
            return
        q = Queue("q", clock=clock)
        for method, value in steps:
            before = clock.now()
            try:
                getattr(clock, method)(value)
            except SQSError:
                assert clock.now() == before
            assert clock.now() >= before
            q.send("m")
            assert q.receive(10, wait_time_seconds=1)
            q._check()

    @FUZZ
    @given(
        kwargs=st.dictionaries(
            st.sampled_from(["seed", "duplicate_rate", "partial_short_polls", "reorder"]),
            ANY | st.floats(0, 1) | st.integers(0, 10),
            max_size=4,
        )
    )
    def test_faults(self, kwargs: dict[str, Any]) -> None:
        """Design principle 6 and 8: Faults accepts what makes sense and refuses the
        rest with an SQSError; a queue with the faults built keeps working."""
        kwargs = resolve(kwargs)
        try:
            faults = Faults(**kwargs)
        except SQSError:
            return
        q = Queue("q", clock=ManualClock(start=START), faults=faults)
        q.send("m")
        for m in q.receive(10):
            q.delete(m.receipt_handle)
        q._check()


#: The parameters of each operation (botocore's SQS model, as sqsqueue.aws._client takes them).
OPERATION_PARAMS: dict[str, tuple[str, ...]] = {
    "AddPermission": ("QueueUrl", "Label", "AWSAccountIds", "Actions"),
    "CancelMessageMoveTask": ("TaskHandle",),
    "ChangeMessageVisibility": ("QueueUrl", "ReceiptHandle", "VisibilityTimeout"),
    "ChangeMessageVisibilityBatch": ("QueueUrl", "Entries"),
    "CreateQueue": ("QueueName", "Attributes", "tags"),
    "DeleteMessage": ("QueueUrl", "ReceiptHandle"),
    "DeleteMessageBatch": ("QueueUrl", "Entries"),
    "DeleteQueue": ("QueueUrl",),
    "GetQueueAttributes": ("QueueUrl", "AttributeNames"),
    "GetQueueUrl": ("QueueName", "QueueOwnerAWSAccountId"),
    "ListDeadLetterSourceQueues": ("QueueUrl", "NextToken", "MaxResults"),
    "ListMessageMoveTasks": ("SourceArn", "MaxResults"),
    "ListQueueTags": ("QueueUrl",),
    "ListQueues": ("QueueNamePrefix", "NextToken", "MaxResults"),
    "PurgeQueue": ("QueueUrl",),
    "ReceiveMessage": (
        "QueueUrl",
        "AttributeNames",
        "MessageSystemAttributeNames",
        "MessageAttributeNames",
        "MaxNumberOfMessages",
        "VisibilityTimeout",
        "WaitTimeSeconds",
        "ReceiveRequestAttemptId",
    ),
    "RemovePermission": ("QueueUrl", "Label"),
    "SendMessage": (
        "QueueUrl",
        "MessageBody",
        "DelaySeconds",
        "MessageAttributes",
        "MessageSystemAttributes",
        "MessageDeduplicationId",
        "MessageGroupId",
    ),
    "SendMessageBatch": ("QueueUrl", "Entries"),
    "SetQueueAttributes": ("QueueUrl", "Attributes"),
    "StartMessageMoveTask": ("SourceArn", "DestinationArn", "MaxNumberOfMessagesPerSecond"),
    "TagQueue": ("QueueUrl", "Tags"),
    "UntagQueue": ("QueueUrl", "TagKeys"),
}


def param_values(world: World) -> dict[str, st.SearchStrategy[Any]]:
    """A plausible (and sometimes hostile) value for each request parameter."""
    urls = plausible(st.sampled_from([world.q.url, world.fifo.url, world.dlq.url, "q"]))
    arns = plausible(st.sampled_from([world.dlq.arn, world.q.arn, world.fifo.arn, "arn:x"]))
    entry = st.fixed_dictionaries(
        {"Id": plausible(st.sampled_from(["0", "1", "2"]))},
        optional={
            "MessageBody": BODY,
            "ReceiptHandle": world.handle_strategy(),
            "MessageGroupId": FIFO_ID,
            "MessageDeduplicationId": FIFO_ID,
            "DelaySeconds": INT,
            "VisibilityTimeout": INT,
            "MessageAttributes": MESSAGE_ATTRIBUTES,
        },
    )
    table = {
        "QueueUrl": urls,
        "QueueName": plausible(st.sampled_from(["q", "new", "new.fifo", "f.fifo", "bad name"])),
        "Attributes": QUEUE_ATTRIBUTES,
        "tags": TAGS,
        "Tags": TAGS,
        "MessageBody": BODY,
        "DelaySeconds": INT,
        "MessageAttributes": MESSAGE_ATTRIBUTES,
        "MessageSystemAttributes": plausible(
            st.just({"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}}),
            st.dictionaries(KEY, ANY, max_size=2),
        ),
        "MessageDeduplicationId": FIFO_ID,
        "MessageGroupId": FIFO_ID,
        "ReceiveRequestAttemptId": FIFO_ID,
        "Entries": plausible(st.lists(plausible(entry), max_size=11)),
        "AttributeNames": SYSTEM_NAMES,
        "MessageSystemAttributeNames": SYSTEM_NAMES,
        "MessageAttributeNames": SYSTEM_NAMES,
        "MaxNumberOfMessages": INT,
        "VisibilityTimeout": INT,
        "WaitTimeSeconds": INT,
        "MaxResults": INT,
        "MaxNumberOfMessagesPerSecond": INT,
        "ReceiptHandle": world.handle_strategy(),
        "Label": TEXT,
        "AWSAccountIds": plausible(st.just([OTHER_ACCOUNT]), STRINGS),
        "Actions": ACTIONS,
        "TagKeys": STRINGS,
        "SourceArn": arns,
        "DestinationArn": arns,
        "TaskHandle": plausible(st.just(world.task_handle), TEXT),
        "QueueNamePrefix": TEXT,
        "NextToken": TEXT,
        "QueueOwnerAWSAccountId": plausible(st.just(ACCOUNT), TEXT),
    }
    assert set(table) == {p for params in OPERATION_PARAMS.values() for p in params}
    return table


class TestClient:
    """``broker.client().call`` with random operations and parameter dicts."""

    @FUZZ
    @given(
        data=st.data(),
        operation=st.one_of(
            *(st.sampled_from(sorted(OPERATION_PARAMS)) for _ in range(6)),
            st.sampled_from(["sendMessage", "", "Foo", SubStr("SendMessage")]),
            ANY,
        ),
    )
    def test_call(self, data: st.DataObject, operation: Any) -> None:
        """Section 1.4: the dict-level client answers any operation name and any
        parameters with a response or an SQSError, and a refused call changed
        nothing."""
        world = World()
        values = param_values(world)
        names = OPERATION_PARAMS.get(operation, ()) if isinstance(operation, str) else ()
        params: Any = draw_kwargs(data, {n: values[n] for n in names})
        if data.draw(st.integers(0, 9), label="hostile params") == 0:
            params = data.draw(
                st.one_of(ANY, st.dictionaries(KEY | st.sampled_from(sorted(values)), ANY)),
                label="params",
            )
        params, operation = resolve(params), resolve(operation)
        principal = resolve(data.draw(PRINCIPAL, label="principal"))
        try:
            client = world.broker.client(principal=principal)
        except SQSError:
            return
        attempt(world, lambda: client.call(operation, params))


def test_every_public_queue_method_is_fuzzed() -> None:
    """The fuzzers above name every public method of Queue, FifoQueue and Broker
    and every operation of the client, so one added later is not left out."""
    for cls in (Queue, FifoQueue):
        public = {
            n
            for n, v in pyinspect.getmembers(cls)
            if not n.startswith("_") and (callable(v) or isinstance(v, property))
        }
        # close() takes no arguments and changes state on purpose (tests/test_shutdown.py).
        unfuzzed = {"name", "arn", "url", "clock", "attributes", "FIFO", "close", "closed"}
        assert public - unfuzzed <= set(QUEUE_METHODS)
    public = {n for n, v in pyinspect.getmembers(Broker) if not n.startswith("_") and callable(v)}
    # serve() starts a server thread (fuzzed over HTTP in tests/endpoint/test_server.py);
    # from_config() reads a file and refuses with ConfigError, file and line
    # (tests/test_config.py gives it every kind of bad file and mapping).
    assert public - {"queue_for_url", "close", "serve", "from_config"} <= set(BROKER_METHODS)
    assert set(OPERATION_PARAMS) == set(OPERATIONS)


# -- the crashes the fuzzers found, kept as regression tests ----------------------------


def _advanced(clock: ManualClock, seconds: float) -> ManualClock:
    clock.advance(seconds)
    return clock


def _found_crashes() -> dict[str, Callable[[], object]]:
    clock = ManualClock(start=START)
    q = Queue("q", clock=clock)
    q.keep_history = True
    broker = Broker(clock=clock, account_id=ACCOUNT)
    broker.create_queue("b")
    sqs = broker.client()
    deep_b64 = base64.b64encode(b"[" * 100_000).decode()
    return {
        # Error messages built with repr()/str() of the caller's value: RecursionError
        # for deep structures, ValueError for ints of more than 4,300 digits.
        "deep body": lambda: q.send(DEEP_LIST),
        "huge int delay": lambda: q.send("x", delay_seconds=10**5000),
        "deep principal": lambda: q.send("x", principal=DEEP_LIST),
        "deep group id": lambda: q.send("x", group_id=DEEP_DICT),
        "deep dedup id on a standard queue": lambda: q.send("x", deduplication_id=DEEP_LIST),
        "deep attribute names": lambda: q.receive(attribute_names=[DEEP_LIST]),
        "deep batch entry": lambda: q.send_batch([DEEP_LIST]),
        "deep tags": lambda: q.tag({"k": DEEP_LIST}),
        "deep permission label": lambda: q.add_permission(DEEP_LIST, [OTHER_ACCOUNT], ["*"]),
        "deep label to remove": lambda: q.remove_permission(DEEP_DICT),
        # Message attributes.
        "huge int attribute": lambda: q.send("x", message_attributes={"a": 10**5000}),
        "MessageAttributeValue with a list type": lambda: q.send(
            "x",
            message_attributes={"a": MessageAttributeValue(["String"], "v")},  # type: ignore[arg-type]
        ),
        "unknown attribute fields of mixed types": lambda: q.send(
            "x", message_attributes={"a": {"DataType": "String", "StringValue": "v", 1: 2, "b": 3}}
        ),
        # Policies given as mappings JSON cannot encode.
        "deep Policy mapping": lambda: q.set_attributes({"Policy": {"Statement": DEEP_LIST}}),
        "RedrivePolicy with a tuple key": lambda: q.set_attributes(
            {"RedrivePolicy": {("a",): 1, "maxReceiveCount": 1}}
        ),
        "RedriveAllowPolicy with a huge int": lambda: q.set_attributes(
            {"RedriveAllowPolicy": {"redrivePermission": 10**5000}}
        ),
        # Constructors and values stored for later.
        "Queue random not a Random": lambda: Queue("q", random={}),  # type: ignore[arg-type]
        "Queue region deep": lambda: Queue("q", region=DEEP_LIST),  # type: ignore[arg-type]
        "Queue account not 12 digits": lambda: Queue("q", account_id="x"),
        "Broker random not a Random": lambda: Broker(random=[]),  # type: ignore[arg-type]
        "Broker faults not a Faults": lambda: Broker(faults=1),  # type: ignore[arg-type]
        "Faults seed a list": lambda: Faults(seed=[1]),  # type: ignore[arg-type]
        "Faults flag a string": lambda: Faults(reorder="yes"),  # type: ignore[arg-type]
        "Faults huge rate": lambda: Faults(duplicate_rate=10**5000),
        # The clock: infinity, floats that overflow, waits threading cannot do.
        "ManualClock huge int start": lambda: ManualClock(start=10**400),
        "ManualClock advanced to infinity, then used": lambda: Queue(
            "q", clock=_advanced(ManualClock(start=1e308), 1e308)
        ).send("x"),
        "ManualClock in the far future, then used": lambda: Queue(
            "q", clock=ManualClock(start=1e303)
        ).send("x"),
        "ManualClock threshold past TIMEOUT_MAX": lambda: ManualClock(autojump_threshold=1e12),
        # Broker and client.
        "list_queues prefix a dict": lambda: broker.list_queues({"a": 1}),  # type: ignore[arg-type]
        "history of an unhashable id": lambda: q.history([1]),  # type: ignore[arg-type]
        "create_queue attributes a string": lambda: broker.create_queue("c", attributes="ab"),  # type: ignore[arg-type]
        "client operation deep": lambda: sqs.call(DEEP_LIST, {}),  # type: ignore[arg-type]
        "client params a string": lambda: sqs.call("SendMessage", "ab"),  # type: ignore[arg-type]
        "client params with an int key": lambda: sqs.call("ListQueues", {1: 2}),  # type: ignore[dict-item]
        "task handle of deep JSON": lambda: broker.cancel_message_move_task(deep_b64),
        "NextToken of deep JSON": lambda: broker.list_queues(
            next_token=base64.urlsafe_b64encode(b"[" * 100_000).decode()
        ),
    }


@pytest.mark.parametrize("case", sorted(_found_crashes()))
def test_found_crash_now_raises_sqs_error(case: str) -> None:
    """Design principle 6: each of these inputs once escaped as a RecursionError,
    ValueError, TypeError, OverflowError or AttributeError (or crashed a later
    call); now each is refused with an SQSError."""
    call = _found_crashes()[case]
    with pytest.raises(SQSError):
        call()
