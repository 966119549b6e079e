"""The sqsqueue demo: a Spark pipeline over in-process SQS queues.

1. A producer job writes order events (about 3% malformed) from a Spark
   DataFrame into a FIFO queue, one message group per customer. The job is
   then *replayed*, as Spark does after a failure: the deterministic
   deduplication ids make the replay send nothing twice.
2. A consumer job reads the queue in micro-batches, parses and aggregates the
   events per customer with Spark, and commits each batch only after it was
   processed. Batch 3 fails once on purpose: its messages are redelivered and
   counted on the retry, not twice. Malformed events are released on every
   attempt and end in the dead-letter queue after 3 receives.
3. The run ends with a summary that checks every good event was counted
   exactly once against the producer's ground truth.

Run it with ``python3 examples`` (embedded local Spark) or
``python3 examples/spark_pipeline.py --master spark://host:7077``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field

from sqsqueue import Broker, FifoQueue, ManualClock

EVENTS = 2_000
CUSTOMERS = 40
MALFORMED_RATE = 0.03
BATCH = 250
FAIL_ON_BATCH = 3
MAX_RECEIVES = 3


@dataclass
class Summary:
    """What the run did, for the final report and for tests."""

    produced: int = 0
    malformed_produced: int = 0
    replay_deduplicated: int = 0
    batches: int = 0
    injected_failures: int = 0
    dead_lettered: int = 0
    totals: dict[str, tuple[int, int]] = field(default_factory=dict)
    expected: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return self.totals == self.expected


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


def run(master: str = "local[2,2]", events: int = EVENTS) -> Summary:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sqsqueue.spark import local_session, stream_batches, write_dataframe

    summary = Summary()

    step(f"Starting Spark ({master})")
    spark = local_session(master, app_name="sqsqueue-demo")
    spark.sparkContext.setLogLevel("ERROR")

    clock = ManualClock(start=1_700_000_000.0)
    broker = Broker(clock=clock, account_id="123456789012")
    dlq = broker.create_queue("orders-dlq.fifo", fifo_queue=True)
    orders = broker.create_queue(
        "orders.fifo",
        fifo_queue=True,
        visibility_timeout=120,
        redrive_policy={"deadLetterTargetArn": dlq.arn, "maxReceiveCount": MAX_RECEIVES},
    )
    assert isinstance(orders, FifoQueue)

    step(f"Producer: writing {events} order events from a DataFrame into {orders.name}")
    rows = make_events(events)
    summary.expected = expected_totals(rows)
    summary.malformed_produced = sum(1 for *_, b in rows if not b.endswith("}"))
    df = spark.createDataFrame(rows, "seq long, message_group_id string, body string").repartition(
        4
    )
    first = write_dataframe(df, orders, sink_id="order-producer", batch_id=1, order_by="seq")
    summary.produced = first.sent
    print(f"   sent {first.sent} messages ({summary.malformed_produced} malformed on purpose)")

    step("Producer replay: the same Spark batch runs again, as after a task failure")
    replay = write_dataframe(df, orders, sink_id="order-producer", batch_id=1, order_by="seq")
    summary.replay_deduplicated = sum(
        1 for a, b in zip(first.message_ids, replay.message_ids, strict=True) if a == b
    )
    stored = orders.get_attributes(["ApproximateNumberOfMessages"])["ApproximateNumberOfMessages"]
    print(
        f"   {summary.replay_deduplicated}/{replay.sent} rows recognised as duplicates; "
        f"the queue still holds {stored} messages"
    )

    step(f"Consumer: micro-batches of up to {BATCH}, aggregated per customer with Spark")
    schema = T.StructType(
        [
            T.StructField("order_id", T.LongType()),
            T.StructField("customer", T.StringType()),
            T.StructField("amount_cents", T.LongType()),
        ]
    )
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failed_once = False
    for batch in stream_batches(spark, orders, max_messages=BATCH):
        summary.batches += 1
        try:
            with batch:
                parsed = batch.df.select(
                    "message_id", F.from_json("body", schema, {"mode": "PERMISSIVE"}).alias("e")
                )
                bad = [
                    r.message_id
                    for r in parsed.where(F.col("e").isNull() | F.col("e.customer").isNull())
                    .select("message_id")
                    .collect()
                ]
                batch.reject(bad)
                agg = (
                    parsed.where(F.col("e.customer").isNotNull())
                    .groupBy("e.customer")
                    .agg(F.count("*").alias("n"), F.sum("e.amount_cents").alias("cents"))
                    .collect()
                )
                if summary.batches == FAIL_ON_BATCH and not failed_once:
                    failed_once = True
                    raise RuntimeError("injected failure while writing results")
            # The batch committed (its messages are deleted): apply its result.
            for r in agg:
                totals[r["customer"]][0] += r["n"]
                totals[r["customer"]][1] += r["cents"]
            print(
                f"   batch {summary.batches:>2}: {len(batch):>3} messages, "
                f"{len(batch) - len(bad):>3} counted, {len(bad):>2} malformed released"
            )
        except RuntimeError as exc:
            summary.injected_failures += 1
            print(
                f"   batch {summary.batches:>2}: FAILED ({exc}); {len(batch)} messages redelivered"
            )

    summary.dead_lettered = len(dlq)
    summary.totals = {c: (n, s) for c, (n, s) in totals.items()}

    out = tempfile.mkdtemp(prefix="sqsqueue-demo-")
    spark.createDataFrame(
        [(c, n, s) for c, (n, s) in sorted(summary.totals.items())],
        "customer string, orders long, amount_cents long",
    ).coalesce(1).write.mode("overwrite").csv(out, header=True)
    print(f"   per-customer totals written to {out}")

    step("Summary")
    good = sum(n for n, _ in summary.expected.values())
    counted = sum(n for n, _ in summary.totals.values())
    print(f"   events produced          {summary.produced}")
    print(f"   replay duplicates        {summary.replay_deduplicated} (none stored twice)")
    print(
        f"   micro-batches            {summary.batches} ({summary.injected_failures} failed once)"
    )
    print(f"   good events counted      {counted} of {good}")
    print(f"   malformed -> DLQ         {summary.dead_lettered} of {summary.malformed_produced}")
    verdict = summary.exactly_once and summary.dead_lettered == summary.malformed_produced
    print("   every good event counted exactly once: " + ("YES" if summary.exactly_once else "NO"))
    print(f"\n{'OK' if verdict else 'MISMATCH'}: pipeline verified" if verdict else "\nMISMATCH")
    spark.stop()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--master", default="local[2,2]", help="Spark master (default: local[2,2])")
    parser.add_argument("--events", type=int, default=EVENTS, help="order events to produce")
    args = parser.parse_args(argv)
    summary = run(args.master, args.events)
    ok = summary.exactly_once and summary.dead_lettered == summary.malformed_produced
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
