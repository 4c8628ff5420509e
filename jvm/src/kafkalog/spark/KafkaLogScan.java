package kafkalog.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A read: a batch read, planned on the driver when Spark asks for the partitions (options are
 * checked then), or a micro-batch stream ({@link KafkaLogStream}, options checked when Spark
 * makes it). Typed keys and values are decoded by the core in each task, with the options the
 * driver resolved ({@link Schemas}).
 */
final class KafkaLogScan implements Scan, Batch {
  private final CaseInsensitiveStringMap raw;
  private final Schemas schemas;
  private final StructType columns;
  private final Planner.Pushed pushed;
  private final Predicate[] predicates;
  private Options options;
  private InputPartition[] planned;

  KafkaLogScan(
      CaseInsensitiveStringMap raw,
      Schemas schemas,
      StructType columns,
      Planner.Pushed pushed,
      Predicate[] predicates) {
    this.raw = raw;
    this.schemas = schemas;
    this.columns = columns;
    this.pushed = pushed;
    this.predicates = predicates;
  }

  @Override
  public StructType readSchema() {
    return columns;
  }

  @Override
  public String description() {
    StringBuilder s = new StringBuilder("kafkalog ").append(raw.getOrDefault("path", "paths"));
    s.append(" columns=").append(java.util.Arrays.asList(columns.fieldNames()));
    for (StructField f : columns.fields()) {
      DataType whole = schemas.every.apply(f.name()).dataType();
      if (schemas.values != null && (f.name().equals("key") || f.name().equals("value"))
          || !whole.sameType(f.dataType())) {
        // Typed (and nested columns pruned): what the core hands Spark.
        s.append(" read=").append(f.name()).append(':').append(f.dataType().simpleString());
      }
    }
    List<String> p = new ArrayList<>();
    for (Predicate x : predicates) {
      p.add(x.toString());
    }
    s.append(" PushedPredicates=").append(p);
    return s.toString();
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return new CustomMetric[] {new LogBytesMetric()};
  }

  @Override
  public Batch toBatch() {
    options = Options.parse(raw.asCaseSensitiveMap(), false);
    return this;
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    // Spark pushes neither columns nor predicates into a streaming scan: all columns are read.
    return new KafkaLogStream(Options.parse(raw.asCaseSensitiveMap(), true), schemas, columns);
  }

  @Override
  public InputPartition[] planInputPartitions() {
    if (planned == null) {
      planned = partitionsOf(Planner.plan(options, pushed));
    }
    return planned;
  }

  /** Spark partitions of grouped work items (the JSON each task's reader is opened with). */
  static InputPartition[] partitionsOf(List<List<ArrayNode>> groups) {
    InputPartition[] out = new InputPartition[groups.size()];
    for (int i = 0; i < groups.size(); i++) {
      ArrayNode items = Options.JSON.createArrayNode();
      long bytes = 0;
      for (ArrayNode item : groups.get(i)) {
        items.add(item);
        bytes += item.get(6).asLong();
      }
      out[i] = new ItemsPartition(items.toString(), bytes);
    }
    return out;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new ReaderFactory(readRequest(options, schemas, columns), columns);
  }

  /**
   * The reader options every task's request carries (its items are added per partition): the
   * columns Spark reads (none for {@code count(*)}: the core then decodes offsets to count
   * rows by), the typed-value options resolved, and the nested columns pruned.
   */
  static String readRequest(Options o, Schemas schemas, StructType columns) {
    ObjectNode r = Options.JSON.createObjectNode();
    ArrayNode names = r.putArray("columns");
    ObjectNode prune = r.putObject("prune");
    for (StructField f : columns.fields()) {
      names.add(f.name());
      DataType whole = schemas.every.apply(f.name()).dataType();
      if (!whole.sameType(f.dataType())) {
        prune.set(f.name(), Options.parseJson(f.dataType().json()));
      }
    }
    if (schemas.values != null) {
      r.set("values", Options.parseJson(schemas.values));
    }
    r.put("binary_view", true);
    r.put("batch_size", o.batchSize);
    r.put("include_control", o.includeControl);
    r.put("check_crc", o.checkCrc);
    r.put("on_corrupt", o.onCorrupt);
    r.put("max_decompressed_size", o.maxDecompressedSize);
    ObjectNode storage = r.putObject("storage");
    for (Map.Entry<String, String> e : o.storage.entrySet()) {
      storage.put(e.getKey(), e.getValue());
    }
    return r.toString();
  }
}
