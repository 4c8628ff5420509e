package kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A read's Spark schema, as the core gives it ({@code rust/spark/shapes.rs}, which the Python
 * source's {@code schema.py} calls too): Spark's Kafka source columns (headers with
 * includeHeaders, kafkalog's batch metadata with batchMetadata), {@code key} and {@code value}
 * typed as the registry says when asked ({@code keyFormat}, {@code valueFormat}, ...), with
 * their error columns; and the typed-value options resolved on the driver for the tasks.
 */
final class Schemas implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The columns this read gives unless a schema selects others, in order. */
  final StructType schema;
  /** Every column kafkalog reads (with this read's typed keys and values). */
  final StructType every;
  /** The typed-value options resolved (JSON, the registry's schemas in it), or null. */
  final String values;

  private Schemas(StructType schema, StructType every, String values) {
    this.schema = schema;
    this.every = every;
    this.values = values;
  }

  /** The schema of the options (typed keys and values resolved by the core, here). */
  static Schemas of(java.util.Map<String, String> raw) {
    JsonNode answer = Options.schema(raw);
    StructType schema = (StructType) DataType.fromJson(answer.get("schema").toString());
    StructType every = (StructType) DataType.fromJson(answer.get("every").toString());
    JsonNode values = answer.get("values");
    return new Schemas(
        schema, every, values == null || values.isNull() ? null : values.toString());
  }

  /**
   * A schema given with {@code .schema(...)} (or the table's, inferred before): its columns
   * must be among those kafkalog reads, typed as here. Returns it as this read's columns.
   */
  StructType check(StructType given) {
    List<StructField> out = new ArrayList<>();
    for (StructField f : given.fields()) {
      StructField known = null;
      for (StructField k : every.fields()) {
        if (k.name().equals(f.name())) {
          known = k;
        }
      }
      if (known == null || !known.dataType().sameType(f.dataType())) {
        throw KafkaLogException.invalid(
            "column " + f.name() + " " + f.dataType().simpleString() + " is not one kafkalog"
                + " reads; its columns are " + every.simpleString());
      }
      out.add(known);
    }
    return new StructType(out.toArray(new StructField[0]));
  }
}
