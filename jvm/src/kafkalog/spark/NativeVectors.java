package kafkalog.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.BinaryView;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark column vectors over the Arrow buffers the core filled, read in place through {@link
 * Platform} (no copy but the bytes a {@code getBinary} returns, as Spark's own off-heap vectors
 * do). The buffers belong to the native reader: they are valid until its next {@code next} or
 * {@code close}, exactly as long as Spark uses the batch. {@link #close()} frees nothing.
 *
 * <p>The arrays are already in Spark's shapes ({@code rust/spark/shapes.rs}: timestamps in
 * microseconds, times and unsigned integers as Spark's integers, ...): each vector reads one
 * Arrow layout. A batch's descriptor (see {@code rust/jni/reader.rs}) holds, per array and then
 * its children: type tag, the tag's parameter (a fixed width, a dictionary's key width), null
 * count, validity address (0 for no nulls), validity bit offset, element offset, buffer count,
 * buffer addresses.
 */
final class NativeVectors {
  private NativeVectors() {}

  static final int BOOL = 1, INT8 = 2, INT16 = 3, INT32 = 4, INT64 = 5, FLOAT32 = 6;
  static final int FLOAT64 = 7, BYTES = 8, BINARY_VIEW = 9, LIST = 10, STRUCT = 11, MAP = 12;
  static final int DECIMAL128 = 13, DICTIONARY = 14, FIXED_BINARY = 15, LARGE_BYTES = 16;

  /** Reads a descriptor from a position. */
  static final class Cursor {
    final long[] words;
    int at;

    Cursor(long[] words, int at) {
      this.words = words;
      this.at = at;
    }

    long take() {
      return words[at++];
    }
  }

  /** The vector of the next array of {@code c}, whose Spark type is {@code type}. */
  static Base read(Cursor c, DataType type) {
    int tag = (int) c.take();
    long param = c.take();
    int nullCount = (int) c.take();
    long validity = c.take();
    long validityOffset = c.take();
    long offset = c.take();
    int n = (int) c.take();
    long[] buffers = new long[n];
    for (int i = 0; i < n; i++) {
      buffers[i] = c.take();
    }
    Base v;
    switch (tag) {
      case BOOL:
        v = new Bits(type, buffers[0]);
        break;
      case INT8:
        v = new Fixed(type, buffers[0], 0);
        break;
      case INT16:
        v = new Fixed(type, buffers[0], 1);
        break;
      case INT32:
      case FLOAT32:
        v = new Fixed(type, buffers[0], 2);
        break;
      case INT64:
      case FLOAT64:
        v = new Fixed(type, buffers[0], 3);
        break;
      case BYTES:
        v = new Bytes(type, buffers[0], buffers[1]);
        break;
      case LARGE_BYTES:
        v = new LargeBytes(type, buffers[0], buffers[1]);
        break;
      case BINARY_VIEW:
        long[] data = new long[n - 1];
        System.arraycopy(buffers, 1, data, 0, n - 1);
        v = new Views(type, buffers[0], data);
        break;
      case FIXED_BINARY:
        v = new FixedBinary(type, buffers[0], (int) param);
        break;
      case DECIMAL128:
        v = new Decimals(type, buffers[0]);
        break;
      case DICTIONARY:
        v = new Dictionary(type, buffers[0], (int) param, read(c, type));
        break;
      case LIST:
        {
          DataType element = ((ArrayType) type).elementType();
          v = new ListOf(type, buffers[0], read(c, element));
          break;
        }
      case MAP:
        {
          MapType map = (MapType) type;
          // The entries: a struct of key and value, whose own nulls Arrow forbids.
          Base entries =
              read(c, new StructType().add("key", map.keyType()).add("value", map.valueType()));
          v = new MapOf(type, buffers[0], entries.getChild(0), entries.getChild(1));
          break;
        }
      case STRUCT:
        {
          StructType struct = (StructType) type;
          Base[] children = new Base[struct.fields().length];
          for (int i = 0; i < children.length; i++) {
            children[i] = read(c, struct.fields()[i].dataType());
          }
          v = new Struct(type, children);
          break;
        }
      default:
        throw new KafkaLogException("internal", "unknown Arrow type tag " + tag);
    }
    v.nullCount = nullCount;
    v.validity = validity;
    v.validityOffset = validityOffset;
    v.offset = offset;
    return v;
  }

  /** Nulls from Arrow's validity bitmap; every other getter unsupported unless overridden. */
  abstract static class Base extends ColumnVector {
    int nullCount;
    long validity;
    long validityOffset;
    long offset;

    Base(DataType type) {
      super(type);
    }

    @Override
    public void close() {}

    @Override
    public boolean hasNull() {
      return nullCount > 0;
    }

    @Override
    public int numNulls() {
      return nullCount;
    }

    @Override
    public boolean isNullAt(int rowId) {
      if (validity == 0) {
        return false;
      }
      long bit = validityOffset + rowId;
      return ((Platform.getByte(null, validity + (bit >> 3)) >> (bit & 7)) & 1) == 0;
    }

    private UnsupportedOperationException unsupported() {
      return new UnsupportedOperationException(getClass().getSimpleName() + " of " + type);
    }

    @Override
    public boolean getBoolean(int rowId) {
      throw unsupported();
    }

    @Override
    public byte getByte(int rowId) {
      throw unsupported();
    }

    @Override
    public short getShort(int rowId) {
      throw unsupported();
    }

    @Override
    public int getInt(int rowId) {
      throw unsupported();
    }

    @Override
    public long getLong(int rowId) {
      throw unsupported();
    }

    @Override
    public float getFloat(int rowId) {
      throw unsupported();
    }

    @Override
    public double getDouble(int rowId) {
      throw unsupported();
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      throw unsupported();
    }

    @Override
    public ColumnarMap getMap(int ordinal) {
      throw unsupported();
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      throw unsupported();
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      throw unsupported();
    }

    @Override
    public byte[] getBinary(int rowId) {
      throw unsupported();
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      throw unsupported();
    }
  }

  /** Arrow's booleans: one bit each. */
  static final class Bits extends Base {
    private final long values;

    Bits(DataType type, long values) {
      super(type);
      this.values = values;
    }

    @Override
    public boolean getBoolean(int rowId) {
      long bit = offset + rowId;
      return ((Platform.getByte(null, values + (bit >> 3)) >> (bit & 7)) & 1) != 0;
    }
  }

  /**
   * Fixed-width numbers: integers, floats, and what Spark holds as integers (dates in days,
   * timestamps and day-time intervals in microseconds).
   */
  static final class Fixed extends Base {
    private final long values;
    private final int shift;

    Fixed(DataType type, long values, int shift) {
      super(type);
      this.values = values;
      this.shift = shift;
    }

    private long at(int rowId) {
      return values + ((offset + rowId) << shift);
    }

    @Override
    public byte getByte(int rowId) {
      return Platform.getByte(null, at(rowId));
    }

    @Override
    public short getShort(int rowId) {
      return Platform.getShort(null, at(rowId));
    }

    @Override
    public int getInt(int rowId) {
      return Platform.getInt(null, at(rowId));
    }

    @Override
    public long getLong(int rowId) {
      return Platform.getLong(null, at(rowId));
    }

    @Override
    public float getFloat(int rowId) {
      return Platform.getFloat(null, at(rowId));
    }

    @Override
    public double getDouble(int rowId) {
      return Platform.getDouble(null, at(rowId));
    }
  }

  /** Arrow's {@code utf8} and {@code binary}: 32-bit offsets into one data buffer. */
  static final class Bytes extends Base {
    private final long offsets;
    private final long data;

    Bytes(DataType type, long offsets, long data) {
      super(type);
      this.offsets = offsets;
      this.data = data;
    }

    private int start(int rowId) {
      return Platform.getInt(null, offsets + ((offset + rowId) << 2));
    }

    private int end(int rowId) {
      return Platform.getInt(null, offsets + ((offset + rowId + 1) << 2));
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      int start = start(rowId);
      return UTF8String.fromAddress(null, data + start, end(rowId) - start);
    }

    @Override
    public byte[] getBinary(int rowId) {
      int start = start(rowId);
      byte[] out = new byte[end(rowId) - start];
      Platform.copyMemory(null, data + start, out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }

    @Override
    public BinaryView getBinaryView(int rowId) {
      int start = start(rowId);
      return BinaryView.fromAddress(null, data + start, end(rowId) - start);
    }
  }

  /**
   * Arrow's {@code binary_view}: 16-byte views, the bytes inline (up to 12) or in one of the
   * data buffers (which point into the segment's memory map or a decompressed batch).
   */
  static final class Views extends Base {
    private final long views;
    private final long[] data;

    Views(DataType type, long views, long[] data) {
      super(type);
      this.views = views;
      this.data = data;
    }

    private long view(int rowId) {
      return views + ((offset + rowId) << 4);
    }

    private static long address(long view, int length, long[] data) {
      if (length <= 12) {
        return view + 4;
      }
      return data[Platform.getInt(null, view + 8)] + (Platform.getInt(null, view + 12) & 0xffffffffL);
    }

    @Override
    public byte[] getBinary(int rowId) {
      long v = view(rowId);
      int length = Platform.getInt(null, v);
      byte[] out = new byte[length];
      Platform.copyMemory(null, address(v, length, data), out, Platform.BYTE_ARRAY_OFFSET, length);
      return out;
    }

    @Override
    public BinaryView getBinaryView(int rowId) {
      long v = view(rowId);
      int length = Platform.getInt(null, v);
      return BinaryView.fromAddress(null, address(v, length, data), length);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      long v = view(rowId);
      int length = Platform.getInt(null, v);
      return UTF8String.fromAddress(null, address(v, length, data), length);
    }
  }

  /** Arrow's {@code list}: 32-bit offsets into the child array. */
  static final class ListOf extends Base {
    private final long offsets;
    private final Base child;

    ListOf(DataType type, long offsets, Base child) {
      super(type);
      this.offsets = offsets;
      this.child = child;
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      int start = Platform.getInt(null, offsets + ((offset + rowId) << 2));
      int end = Platform.getInt(null, offsets + ((offset + rowId + 1) << 2));
      return new ColumnarArray(child, start, end - start);
    }
  }

  /** Arrow's {@code struct}: its children. */
  static final class Struct extends Base {
    private final Base[] children;

    Struct(DataType type, Base[] children) {
      super(type);
      this.children = children;
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return children[ordinal];
    }
  }

  /** Arrow's {@code large_utf8} and {@code large_binary}: 64-bit offsets into one buffer. */
  static final class LargeBytes extends Base {
    private final long offsets;
    private final long data;

    LargeBytes(DataType type, long offsets, long data) {
      super(type);
      this.offsets = offsets;
      this.data = data;
    }

    private long start(int rowId) {
      return Platform.getLong(null, offsets + ((offset + rowId) << 3));
    }

    private int length(int rowId) {
      return (int) (Platform.getLong(null, offsets + ((offset + rowId + 1) << 3)) - start(rowId));
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      return UTF8String.fromAddress(null, data + start(rowId), length(rowId));
    }

    @Override
    public byte[] getBinary(int rowId) {
      byte[] out = new byte[length(rowId)];
      Platform.copyMemory(null, data + start(rowId), out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }

  /** Arrow's {@code fixed_size_binary(n)} (Avro's {@code fixed}): {@code n} bytes a value. */
  static final class FixedBinary extends Base {
    private final long values;
    private final int width;

    FixedBinary(DataType type, long values, int width) {
      super(type);
      this.values = values;
      this.width = width;
    }

    @Override
    public byte[] getBinary(int rowId) {
      byte[] out = new byte[width];
      Platform.copyMemory(
          null, values + (offset + rowId) * width, out, Platform.BYTE_ARRAY_OFFSET, width);
      return out;
    }
  }

  /**
   * Arrow's {@code decimal128}: 16-byte little-endian two's-complement unscaled values. Up to
   * 18 digits the low 8 bytes hold the value, as Spark's own vectors keep such decimals in a
   * long; beyond, the 16 bytes are read as a big integer.
   */
  static final class Decimals extends Base {
    private final long values;

    Decimals(DataType type, long values) {
      super(type);
      this.values = values;
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      if (isNullAt(rowId)) {
        return null;
      }
      long at = values + ((offset + rowId) << 4);
      long low = Platform.getLong(null, at);
      if (precision <= Decimal.MAX_LONG_DIGITS()) {
        return Decimal.createUnsafe(low, precision, scale);
      }
      long high = Platform.getLong(null, at + 8);
      byte[] big = new byte[16];
      for (int i = 0; i < 8; i++) {
        big[15 - i] = (byte) (low >>> (8 * i));
        big[7 - i] = (byte) (high >>> (8 * i));
      }
      return Decimal.apply(new BigDecimal(new BigInteger(big), scale), precision, scale);
    }
  }

  /**
   * Arrow's {@code dictionary} (an Avro enum): each row a key into the values (the enum's
   * symbols once), read in place.
   */
  static final class Dictionary extends Base {
    private final long keys;
    private final int keyWidth;
    private final Base values;

    Dictionary(DataType type, long keys, int keyWidth, Base values) {
      super(type);
      this.keys = keys;
      this.keyWidth = keyWidth;
      this.values = values;
    }

    private int key(int rowId) {
      long at = keys + (offset + rowId) * keyWidth;
      switch (keyWidth) {
        case 1:
          return Platform.getByte(null, at);
        case 2:
          return Platform.getShort(null, at);
        case 4:
          return Platform.getInt(null, at);
        default:
          return (int) Platform.getLong(null, at);
      }
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      return values.getUTF8String(key(rowId));
    }

    @Override
    public byte[] getBinary(int rowId) {
      return values.getBinary(key(rowId));
    }
  }

  /** Arrow's {@code map}: 32-bit offsets into its entries' keys and values. */
  static final class MapOf extends Base {
    private final long offsets;
    private final ColumnVector keys;
    private final ColumnVector values;

    MapOf(DataType type, long offsets, ColumnVector keys, ColumnVector values) {
      super(type);
      this.offsets = offsets;
      this.keys = keys;
      this.values = values;
    }

    @Override
    public ColumnarMap getMap(int rowId) {
      if (isNullAt(rowId)) {
        return null;
      }
      int start = Platform.getInt(null, offsets + ((offset + rowId) << 2));
      int end = Platform.getInt(null, offsets + ((offset + rowId + 1) << 2));
      return new ColumnarMap(keys, values, start, end - start);
    }
  }
}
