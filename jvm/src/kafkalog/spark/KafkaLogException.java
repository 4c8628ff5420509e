package kafkalog.spark;

/**
 * A failure of the kafkalog core, thrown by the native library (every core error, JNI error
 * and caught panic arrives as one). {@link #kind()} names the kind as the Python exceptions'
 * {@code kind} attribute does ({@code corrupt}, {@code crc_mismatch}, {@code file_not_found},
 * {@code invalid_argument}, ...); the message is the core's.
 */
public final class KafkaLogException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String kind;

  /** From the native side: {@code "<kind>|<message>"}. */
  public KafkaLogException(String encoded) {
    super(encoded.indexOf('|') >= 0 ? encoded.substring(encoded.indexOf('|') + 1) : encoded);
    int bar = encoded.indexOf('|');
    this.kind = bar >= 0 ? encoded.substring(0, bar) : "internal";
  }

  public KafkaLogException(String kind, String message) {
    super(message);
    this.kind = kind;
  }

  static KafkaLogException invalid(String message) {
    return new KafkaLogException("invalid_argument", message);
  }

  /** The error's kind, as {@code kafkalog.errors} names it. */
  public String kind() {
    return kind;
  }

  /**
   * The class of {@code kafkalog.errors} the Python API raises for this kind (the same table as
   * {@code rust/python/errors.rs}), so that both sources' errors name the same type.
   */
  public String pythonClass() {
    switch (kind) {
      case "corrupt":
        return "CorruptRecordError";
      case "crc_mismatch":
        return "CrcMismatchError";
      case "decompression":
        return "DecompressionError";
      case "limit_exceeded":
        return "LimitExceededError";
      case "invalid_argument":
        return "InvalidArgumentError";
      case "io":
        return "KafkaLogIOError";
      case "conflict":
        return "ConcurrentWriteError";
      case "tiered_storage":
        return "TieredStorageError";
      case "decryption":
        return "DecryptionError";
      case "encryption_key":
        return "EncryptionKeyError";
      case "file_not_found":
        return "KafkaLogFileNotFoundError";
      case "permission":
        return "KafkaLogPermissionError";
      case "data_loss":
        return "DataLossError";
      case "value":
        return "ValueDecodeError";
      default:
        return "KafkaLogError";
    }
  }

  @Override
  public String toString() {
    return getClass().getName() + ": " + pythonClass() + ": " + getMessage();
  }
}
