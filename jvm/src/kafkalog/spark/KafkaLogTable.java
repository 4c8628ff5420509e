package kafkalog.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The files a query names. Batch and micro-batch streaming reads are this source's own, typed
 * keys and values (keyFormat, valueFormat, ...) included, and so are batch and streaming
 * writes ({@link KafkaLogWriteBuilder}): with the jar on the classpath, {@code
 * format("kafkalog")} is this source for every use (docs/spark-jvm.md). {@link #python()}
 * makes the Python data source's table for the same options.
 */
final class KafkaLogTable implements SupportsRead, SupportsWrite {
  private final StructType schema;
  private final Transform[] partitioning;
  private final Map<String, String> properties;
  private Table python;

  KafkaLogTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    this.schema = schema;
    this.partitioning = partitioning;
    this.properties = properties;
  }

  /** The Python data source's table for the same options (made on first use). */
  Table python() {
    if (python == null) {
      python = pythonSource().getTable(schema, partitioning, properties);
    }
    return python;
  }

  /** The Python data source of the same name. */
  static PythonDataSourceV2 pythonSource() {
    PythonDataSourceV2 source = new PythonDataSourceV2();
    source.setShortName("kafkalog");
    return source;
  }

  @Override
  public String name() {
    return "kafkalog";
  }

  @Override
  @SuppressWarnings("deprecation") // columns() is derived from it
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.MICRO_BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
        TableCapability.STREAMING_WRITE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new KafkaLogScanBuilder(options, schema);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new KafkaLogWriteBuilder(info); // batch and streaming writes are this source's own
  }
}
