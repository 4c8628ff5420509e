// The Java client anchor of ../shared/bench/JavaBench.java, measured in CPU time as well as wall
// time: on a shared machine a round's wall time includes waiting for a core, its CPU time does
// not. Each round decodes the segment as a consumer does (each batch's CRC checked; every
// record's offset, timestamp and headers read, key and value copied out as byte[]). CPU time
// is the main thread's (ThreadMXBean): the JIT compiler's and the garbage collector's threads
// are not counted, which flatters Java a little. Usage: JavaBenchCpu FILE [ROUNDS]
import org.apache.kafka.common.record.*;
import org.apache.kafka.common.utils.CloseableIterator;
import org.apache.kafka.common.header.Header;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.*;

public class JavaBenchCpu {
    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double bestWall = Double.MAX_VALUE, bestCpu = Double.MAX_VALUE;
        long n = 0, sink = 0;
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
            n = 0;
            MemoryRecords mr = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
            for (MutableRecordBatch b : mr.batches()) {
                b.ensureValid();
                try (CloseableIterator<org.apache.kafka.common.record.Record> it =
                         b.streamingIterator(org.apache.kafka.common.utils.BufferSupplier.NO_CACHING)) {
                    while (it.hasNext()) {
                        org.apache.kafka.common.record.Record rec = it.next();
                        ByteBuffer k = rec.key(), v = rec.value();
                        byte[] kb = k == null ? null : org.apache.kafka.common.utils.Utils.toArray(k);
                        byte[] vb = v == null ? null : org.apache.kafka.common.utils.Utils.toArray(v);
                        sink += rec.offset() + rec.timestamp() + (kb == null ? 0 : kb.length)
                            + (vb == null ? 0 : vb.length);
                        for (Header h : rec.headers()) sink += h.key().length();
                        n++;
                    }
                }
            }
            bestCpu = Math.min(bestCpu, (mx.getCurrentThreadCpuTime() - c) / 1e9);
            bestWall = Math.min(bestWall, (System.nanoTime() - t) / 1e9);
        }
        System.out.printf("java %d records wall %.4f s cpu %.4f s: %.2f Mrec/s wall %.2f Mrec/s cpu (sink %d)%n",
            n, bestWall, bestCpu, n / bestWall / 1e6, n / bestCpu / 1e6, sink % 7);
    }
}
