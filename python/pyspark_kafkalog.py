"""Makes ``format("kafkalog")`` work in any Spark session where kafkalog is installed: at
session start PySpark imports every top-level module whose name starts with ``pyspark_`` and
registers its ``DefaultSource``."""

from kafkalog.spark.source import KafkaLogDataSource as DefaultSource

__all__ = ["DefaultSource"]
