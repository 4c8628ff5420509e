package kafkalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The data source's options, checked: the same names, defaults and errors as the Python
 * source's {@code python/kafkalog/spark/options.py} and {@code selection.py} (Spark's Kafka
 * source options with Spark's meaning, and kafkalog's own). Spark's meaning lives here; every
 * Kafka rule is the core's.
 */
final class Options implements Serializable {
  private static final long serialVersionUID = 1L;
  static final ObjectMapper JSON = new ObjectMapper();

  static final long DEFAULT_TARGET_BYTES = 64L << 20;
  static final long DEFAULT_MAX_DECOMPRESSED_SIZE = 256L << 20;
  static final long DEFAULT_BATCH_SIZE = 65536;
  static final int EARLIEST = -2;
  static final int LATEST = -1;

  private static final List<String> SPARK_READ =
      Arrays.asList(
          "assign", "subscribe", "subscribePattern", "startingOffsets", "endingOffsets",
          "startingTimestamp", "endingTimestamp", "startingOffsetsByTimestamp",
          "endingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy", "failOnDataLoss",
          "minPartitions", "maxRecordsPerPartition", "maxOffsetsPerTrigger",
          "minOffsetsPerTrigger", "maxTriggerDelay", "includeHeaders");
  private static final Set<String> SPARK_IGNORED =
      new HashSet<>(
          Arrays.asList(
              "kafkaconsumer.polltimeoutms", "fetchoffset.numretries",
              "fetchoffset.retryintervalms", "groupidprefix"));
  private static final List<String> KAFKALOG_READ =
      Arrays.asList(
          "path", "paths", "topics", "partitions", "isolationLevel", "batchMetadata",
          "includeControl", "checkCrc", "onCorrupt", "maxDecompressedSize", "batchSize",
          "targetBytes", "encryptionKeys", "visibility");
  private static final String STORAGE_PREFIX = "storage.";

  List<String> paths;
  List<String> columns;
  // Subscription: null where not given.
  Set<String> topics;
  String pattern;
  Set<String> assign; // "topic\0partition"
  Set<Integer> partitions;
  // Bounds as given, Spark's precedence applied.
  Bound startOffset = Bound.NONE, endOffset = Bound.NONE;
  Bound startTimestamp = Bound.NONE, endTimestamp = Bound.NONE;
  String strategy = "error";
  boolean readCommitted;
  boolean failOnDataLoss = true;
  long targetBytes = DEFAULT_TARGET_BYTES;
  Long minPartitions, maxRecordsPerPartition;
  Long maxOffsetsPerTrigger, minOffsetsPerTrigger;
  long maxTriggerDelayMs = 15 * 60_000L;
  boolean includeControl;
  boolean checkCrc = true;
  String onCorrupt = "error";
  long maxDecompressedSize = DEFAULT_MAX_DECOMPRESSED_SIZE;
  long batchSize = DEFAULT_BATCH_SIZE;
  String visibility = "consumer";
  Map<String, String> storage = new LinkedHashMap<>();

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
  }

  static String key(String topic, Integer partition) {
    return topic + "\0" + partition;
  }

  static String display(String key) {
    int z = key.indexOf('\0');
    return key.substring(0, z) + "-" + key.substring(z + 1);
  }

  private static KafkaLogException invalid(String message) {
    return KafkaLogException.invalid(message);
  }

  /** The columns options read before batch or streaming is known (the schema). */
  static List<String> columnsOf(Map<String, String> raw) {
    Map<String, String> o = lower(raw);
    return Schemas.sparkColumns(
        flag(o, "includeheaders", false, "includeHeaders"),
        flag(o, "batchmetadata", false, "batchMetadata"));
  }

  /**
   * The options of typed keys and values (python/kafkalog/spark/values.py), lower case. The
   * JVM source decodes bytes only: a read with any of them is the Python source's, which
   * resolves the schema from the registry on the driver and decodes in the core.
   */
  static final Set<String> TYPED_VALUES =
      Set.of("keyformat", "valueformat", "schemaregistry", "onvalueerror", "keysubject",
          "valuesubject", "keysubjects", "valuesubjects");

  /** Whether the options ask for typed keys or values (any of {@link #TYPED_VALUES}). */
  static boolean typedValues(Map<String, String> raw) {
    for (String k : raw.keySet()) {
      if (TYPED_VALUES.contains(k.toLowerCase(Locale.ROOT))) {
        return true;
      }
    }
    return false;
  }

  static Map<String, String> lower(Map<String, String> raw) {
    Map<String, String> o = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : raw.entrySet()) {
      o.put(e.getKey().toLowerCase(Locale.ROOT), e.getValue());
    }
    return o;
  }

  static boolean parseBool(String value, String name) {
    String t = value.trim().toLowerCase(Locale.ROOT);
    if (t.equals("true") || t.equals("1") || t.equals("yes")) {
      return true;
    }
    if (t.equals("false") || t.equals("0") || t.equals("no")) {
      return false;
    }
    throw invalid("option " + name + " must be true or false, not '" + value + "'");
  }

  private static boolean flag(Map<String, String> o, String key, boolean dflt, String name) {
    String v = o.get(key);
    return v == null ? dflt : parseBool(v, name);
  }

  private static Long integer(Map<String, String> o, String key) {
    String v = o.get(key);
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw invalid("option " + key + " must be an integer, not '" + v + "'");
    }
  }

  static long toMillis(String value) {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw invalid("a timestamp must be epoch milliseconds or a datetime, not '" + value + "'");
    }
  }

  /** Spark's durations ({@code maxTriggerDelay}): {@code 15m}, {@code 30s}, {@code 500ms}... */
  static long durationMs(String text, String name) {
    String t = text.trim().toLowerCase(Locale.ROOT).replace(" ", "");
    // Longest suffix first ("min" before "m", "ms" before "s"), as options.py tries them.
    String[] suffixes = {"min", "ms", "s", "m", "h", "d"};
    long[] scales = {60_000L, 1L, 1000L, 60_000L, 3_600_000L, 86_400_000L};
    try {
      for (int i = 0; i < suffixes.length; i++) {
        String digits = t.endsWith(suffixes[i]) ? t.substring(0, t.length() - suffixes[i].length())
            : "";
        if (!digits.isEmpty() && digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
          return Math.multiplyExact(Long.parseLong(digits), scales[i]);
        }
      }
      if (!t.isEmpty() && t.chars().allMatch(c -> c >= '0' && c <= '9')) {
        return Long.parseLong(t);
      }
    } catch (ArithmeticException | NumberFormatException e) {
      // too large for milliseconds: as malformed
    }
    throw invalid(
        "option " + name + ": not a duration such as '15m' or '30s': '" + text + "'");
  }

  static Options parse(Map<String, String> raw, boolean streaming) {
    Map<String, String> o = lower(raw);
    Set<String> known = new HashSet<>(SPARK_IGNORED);
    for (String n : SPARK_READ) {
      known.add(n.toLowerCase(Locale.ROOT));
    }
    for (String n : KAFKALOG_READ) {
      known.add(n.toLowerCase(Locale.ROOT));
    }
    TreeSet<String> unknown = new TreeSet<>();
    for (String k : raw.keySet()) {
      String low = k.toLowerCase(Locale.ROOT);
      if (!known.contains(low) && !low.startsWith("kafka.") && !low.startsWith(STORAGE_PREFIX)) {
        unknown.add(low); // as Spark hands options to the Python source: lower case
      }
    }
    if (!unknown.isEmpty()) {
      throw invalid(
          "unknown option(s) for the kafkalog data source: " + String.join(", ", unknown)
              + "; it takes Spark's Kafka source options (" + String.join(", ", SPARK_READ)
              + ", kafka.*), and " + String.join(", ", KAFKALOG_READ) + ", storage.<key>");
    }
    Options out = new Options();
    if (o.containsKey("paths")) {
      out.paths = new ArrayList<>();
      try {
        for (JsonNode p : JSON.readTree(o.get("paths"))) {
          out.paths.add(p.asText());
        }
      } catch (java.io.IOException e) {
        throw invalid("paths must be a JSON list of paths: " + e.getMessage());
      }
    } else if (o.containsKey("path")) {
      out.paths = Collections.singletonList(o.get("path"));
    } else {
      throw invalid("give the log files to read: .load(\"/path/to/logs\")");
    }
    if (streaming) {
      for (String k : new String[] {"endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp"}) {
        if (o.get(k) != null) {
          throw invalid(
              "ending offsets are not valid in streaming queries (as in Spark's Kafka source): a"
                  + " streaming query reads on as the log grows");
        }
      }
    }
    String startDefault = streaming ? "latest" : "earliest";
    String startOffset = null, endOffset = null, startTs = null, endTs = null;
    boolean startTsAll = false, endTsAll = false;
    if (o.get("startingtimestamp") != null) {
      startTs = o.get("startingtimestamp");
      startTsAll = true;
    } else if (o.get("startingoffsetsbytimestamp") != null) {
      startTs = o.get("startingoffsetsbytimestamp");
    } else {
      startOffset = o.get("startingoffsets") == null || o.get("startingoffsets").isEmpty()
          ? startDefault : o.get("startingoffsets");
    }
    if (o.get("endingtimestamp") != null) {
      endTs = o.get("endingtimestamp");
      endTsAll = true;
    } else if (o.get("endingoffsetsbytimestamp") != null) {
      endTs = o.get("endingoffsetsbytimestamp");
    } else {
      endOffset = o.get("endingoffsets") == null || o.get("endingoffsets").isEmpty()
          ? "latest" : o.get("endingoffsets");
    }
    String[][] checks = {{"startingOffsets", startOffset, "latest"}, {"endingOffsets", endOffset, "earliest"}};
    for (String[] c : checks) {
      String value = c[1];
      if (value != null && !value.trim().startsWith("{")) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (!v.equals("earliest") && !v.equals("latest")) {
          throw invalid(
              c[0] + " must be 'earliest', 'latest' or JSON such as {\"topic\": {\"0\": 23}}, not '"
                  + value + "'");
        }
        if (v.equals(c[2]) && !streaming) {
          throw invalid(
              c[0] + "=" + c[2] + " is not valid for batch queries (as in Spark's Kafka source): it"
                  + " reads nothing");
        }
      }
    }
    String strategy =
        o.getOrDefault("startingoffsetsbytimestampstrategy", "error").trim().toLowerCase(Locale.ROOT);
    if (!strategy.equals("error") && !strategy.equals("latest")) {
      throw invalid(
          "startingOffsetsByTimestampStrategy must be 'error' or 'latest', not '" + strategy + "'");
    }
    out.strategy = strategy;
    out.startOffset = bound(startOffset, "starting offsets", false);
    out.endOffset = bound(endOffset, "ending offsets", false);
    out.startTimestamp = startTsAll ? new Bound(toMillis(startTs), Collections.emptyMap())
        : bound(startTs, "starting timestamp", true);
    out.endTimestamp = endTsAll ? new Bound(toMillis(endTs), Collections.emptyMap())
        : bound(endTs, "ending timestamp", true);
    String level = o.get("kafka.isolation.level");
    if (level == null || level.isEmpty()) {
      level = o.getOrDefault("isolationlevel", "read_uncommitted");
    }
    level = level.trim().toLowerCase(Locale.ROOT);
    if (!level.equals("read_committed") && !level.equals("read_uncommitted")) {
      throw invalid(
          "kafka.isolation.level must be 'read_uncommitted' or 'read_committed', not '" + level + "'");
    }
    out.readCommitted = level.equals("read_committed");
    subscription(out, o.get("subscribe") != null ? o.get("subscribe") : o.get("topics"),
        o.get("subscribepattern"), o.get("assign"), o.get("partitions"));
    out.failOnDataLoss = flag(o, "failondataloss", true, "failOnDataLoss");
    out.includeControl = flag(o, "includecontrol", false, "includeControl");
    out.checkCrc = flag(o, "checkcrc", true, "checkCrc");
    String onCorrupt = o.getOrDefault("oncorrupt", "error");
    if (onCorrupt.equals("raise")) {
      onCorrupt = "error";
    }
    if (!onCorrupt.equals("error") && !onCorrupt.equals("skip") && !onCorrupt.equals("stop")) {
      throw invalid("onCorrupt must be \"error\", \"skip\" or \"stop\", not '" + onCorrupt + "'");
    }
    out.onCorrupt = onCorrupt;
    Long mds = integer(o, "maxdecompressedsize");
    out.maxDecompressedSize = mds == null ? DEFAULT_MAX_DECOMPRESSED_SIZE : mds;
    Long bs = integer(o, "batchsize");
    out.batchSize = bs == null ? DEFAULT_BATCH_SIZE : bs;
    for (String k : new String[] {"minpartitions", "maxrecordsperpartition", "maxoffsetspertrigger",
        "minoffsetspertrigger", "targetbytes"}) {
      Long n = integer(o, k);
      if (n != null && n <= 0) {
        throw invalid("option " + k + " must be positive, not " + n);
      }
    }
    out.minPartitions = integer(o, "minpartitions");
    out.maxRecordsPerPartition = integer(o, "maxrecordsperpartition");
    out.maxOffsetsPerTrigger = integer(o, "maxoffsetspertrigger");
    out.minOffsetsPerTrigger = integer(o, "minoffsetspertrigger");
    out.maxTriggerDelayMs = durationMs(o.getOrDefault("maxtriggerdelay", "15m"), "maxTriggerDelay");
    Long tb = integer(o, "targetbytes");
    out.targetBytes = tb == null ? DEFAULT_TARGET_BYTES : tb;
    for (Map.Entry<String, String> e : o.entrySet()) {
      if (e.getKey().startsWith(STORAGE_PREFIX)) {
        out.storage.put(e.getKey().substring(STORAGE_PREFIX.length()), e.getValue());
      }
    }
    if (o.get("encryptionkeys") != null && !o.get("encryptionkeys").isEmpty()) {
      encryptionKeys(out, o.get("encryptionkeys"));
    }
    String vis = o.getOrDefault("visibility", "consumer");
    if (!vis.equals("consumer") && !vis.equals("all")) {
      throw invalid("visibility must be 'consumer' or 'all', not '" + vis + "'");
    }
    out.visibility = vis;
    out.columns = Schemas.sparkColumns(
        flag(o, "includeheaders", false, "includeHeaders"),
        flag(o, "batchmetadata", false, "batchMetadata"));
    return out;
  }

  /** {@code encryptionKeys}: key ids to PEM text or a PEM file's path, read here (the driver). */
  private static void encryptionKeys(Options out, String text) {
    JsonNode keys;
    try {
      keys = JSON.readTree(text);
    } catch (java.io.IOException e) {
      keys = null;
    }
    if (keys == null || !keys.isObject()) {
      throw invalid(
          "encryptionKeys must be JSON such as {\"key-2024\": \"/secrets/rsm-private.pem\"}");
    }
    for (Map.Entry<String, JsonNode> e : keys.properties()) {
      String v = e.getValue().asText();
      if (!v.contains("-----BEGIN")) {
        try {
          v = new String(Files.readAllBytes(Paths.get(v)), StandardCharsets.US_ASCII);
        } catch (java.io.IOException err) {
          throw invalid(
              "encryption key '" + e.getKey() + "': cannot read the key file: " + err.getMessage());
        }
      }
      // As the core takes a key (python/kafkalog/_storage.py's ENCRYPTION_KEY_OPTION).
      out.storage.put("kafkalog.encryption_key." + e.getKey(), v);
    }
  }

  private static void subscription(
      Options out, String topics, String pattern, String assign, String partitions) {
    List<String> given = new ArrayList<>();
    if (assign != null) {
      given.add("assign");
    }
    if (topics != null) {
      given.add("subscribe");
    }
    if (pattern != null) {
      given.add("subscribePattern");
    }
    if (given.size() > 1) {
      throw invalid(
          "only one of assign, subscribe and subscribePattern can be given, not "
              + String.join(" and ", given) + " (as Spark's Kafka source)");
    }
    if (topics != null) {
      out.topics = new HashSet<>();
      for (String t : topics.split(",")) {
        if (!t.trim().isEmpty()) {
          out.topics.add(t.trim());
        }
      }
      if (out.topics.isEmpty()) {
        throw invalid("subscribe: no topic given");
      }
    }
    if (pattern != null) {
      try {
        Pattern.compile(pattern);
      } catch (PatternSyntaxException e) {
        throw invalid("subscribePattern: bad pattern: " + e.getDescription());
      }
      out.pattern = pattern;
    }
    if (assign != null) {
      JsonNode a;
      try {
        a = JSON.readTree(assign);
      } catch (java.io.IOException e) {
        throw invalid("assign: not valid JSON: " + e.getMessage());
      }
      if (a == null || !a.isObject()) {
        throw invalid("assign: expected {\"topic\": [0, 1]}, not " + assign);
      }
      out.assign = new HashSet<>();
      for (Map.Entry<String, JsonNode> e : a.properties()) {
        if (!e.getValue().isArray()) {
          throw invalid("assign: expected {\"topic\": [0, 1]}, not " + assign);
        }
        for (JsonNode p : e.getValue()) {
          out.assign.add(key(e.getKey(), p.asInt()));
        }
      }
    }
    if (partitions != null) {
      out.partitions = new HashSet<>();
      try {
        for (String p : partitions.split(",")) {
          out.partitions.add(Integer.parseInt(p.trim()));
        }
      } catch (NumberFormatException e) {
        throw invalid("partitions must be integers: '" + partitions + "'");
      }
    }
  }

  /** Whether the subscription takes a topic-partition. */
  boolean takes(String topic, Integer partition) {
    if (topics != null && (topic == null || !topics.contains(topic))) {
      return false;
    }
    if (pattern != null && (topic == null || !Pattern.compile(pattern).matcher(topic).matches())) {
      return false;
    }
    if (assign != null && !assign.contains(key(topic, partition))) {
      return false;
    }
    return partitions == null || (partition != null && partitions.contains(partition));
  }

  private static Bound bound(String spec, String what, boolean timestamps) {
    if (spec == null) {
      return Bound.NONE;
    }
    String text = spec.trim();
    String low = text.toLowerCase(Locale.ROOT);
    if (!timestamps && (low.equals("earliest") || low.equals("latest"))) {
      return new Bound((long) (low.equals("earliest") ? EARLIEST : LATEST), Collections.emptyMap());
    }
    if (!text.startsWith("{")) {
      return new Bound(timestamps ? toMillis(text) : offset(text, what), Collections.emptyMap());
    }
    JsonNode tree;
    try {
      tree = JSON.readTree(text);
    } catch (java.io.IOException e) {
      throw invalid(what + ": not valid JSON: " + e.getMessage());
    }
    Map<String, Long> per = new HashMap<>();
    for (Map.Entry<String, JsonNode> t : tree.properties()) {
      if (!t.getValue().isObject()) {
        throw invalid(what + ": expected {\"topic\": {\"partition\": value}}, got " + text);
      }
      for (Map.Entry<String, JsonNode> p : t.getValue().properties()) {
        int partition;
        try {
          partition = Integer.parseInt(p.getKey().trim());
        } catch (NumberFormatException e) {
          throw invalid(what + ": bad partition '" + p.getKey() + "'");
        }
        String v = p.getValue().asText();
        per.put(key(t.getKey(), partition), timestamps ? toMillis(v) : offset(v, what));
      }
    }
    return new Bound(null, per);
  }

  private static long offset(String value, String what) {
    long n;
    try {
      n = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw invalid(what + ": not an offset: '" + value + "'");
    }
    if (n < EARLIEST) {
      throw invalid(what + ": invalid offset " + n + " (-2 is earliest, -1 latest)");
    }
    return n;
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
      throw invalid("bounds name topic-partitions that are not there: " + String.join(", ", names));
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
        throw invalid(
            whats[i] + " names specific partitions, so it must name every partition read (as"
                + " Spark's Kafka source requires; -2 is earliest, -1 latest): missing "
                + String.join(", ", names));
      }
    }
  }
}
