package kafkalog.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** A Spark partition: consecutive work items (JSON, as the core planned them) and their bytes. */
final class ItemsPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  final String items;
  final long bytes;

  ItemsPartition(String items, long bytes) {
    this.items = items;
    this.bytes = bytes;
  }
}
