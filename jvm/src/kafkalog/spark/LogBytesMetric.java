package kafkalog.spark;

import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The bytes of Kafka log a scan's tasks read (their work items' sizes), summed over tasks: a
 * metric of the scan node in Spark's SQL UI, beside Spark's own row counts.
 */
public final class LogBytesMetric extends CustomSumMetric {
  static final String NAME = "logBytesRead";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "bytes of Kafka log read";
  }

  /** A task's value. */
  static CustomTaskMetric of(long bytes) {
    return new CustomTaskMetric() {
      @Override
      public String name() {
        return NAME;
      }

      @Override
      public long value() {
        return bytes;
      }
    };
  }
}
