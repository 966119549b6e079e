"""aws-lambda-powertools' batch processor, as its documentation writes it,
behind ``sqsqueue lambda`` (Lambda's SQS event source mapping), plus the one
line ``sqsqueue check`` needs: the effect, sent by the record handler.

    sqsqueue check --messages 60 --faults kill=3 -- \\
        sh -c 'exec sqsqueue lambda handler:handler --queue-url "$SQSQUEUE_QUEUE_URL" \\
               --report-batch-item-failures'

(from this directory: ``sqsqueue lambda`` imports the handler from the
working directory, as Lambda imports it from its task root). On a FIFO queue
(``FIFO=1``) the handler uses ``SqsFifoPartialProcessor``, which stops at a
batch's first failure as powertools documents. ``WORK_MS`` is the work per
record (5).
"""

from __future__ import annotations

import os
import random
import threading

import boto3
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    SqsFifoPartialProcessor,
    process_partial_response,
)

sqs = boto3.client("sqs")  # endpoint, region and keys from sqsqueue check's environment
EFFECTS = os.environ["SQSQUEUE_EFFECTS_URL"]
WORK = float(os.environ.get("WORK_MS", "5")) / 1000
processor = (
    SqsFifoPartialProcessor()
    if os.environ.get("FIFO")
    else BatchProcessor(event_type=EventType.SQS)
)


def record_handler(record) -> None:  # type: ignore[no-untyped-def]
    threading.Event().wait(random.random() * WORK)  # the work
    sqs.send_message(QueueUrl=EFFECTS, MessageBody=record.body)  # the effect


def handler(event, context):  # type: ignore[no-untyped-def]
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
