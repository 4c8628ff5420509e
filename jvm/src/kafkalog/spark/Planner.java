package kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Planning a read on the driver, as the Python source's {@code planning.py} and {@code
 * partitions.py} do: the core discovers the logs, answers ListOffsets and cuts work items; here
 * is Spark's meaning of the bounds (earliest/latest, timestamps, data loss) and the grouping of
 * items into Spark partitions. Pushed-down predicates narrow what is planned.
 */
final class Planner {
  private Planner() {}

  private static final Logger LOG = LoggerFactory.getLogger("kafkalog.spark");

  /** One log the core sees (a topic-partition's segments). */
  static final class Part {
    String topic;
    Integer partition;
    final List<JsonNode> segments = new ArrayList<>(); // [path, size]
    Long earliest, latest;
    final List<long[]> gaps = new ArrayList<>();

    String key() {
      return Options.key(topic, partition);
    }

    String name() {
      return topic == null ? segments.get(0).get(0).asText() : topic + "-" + partition;
    }
  }

  /** What pushed-down predicates allow: null where nothing was pushed. */
  static final class Pushed implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    Set<String> topics;
    Set<Integer> partitions;
    long offsetLow = Long.MIN_VALUE; // inclusive
    long offsetHigh = Long.MAX_VALUE; // exclusive
    Long timestampLowMs; // records before the first at or after this are left out

    boolean takes(String topic, Integer partition) {
      return (topics == null || (topic != null && topics.contains(topic)))
          && (partitions == null || (partition != null && partitions.contains(partition)));
    }
  }

  private static ObjectNode request(Options o) {
    ObjectNode r = Options.JSON.createObjectNode();
    r.set("options", Options.json(o.raw));
    ObjectNode storage = r.putObject("storage");
    for (Map.Entry<String, String> e : o.storage.entrySet()) {
      storage.put(e.getKey(), e.getValue());
    }
    r.put("read_committed", o.readCommitted);
    r.put("visibility", o.visibility);
    r.put("max_decompressed_size", o.maxDecompressedSize);
    return r;
  }

  private static JsonNode call(String answer) {
    try {
      return Options.JSON.readTree(answer);
    } catch (java.io.IOException e) {
      throw new KafkaLogException("internal", "kafkalog JNI answer: " + e.getMessage());
    }
  }

  private static Integer intOrNull(JsonNode n) {
    return n == null || n.isNull() ? null : n.asInt();
  }

  private static Long longOrNull(JsonNode n) {
    return n == null || n.isNull() ? null : n.asLong();
  }

  /** The logs under the options' paths that the subscription takes (the core's), in order. */
  static List<Part> discover(Options o) {
    ObjectNode r = request(o);
    ArrayNode paths = r.putArray("paths");
    for (String p : o.paths) {
      paths.add(p);
    }
    JsonNode answer = call(Native.discover(r.toString()));
    for (JsonNode note : answer.get("notes")) {
      LOG.warn("{}", note.asText());
    }
    List<Part> parts = new ArrayList<>();
    for (JsonNode p : answer.get("partitions")) {
      Part part = new Part();
      part.topic = p.get("topic").isNull() ? null : p.get("topic").asText();
      part.partition = intOrNull(p.get("partition"));
      p.get("segments").forEach(part.segments::add);
      parts.add(part);
    }
    return parts;
  }

  private static ArrayNode segments(List<Part> parts) {
    ArrayNode out = Options.JSON.createArrayNode();
    for (Part p : parts) {
      for (JsonNode s : p.segments) {
        ArrayNode t = out.addArray();
        t.add(s.get(0));
        t.add(p.topic);
        if (p.partition == null) {
          t.addNull();
        } else {
          t.add(p.partition);
        }
        t.add(s.get(1));
      }
    }
    return out;
  }

  /**
   * Sets each part's earliest and latest offsets (ListOffsets); returns the offset for each
   * part's timestamp in {@code timestamps} (null where no record is at or after it).
   */
  static Map<String, Long> listOffsets(List<Part> parts, Options o, Map<String, Long> timestamps) {
    Map<String, Long> found = new HashMap<>();
    if (parts.isEmpty()) {
      return found;
    }
    ObjectNode r = request(o);
    r.set("segments", segments(parts));
    ArrayNode stamps = r.putArray("timestamps");
    for (Part p : parts) {
      Long ts = timestamps.get(p.key());
      if (ts != null) {
        ArrayNode t = stamps.addArray();
        t.add(p.topic);
        if (p.partition == null) {
          t.addNull();
        } else {
          t.add(p.partition);
        }
        t.add(ts);
      }
    }
    JsonNode answer = call(Native.listOffsets(r.toString()));
    if (answer.size() != parts.size()) {
      throw new KafkaLogException(
          "internal", "listing offsets: " + answer.size() + " answers for " + parts.size());
    }
    for (int i = 0; i < parts.size(); i++) {
      Part p = parts.get(i);
      JsonNode a = answer.get(i);
      p.earliest = longOrNull(a.get("earliest"));
      p.latest = longOrNull(a.get("latest"));
      p.gaps.clear();
      for (JsonNode g : a.get("gaps")) {
        p.gaps.add(new long[] {g.get(0).asLong(), g.get(1).asLong()});
      }
      if (timestamps.containsKey(p.key())) {
        found.put(p.key(), longOrNull(a.get("for_timestamp")));
      }
    }
    return found;
  }

  static void lost(String message, boolean failOnDataLoss) {
    if (failOnDataLoss) {
      throw new KafkaLogException(
          "data_loss",
          message + ". Some data may have been lost because it is not in the files any more"
              + " (deleted by retention, or segments missing). If you want the query to go on in"
              + " such cases, set the source option \"failOnDataLoss\" to \"false\".");
    }
    LOG.warn("{}; going on (failOnDataLoss=false)", message);
  }

  /**
   * Each part's {@code [start, end)}, as Spark's Kafka source resolves a batch query's range
   * (the Python source's {@code offset_ranges}); parts whose range is empty are left out.
   * {@code check}: whether the bounds must name these parts (false where the parts were
   * pruned by pushed predicates after that check).
   */
  static Map<String, long[]> offsetRanges(
      List<Part> parts, Options o, boolean streaming, boolean check) {
    if (check) {
      Set<String> found = new HashSet<>();
      for (Part p : parts) {
        found.add(p.key());
      }
      o.checkPartitions(found);
    }
    Map<String, Long> startTs = new HashMap<>(), endTs = new HashMap<>();
    for (Part p : parts) {
      Long s = o.startTimestamp.of(p.topic, p.partition);
      Long e = o.endTimestamp.of(p.topic, p.partition);
      if (s != null) {
        startTs.put(p.key(), s);
      }
      if (e != null) {
        endTs.put(p.key(), e);
      }
    }
    Map<String, Long> atStart = listOffsets(parts, o, startTs);
    Map<String, Long> atEnd = endTs.isEmpty() ? new HashMap<>() : listOffsets(parts, o, endTs);
    Map<String, long[]> out = new LinkedHashMap<>();
    for (Part p : parts) {
      if (p.earliest == null || p.latest == null) {
        continue; // no batch at all
      }
      long start;
      Long ts = startTs.get(p.key());
      Long offset = o.startOffset.of(p.topic, p.partition);
      if (ts != null) {
        Long at = atStart.get(p.key());
        if (at == null) {
          if (o.strategy.equals("error")) {
            throw KafkaLogException.invalid(
                "no record of " + p.name() + " has a timestamp at or after " + ts + " (the"
                    + " starting timestamp); set startingOffsetsByTimestampStrategy=latest to"
                    + " start at the latest offset instead");
          }
          at = p.latest;
        }
        start = at;
      } else if (offset == null || offset == Options.EARLIEST) {
        start = p.earliest;
      } else if (offset == Options.LATEST) {
        if (!streaming) {
          throw KafkaLogException.invalid(
              "starting offset of " + p.name() + " is latest (-1): not valid for batch queries"
                  + " (as in Spark's Kafka source), it reads nothing");
        }
        start = p.latest;
      } else {
        start = offset;
        if (start < p.earliest) {
          lost("offsets " + start + " to " + (p.earliest - 1) + " of " + p.name()
              + " are gone (its earliest offset is " + p.earliest + ")", o.failOnDataLoss);
          start = p.earliest;
        }
      }
      long end;
      Long endTsOf = endTs.get(p.key());
      Long endOffset = o.endOffset.of(p.topic, p.partition);
      if (endTsOf != null) {
        Long at = atEnd.get(p.key());
        end = at == null ? p.latest : Math.min(at, p.latest);
      } else if (endOffset == null || endOffset == Options.LATEST) {
        end = p.latest;
      } else if (endOffset == Options.EARLIEST) {
        throw KafkaLogException.invalid(
            "ending offset of " + p.name() + " is earliest (-2): not valid for batch queries (as"
                + " in Spark's Kafka source), it reads nothing");
      } else {
        end = Math.min(endOffset, p.latest);
      }
      if (start < end) {
        checkGaps(p, start, end, o.failOnDataLoss);
        out.put(p.key(), new long[] {start, end});
      }
    }
    return out;
  }

  /**
   * Offsets in {@code [start, end)} missing between segments where compaction cannot explain it
   * (a segment deleted from the middle of a log) are data loss.
   */
  static void checkGaps(Part p, long start, long end, boolean failOnDataLoss) {
    for (long[] g : p.gaps) {
      if (g[0] < end && g[1] > start) {
        lost("offsets " + Math.max(g[0], start) + " to " + (Math.min(g[1], end) - 1) + " of "
            + p.name() + " are missing between segments, and the log cleaner's checkpoint"
            + " shows no compaction there", failOnDataLoss);
      }
    }
  }

  /** Narrows ranges to what pushed predicates allow (offsets, then timestamps by ListOffsets). */
  static void narrow(List<Part> parts, Map<String, long[]> ranges, Pushed pushed, Options o) {
    for (Map.Entry<String, long[]> e : ranges.entrySet()) {
      long[] r = e.getValue();
      r[0] = Math.max(r[0], pushed.offsetLow);
      r[1] = Math.min(r[1], pushed.offsetHigh);
    }
    ranges.values().removeIf(r -> r[0] >= r[1]);
    if (pushed.timestampLowMs != null && !ranges.isEmpty()) {
      List<Part> live = new ArrayList<>();
      Map<String, Long> stamps = new HashMap<>();
      for (Part p : parts) {
        if (ranges.containsKey(p.key())) {
          live.add(p);
          stamps.put(p.key(), pushed.timestampLowMs);
        }
      }
      Map<String, Long> at = listOffsets(live, o, stamps);
      for (Part p : live) {
        Long first = at.get(p.key());
        long[] r = ranges.get(p.key());
        if (first == null) {
          ranges.remove(p.key()); // no record at or after the timestamp
        } else {
          r[0] = Math.max(r[0], first);
          if (r[0] >= r[1]) {
            ranges.remove(p.key());
          }
        }
      }
    }
  }

  /** The work items reading each part's range, of about {@code targetBytes} of log. */
  static List<ArrayNode> items(List<Part> parts, Map<String, long[]> ranges, Options o, long target) {
    List<Part> read = new ArrayList<>();
    for (Part p : parts) {
      if (ranges.containsKey(p.key())) {
        read.add(p);
      }
    }
    List<ArrayNode> out = new ArrayList<>();
    if (read.isEmpty()) {
      return out;
    }
    ObjectNode r = request(o);
    r.set("segments", segments(read));
    r.put("target_bytes", target);
    ArrayNode bounds = r.putArray("bounds");
    for (Part p : read) {
      long[] range = ranges.get(p.key());
      ArrayNode b = bounds.addArray();
      b.add(p.topic);
      if (p.partition == null) {
        b.addNull();
      } else {
        b.add(p.partition);
      }
      b.add(range[0]);
      b.add(range[1]);
    }
    JsonNode answer = call(Native.plan(r.toString()));
    for (JsonNode issue : answer.get("issues")) {
      LOG.info("{}", issue.asText());
    }
    for (JsonNode item : answer.get("items")) {
      out.add((ArrayNode) item);
    }
    return out;
  }

  // Work item fields: [path, start, end, topic, partition, base_offset, size, start_offset,
  // end_offset, aborted].
  private static long lowOf(ArrayNode item) {
    long low = 0;
    if (!item.get(5).isNull()) {
      low = Math.max(low, item.get(5).asLong());
    }
    if (!item.get(7).isNull()) {
      low = Math.max(low, item.get(7).asLong());
    }
    return low;
  }

  private static boolean samePartition(ArrayNode a, ArrayNode b) {
    return a.get(3).equals(b.get(3)) && a.get(4).equals(b.get(4));
  }

  /** Each item's offsets {@code [low, high)}. */
  private static long[][] spans(List<ArrayNode> work) {
    long[][] out = new long[work.size()][];
    for (int k = 0; k < work.size(); k++) {
      ArrayNode item = work.get(k);
      long low = lowOf(item);
      Long high = item.get(8).isNull() ? null : item.get(8).asLong();
      if (k + 1 < work.size() && samePartition(item, work.get(k + 1))) {
        long next = lowOf(work.get(k + 1));
        high = high == null ? next : Math.min(high, next);
      }
      long h = high == null ? low + 1 : high;
      out[k] = new long[] {low, Math.max(h, low + 1)};
    }
    return out;
  }

  private static List<ArrayNode> split(ArrayNode item, long low, long high, long pieces) {
    List<ArrayNode> out = new ArrayList<>();
    if (pieces <= 1) {
      out.add(item);
      return out;
    }
    for (long k = 0; k < pieces; k++) {
      ArrayNode piece = item.deepCopy();
      piece.set(7, Options.JSON.getNodeFactory().numberNode(low + (high - low) * k / pieces));
      piece.set(8, Options.JSON.getNodeFactory().numberNode(low + (high - low) * (k + 1) / pieces));
      out.add(piece);
    }
    return out;
  }

  /** Work items grouped into Spark partitions, as the Python source's {@code spark_partitions}. */
  static List<List<ArrayNode>> sparkPartitions(List<ArrayNode> work, Options o, long target) {
    Long most = o.maxRecordsPerPartition;
    if (most != null) {
      long[][] s = spans(work);
      List<ArrayNode> cut = new ArrayList<>();
      for (int k = 0; k < work.size(); k++) {
        cut.addAll(split(work.get(k), s[k][0], s[k][1], ceilDiv(s[k][1] - s[k][0], most)));
      }
      work = cut;
    }
    if (o.minPartitions != null && !work.isEmpty() && work.size() < o.minPartitions) {
      long[][] s = spans(work);
      long total = 0;
      for (long[] x : s) {
        total += x[1] - x[0];
      }
      List<ArrayNode> cut = new ArrayList<>();
      for (int k = 0; k < work.size(); k++) {
        long n = s[k][1] - s[k][0];
        cut.addAll(split(work.get(k), s[k][0], s[k][1],
            Math.min(n, ceilDiv(n * o.minPartitions, total))));
      }
      work = cut;
    }
    List<List<ArrayNode>> out = new ArrayList<>();
    List<ArrayNode> current = new ArrayList<>();
    long size = 0, offsets = 0;
    long[][] s = spans(work);
    for (int k = 0; k < work.size(); k++) {
      ArrayNode item = work.get(k);
      long itemSize = item.get(6).asLong();
      boolean full = !current.isEmpty() && size + itemSize > target;
      if (most != null && !current.isEmpty()) {
        full = full || offsets + (s[k][1] - s[k][0]) > most;
      }
      if (full) {
        out.add(current);
        current = new ArrayList<>();
        size = 0;
        offsets = 0;
      }
      current.add(item);
      size += itemSize;
      offsets += s[k][1] - s[k][0];
    }
    if (!current.isEmpty()) {
      out.add(current);
    }
    return out;
  }

  private static long ceilDiv(long a, long b) {
    return b == 0 ? 0 : (a + b - 1) / b;
  }

  /** The whole batch plan: Spark partitions of work items. */
  static List<List<ArrayNode>> plan(Options o, Pushed pushed) {
    List<Part> parts = discover(o);
    Set<String> found = new HashSet<>();
    for (Part p : parts) {
      found.add(p.key());
    }
    // Bounds name partitions of the subscription; pushed predicates prune after that check.
    o.checkPartitions(found);
    List<Part> kept = new ArrayList<>();
    for (Part p : parts) {
      if (pushed.takes(p.topic, p.partition)) {
        kept.add(p);
      }
    }
    Map<String, long[]> ranges = offsetRanges(kept, o, false, false);
    narrow(kept, ranges, pushed, o);
    return planRanges(kept, ranges, o);
  }

  /**
   * The Spark partitions reading each part's range (a batch query's, or a micro-batch's from
   * its start offsets to its end offsets), as the Python source's {@code plan_partitions}.
   */
  static List<List<ArrayNode>> planRanges(List<Part> kept, Map<String, long[]> ranges, Options o) {
    long target = o.targetBytes;
    if (o.minPartitions != null) {
      long total = 0;
      for (Part p : kept) {
        if (ranges.containsKey(p.key())) {
          for (JsonNode seg : p.segments) {
            total += seg.get(1).isNull() ? 0 : seg.get(1).asLong();
          }
        }
      }
      target = Math.max(1, Math.min(target, total / o.minPartitions));
    }
    return sparkPartitions(items(kept, ranges, o, target), o, target);
  }
}
