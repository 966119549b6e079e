"""aiobotocore in process: ``mock_sqs`` serves aiobotocore clients, and their
long polls await the engine without blocking the event loop (issue 13 §5;
docs/aws-behaviour.md §1.5).

aiobotocore's event emitter awaits a ``before-send`` handler's answer when it
is awaitable; the mock answers aiobotocore's requests with a coroutine over
``_wire.handle_async``, so a ``ReceiveMessage`` long poll suspends its task
while other tasks keep running, and a send from another task wakes it.
No credentials exist here (tests/aws/conftest.py): the mock turns signing off.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from time import perf_counter as perf  # the test's own wall time, not a queue's
from typing import Any

import boto3
import pytest
from aiobotocore.session import get_session
from botocore.exceptions import ClientError

from sqsqueue import Broker, ManualClock, SystemClock
from sqsqueue.testing import mock_sqs
from tests.aws._helpers import ACCOUNT, REGION, arn_of, assert_aws_error, url_of


async def _with_client(body: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``body(sqs)`` with an aiobotocore SQS client created inside the mock."""
    async with get_session().create_client("sqs", region_name=REGION) as sqs:
        return await body(sqs)


def test_every_basic_operation(broker: Broker[ManualClock]) -> None:
    """Queues, attributes, tags, send (attributes, binary), batch send, receive,
    visibility, deletes, purge: each through aiobotocore, each checked against
    the broker natively."""

    async def run(sqs: Any) -> None:
        url = (await sqs.create_queue(QueueName="jobs", tags={"team": "a"}))["QueueUrl"]
        assert url == url_of("jobs")
        assert (await sqs.get_queue_url(QueueName="jobs"))["QueueUrl"] == url
        assert (await sqs.list_queues())["QueueUrls"] == [url]
        await sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
        attrs = (await sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]))["Attributes"]
        assert attrs["VisibilityTimeout"] == "45"
        assert attrs["QueueArn"] == arn_of("jobs")
        await sqs.tag_queue(QueueUrl=url, Tags={"env": "test"})
        await sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
        assert (await sqs.list_queue_tags(QueueUrl=url))["Tags"] == {"env": "test"}

        blob = bytes(range(256))
        sent = await sqs.send_message(
            QueueUrl=url,
            MessageBody="hello",
            MessageAttributes={
                "kind": {"DataType": "String", "StringValue": "greeting"},
                "raw": {"DataType": "Binary", "BinaryValue": blob},
            },
        )
        # aiobotocore checked both MD5s itself; check the body's against ours too.
        assert sent["MD5OfMessageBody"] == hashlib.md5(b"hello").hexdigest()
        batch = await sqs.send_message_batch(
            QueueUrl=url,
            Entries=[{"Id": str(i), "MessageBody": f"b{i}"} for i in range(3)],
        )
        assert sorted(e["Id"] for e in batch["Successful"]) == ["0", "1", "2"]
        assert len(broker.get_queue("jobs")) == 4

        got = await sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["ApproximateReceiveCount"],
        )
        by_body = {m["Body"]: m for m in got["Messages"]}
        assert sorted(by_body) == ["b0", "b1", "b2", "hello"]
        hello = by_body["hello"]
        assert hello["MessageId"] == sent["MessageId"]
        assert hello["MessageAttributes"]["raw"]["BinaryValue"] == blob
        assert hello["MessageAttributes"]["kind"]["StringValue"] == "greeting"
        assert hello["Attributes"] == {"ApproximateReceiveCount": "1"}

        await sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=hello["ReceiptHandle"], VisibilityTimeout=0
        )
        changed = await sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {
                    "Id": "b0",
                    "ReceiptHandle": by_body["b0"]["ReceiptHandle"],
                    "VisibilityTimeout": 0,
                }
            ],
        )
        assert [e["Id"] for e in changed["Successful"]] == ["b0"]
        again = await sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        assert sorted(m["Body"] for m in again["Messages"]) == ["b0", "hello"]

        await sqs.delete_message(QueueUrl=url, ReceiptHandle=by_body["b1"]["ReceiptHandle"])
        deleted = await sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                for i, m in enumerate(again["Messages"])
            ],
        )
        assert len(deleted["Successful"]) == 2
        assert len(broker.get_queue("jobs")) == 1  # b2 is still in flight

        await sqs.purge_queue(QueueUrl=url)
        assert len(broker.get_queue("jobs")) == 0
        await sqs.delete_queue(QueueUrl=url)

    with mock_sqs(broker):
        asyncio.run(_with_client(run))
    assert "jobs" not in broker


def test_errors_are_modeled_exceptions(broker: Broker[ManualClock]) -> None:
    """A missing queue is aiobotocore's modeled QueueDoesNotExist with AWS's
    Error dict, status and headers; a bad receipt handle is
    ReceiptHandleIsInvalid (404); an unmodeled error is a plain ClientError."""
    errors: dict[str, ClientError] = {}

    async def run(sqs: Any) -> None:
        with pytest.raises(sqs.exceptions.QueueDoesNotExist) as missing:
            await sqs.get_queue_url(QueueName="missing")
        errors["missing"] = missing.value
        url = (await sqs.create_queue(QueueName="jobs"))["QueueUrl"]
        with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid) as handle:
            await sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")
        errors["handle"] = handle.value
        with pytest.raises(ClientError) as bad:
            await sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11)
        errors["bad"] = bad.value

    with mock_sqs(broker):
        asyncio.run(_with_client(run))
    assert_aws_error(
        errors["missing"],
        code="AWS.SimpleQueueService.NonExistentQueue",
        query_code="QueueDoesNotExist",
        message="The specified queue does not exist.",
        operation="GetQueueUrl",
    )
    assert_aws_error(
        errors["handle"],
        code="ReceiptHandleIsInvalid",
        query_code="ReceiptHandleIsInvalid",
        message='The input receipt handle "garbage" is not a valid receipt handle.',
        status=404,
    )
    assert type(errors["bad"]) is ClientError
    assert errors["bad"].response["Error"]["Code"] == "InvalidParameterValue"
    assert errors["bad"].response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_long_poll_awaits_without_blocking_the_loop() -> None:
    """On a SystemClock broker, a 20 s long poll is woken by a send from another
    coroutine well under a second after it, while a third coroutine keeps
    ticking all along: the poll suspends its task, never the event loop."""
    broker = Broker(clock=SystemClock(), account_id=ACCOUNT)
    broker.create_queue("jobs")
    url = url_of("jobs")

    async def run() -> tuple[dict[str, Any], float, int, int]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.002)

        async with AsyncExitStack() as stack:
            session = get_session()
            poller = await stack.enter_async_context(
                session.create_client("sqs", region_name=REGION)
            )
            sender = await stack.enter_async_context(
                session.create_client("sqs", region_name=REGION)
            )
            started = perf()
            poll = asyncio.create_task(poller.receive_message(QueueUrl=url, WaitTimeSeconds=20))
            tick_task = asyncio.create_task(ticker())
            # The loop runs while the poll is pending: 25 ticks (about 50 ms).
            while ticks < 25:
                assert perf() - started < 10, "the event loop is blocked"
                await asyncio.sleep(0.002)
            assert not poll.done(), "an empty queue's 20 s poll returned early"
            ticks_while_waiting = ticks
            await sender.send_message(QueueUrl=url, MessageBody="wake up")
            sent = perf()
            response = await asyncio.wait_for(poll, timeout=10)
            woken_after = perf() - sent
            stop.set()
            await tick_task
            return response, woken_after, ticks_while_waiting, ticks

    with mock_sqs(broker):
        response, woken_after, ticks_while_waiting, ticks = asyncio.run(run())
    assert [m["Body"] for m in response["Messages"]] == ["wake up"]
    assert woken_after < 0.5
    assert ticks_while_waiting >= 25
    assert ticks >= ticks_while_waiting  # the ticker ran to the end


def test_long_poll_woken_by_a_native_send_from_another_thread() -> None:
    """The same kind of poll is woken by the broker used natively from a thread
    (the engine wakes an asyncio waiter across threads)."""
    broker = Broker(clock=SystemClock(), account_id=ACCOUNT)
    queue = broker.create_queue("jobs")

    async def run(sqs: Any) -> tuple[list[str], float]:
        poll = asyncio.create_task(sqs.receive_message(QueueUrl=url_of("jobs"), WaitTimeSeconds=20))
        for _ in range(25):  # let the poll reach the engine; the loop keeps running
            await asyncio.sleep(0.002)
        assert not poll.done(), "an empty queue's 20 s poll returned early"
        sender = threading.Thread(target=queue.send, args=("from a thread",))
        sent = perf()
        sender.start()
        response = await asyncio.wait_for(poll, timeout=10)
        took = perf() - sent
        sender.join()
        return [m["Body"] for m in response["Messages"]], took

    with mock_sqs(broker):
        bodies, took = asyncio.run(_with_client(run))
    assert bodies == ["from a thread"]
    assert took < 0.5


def test_cancelled_long_poll_takes_nothing() -> None:
    """Cancelling an aiobotocore long poll leaves the queue as it was: a message
    sent afterwards is received by the next poll, not lost to the cancelled one."""
    system = Broker(clock=SystemClock(), account_id=ACCOUNT)
    system.create_queue("jobs")

    async def run(sqs: Any) -> list[str]:
        url = url_of("jobs")
        poll = asyncio.create_task(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20))
        for _ in range(25):  # let the poll reach the engine
            await asyncio.sleep(0.002)
        assert not poll.done()
        poll.cancel()
        with pytest.raises(asyncio.CancelledError):
            await poll
        await sqs.send_message(QueueUrl=url, MessageBody="after the cancel")
        response = await sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        return [m["Body"] for m in response["Messages"]]

    with mock_sqs(system):
        assert asyncio.run(_with_client(run)) == ["after the cancel"]
    assert system.get_queue("jobs").get_attributes(["ApproximateNumberOfMessagesNotVisible"]) == {
        "ApproximateNumberOfMessagesNotVisible": "1"
    }


def test_manual_clock_long_poll_on_empty_queue_returns_promptly(
    broker: Broker[ManualClock], clock: ManualClock
) -> None:
    """Under the default frozen ManualClock a 20 s long poll on an empty queue
    is answered (empty) within the clock's patience for another actor, and
    moves no virtual time."""
    before = clock.now()

    async def run(sqs: Any) -> tuple[dict[str, Any], float]:
        url = (await sqs.create_queue(QueueName="empty"))["QueueUrl"]
        started = perf()
        response = await sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
        return response, perf() - started

    with mock_sqs(broker):
        response, took = asyncio.run(_with_client(run))
    assert "Messages" not in response
    assert took < clock.max_wall_wait + 1.0
    assert clock.now() == before


def test_served_by_the_sqsqueue_client_fixtures_broker(
    sqsqueue_client: Any, sqsqueue_broker: Broker[Any]
) -> None:
    """With the pytest plugin's ``sqsqueue_client`` fixture active, an aiobotocore
    client created in the test is served by ``sqsqueue_broker`` too, and sees what
    the boto3 client sent."""
    url = sqsqueue_client.create_queue(QueueName="shared")["QueueUrl"]
    sqsqueue_client.send_message(QueueUrl=url, MessageBody="from boto3")

    async def run(sqs: Any) -> list[str]:
        response = await sqs.receive_message(QueueUrl=url)
        return [m["Body"] for m in response["Messages"]]

    assert asyncio.run(_with_client(run)) == ["from boto3"]
    assert sqsqueue_broker.get_queue("shared").get_attributes(
        ["ApproximateNumberOfMessagesNotVisible"]
    ) == {"ApproximateNumberOfMessagesNotVisible": "1"}


def test_boto3_inside_a_coroutine_still_gets_plain_responses(broker: Broker[ManualClock]) -> None:
    """A synchronous boto3 client called from inside a coroutine, next to an
    aiobotocore client in the same mock, still gets its answer directly (the
    coroutine answer is for aiobotocore's requests only)."""

    async def run(sqs: Any) -> tuple[str, str]:
        sync = boto3.client("sqs", region_name=REGION)
        url = sync.create_queue(QueueName="mixed")["QueueUrl"]
        await sqs.send_message(QueueUrl=url, MessageBody="async side")
        [message] = sync.receive_message(QueueUrl=url)["Messages"]
        return url, message["Body"]

    with mock_sqs(broker):
        url, body = asyncio.run(_with_client(run))
    assert url == url_of("mixed")
    assert body == "async side"


def test_outside_the_mock_aiobotocore_is_not_served(broker: Broker[ManualClock]) -> None:
    """With no mock active the handler passes aiobotocore's request through: the
    client really tries to connect (to a closed local port here)."""
    from aiobotocore.config import AioConfig
    from botocore.exceptions import EndpointConnectionError

    async def run() -> None:
        async with get_session().create_client(
            "sqs",
            region_name=REGION,
            endpoint_url="http://127.0.0.1:9",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=AioConfig(retries={"total_max_attempts": 1}, connect_timeout=1),
        ) as sqs:
            with pytest.raises(EndpointConnectionError):
                await sqs.list_queues()

    asyncio.run(run())
    assert list(broker) == []
