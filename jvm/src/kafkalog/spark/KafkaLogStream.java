package kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadAllAvailable;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.ReadMinRows;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;

/**
 * Structured Streaming's micro-batches over files that grow, as the Python source's {@code
 * python/kafkalog/spark/streaming.py} streams them (the same offsets, limits and errors, so a
 * checkpoint written by either source restarts with the other).
 *
 * <p>Offsets are Spark Kafka's JSON, {@code {"topic": {"0": 1234}}} (each topic-partition's next
 * offset), written as Python's {@code json.dumps} writes them. At each trigger the core lists the
 * files and answers ListOffsets again ({@link Planner}), so new segments and partitions are
 * picked up, a new partition from its earliest offset. A micro-batch is a bounded read from its
 * start offsets to its end offsets, planned on the driver by the core and read by the columnar
 * reader as a batch query is. {@code maxOffsetsPerTrigger} shares a trigger's budget among
 * partitions by backlog ({@link #rateLimit}), {@code minOffsetsPerTrigger} waits for a backlog
 * (at most {@code maxTriggerDelay}), and {@code Trigger.AvailableNow} reads what was there when
 * the query started.
 */
final class KafkaLogStream implements MicroBatchStream, SupportsTriggerAvailableNow {
  private final Options options;
  private final Schemas schemas;
  private final org.apache.spark.sql.types.StructType columns;
  private Map<String, Long> target; // Trigger.AvailableNow's end
  private long lastBatch = System.nanoTime();
  private Map<String, Long> seen; // the latest offsets at the last look

  KafkaLogStream(Options options, Schemas schemas, org.apache.spark.sql.types.StructType columns) {
    this.options = options;
    this.schemas = schemas;
    this.columns = columns;
  }

  /** The offsets of a micro-batch: Spark Kafka's JSON, one text per set of offsets. */
  static final class KafkaLogOffset extends Offset {
    private final String json;

    KafkaLogOffset(Map<String, Long> offsets) {
      this.json = toJson(offsets);
    }

    @Override
    public String json() {
      return json;
    }
  }

  /**
   * Offsets as {@code {"topic": {"0": 5}}}, topics and partitions in order, with the separators
   * of Python's {@code json.dumps} (the Python source's form, byte for byte).
   */
  static String toJson(Map<String, Long> offsets) {
    List<String> keys = new ArrayList<>(offsets.keySet());
    keys.sort((a, b) -> {
      int t = topicOf(a).compareTo(topicOf(b));
      return t != 0 ? t : Integer.compare(partitionOf(a), partitionOf(b));
    });
    StringBuilder s = new StringBuilder("{");
    String topic = null;
    for (String k : keys) {
      if (!topicOf(k).equals(topic)) {
        s.append(topic == null ? "" : "}, ").append(quote(topicOf(k))).append(": {");
        topic = topicOf(k);
      } else {
        s.append(", ");
      }
      s.append('"').append(partitionOf(k)).append("\": ").append(offsets.get(k));
    }
    return s.append(topic == null ? "}" : "}}").toString();
  }

  private static String quote(String text) {
    try {
      return Options.JSON.writeValueAsString(text);
    } catch (java.io.IOException e) {
      throw new KafkaLogException("internal", "writing offsets: " + e.getMessage());
    }
  }

  private static String topicOf(String key) {
    return key.substring(0, key.indexOf('\0'));
  }

  private static int partitionOf(String key) {
    return Integer.parseInt(key.substring(key.indexOf('\0') + 1));
  }

  /** Offsets from Spark Kafka's JSON, in its order. */
  static Map<String, Long> fromJson(String json) {
    Map<String, Long> out = new LinkedHashMap<>();
    try {
      JsonNode tree = Options.JSON.readTree(json);
      if (tree == null || !tree.isObject()) {
        throw new IllegalArgumentException();
      }
      for (Map.Entry<String, JsonNode> t : tree.properties()) {
        if (!t.getValue().isObject()) {
          throw new IllegalArgumentException();
        }
        for (Map.Entry<String, JsonNode> p : t.getValue().properties()) {
          JsonNode v = p.getValue();
          long offset = v.isIntegralNumber() ? v.asLong() : Long.parseLong(v.asText().trim());
          out.put(Options.key(t.getKey(), Integer.parseInt(p.getKey().trim())), offset);
        }
      }
    } catch (java.io.IOException | IllegalArgumentException e) {
      throw KafkaLogException.invalid(
          "not an offset in Spark Kafka's form {\"topic\": {\"0\": 23}}: " + json);
    }
    return out;
  }

  // What is there ------------------------------------------------------------------------------

  /** The topic-partitions the options take, with their offsets (those with a batch at all). */
  private List<Planner.Part> partitions() {
    List<Planner.Part> parts = Planner.discover(options);
    for (Planner.Part p : parts) {
      checkKey(p);
    }
    Planner.listOffsets(parts, options, new HashMap<>());
    parts.removeIf(p -> p.earliest == null || p.latest == null);
    return parts;
  }

  private static void checkKey(Planner.Part p) {
    if (p.topic == null || p.partition == null) {
      throw KafkaLogException.invalid(
          p.name() + ": a stream reads topic-partitions, and this segment is not in a"
              + " <topic>-<partition> directory");
    }
  }

  private static Map<String, Long> latestOf(List<Planner.Part> parts) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Planner.Part p : parts) {
      out.put(p.key(), p.latest);
    }
    return out;
  }

  // Spark's calls ------------------------------------------------------------------------------

  @Override
  public Offset initialOffset() {
    List<Planner.Part> parts = partitions();
    java.util.Set<String> found = new java.util.HashSet<>();
    Map<String, Long> stamps = new HashMap<>();
    for (Planner.Part p : parts) {
      found.add(p.key());
      Long ts = options.startTimestamp.of(p.topic, p.partition);
      if (ts != null) {
        stamps.put(p.key(), ts);
      }
    }
    options.checkPartitions(found);
    Map<String, Long> at = Planner.listOffsets(parts, options, stamps);
    Map<String, Long> start = new LinkedHashMap<>();
    for (Planner.Part p : parts) {
      Long ts = stamps.get(p.key());
      Long offset = options.startOffset.of(p.topic, p.partition);
      if (ts != null) {
        Long first = at.get(p.key());
        if (first == null && options.strategy.equals("error")) {
          throw KafkaLogException.invalid(
              "no record of " + p.name() + " has a timestamp at or after " + ts + " (the starting"
                  + " timestamp); set startingOffsetsByTimestampStrategy=latest to start at the"
                  + " latest offset instead");
        }
        start.put(p.key(), first == null ? p.latest : first);
      } else if (offset == null || offset == Options.LATEST) {
        start.put(p.key(), p.latest);
      } else if (offset == Options.EARLIEST) {
        start.put(p.key(), p.earliest);
      } else {
        start.put(p.key(), offset);
      }
    }
    return new KafkaLogOffset(start);
  }

  @Override
  public Offset deserializeOffset(String json) {
    return new KafkaLogOffset(fromJson(json));
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    if (options.maxOffsetsPerTrigger != null) {
      return ReadLimit.maxRows(options.maxOffsetsPerTrigger);
    }
    if (options.minOffsetsPerTrigger != null) {
      return ReadLimit.minRows(options.minOffsetsPerTrigger, options.maxTriggerDelayMs);
    }
    return ReadLimit.allAvailable();
  }

  @Override
  public void prepareForTriggerAvailableNow() {
    target = latestOf(partitions());
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException(
        "latestOffset(Offset, ReadLimit) is to be called instead of this method");
  }

  @Override
  public Offset latestOffset(Offset start, ReadLimit limit) {
    List<Planner.Part> parts = partitions();
    Map<String, Long> begin = fromJson(start.json());
    Map<String, Long> latest = latestOf(parts);
    seen = new LinkedHashMap<>(latest);
    for (Planner.Part p : parts) { // new partitions are read from their earliest offset
      begin.putIfAbsent(p.key(), p.earliest);
    }
    if (target != null) {
      Map<String, Long> capped = new LinkedHashMap<>();
      for (Map.Entry<String, Long> e : latest.entrySet()) {
        Long until = target.get(e.getKey());
        capped.put(e.getKey(),
            until == null ? begin.get(e.getKey()) : Math.min(e.getValue(), until));
      }
      latest = capped;
    }
    // A partition's end never goes back (after retention, start may be past the end).
    latest.replaceAll((tp, end) -> Math.max(end, begin.get(tp)));
    for (Map.Entry<String, Long> e : begin.entrySet()) {
      latest.putIfAbsent(e.getKey(), e.getValue()); // gone: planInputPartitions reports the loss
    }
    Map<String, Long> unmoved = new LinkedHashMap<>();
    for (String tp : latest.keySet()) {
      unmoved.put(tp, begin.get(tp));
    }
    if (!(limit instanceof ReadAllAvailable)) {
      long backlog = 0;
      for (Map.Entry<String, Long> e : latest.entrySet()) {
        backlog += e.getValue() - begin.get(e.getKey());
      }
      Long least = options.minOffsetsPerTrigger;
      if (limit instanceof ReadMinRows) {
        least = ((ReadMinRows) limit).minRows();
      }
      long waited = (System.nanoTime() - lastBatch) / 1_000_000;
      if (least != null && least != 0 && backlog < least && waited < options.maxTriggerDelayMs) {
        return new KafkaLogOffset(unmoved);
      }
      if (limit instanceof ReadMaxRows) {
        latest = rateLimit(begin, latest, ((ReadMaxRows) limit).maxRows());
      }
    }
    if (!latest.equals(unmoved)) {
      lastBatch = System.nanoTime();
    }
    return new KafkaLogOffset(latest);
  }

  /**
   * Spark Kafka's {@code maxOffsetsPerTrigger}: each partition's share of {@code limit} by its
   * backlog (rounded down, up where below one), and never more than {@code limit} in all. The
   * core's arithmetic ({@code log/rate_limit.rs}), which the Python source calls too; the order
   * of {@code latest} breaks ties, as there.
   */
  static Map<String, Long> rateLimit(Map<String, Long> start, Map<String, Long> latest, long limit) {
    com.fasterxml.jackson.databind.node.ObjectNode r = Options.JSON.createObjectNode();
    r.put("limit", limit);
    com.fasterxml.jackson.databind.node.ArrayNode ranges = r.putArray("ranges");
    for (Map.Entry<String, Long> e : latest.entrySet()) {
      ranges.addArray().add(start.get(e.getKey())).add(e.getValue());
    }
    JsonNode ends;
    try {
      ends = Options.JSON.readTree(Native.rateLimit(r.toString()));
    } catch (java.io.IOException e) {
      throw new KafkaLogException("internal", "kafkalog JNI answer: " + e.getMessage());
    }
    Map<String, Long> out = new LinkedHashMap<>();
    int k = 0;
    for (String tp : latest.keySet()) {
      out.put(tp, ends.get(k++).asLong());
    }
    return out;
  }

  @Override
  public Offset reportLatestOffset() {
    if (seen == null) {
      seen = latestOf(partitions());
    }
    return new KafkaLogOffset(seen);
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    Map<String, Planner.Part> parts = new LinkedHashMap<>();
    for (Planner.Part p : partitions()) {
      parts.put(p.key(), p);
    }
    Map<String, Long> begin = fromJson(start.json());
    Map<String, Long> until = fromJson(end.json());
    Map<String, long[]> ranges = new LinkedHashMap<>();
    for (Map.Entry<String, Long> e : until.entrySet()) {
      String tp = e.getKey();
      long stop = e.getValue();
      Planner.Part p = parts.get(tp);
      Long first = begin.get(tp);
      if (p == null) {
        if (first != null && stop > first) {
          Planner.lost(Options.display(tp) + " is gone: offsets " + first + " to " + (stop - 1)
              + " cannot be read", options.failOnDataLoss);
        }
        continue;
      }
      if (first == null) {
        first = p.earliest;
      }
      if (first < p.earliest) { // deleted (retention) since the offsets were decided
        Planner.lost("offsets " + first + " to " + (Math.min(stop, p.earliest) - 1) + " of "
            + p.name() + " are gone (its earliest offset is now " + p.earliest + ")",
            options.failOnDataLoss);
        first = p.earliest;
      }
      if (first < stop) {
        Planner.checkGaps(p, first, stop, options.failOnDataLoss);
        ranges.put(tp, new long[] {first, stop});
      }
    }
    return KafkaLogScan.partitionsOf(
        Planner.planRanges(new ArrayList<>(parts.values()), ranges, options));
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new ReaderFactory(KafkaLogScan.readRequest(options, schemas, columns), columns);
  }

  @Override
  public void commit(Offset end) {
    // Nothing to acknowledge: the files are read, never consumed.
  }

  @Override
  public void stop() {}

  @Override
  public String toString() {
    return "KafkaLogStream[" + String.join(", ", options.paths) + "]";
  }
}
