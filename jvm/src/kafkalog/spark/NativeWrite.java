package kafkalog.spark;

import java.nio.ByteBuffer;

/**
 * The native calls of writes ({@code rust/jni/writer.rs}), in the library {@link Native} loads.
 * Jobs, requests and commit messages are JSON; a task's rows cross as Arrow IPC stream messages
 * in a direct buffer, one call per batch of rows. Every failure is a {@link KafkaLogException}.
 */
final class NativeWrite {
  private NativeWrite() {}

  static {
    Native.platform(); // loads the library (Native's static initializer), once per JVM
  }

  /** The job of {@code {"options", "streaming"}}: options checked, a batch job's staging made. */
  static native String job(String request);

  /** A task's writer of the job: a handle for {@link #write}, {@link #finish}, {@link #abort}. */
  static native long open(String job);

  /** Writes the Arrow IPC stream messages in the first {@code length} bytes of {@code rows}. */
  static native void write(long handle, ByteBuffer rows, int length);

  /** Completes the task's partition directories; its commit message. Frees the handle. */
  static native String finish(long handle);

  /** Drops the task's writer and what it wrote. Frees the handle. */
  static native void abort(long handle);

  /** Commits a batch job: {@code messages} is a JSON array of the tasks' messages. */
  static native void commit(String job, String messages, boolean overwrite);

  /** Aborts a batch job: its staging directory removed. */
  static native void abortJob(String job);

  /** Commits a streaming micro-batch (its epoch id marks the appends). */
  static native void commitStream(String job, String messages, long epoch);

  /** Aborts a streaming micro-batch. */
  static native void abortStream(String job, String messages);
}
