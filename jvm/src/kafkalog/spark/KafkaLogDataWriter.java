package kafkalog.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;

/**
 * A write task: Spark's rows into Arrow vectors by Spark's own {@code ArrowWriter} (the
 * conversion Spark uses for Arrow everywhere, every Spark type), written as Arrow IPC stream
 * messages into a direct buffer and handed to the core a batch at a time ({@link
 * NativeWrite#write}), which writes them as Kafka partition directories in the job's staging
 * directory. Nothing crosses JNI per row. {@link #commit} completes the directories and reports
 * them; {@link #abort} leaves nothing.
 */
final class KafkaLogDataWriter implements DataWriter<InternalRow> {
  /** Rows per batch handed to the core. */
  static final int BATCH_ROWS = 32768;
  /** Bytes of Arrow vectors after which a batch is handed over sooner. */
  static final long BATCH_BYTES = 16L << 20;

  private final ArrowWriter arrow;
  private final VectorSchemaRoot root;
  private final ArrowStreamWriter ipc;
  private final Sink sink = new Sink();
  private long handle;
  private int rows;

  KafkaLogDataWriter(String job, StructType schema, String timeZone) {
    arrow = ArrowWriter.create(schema, timeZone, true, false);
    root = arrow.root();
    ipc = new ArrowStreamWriter(root, null, sink);
    handle = NativeWrite.open(job);
  }

  @Override
  public void write(InternalRow row) throws IOException {
    arrow.write(row);
    rows++;
    if (rows >= BATCH_ROWS || ((rows & 1023) == 0 && arrow.sizeInBytes() >= BATCH_BYTES)) {
      flush();
    }
  }

  /** The rows so far, to the core. */
  private void flush() throws IOException {
    if (rows == 0) {
      return;
    }
    arrow.finish();
    ipc.writeBatch();
    arrow.reset();
    rows = 0;
    NativeWrite.write(handle, sink.buffer, sink.buffer.position());
    sink.buffer.clear();
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    flush();
    long h = handle;
    handle = 0; // finish frees it, whatever happens
    return new Message(NativeWrite.finish(h));
  }

  @Override
  public void abort() {
    long h = handle;
    handle = 0;
    NativeWrite.abort(h);
  }

  @Override
  public void close() {
    if (handle != 0) {
      abort();
    }
    root.close();
  }

  /** A task's report: the core's commit message (JSON). */
  static final class Message implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final String json;

    Message(String json) {
      this.json = json;
    }

    @Override
    public String toString() {
      return json;
    }
  }

  /** Makes the tasks' writers (sent to the executors). */
  static final class Factory implements DataWriterFactory, StreamingDataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final String job;
    private final StructType schema;
    private final String timeZone;

    Factory(String job, StructType schema, String timeZone) {
      this.job = job;
      this.schema = schema;
      this.timeZone = timeZone;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new KafkaLogDataWriter(job, schema, timeZone);
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
      return new KafkaLogDataWriter(job, schema, timeZone);
    }
  }

  /** A channel into a direct buffer that grows as needed. */
  static final class Sink implements WritableByteChannel {
    ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);

    @Override
    public int write(ByteBuffer src) {
      int n = src.remaining();
      if (buffer.remaining() < n) {
        long want = Math.max(2L * buffer.capacity(), (long) buffer.position() + n);
        if (want > Integer.MAX_VALUE - 8) {
          throw KafkaLogException.invalid("a batch of rows over 2 GiB");
        }
        ByteBuffer grown = ByteBuffer.allocateDirect((int) want);
        buffer.flip();
        grown.put(buffer);
        buffer = grown;
      }
      buffer.put(src);
      return n;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
