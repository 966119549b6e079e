"""aioboto3 as its users run it, in the venv ``python3 tests`` gives it (aioboto3
pins its own aiobotocore 2.x): in process through ``mock_sqs``, and over HTTP
against the endpoint URL given as the one argument. Prints a JSON report.

Run by tests/endpoint/test_real_clients.py with sqsqueue on PYTHONPATH; its
imports are inside main() so that collecting this file imports nothing."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def in_process() -> dict[str, Any]:
    import aioboto3

    from sqsqueue import Broker
    from sqsqueue.testing import mock_sqs

    report: dict[str, Any] = {}
    session = aioboto3.Session(
        aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1"
    )
    broker = Broker(account_id="123456789012")
    with mock_sqs(broker):
        async with session.client("sqs") as sqs:
            url = (await sqs.create_queue(QueueName="a3"))["QueueUrl"]
            report["url"] = url
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticking = asyncio.create_task(ticker())
            poll = asyncio.create_task(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10))
            await asyncio.sleep(0.5)
            await sqs.send_message(QueueUrl=url, MessageBody="awaited")
            answer = await poll
            ticking.cancel()
            report["polled"] = [m["Body"] for m in answer.get("Messages", [])]
            report["ticks_during_poll"] = ticks  # the loop ran while the poll waited
            try:
                await sqs.get_queue_url(QueueName="missing")
            except sqs.exceptions.QueueDoesNotExist as exc:
                report["error"] = exc.response["Error"]["Code"]
        async with session.resource("sqs") as resource:
            queue = await resource.get_queue_by_name(QueueName="a3")
            await queue.send_message(MessageBody="via resource")
            messages = await queue.receive_messages(WaitTimeSeconds=1)
            report["resource"] = [await m.body for m in messages]
        report["native"] = broker.get_queue("a3").get_attributes(["ApproximateNumberOfMessages"])
    return report


async def over_http(endpoint_url: str) -> list[str]:
    import aioboto3

    session = aioboto3.Session(
        aws_access_key_id="x", aws_secret_access_key="y", region_name="us-east-1"
    )
    async with session.client("sqs", endpoint_url=endpoint_url) as sqs:
        url = (await sqs.create_queue(QueueName="over-http"))["QueueUrl"]
        await sqs.send_message(QueueUrl=url, MessageBody="over http")
        answer = await sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        return [m["Body"] for m in answer["Messages"]]


def main() -> None:
    from importlib.metadata import version

    report = asyncio.run(in_process())
    report["http"] = asyncio.run(over_http(sys.argv[1]))
    report["versions"] = {p: version(p) for p in ("aioboto3", "aiobotocore", "botocore")}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
