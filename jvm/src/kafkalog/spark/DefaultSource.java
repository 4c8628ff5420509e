package kafkalog.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("kafkalog")} inside the JVM: Kafka log files read as Spark's Kafka
 * source reads a topic, with its options and schema, decoded by the kafkalog core into Arrow
 * buffers that Spark's column vectors read in place. Spark finds it by the short name {@code
 * kafkalog} (META-INF/services) when this jar is on the classpath; it then wins over the Python
 * data source of the same name, which Spark only looks up when no JVM source has the name.
 * It streams too ({@link KafkaLogStream}), reads typed keys and values (the core decodes
 * them) and writes ({@link KafkaLogWrite}): docs/spark-jvm.md's table of which source runs what.
 */
public final class DefaultSource implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "kafkalog";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return Schemas.of(options.asCaseSensitiveMap()).schema; // typed by the registry, if asked
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true; // .schema(...) selects columns
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new KafkaLogTable(schema, partitioning, properties);
  }
}
