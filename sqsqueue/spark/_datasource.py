"""The ``sqs`` PySpark data source, the class :func:`sqsqueue.spark.register`
gives Spark: it parses the options (:mod:`._options`), refuses what it does not
offer (batch reads, save mode overwrite, a DataFrame without a string ``body``),
checks the queue can be reached before any task runs, and hands out the write
tasks (:mod:`._writer`) and the stream reader (:mod:`._reader`). Spark pickles
it by reference: the workers import it from this module, so it must stay
importable as ``sqsqueue.spark._datasource.SqsDataSource``. What it does, with
its options and guarantees, is in ``docs/spark.md``.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from sqsqueue.spark._options import Connection, SqsOptionError, WriteOptions
from sqsqueue.spark._reader import SqsStreamReader
from sqsqueue.spark._rows import SOURCE_SCHEMA, sink_schema_problem
from sqsqueue.spark._writer import SqsBatchWriter, SqsStreamWriter

__all__ = ["NAME", "SqsDataSource"]

NAME = "sqs"


class SqsDataSource(DataSource):
    """``format("sqs")``: write DataFrames to an SQS queue, stream messages out
    of one. Every option is in ``docs/spark.md``."""

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.connection = Connection.from_options(options)

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return SOURCE_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        raise SqsOptionError(
            "sqs data source: batch reads are not supported: nothing would tell the source "
            "when the rows were used, so it could only delete messages before processing "
            "(loss) or never (redelivery). Use spark.readStream.format('sqs') with "
            ".trigger(availableNow=True) to drain a queue, deleting after each commit."
        )

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        _check_sink(schema, overwrite)
        self.connection.check()
        return SqsBatchWriter(
            self.connection, WriteOptions.from_options(self.options, streaming=False)
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        _check_sink(schema, overwrite)
        self.connection.check()
        return SqsStreamWriter(
            self.connection, WriteOptions.from_options(self.options, streaming=True)
        )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SqsStreamReader(self.connection, self.options)


def _check_sink(schema: StructType, overwrite: bool) -> None:
    if overwrite:
        raise SqsOptionError(
            "sqs data source: save mode overwrite is not supported: a queue can only be "
            'appended to; use .mode("append")'
        )
    problem = sink_schema_problem(schema)
    if problem is not None:
        raise SqsOptionError(f"sqs data source: {problem}")
