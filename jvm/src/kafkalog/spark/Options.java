package kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data source's options as the core checked them ({@code rust/spark/options.rs}, which the
 * Python source's {@code options.py} calls too): the same names, defaults and errors from both
 * sources. Nothing is decided here; the fields are the core's answer.
 */
final class Options implements Serializable {
  private static final long serialVersionUID = 1L;
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger("kafkalog.spark");

  static final int EARLIEST = -2;
  static final int LATEST = -1;

  /** The options as given (the core reads them again where it needs them: discovery). */
  Map<String, String> raw;
  List<String> paths;
  List<String> columns;
  Bound startOffset = Bound.NONE, endOffset = Bound.NONE;
  Bound startTimestamp = Bound.NONE, endTimestamp = Bound.NONE;
  String strategy = "error";
  boolean readCommitted;
  boolean failOnDataLoss = true;
  long targetBytes;
  Long minPartitions, maxRecordsPerPartition;
  Long maxOffsetsPerTrigger, minOffsetsPerTrigger;
  long maxTriggerDelayMs;
  boolean includeControl;
  boolean checkCrc = true;
  String onCorrupt = "error";
  long maxDecompressedSize;
  long batchSize;
  String visibility = "consumer";
  Map<String, String> storage = new LinkedHashMap<>();
  /** The typed-value options (JSON, not yet resolved), or null for keys and values as stored. */
  String values;

  /** One bound: a value for every partition (null: none), and per-partition values. */
  static final class Bound implements Serializable {
    private static final long serialVersionUID = 1L;
    static final Bound NONE = new Bound(null, Collections.emptyMap());
    final Long every;
    final Map<String, Long> per; // "topic\0partition" -> value

    Bound(Long every, Map<String, Long> per) {
      this.every = every;
      this.per = per;
    }

    Long of(String topic, Integer partition) {
      if (topic != null && partition != null) {
        String k = key(topic, partition);
        if (per.containsKey(k)) {
          return per.get(k);
        }
      }
      return every;
    }

    static Bound of(JsonNode b) {
      Map<String, Long> per = new HashMap<>();
      for (JsonNode t : b.get("per")) {
        per.put(key(t.get(0).asText(), t.get(1).asInt()), t.get(2).asLong());
      }
      return new Bound(b.get("every").isNull() ? null : b.get("every").asLong(), per);
    }
  }

  static String key(String topic, Integer partition) {
    return topic + "\0" + partition;
  }

  static String display(String key) {
    int z = key.indexOf('\0');
    return key.substring(0, z) + "-" + key.substring(z + 1);
  }

  static JsonNode parseJson(String text) {
    try {
      return JSON.readTree(text);
    } catch (java.io.IOException e) {
      throw new KafkaLogException("internal", "kafkalog JNI answer: " + e.getMessage());
    }
  }

  /** The options as the core takes them: a JSON object of strings. */
  static ObjectNode json(Map<String, String> raw) {
    ObjectNode o = JSON.createObjectNode();
    for (Map.Entry<String, String> e : raw.entrySet()) {
      o.put(e.getKey(), e.getValue());
    }
    return o;
  }

  /** The read's Spark schema and its typed values resolved (the core reads the registry). */
  static JsonNode schema(Map<String, String> raw) {
    ObjectNode r = JSON.createObjectNode();
    r.set("options", json(raw));
    return parseJson(Native.schema(r.toString()));
  }

  private static Long longOrNull(JsonNode n) {
    return n == null || n.isNull() ? null : n.asLong();
  }

  /** The options of a batch read or of a stream, checked by the core. */
  static Options parse(Map<String, String> raw, boolean streaming) {
    ObjectNode r = JSON.createObjectNode();
    r.set("options", json(raw));
    r.put("streaming", streaming);
    JsonNode o = parseJson(Native.options(r.toString()));
    Options out = new Options();
    out.raw = new LinkedHashMap<>(raw);
    out.paths = new ArrayList<>();
    o.get("paths").forEach(p -> out.paths.add(p.asText()));
    out.columns = new ArrayList<>();
    o.get("columns").forEach(c -> out.columns.add(c.asText()));
    JsonNode b = o.get("bounds");
    out.startOffset = Bound.of(b.get("start_offset"));
    out.endOffset = Bound.of(b.get("end_offset"));
    out.startTimestamp = Bound.of(b.get("start_timestamp"));
    out.endTimestamp = Bound.of(b.get("end_timestamp"));
    out.strategy = b.get("strategy").asText();
    out.readCommitted = o.get("read_committed").asBoolean();
    out.failOnDataLoss = o.get("fail_on_data_loss").asBoolean();
    out.targetBytes = o.get("target_bytes").asLong();
    out.minPartitions = longOrNull(o.get("min_partitions"));
    out.maxRecordsPerPartition = longOrNull(o.get("max_records_per_partition"));
    out.maxOffsetsPerTrigger = longOrNull(o.get("max_offsets_per_trigger"));
    out.minOffsetsPerTrigger = longOrNull(o.get("min_offsets_per_trigger"));
    out.maxTriggerDelayMs = o.get("max_trigger_delay_ms").asLong();
    out.includeControl = o.get("include_control").asBoolean();
    out.checkCrc = o.get("check_crc").asBoolean();
    out.onCorrupt = o.get("on_corrupt").asText();
    out.maxDecompressedSize = o.get("max_decompressed_size").asLong();
    out.batchSize = o.get("batch_size").asLong();
    out.visibility = o.get("visibility").asText();
    for (Map.Entry<String, JsonNode> e : o.get("storage").properties()) {
      out.storage.put(e.getKey(), e.getValue().asText());
    }
    out.values = o.get("values").isNull() ? null : o.get("values").toString();
    List<String> ignored = new ArrayList<>();
    o.get("ignored").forEach(n -> ignored.add(n.asText()));
    if (!ignored.isEmpty()) {
      LOG.info("kafkalog reads files, not a cluster: ignoring {}", String.join(", ", ignored));
    }
    return out;
  }

  /** Per-partition bounds must name partitions that are there, and every partition read. */
  void checkPartitions(Set<String> found) {
    Set<String> named = new TreeSet<>();
    for (Bound b : new Bound[] {startOffset, endOffset, startTimestamp, endTimestamp}) {
      named.addAll(b.per.keySet());
    }
    named.removeAll(found);
    if (!named.isEmpty()) {
      List<String> names = new ArrayList<>();
      for (String k : named) {
        names.add(display(k));
      }
      throw KafkaLogException.invalid(
          "bounds name topic-partitions that are not there: " + String.join(", ", names));
    }
    String[] whats = {"startingOffsets", "endingOffsets", "startingOffsetsByTimestamp",
        "endingOffsetsByTimestamp"};
    Bound[] bounds = {startOffset, endOffset, startTimestamp, endTimestamp};
    for (int i = 0; i < 4; i++) {
      if (bounds[i].per.isEmpty()) {
        continue;
      }
      TreeSet<String> missing = new TreeSet<>(found);
      missing.removeAll(bounds[i].per.keySet());
      if (!missing.isEmpty()) {
        List<String> names = new ArrayList<>();
        for (String k : missing) {
          names.add(display(k));
        }
        throw KafkaLogException.invalid(
            whats[i] + " names specific partitions, so it must name every partition read (as"
                + " Spark's Kafka source requires; -2 is earliest, -1 latest): missing "
                + String.join(", ", names));
      }
    }
  }
}
