package kafkalog.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * A write of DataFrame rows as Kafka partition directories, through the core's writer and its
 * atomic placement ({@code rust/spark/writing.rs}): tasks write complete partition directories
 * into the job's staging directory ({@link KafkaLogDataWriter}), and the driver publishes them
 * all when Spark commits the job ({@link BatchWrite#commit}), or removes them when it aborts.
 * A streaming query's micro-batch is appended when Spark commits its epoch, marked with the
 * query's {@code writerId} and the epoch id, so an epoch Spark replays is not appended twice.
 * The options are checked by the core on the driver, before any task runs.
 */
final class KafkaLogWrite implements Write {
  static final ObjectMapper JSON = new ObjectMapper();

  private final StructType schema;
  private final Map<String, String> options;
  private final boolean overwrite;

  KafkaLogWrite(StructType schema, Map<String, String> options, boolean overwrite) {
    this.schema = schema;
    this.options = new TreeMap<>(options);
    this.overwrite = overwrite;
  }

  @Override
  public String description() {
    return "KafkaLogWrite[" + options.getOrDefault("path", "") + (overwrite ? ", overwrite" : "")
        + "]";
  }

  @Override
  public String toString() {
    return description();
  }

  /** The core's job for these options (checked, a batch job's staging made), as JSON. */
  private String job(boolean streaming) {
    ObjectNode r = JSON.createObjectNode();
    ObjectNode o = r.putObject("options");
    options.forEach(o::put);
    r.put("streaming", streaming);
    return NativeWrite.job(r.toString());
  }

  @Override
  public BatchWrite toBatch() {
    if (options.keySet().stream().noneMatch(k -> k.equalsIgnoreCase("path"))) {
      throw KafkaLogException.invalid("give the directory to write: .save(\"/path/to/logs\")");
    }
    return new Batch(job(false), schema, overwrite, description());
  }

  @Override
  public StreamingWrite toStreaming() {
    if (overwrite) {
      throw KafkaLogException.invalid(
          "the kafkalog sink appends, as a broker does: use outputMode('append')");
    }
    return new Streaming(job(true), schema, "KafkaLogWrite[" + options.getOrDefault("path", "")
        + ", streaming]");
  }

  /** The session's time zone, for Spark's timestamps in Arrow (the rows' instants). */
  static String timeZone() {
    return SQLConf.get().sessionLocalTimeZone();
  }

  /** The tasks' commit messages as the core reads them: a JSON array (null for none). */
  static String messages(WriterCommitMessage[] messages) {
    ArrayNode out = JSON.createArrayNode();
    for (WriterCommitMessage m : messages) {
      if (m instanceof KafkaLogDataWriter.Message) {
        out.addRawValue(
            new com.fasterxml.jackson.databind.util.RawValue(((KafkaLogDataWriter.Message) m).json));
      } else if (m == null) {
        out.addNull();
      } else {
        throw KafkaLogException.invalid("not a kafkalog writer's commit message: " + m);
      }
    }
    return out.toString();
  }

  /** A batch job. */
  static final class Batch implements BatchWrite {
    private final String job;
    private final StructType schema;
    private final boolean overwrite;
    private final String description;

    Batch(String job, StructType schema, boolean overwrite, String description) {
      this.job = job;
      this.schema = schema;
      this.overwrite = overwrite;
      this.description = description;
    }

    @Override
    public String toString() {
      return description;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new KafkaLogDataWriter.Factory(job, schema, timeZone());
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      NativeWrite.commit(job, messages(messages), overwrite);
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      NativeWrite.abortJob(job);
    }
  }

  /** A streaming query's sink. */
  static final class Streaming implements StreamingWrite {
    private final String job;
    private final StructType schema;
    private final String description;

    Streaming(String job, StructType schema, String description) {
      this.job = job;
      this.schema = schema;
      this.description = description;
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
      return new KafkaLogDataWriter.Factory(job, schema, timeZone());
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
      NativeWrite.commitStream(job, messages(messages), epochId);
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
      NativeWrite.abortStream(job, messages(messages));
    }

    @Override
    public String toString() {
      return description;
    }
  }
}
