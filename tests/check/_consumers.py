"""Small boto3 consumers with known verdicts, run as processes by tests/check.

``python tests/check/_consumers.py KIND``: ``correct`` (work, effect, then
delete), ``delete-first`` (delete, then work and effect: loses what a kill
interrupts), ``non-idempotent`` (an effect per delivery: duplicates show),
``fifo-reorder`` (handles each batch in reverse), ``idempotent`` (one
effect per body it has seen, in this process), ``poison`` (never handles a
body ending in 3: it is neither processed nor deleted), ``exit`` (exits at once).
Each long-polls for 1 s, up to 10 messages, and works ``WORK`` seconds a
message (0.01).
"""

from __future__ import annotations

import os
import sys
import threading

import boto3

WORK = float(os.environ.get("WORK", "0.01"))


def main(kind: str) -> None:
    if kind == "exit":
        sys.exit(3)
    sqs = boto3.client("sqs")  # endpoint, region and keys from the environment
    queue = os.environ["SQSQUEUE_QUEUE_URL"]
    effects = os.environ["SQSQUEUE_EFFECTS_URL"]
    pause = threading.Event()
    done: set[str] = set()
    while True:
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        batch = got.get("Messages", [])
        if kind == "fifo-reorder":
            batch = batch[::-1]
        for m in batch:
            if kind == "poison" and m["Body"].endswith("3"):
                continue
            if kind == "delete-first":
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
            pause.wait(WORK)
            if kind == "idempotent" and m["Body"] in done:
                pass
            else:
                sqs.send_message(QueueUrl=effects, MessageBody=m["Body"])  # the one line
                done.add(m["Body"])
            if kind != "delete-first":
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


if __name__ == "__main__":
    main(sys.argv[1])
