"""The columns of the ``sqs`` DataFrames, shared by the driver-side helpers
(``sqsqueue.spark``) and the data source on the executors
(``sqsqueue._spark_datasource``). Needs PySpark.
"""

from __future__ import annotations

from pyspark.sql import types as T

OPTIONAL_COLUMNS = (
    "message_group_id",
    "message_deduplication_id",
    "message_attributes",
    "delay_seconds",
)

#: The schema of a received batch's DataFrame.
SOURCE_SCHEMA = T.StructType(
    [
        T.StructField("queue_name", T.StringType(), False),
        T.StructField("message_id", T.StringType(), False),
        T.StructField("receipt_handle", T.StringType(), False),
        T.StructField("body", T.StringType(), False),
        T.StructField("md5_of_body", T.StringType(), False),
        T.StructField("message_group_id", T.StringType(), True),
        T.StructField("message_deduplication_id", T.StringType(), True),
        T.StructField("sequence_number", T.StringType(), True),
        T.StructField("sent_timestamp", T.TimestampType(), False),
        T.StructField("approximate_receive_count", T.IntegerType(), False),
        T.StructField("approximate_first_receive_timestamp", T.TimestampType(), True),
        #: User attributes; Binary values are base64 strings.
        T.StructField("message_attributes", T.MapType(T.StringType(), T.StringType()), False),
        #: All system attributes, as SQS's strings.
        T.StructField("attributes", T.MapType(T.StringType(), T.StringType()), False),
    ]
)
