"""The ``sqs`` data source against the driver-side path: rows per second, 1/2/4 partitions.

Run through ``python3 benchmarks`` (``--only datasource`` alone; ``--quick`` skips
it with the other Spark script) or ``.venv/bin/python benchmarks/bench_datasource.py``.
Needs the ``spark`` and ``bench`` extras (PySpark 4, boto3, moto's server) and Java 17+.

In one ``local_session("local[4]")`` (4 task slots on this 2-core machine, so 4
partitions can run at once), after an untimed warm-up that starts the Python
workers:

* write, 100-byte bodies, standard queue:
  - the driver-side path, ``write_dataframe`` into an in-process ``Queue``
    (rows pulled to the driver with ``toLocalIterator``);
  - ``df.write.format("sqs")`` from 1, 2 and 4 partitions to a broker served
    over HTTP in this process (system clock);
  - the same to moto's ``ThreadedMotoServer`` as the endpoint;
* read:
  - the driver-side path, ``stream_batches`` (1,000 per batch) with ``count()``;
  - ``readStream.format("sqs")`` with ``trigger(availableNow=True)`` into the
    ``noop`` sink, ``numPartitions`` 1, 2 and 4, 1,000 messages per micro-batch,
    from the served broker and (fewer rows: its receive scans the queue) moto;
  - the same from the served broker with 10 ms added to every call (a network
    round trip), ``receiveConcurrency`` 1 and 4;
* FIFO writes from one partition: 1 and 20 message groups, and 1 group with
  ``strictGroupOrder=true`` (one row of a group per call).

Writes this script's section of ``benchmarks/RESULTS.md``. No targets.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import (  # noqa: E402
    Table,
    command,
    dur,
    loadavg,
    machine,
    progress,
    publish,
    rate,
    section_args,
)

from sqsqueue import Broker, ManualClock, Queue, SystemClock  # noqa: E402

SECTION = 'Spark on executors: the sqs data source (format("sqs"))'
perf = time.perf_counter
PARTITIONS = (1, 2, 4)


@dataclass(frozen=True)
class Sizes:
    rows: int
    moto_write_rows: int  # moto's server is two orders of magnitude slower
    moto_read_rows: int  # and its receive and delete scan the queue
    latency_rows: int  # reads with a round trip added to every call


FULL = Sizes(rows=10_000, moto_write_rows=1_000, moto_read_rows=200, latency_rows=5_000)
QUICK = Sizes(rows=1_000, moto_write_rows=200, moto_read_rows=100, latency_rows=500)


#: The round trip added to every call of the served broker in the latency rows
#: (an AWS region is a few to tens of milliseconds away).
LATENCY = 0.010


@contextlib.contextmanager
def added_latency(seconds: float) -> Iterator[None]:
    """Every request the served endpoint answers waits ``seconds`` first, as a
    call to a remote SQS would (the server is an asyncio one: only that request
    waits)."""
    from sqsqueue.server import Endpoint

    real = Endpoint._call

    async def slow(self: Any, client: Any, operation: str, params: dict[str, Any]) -> Any:
        await asyncio.sleep(seconds)
        return await real(self, client, operation, params)

    Endpoint._call = slow  # type: ignore[method-assign]
    try:
        yield
    finally:
        Endpoint._call = real  # type: ignore[method-assign]


def report(what: str, figure: str) -> None:
    progress("datasource", what, figure)


def main(argv: list[str] | None = None) -> int:
    args = section_args("bench_datasource.py", argv, "(no profiles here; ignored)")
    sizes = QUICK if args.quick else FULL
    try:
        import pyspark
        from moto.server import ThreadedMotoServer

        from sqsqueue import spark as sqspark

        sqspark.check_java()
    except (ImportError, RuntimeError) as exc:
        print(f"[bench] datasource: skipped: {exc} (needs the spark and bench extras, Java 17+)")
        return 0
    import os

    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    header = machine()
    load_start = loadavg()
    for key, value in header:
        print(f"[bench] {key}: {value}", flush=True)
    t_all = perf()
    spark = sqspark.local_session("local[4]")
    spark.sparkContext.setLogLevel("ERROR")
    sqspark.register(spark)
    from pyspark.sql import functions as F

    broker = Broker(clock=SystemClock(), account_id="123456789012")
    server = broker.serve(host="127.0.0.1", port=0, credentials=None)
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    moto_host, moto_port = moto.get_host_and_port()
    moto_url = f"http://{moto_host}:{moto_port}"
    import boto3

    moto_client = boto3.client(
        "sqs",
        endpoint_url=moto_url,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    )
    names = iter(range(1_000_000))

    def served_queue() -> tuple[dict[str, str], Callable[[], int]]:
        q = broker.create_queue(f"bench-{next(names)}")
        opts = {"queueUrl": q.url, "endpointUrl": server.endpoint_url}
        return opts, lambda: len(q)

    def moto_queue() -> tuple[dict[str, str], Callable[[], int]]:
        url = moto_client.create_queue(QueueName=f"bench-{next(names)}")["QueueUrl"]

        def stored() -> int:
            a = moto_client.get_queue_attributes(
                QueueUrl=url,
                AttributeNames=[
                    "ApproximateNumberOfMessages",
                    "ApproximateNumberOfMessagesNotVisible",
                ],
            )["Attributes"]
            return int(a["ApproximateNumberOfMessages"]) + int(
                a["ApproximateNumberOfMessagesNotVisible"]
            )

        return {"queueUrl": url, "endpointUrl": moto_url, "region": "us-east-1"}, stored

    creds = {"accessKeyId": "bench", "secretAccessKey": "bench"}

    def frame(n: int, partitions: int) -> Any:
        bodies = F.concat(F.lpad(F.col("id").cast("string"), 10, "0"), F.lit("x" * 90))
        return spark.range(0, n, 1, partitions).select(bodies.alias("body")).cache()

    results: list[list[str]] = []

    def timed(
        path: str, what: str, n: int, fn: Callable[[], None], check: Callable[[], None]
    ) -> None:
        gc.collect()
        t0 = perf()
        fn()
        took = perf() - t0
        check()
        results.append([path, what, f"{n:,}", dur(took), rate(n / took)])
        report(f"{path}: {what}", f"{rate(n / took)} rows/s")

    def ds_write(df: Any, opts: dict[str, str]) -> Callable[[], None]:
        return lambda: df.write.format("sqs").options(**opts, **creds).mode("append").save()

    def ds_read(opts: dict[str, str], partitions: int) -> Callable[[], None]:
        def run() -> None:
            with tempfile.TemporaryDirectory() as ck:
                query = (
                    spark.readStream.format("sqs")
                    .options(
                        **opts,
                        **creds,
                        numPartitions=str(partitions),
                        maxMessagesPerBatch="1000",
                        waitTimeSeconds="1",
                    )
                    .load()
                    .writeStream.format("noop")
                    .option("checkpointLocation", ck)
                    .trigger(availableNow=True)
                    .start()
                )
                query.awaitTermination()

        return run

    def fill(opts: dict[str, str], n: int) -> None:
        frame(n, 4).write.format("sqs").options(**opts, **creds).mode("append").save()

    n = sizes.rows
    # Warm-up: JVM JIT, Python workers, boto3 imports in the workers (not timed).
    warm_opts, _ = served_queue()
    fill(warm_opts, 200)
    ds_read(warm_opts, 2)()
    report("warm-up pass (not timed)", f"{perf() - t_all:.0f} s so far")

    def expect(stored: Callable[[], int], want: int, what: str) -> Callable[[], None]:
        def check() -> None:
            got = stored()
            if got != want:
                sys.exit(f"{what}: {got} messages in the queue, expected {want}")

        return check

    def driver_write(df: Any, q: Queue) -> Callable[[], None]:
        def run() -> None:
            sqspark.write_dataframe(df, q, batch_id=1)

        return run

    # -- writes --
    for partitions in PARTITIONS:
        df = frame(n, partitions)
        df.count()
        if partitions == 1:
            q = Queue(f"driver-{next(names)}", clock=ManualClock(start=1_700_000_000.0))
            timed(
                "driver-side",
                "`write_dataframe` -> in-process `Queue`",
                n,
                driver_write(df, q),
                expect(q.__len__, n, "driver write"),
            )
        opts, stored = served_queue()
        timed(
            "write, served sqsqueue",
            f'`format("sqs")`, {partitions} partition(s)',
            n,
            ds_write(df, opts),
            expect(stored, n, "served write"),
        )
        df.unpersist()
        w = sizes.moto_write_rows
        small = frame(w, partitions)
        small.count()
        opts, stored = moto_queue()
        timed(
            "write, moto server",
            f'`format("sqs")`, {partitions} partition(s)',
            w,
            ds_write(small, opts),
            expect(stored, w, "moto write"),
        )
        small.unpersist()

    # -- reads --
    q = Queue(f"driver-{next(names)}", clock=ManualClock(start=1_700_000_000.0))
    sqspark.write_dataframe(frame(n, 2), q, batch_id=1)

    def driver_read() -> None:
        for batch in sqspark.stream_batches(spark, q, max_messages=1000):
            with batch:
                batch.df.count()

    timed(
        "driver-side",
        "`stream_batches(max_messages=1000)` <- in-process `Queue`, `count()` each",
        n,
        driver_read,
        expect(q.__len__, 0, "driver read"),
    )
    for partitions in PARTITIONS:
        opts, stored = served_queue()
        fill(opts, n)
        timed(
            "read, served sqsqueue",
            f'`readStream.format("sqs")`, numPartitions={partitions}, into `noop`',
            n,
            ds_read(opts, partitions),
            expect(stored, 0, "served read"),
        )
    # -- a network round trip per call: what receiveConcurrency is for --
    lag = sizes.latency_rows
    for concurrency in (1, 4):
        opts, stored = served_queue()
        fill(opts, lag)
        with added_latency(LATENCY):
            timed(
                f"read, served sqsqueue, {LATENCY * 1e3:.0f} ms added to each call",
                f'`readStream.format("sqs")`, numPartitions=2, receiveConcurrency={concurrency}',
                lag,
                ds_read({**opts, "receiveConcurrency": str(concurrency)}, 2),
                expect(stored, 0, "served read with latency"),
            )
    # -- FIFO writes: groups per partition, and strictGroupOrder --
    for groups, strict in ((1, False), (20, False), (1, True)):
        fifo_q = broker.create_queue(f"bench-{next(names)}.fifo", fifo_queue=True)
        # The body starts with the row's number: row i goes to group i % groups.
        group = (F.substring("body", 1, 10).cast("long") % groups).cast("string")
        fifo_df = frame(n, 1).withColumn("message_group_id", F.concat(F.lit("g"), group))
        fifo_df.count()
        opts = {"queueUrl": fifo_q.url, "endpointUrl": server.endpoint_url}
        if strict:
            opts["strictGroupOrder"] = "true"
        timed(
            "write, served sqsqueue, FIFO",
            f"1 partition, {groups} group(s)" + (", strictGroupOrder=true" if strict else ""),
            n,
            ds_write(fifo_df, opts),
            expect(fifo_q.__len__, n, "FIFO write"),
        )
        fifo_df.unpersist()
    m = sizes.moto_read_rows
    for partitions in PARTITIONS:
        opts, stored = moto_queue()
        fill(opts, m)
        timed(
            "read, moto server",
            f'`readStream.format("sqs")`, numPartitions={partitions}, into `noop`',
            m,
            ds_read(opts, partitions),
            expect(stored, 0, "moto read"),
        )
    spark.stop()
    server.close()
    moto.stop()
    elapsed = perf() - t_all

    table = Table(
        f"Rows per second through Spark, {n:,} rows (moto: {sizes.moto_write_rows:,} "
        f"written, {m:,} read)",
        "One timed run of each (the machine is shared, so read the figures as orders of "
        'magnitude), after an untimed warm-up, in one `local_session("local[4]")`. '
        "100-byte bodies, standard queues. The served broker runs on the system clock "
        "in this process, served by `Broker.serve()`; moto's `ThreadedMotoServer` runs in this "
        "process too. Every run checks the queue afterwards (all rows stored; all "
        "messages deleted).",
        ("path", "what runs", "rows", "time", "rows/s"),
        rows=results,
    )
    table.notes.append(
        "Writes: each task sends its partition with SendMessageBatch (10 a call) over "
        "HTTP; the driver-side path sends from the driver, in process, with no HTTP. With "
        "both CPU cores shared by the Spark JVM, the Python workers and the HTTP server "
        "(which runs in the driver's process, under its GIL), more partitions help only "
        "as far as the server keeps up: against AWS the server side is not on this machine."
    )
    table.notes.append(
        "Reads: the driver-side Python process Spark keeps for the stream receives (it must "
        "hold the receipt handles until the commit) and deletes after the commit; "
        "executors only build the rows, so `numPartitions` changes little here. The driver-"
        "side path pays one `createDataFrame` job per batch instead."
    )
    table.notes.append(
        f"Reads with {LATENCY * 1e3:.0f} ms added to each call stand for a queue a network "
        "round trip away, as AWS is: there `receiveConcurrency` (ReceiveMessage calls in "
        "flight at once while a batch fills, deletes likewise) multiplies the read rate, "
        "where on one machine the CPU is the limit."
    )
    table.notes.append(
        "FIFO writes from one partition: calls carry up to 10 rows of a group after each "
        "row was checked against the queue's content rules, so one group goes as fast as "
        "twenty; `strictGroupOrder=true` sends one row of a group per call (no failure of "
        "any kind can then reorder a group), which a single-group partition pays for."
    )
    text = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Generated by `{command('benchmarks/bench_datasource.py', args.quick)}` in "
            f"{elapsed:.0f} s (`benchmarks/bench_datasource.py`; PySpark {pyspark.__version__}, "
            f"master `local[4]`). Load average at the start: {load_start}; at the end: "
            f"{loadavg()}.",
            "",
            table.markdown(level=3),
        ]
    )
    publish(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
