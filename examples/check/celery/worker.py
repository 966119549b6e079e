"""A Celery worker on kombu's SQS transport, consuming a queue of plain
messages with a consumer bootstep as Celery's "Extensions and Bootsteps"
guide writes one (``bootsteps.ConsumerStep`` returning a kombu ``Consumer``),
plus the one line ``sqsqueue check`` needs: the effect, sent before the
message is acknowledged (kombu's ack is SQS's DeleteMessage).

    sqsqueue check --messages 60 --faults kill=3 -- \\
        celery -A worker worker --pool solo --without-gossip --without-mingle \\
               --without-heartbeat -Q unused

(from this directory). The transport's queues are ``predefined_queues``, as
kombu's documentation advises for SQS; Celery's own task queue (``unused``)
is created here, since a worker always consumes one.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import boto3
from celery import Celery, bootsteps
from kombu import Consumer, Queue

ENDPOINT = urlsplit(os.environ["AWS_ENDPOINT_URL_SQS"])
QUEUE_URL = os.environ["SQSQUEUE_QUEUE_URL"]
QUEUE = QUEUE_URL.rsplit("/", 1)[-1]
sqs = boto3.client("sqs")  # endpoint, region and keys from sqsqueue check's environment
EFFECTS = os.environ["SQSQUEUE_EFFECTS_URL"]
UNUSED = sqs.create_queue(QueueName="unused")["QueueUrl"]

keys = {
    "access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
    "secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
}
app = Celery("check")
app.conf.broker_url = f"sqs://{ENDPOINT.hostname}:{ENDPOINT.port}"
app.conf.broker_transport_options = {
    "region": os.environ["AWS_REGION"],
    "is_secure": False,
    "wait_time_seconds": 1,
    "predefined_queues": {
        QUEUE: {"url": QUEUE_URL, **keys},
        "unused": {"url": UNUSED, **keys},
    },
}
app.conf.worker_hijack_root_logger = False


class CheckedConsumer(bootsteps.ConsumerStep):
    def get_consumers(self, channel):  # type: ignore[no-untyped-def]
        queue = Queue(QUEUE, no_declare=True)
        return [
            Consumer(
                channel,
                queues=[queue],
                callbacks=[self.handle_message],
                accept=["json", "application/data", "text/plain"],
            )
        ]

    def handle_message(self, body, message):  # type: ignore[no-untyped-def]
        text = body.decode() if isinstance(body, bytes) else str(body)
        sqs.send_message(QueueUrl=EFFECTS, MessageBody=text)  # the effect
        message.ack()


app.steps["consumer"].add(CheckedConsumer)
