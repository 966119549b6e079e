"""Clear errors: bad DataFrames, rows the queue refuses, unsupported environments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sqsqueue import Broker
from sqsqueue.spark import (
    QueueBatch,
    SinkError,
    SparkSupportError,
    check_java,
    foreach_batch_sink,
    write_dataframe,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


class TestSinkSchema:
    """The sink checks the DataFrame's columns before running any Spark job."""

    def test_missing_body_column(self, spark: SparkSession, broker: Broker) -> None:
        """No ``body`` column: SparkSupportError naming the columns there are."""
        queue = broker.create_queue("err-nobody")
        df = spark.createDataFrame([("x", 1)], "payload string, n int")
        with pytest.raises(SparkSupportError, match=r"no 'body' column \(columns: payload, n\)"):
            write_dataframe(df, queue, batch_id=1)
        assert len(queue) == 0

    def test_body_must_be_a_string(self, spark: SparkSession, broker: Broker) -> None:
        """An int ``body``: SparkSupportError naming the type and how to fix it."""
        queue = broker.create_queue("err-intbody")
        df = spark.createDataFrame([(1,)], "body int")
        with pytest.raises(SparkSupportError, match="must be a string, not int"):
            write_dataframe(df, queue, batch_id=1)
        sink = foreach_batch_sink(queue)
        with pytest.raises(SparkSupportError, match="'body' column"):
            sink(df, 0)
        assert len(queue) == 0


class TestRowsTheQueueRefuses:
    """Per-row failures are collected into one SinkError after every other row was sent."""

    def test_too_large_row(self, spark: SparkSession, broker: Broker) -> None:
        """maximum_message_size=1024 and a 2000-character body: SinkError lists that
        row (its position in ``order_by`` order) and the other rows were sent."""
        queue = broker.create_queue("err-big", maximum_message_size=1024)
        rows = [(i, "x" * 2000 if i == 13 else f"ok-{i}") for i in range(25)]
        df = spark.createDataFrame(rows, "n int, body string")
        with pytest.raises(SinkError) as info:
            write_dataframe(df, queue, order_by="n", batch_id=1)
        err = info.value
        assert err.sent == 24
        assert [f.id for f in err.failures] == ["r13"]
        assert "r13" in str(err) and "24 were" in str(err)
        assert sorted(m.body for m in queue.inspect()) == sorted(
            f"ok-{i}" for i in range(25) if i != 13
        )

    def test_rows_over_the_batch_payload_limit(self, spark: SparkSession, broker: Broker) -> None:
        """Rows whose sizes add up to more than a SendMessageBatch may carry (1 MiB)
        are still all sent; a row over the queue's 1 MiB limit is reported alone."""
        queue = broker.create_queue("err-batch-bytes")
        big = 600_000
        rows = [
            (0, "a" * big),
            (1, "b" * big),
            (2, "small"),
            (3, "c" * (1_048_576 + 1)),  # over MaximumMessageSize
            (4, "d" * big),
        ]
        df = spark.createDataFrame(rows, "n int, body string").coalesce(1)
        with pytest.raises(SinkError) as info:
            write_dataframe(df, queue, order_by="n", batch_id=1)
        assert [f.id for f in info.value.failures] == ["r3"]
        assert info.value.sent == 4
        assert sorted(len(m.body) for m in queue.inspect()) == [5, big, big, big]

    def test_null_body(self, spark: SparkSession, broker: Broker) -> None:
        """A row whose body is null fails alone with MissingParameter."""
        queue = broker.create_queue("err-nullbody")
        df = spark.createDataFrame([(0, "a"), (1, None), (2, "c")], "n int, body string")
        with pytest.raises(SinkError) as info:
            write_dataframe(df, queue, order_by="n", batch_id=1)
        assert [(f.id, f.code) for f in info.value.failures] == [("r1", "MissingParameter")]
        assert sorted(m.body for m in queue.inspect()) == ["a", "c"]

    def test_fifo_row_without_group(self, spark: SparkSession, broker: Broker) -> None:
        """A FIFO row with a null message_group_id fails alone (SQS fails the whole
        SendMessageBatch request for it); the rows around it are sent."""
        queue = broker.create_queue("err-nogroup.fifo", fifo_queue=True)
        df = spark.createDataFrame(
            [(0, "a", "g"), (1, "b", None), (2, "c", "g")],
            "n int, body string, message_group_id string",
        )
        with pytest.raises(SinkError) as info:
            write_dataframe(df, queue, order_by="n", batch_id=1)
        assert [f.id for f in info.value.failures] == ["r1"]
        assert [m.body for m in queue.inspect()] == ["a", "c"]

    def test_deduplication_id_on_a_standard_queue(
        self, spark: SparkSession, broker: Broker
    ) -> None:
        """Columns are sent as given on either queue type, as the data source's
        write tasks send them (test_writer.py): a ``message_deduplication_id`` on
        a standard queue is refused by the queue for that row alone."""
        queue = broker.create_queue("err-dedup-std")
        df = spark.createDataFrame(
            [(0, "a", "id-1"), (1, "b", None)],
            "n int, body string, message_deduplication_id string",
        )
        with pytest.raises(SinkError) as info:
            write_dataframe(df, queue, order_by="n", batch_id=1)
        assert [(f.id, f.code) for f in info.value.failures] == [("r0", "InvalidParameterValue")]
        assert info.value.sent == 1
        assert [m.body for m in queue.inspect()] == ["b"]


class TestEnvironment:
    """Environments the connector cannot work in are refused with a clear message."""

    def test_spark_connect_session_refused(self, broker: Broker) -> None:
        """A Spark Connect session (its class lives in ``pyspark.sql.connect``) is
        refused: callbacks would run in the Connect server, not in this process."""
        connect_session = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})()
        connect_df = type(
            "DataFrame",
            (),
            {"__module__": "pyspark.sql.connect.dataframe", "sparkSession": connect_session},
        )()
        queue = broker.create_queue("err-connect")
        fake: Any = connect_session
        with pytest.raises(SparkSupportError, match="Spark Connect"):
            QueueBatch(fake, queue)
        with pytest.raises(SparkSupportError, match="Spark Connect"):
            write_dataframe(connect_df, queue, batch_id=1)

    def test_not_a_session(self, broker: Broker) -> None:
        """Anything else that is not a SparkSession is refused too."""
        queue = broker.create_queue("err-notsession")
        with pytest.raises(SparkSupportError, match="Expected a SparkSession"):
            QueueBatch(object(), queue)  # type: ignore[arg-type]

    def test_java_missing(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """check_java() raises SparkSupportError with no java on PATH and no JAVA_HOME."""
        monkeypatch.delenv("JAVA_HOME", raising=False)
        monkeypatch.setenv("PATH", str(tmp_path))
        with pytest.raises(SparkSupportError, match="Java was not found"):
            check_java()

    def test_java_home_is_used(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """An executable JAVA_HOME/bin/java is preferred over PATH."""
        java = tmp_path / "bin" / "java"
        java.parent.mkdir()
        java.write_text("#!/bin/sh\n")
        java.chmod(0o755)
        monkeypatch.setenv("JAVA_HOME", str(tmp_path))
        assert check_java() == str(java)

    def test_pyspark_missing(self) -> None:
        """Importing sqsqueue.spark without pyspark is an ImportError that says
        how to install the extra."""
        code = "import sys; sys.modules['pyspark'] = None; import sqsqueue.spark"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, "-c", code],
            check=False,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode != 0
        assert "ImportError" in proc.stderr
        assert "pip install 'sqsqueue[spark]'" in proc.stderr
