package kafkalog.spark;

import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One task's reader: the core decodes its work items into Arrow batches (typed keys and values
 * too, in Spark's shapes); each becomes a {@link ColumnarBatch} of {@link NativeVectors} over
 * the same buffers. A batch is valid until the next {@link #next()} (which frees it on the
 * native side) or {@link #close()}.
 */
final class ColumnarReader implements PartitionReader<ColumnarBatch> {
  /**
   * Where Spark takes a task's input bytes from: it sets them, at the end of each reader and
   * every thousand records, to what Hadoop file systems' counters of the task's thread grew by
   * (DataSourceRDD's metrics, SparkHadoopUtil's bytes-read callback), overwriting anything a
   * source adds itself. The core reads without Hadoop, so the reader adds its items' bytes to
   * a counter of its own in that table, on the task's thread: Spark's "Input" columns (stage
   * and task pages, event logs) then show the bytes of Kafka log read.
   */
  @SuppressWarnings("deprecation")
  private static final FileSystem.Statistics INPUT_BYTES =
      FileSystem.getStatistics("kafkalog", StatisticsKey.class);

  /** The class the counter is registered under (Hadoop keys its table by file system class). */
  private abstract static class StatisticsKey extends FileSystem {}

  private long handle;
  private final DataType[] types;
  private ColumnarBatch current;
  private final long bytes;
  private boolean done;

  ColumnarReader(String request, StructType columns, long bytes) {
    this.bytes = bytes;
    this.types = new DataType[columns.fields().length];
    for (int i = 0; i < types.length; i++) {
      types[i] = columns.fields()[i].dataType();
    }
    this.handle = Native.open(request);
  }

  @Override
  public boolean next() {
    if (handle == 0) {
      return false;
    }
    long[] d = Native.next(handle);
    if (d == null) {
      current = null;
      if (!done) {
        done = true;
        INPUT_BYTES.incrementBytesRead(bytes);
      }
      return false;
    }
    int rows = (int) d[0];
    NativeVectors.Cursor c = new NativeVectors.Cursor(d, 1);
    ColumnVector[] vectors = new ColumnVector[types.length];
    for (int i = 0; i < types.length; i++) {
      vectors[i] = NativeVectors.read(c, types[i]);
    }
    current = new ColumnarBatch(vectors, rows);
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    // The items' bytes once they are read through.
    return new CustomTaskMetric[] {LogBytesMetric.of(done ? bytes : 0)};
  }

  @Override
  public void close() {
    current = null;
    if (handle != 0) {
      long h = handle;
      handle = 0;
      Native.close(h);
    }
  }
}
