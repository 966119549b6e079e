"""Tests of the Spark connector (``sqsqueue.spark``); they need pyspark and Java."""
