package kafkalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Columnar readers only: every batch is the core's Arrow buffers. */
final class ReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final String request;
  private final StructType columns;

  ReaderFactory(String request, StructType columns) {
    this.request = request;
    this.columns = columns;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("kafkalog reads columnar batches only");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    ItemsPartition p = (ItemsPartition) partition;
    String full = request.substring(0, request.length() - 1) + ",\"items\":" + p.items + "}";
    return new ColumnarReader(full, columns, p.bytes);
  }
}
