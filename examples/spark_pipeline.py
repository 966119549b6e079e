"""The sqsqueue demo: a Spark pipeline whose executors talk SQS over HTTP.

A broker is served on 127.0.0.1 in this process (``Broker.serve()``); Spark's
executors reach it through ``format("sqs")`` and boto3, exactly as they would
reach AWS SQS (point ``queueUrl`` and ``endpointUrl`` elsewhere and nothing
else changes).

1. A producer job writes order events (about 3% malformed) from a DataFrame
   into ``orders.fifo``, one message group per customer, each group in order
   (``repartition(4, group).sortWithinPartitions(seq)``). The job is then
   *replayed* with the same ``writeId``, as after a failure: the deterministic
   deduplication ids make the replay store nothing.
2. A streaming query reads ``orders.fifo`` (``readStream.format("sqs")``) and,
   per micro-batch, writes each good event to ``ledger.fifo`` and each
   malformed one to the dead-letter queue, both with the source message id as
   the deduplication id. Messages are deleted only after Spark commits the
   batch. One batch fails on purpose after its ledger rows were written: the
   query dies, is restarted from its checkpoint, and the failed batch's
   messages come back and are written again, which the ledger drops as
   duplicates.
3. Another streaming query reads the ledger back and totals it per customer:
   the run ends by checking every good event was counted exactly once against
   the producer's ground truth, and every malformed one reached the DLQ.

Run it with ``python3 examples`` (embedded local Spark, the default
``local[2,2]``: tasks retried once). With ``--master`` pointing at a cluster the
broker, served on 127.0.0.1 here, would have to be served on an address the
workers reach (``Broker.serve(host=..., credentials=...)``).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqsqueue import Broker, SystemClock

EVENTS = 2_000
CUSTOMERS = 40
MALFORMED_RATE = 0.03
BATCH = 250
FAIL_ON_BATCH = 2
MAX_RECEIVES = 3


@dataclass
class Summary:
    """What the run did, for the final report and for tests."""

    events: int = 0
    produced: int = 0
    malformed_produced: int = 0
    stored_after_replay: int = 0
    batches: int = 0
    injected_failures: int = 0
    redelivered: int = 0
    ledger_rows: int = 0
    dead_lettered: int = 0
    totals: dict[str, tuple[int, int]] = field(default_factory=dict)
    expected: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return self.totals == self.expected and self.ledger_rows == sum(
            n for n, _ in self.expected.values()
        )


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def make_events(count: int = EVENTS, seed: int = 7) -> list[tuple[int, str, str]]:
    """(sequence, customer, body) rows; a few bodies are not valid JSON."""
    rng = random.Random(seed)
    rows = []
    for seq in range(count):
        customer = f"customer-{rng.randrange(CUSTOMERS):02d}"
        if rng.random() < MALFORMED_RATE:
            body = '{"order": ' + str(seq) + ", oops"  # truncated JSON
        else:
            body = json.dumps(
                {"order_id": seq, "customer": customer, "amount_cents": rng.randrange(100, 50_000)}
            )
        rows.append((seq, customer, body))
    return rows


def expected_totals(rows: list[tuple[int, str, str]]) -> dict[str, tuple[int, int]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, customer, body in rows:
        try:
            event = json.loads(body)
        except ValueError:
            continue
        totals[customer][0] += 1
        totals[customer][1] += event["amount_cents"]
    return {c: (n, s) for c, (n, s) in totals.items()}


def count(queue: Any) -> int:
    attributes = queue.get_attributes(
        ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def run(master: str = "local[2,2]", events: int = EVENTS, batch: int = BATCH) -> Summary:
    from pyspark.errors import StreamingQueryException
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sqsqueue.spark import local_session, register

    summary = Summary(events=events)
    work = Path(tempfile.mkdtemp(prefix="sqsqueue-demo-"))

    step("Serving a broker on 127.0.0.1 (real time: Spark runs in real time)")
    broker = Broker(clock=SystemClock(), account_id="123456789012")
    dlq = broker.create_queue("orders-dlq.fifo", fifo_queue=True)
    orders = broker.create_queue(
        "orders.fifo",
        fifo_queue=True,
        visibility_timeout=60,
        redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": MAX_RECEIVES},
    )
    ledger = broker.create_queue("ledger.fifo", fifo_queue=True)
    server = broker.serve(host="127.0.0.1", port=0, credentials=None)
    print(f"   endpoint {server.endpoint_url}")

    def sqs(queue: Any, **more: str) -> dict[str, str]:
        return {
            "queueUrl": queue.url,
            "endpointUrl": server.endpoint_url,
            "accessKeyId": "demo",
            "secretAccessKey": "demo",
            **more,
        }

    step(f"Starting Spark ({master})")
    spark = local_session(master, app_name="sqsqueue-demo")
    # The injected failure is expected: keep Spark's and py4j's stack traces of it quiet.
    spark.sparkContext.setLogLevel("OFF")
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    register(spark)

    step(f"Producer: {events} order events from a DataFrame into {orders.name}, on executors")
    rows = make_events(events)
    summary.expected = expected_totals(rows)
    summary.malformed_produced = sum(1 for *_, b in rows if not b.endswith("}"))
    df = (
        spark.createDataFrame(rows, "seq long, message_group_id string, body string")
        .repartition(4, "message_group_id")
        .sortWithinPartitions("seq")
        .drop("seq")
    )
    producer = df.write.format("sqs").options(**sqs(orders, writeId="order-producer-1"))
    producer.mode("append").save()
    summary.produced = count(orders)
    print(f"   stored {summary.produced} ({summary.malformed_produced} malformed on purpose)")

    step("Producer replay: the same job again with the same writeId, as after a failure")
    producer.mode("append").save()
    summary.stored_after_replay = count(orders)
    print(f"   the queue still holds {summary.stored_after_replay} messages")

    step(f"Consumer: micro-batches of up to {batch}, good events -> ledger, malformed -> DLQ")
    schema = T.StructType(
        [
            T.StructField("order_id", T.LongType()),
            T.StructField("customer", T.StringType()),
            T.StructField("amount_cents", T.LongType()),
        ]
    )
    attempts: dict[str, int] = defaultdict(int)
    fail = {"pending": True}

    def process(batch_df: DataFrame, batch_id: int) -> None:
        parsed = batch_df.select(
            "message_id",
            "message_group_id",
            "body",
            F.from_json("body", schema, {"mode": "PERMISSIVE"}).alias("e"),
        ).cache()
        ids = [r.message_id for r in parsed.select("message_id").collect()]
        for message_id in ids:
            attempts[message_id] += 1
        good = parsed.where(F.col("e.customer").isNotNull())
        good.select(
            F.to_json("e").alias("body"),
            F.col("e.customer").alias("message_group_id"),
            F.col("message_id").alias("message_deduplication_id"),
        ).write.format("sqs").options(**sqs(ledger)).mode("append").save()
        bad = parsed.where(F.col("e.customer").isNull())
        bad.select(
            "body",
            "message_group_id",
            F.col("message_id").alias("message_deduplication_id"),
        ).write.format("sqs").options(**sqs(dlq)).mode("append").save()
        parsed.unpersist()
        summary.batches += 1
        if summary.batches == FAIL_ON_BATCH and fail["pending"]:
            fail["pending"] = False
            print(f"   batch {batch_id:>2}: {len(ids):>3} messages, FAILS after writing the ledger")
            raise RuntimeError("injected failure after writing the ledger")
        print(f"   batch {batch_id:>2}: {len(ids):>3} messages committed")

    def consume() -> None:
        query = (
            spark.readStream.format("sqs")
            .options(**sqs(orders, maxMessagesPerBatch=str(batch), waitTimeSeconds="1"))
            .load()
            .writeStream.foreachBatch(process)
            .option("checkpointLocation", str(work / "consumer-checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        finally:
            query.stop()

    try:
        consume()
    except StreamingQueryException as exc:
        summary.injected_failures += 1
        print(f"   the query died: {str(exc).splitlines()[0][:100]}...")
        print("   restarting it from its checkpoint")
        consume()
    summary.redelivered = sum(1 for n in attempts.values() if n > 1)
    print(f"   {summary.redelivered} messages were delivered twice (the failed batch)")

    step("Check: read the ledger back with another stream and total it per customer")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def total(batch_df: DataFrame, batch_id: int) -> None:
        events_ = batch_df.select(F.from_json("body", schema).alias("e")).select("e.*")
        for r in (
            events_.groupBy("customer")
            .agg(F.count("*").alias("n"), F.sum("amount_cents").alias("cents"))
            .collect()
        ):
            totals[r["customer"]][0] += r["n"]
            totals[r["customer"]][1] += r["cents"]
        summary.ledger_rows += batch_df.count()

    query = (
        spark.readStream.format("sqs")
        .options(**sqs(ledger, maxMessagesPerBatch="5000", waitTimeSeconds="1"))
        .load()
        .writeStream.foreachBatch(total)
        .option("checkpointLocation", str(work / "check-checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    summary.totals = {c: (n, s) for c, (n, s) in totals.items()}
    summary.dead_lettered = len(dlq)

    step("Summary")
    good = sum(n for n, _ in summary.expected.values())
    print(f"   events produced          {summary.produced}")
    twice = "none stored twice" if summary.stored_after_replay == summary.produced else "DUPLICATES"
    print(f"   after the replayed write {summary.stored_after_replay} ({twice})")
    print(
        f"   micro-batches            {summary.batches} ({summary.injected_failures} failed, "
        f"{summary.redelivered} messages redelivered)"
    )
    print(f"   ledger rows              {summary.ledger_rows} of {good} good events")
    print(f"   malformed -> DLQ         {summary.dead_lettered} of {summary.malformed_produced}")
    print("   every good event counted exactly once: " + ("YES" if summary.exactly_once else "NO"))
    print("\nOK: pipeline verified" if verified(summary) else "\nMISMATCH")
    spark.stop()
    server.close()
    shutil.rmtree(work, ignore_errors=True)
    return summary


def verified(summary: Summary) -> bool:
    return (
        summary.exactly_once
        and summary.produced == summary.events == summary.stored_after_replay
        and summary.dead_lettered == summary.malformed_produced
        and summary.injected_failures == 1
        and summary.redelivered > 0
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--master", default="local[2,2]", help="Spark master (default: local[2,2])")
    parser.add_argument("--events", type=int, default=EVENTS, help="order events to produce")
    parser.add_argument("--batch", type=int, default=BATCH, help="messages per micro-batch")
    args = parser.parse_args(argv)
    summary = run(args.master, args.events, args.batch)
    return 0 if verified(summary) else 1


if __name__ == "__main__":
    sys.exit(main())
