package kafkalog.spark;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * The native calls into the kafkalog core ({@code rust/jni/}). The library is the one this jar
 * carries for the platform ({@code kafkalog/native/<os>-<arch>/libkafkalog_jni.so}, copied to
 * a temporary file and loaded once per JVM), or the file the system property
 * {@code kafkalog.native.library} (or the environment variable
 * {@code KAFKALOG_NATIVE_LIBRARY}) names.
 *
 * <p>Requests and answers other than record batches are JSON. Every failure is a {@link
 * KafkaLogException}; the native side never lets a panic reach the JVM.
 */
final class Native {
  private Native() {}

  static {
    load();
  }

  /** The data source's options checked: see {@code rust/jni/options.rs}. */
  static native String options(String request);

  /** A read's Spark schema, with typed keys and values resolved. */
  static native String schema(String request);

  /** The logs under paths: see {@code rust/jni/planning.rs}. */
  static native String discover(String request);

  /** ListOffsets of whole partitions. */
  static native String listOffsets(String request);

  /** Work items of each partition's offset range. */
  static native String plan(String request);

  /** A micro-batch's end offsets under {@code maxOffsetsPerTrigger}: see {@link
   * KafkaLogStream#rateLimit}. */
  static native String rateLimit(String request);

  /** A reader of work items: a handle for {@link #next} and {@link #close}. */
  static native long open(String request);

  /**
   * The next batch's descriptor (row count, then each column's buffers' addresses), or null
   * after the last. The previous batch's buffers are freed first.
   */
  static native long[] next(long handle);

  /** Frees the reader and its last batch. */
  static native void close(long handle);

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      arch = "x86_64";
    } else if (arch.equals("aarch64") || arch.equals("arm64")) {
      arch = "aarch64";
    }
    if (os.startsWith("linux")) {
      os = "linux";
    } else if (os.startsWith("mac")) {
      os = "macos";
    } else if (os.startsWith("windows")) {
      os = "windows";
    }
    return os + "-" + arch;
  }

  static String libraryName() {
    String platform = platform();
    if (platform.startsWith("macos")) {
      return "libkafkalog_jni.dylib";
    }
    return platform.startsWith("windows") ? "kafkalog_jni.dll" : "libkafkalog_jni.so";
  }

  private static void load() {
    String given = System.getProperty("kafkalog.native.library");
    if (given == null) {
      given = System.getenv("KAFKALOG_NATIVE_LIBRARY");
    }
    if (given != null && !given.isEmpty()) {
      System.load(given);
      return;
    }
    String resource = "/kafkalog/native/" + platform() + "/" + libraryName();
    try (InputStream in = Native.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "this kafkalog jar has no native library for " + platform() + " (" + resource
                + "); build one with `make jar` or name it with -Dkafkalog.native.library=");
      }
      Path file = Files.createTempFile("kafkalog_jni", libraryName());
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toString());
      } finally {
        // Loaded (mapped) or not, the file is not needed any more on Unix; Windows keeps a
        // loaded library's file open, so there it goes when the JVM exits.
        try {
          Files.deleteIfExists(file);
        } catch (java.io.IOException e) {
          file.toFile().deleteOnExit();
        }
      }
    } catch (java.io.IOException e) {
      throw new UnsatisfiedLinkError("copying the kafkalog native library: " + e);
    }
  }
}
