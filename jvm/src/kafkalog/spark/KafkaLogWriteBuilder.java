package kafkalog.spark;

import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * {@code df.write.format("kafkalog")} and {@code writeStream.format("kafkalog")}: {@code
 * mode("append")} continues the topic-partitions there, {@code mode("overwrite")} (Spark's
 * truncate) replaces the topic-partitions written and leaves the others, as the Python data
 * source does.
 */
final class KafkaLogWriteBuilder implements WriteBuilder, SupportsTruncate {
  private final LogicalWriteInfo info;
  private boolean overwrite;

  KafkaLogWriteBuilder(LogicalWriteInfo info) {
    this.info = info;
  }

  @Override
  public WriteBuilder truncate() {
    overwrite = true;
    return this;
  }

  @Override
  public Write build() {
    return new KafkaLogWrite(info.schema(), info.options().asCaseSensitiveMap(), overwrite);
  }
}
