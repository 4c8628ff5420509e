package kafkalog.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * kafkalog's columns as Spark types: Spark's Kafka source schema (key, value, topic, partition,
 * offset, timestamp, timestampType, and headers with includeHeaders), then the batch metadata
 * columns; the same as the Python source's {@code schema.py}, every field nullable.
 */
final class Schemas {
  private Schemas() {}

  static final List<String> SPARK_COLUMNS =
      Arrays.asList("key", "value", "topic", "partition", "offset", "timestamp", "timestampType");

  static final DataType HEADERS =
      DataTypes.createArrayType(
          new StructType()
              .add("key", DataTypes.StringType, true)
              .add("value", DataTypes.BinaryType, true),
          true);

  static final Map<String, DataType> TYPES = new LinkedHashMap<>();

  static {
    TYPES.put("key", DataTypes.BinaryType);
    TYPES.put("value", DataTypes.BinaryType);
    TYPES.put("topic", DataTypes.StringType);
    TYPES.put("partition", DataTypes.IntegerType);
    TYPES.put("offset", DataTypes.LongType);
    TYPES.put("timestamp", DataTypes.TimestampType);
    TYPES.put("timestampType", DataTypes.IntegerType);
    TYPES.put("headers", HEADERS);
    TYPES.put("baseOffset", DataTypes.LongType);
    TYPES.put("lastOffset", DataTypes.LongType);
    TYPES.put("batchPosition", DataTypes.LongType);
    TYPES.put("batchSize", DataTypes.IntegerType);
    TYPES.put("magic", DataTypes.ByteType);
    TYPES.put("compression", DataTypes.StringType);
    TYPES.put("crcValid", DataTypes.BooleanType);
    TYPES.put("producerId", DataTypes.LongType);
    TYPES.put("producerEpoch", DataTypes.ShortType);
    TYPES.put("sequence", DataTypes.IntegerType);
    TYPES.put("partitionLeaderEpoch", DataTypes.IntegerType);
    TYPES.put("isTransactional", DataTypes.BooleanType);
    TYPES.put("isControl", DataTypes.BooleanType);
    TYPES.put("baseTimestamp", DataTypes.LongType);
    TYPES.put("maxTimestamp", DataTypes.LongType);
    TYPES.put("deleteHorizonMs", DataTypes.LongType);
    TYPES.put("controlType", DataTypes.ShortType);
    TYPES.put("recordCrc", DataTypes.LongType);
    TYPES.put("recordCrcValid", DataTypes.BooleanType);
  }

  static List<String> sparkColumns(boolean includeHeaders, boolean batchMetadata) {
    List<String> out = new ArrayList<>(SPARK_COLUMNS);
    if (includeHeaders) {
      out.add("headers");
    }
    if (batchMetadata) {
      boolean past = false;
      for (String c : TYPES.keySet()) {
        if (past) {
          out.add(c);
        }
        past = past || c.equals("headers");
      }
    }
    return out;
  }

  static StructType schema(List<String> columns) {
    StructType s = new StructType();
    for (String c : columns) {
      s = s.add(new StructField(c, TYPES.get(c), true, org.apache.spark.sql.types.Metadata.empty()));
    }
    return s;
  }

  /** A schema given with {@code .schema(...)}: its columns must be kafkalog's, typed as here. */
  static List<String> check(StructType given) {
    List<String> out = new ArrayList<>();
    for (StructField f : given.fields()) {
      DataType known = TYPES.get(f.name());
      if (known == null || !known.sameType(f.dataType())) {
        throw KafkaLogException.invalid(
            "column " + f.name() + " " + f.dataType().simpleString() + " is not one kafkalog"
                + " reads; its columns are " + schema(new ArrayList<>(TYPES.keySet())).simpleString());
      }
      out.add(f.name());
    }
    return out;
  }

  /** The column names of a read request. */
  static List<String> namesOf(String request) {
    List<String> out = new ArrayList<>();
    try {
      for (com.fasterxml.jackson.databind.JsonNode n : Options.JSON.readTree(request).get("columns")) {
        out.add(n.asText());
      }
    } catch (java.io.IOException e) {
      throw new KafkaLogException("internal", "read request: " + e.getMessage());
    }
    return out;
  }
}
