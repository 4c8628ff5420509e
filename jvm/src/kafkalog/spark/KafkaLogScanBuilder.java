package kafkalog.spark;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Column pruning (only the columns asked for are decoded) and predicate pushdown: {@code topic}
 * and {@code partition} predicates prune partitions, {@code offset} predicates narrow each
 * partition's offset range, and a lower bound on {@code timestamp} starts each partition at the
 * first offset at or after it (ListOffsets through the time index, as a bounded read does).
 * Every predicate is also left for Spark to evaluate: pushdown only reads less.
 */
final class KafkaLogScanBuilder
    implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownV2Filters {
  private final CaseInsensitiveStringMap options;
  private final Schemas schemas;
  private StructType columns;
  private final Planner.Pushed pushed = new Planner.Pushed();
  private final List<Predicate> used = new ArrayList<>();

  KafkaLogScanBuilder(CaseInsensitiveStringMap options, StructType schema) {
    this.options = options;
    this.schemas = Schemas.of(options.asCaseSensitiveMap()); // the registry read, if asked
    this.columns = schemas.check(schema);
  }

  /**
   * The columns Spark needs, nested ones pruned as Spark pushes them ({@code value.address.city}
   * keeps only that field of {@code value}): the core drops the arrays of fields left out
   * before Spark sees the batch.
   */
  @Override
  public void pruneColumns(StructType required) {
    List<StructField> keep = new ArrayList<>();
    for (StructField f : required.fields()) {
      if (columns.getFieldIndex(f.name()).isDefined()) {
        keep.add(f);
      }
    }
    columns = new StructType(keep.toArray(new StructField[0]));
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    for (Predicate p : predicates) {
      if (use(p)) {
        used.add(p);
      }
    }
    return predicates; // Spark still evaluates them all
  }

  @Override
  public Predicate[] pushedPredicates() {
    return used.toArray(new Predicate[0]);
  }

  @Override
  public Scan build() {
    return new KafkaLogScan(options, schemas, columns, pushed, pushedPredicates());
  }

  private static String column(Expression e) {
    if (e instanceof NamedReference) {
      String[] names = ((NamedReference) e).fieldNames();
      return names.length == 1 ? names[0] : null;
    }
    return null;
  }

  private static Object literal(Expression e) {
    return e instanceof Literal ? ((Literal<?>) e).value() : null;
  }

  private static String flip(String op) {
    switch (op) {
      case ">":
        return "<";
      case ">=":
        return "<=";
      case "<":
        return ">";
      case "<=":
        return ">=";
      default:
        return op;
    }
  }

  /** Narrows the plan by a predicate this source understands; whether it did. */
  private boolean use(Predicate p) {
    String op = p.name();
    Expression[] c = p.children();
    if (op.equals("AND") && c.length == 2) {
      boolean a = c[0] instanceof Predicate && use((Predicate) c[0]);
      boolean b = c[1] instanceof Predicate && use((Predicate) c[1]);
      return a || b;
    }
    if (op.equals("IN") && c.length >= 1 && column(c[0]) != null) {
      String col = column(c[0]);
      Set<Object> values = new HashSet<>();
      for (int i = 1; i < c.length; i++) {
        Object v = literal(c[i]);
        if (v == null) {
          return false;
        }
        values.add(v);
      }
      return in(col, values);
    }
    if (c.length != 2) {
      return false;
    }
    String col = column(c[0]);
    Object value = literal(c[1]);
    if (col == null) {
      col = column(c[1]);
      value = literal(c[0]);
      op = flip(op);
    }
    if (col == null || value == null) {
      return false;
    }
    switch (col) {
      case "topic":
      case "partition":
        if (op.equals("=")) {
          Set<Object> one = new HashSet<>();
          one.add(value);
          return in(col, one);
        }
        return false;
      case "offset":
        if (!(value instanceof Long)) {
          return false;
        }
        return offset(op, (Long) value);
      case "timestamp":
        if (!(value instanceof Long)) {
          return false;
        }
        return timestamp(op, (Long) value);
      default:
        return false;
    }
  }

  private boolean in(String col, Set<Object> values) {
    if (col.equals("topic")) {
      Set<String> topics = new HashSet<>();
      for (Object v : values) {
        if (!(v instanceof UTF8String)) {
          return false;
        }
        topics.add(v.toString());
      }
      if (pushed.topics != null) {
        topics.retainAll(pushed.topics);
      }
      pushed.topics = topics;
      return true;
    }
    if (col.equals("partition")) {
      Set<Integer> partitions = new HashSet<>();
      for (Object v : values) {
        if (!(v instanceof Integer)) {
          return false;
        }
        partitions.add((Integer) v);
      }
      if (pushed.partitions != null) {
        partitions.retainAll(pushed.partitions);
      }
      pushed.partitions = partitions;
      return true;
    }
    return false;
  }

  private boolean offset(String op, long v) {
    switch (op) {
      case "=":
        pushed.offsetLow = Math.max(pushed.offsetLow, v);
        pushed.offsetHigh = Math.min(pushed.offsetHigh, v == Long.MAX_VALUE ? v : v + 1);
        return true;
      case ">=":
        pushed.offsetLow = Math.max(pushed.offsetLow, v);
        return true;
      case ">":
        pushed.offsetLow = Math.max(pushed.offsetLow, v == Long.MAX_VALUE ? v : v + 1);
        return true;
      case "<":
        pushed.offsetHigh = Math.min(pushed.offsetHigh, v);
        return true;
      case "<=":
        pushed.offsetHigh = Math.min(pushed.offsetHigh, v == Long.MAX_VALUE ? v : v + 1);
        return true;
      default:
        return false;
    }
  }

  /**
   * A lower bound on the timestamp (microseconds, Spark's TimestampType) as the first
   * millisecond a record needs: {@code >= T} keeps {@code ms * 1000 >= T}.
   */
  private boolean timestamp(String op, long micros) {
    long ms;
    if (op.equals(">=") || op.equals("=")) {
      ms = Math.floorDiv(micros, 1000) + (Math.floorMod(micros, 1000) == 0 ? 0 : 1);
    } else if (op.equals(">")) {
      ms = Math.floorDiv(micros, 1000) + 1;
    } else {
      return false; // an upper bound: timestamps need not grow with offsets
    }
    pushed.timestampLowMs =
        pushed.timestampLowMs == null ? ms : Math.max(pushed.timestampLowMs, ms);
    return true;
  }
}
