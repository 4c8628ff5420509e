// Apache Avro's Java decoder as the speed anchor of kafkalog's Avro values (issues 26, 34):
// each Confluent-framed value (magic byte, 4-byte schema id) decoded as Confluent's
// KafkaAvroDeserializer does: the DatumReader of the value's writer schema (by the id in its
// framing, looked up per value in a map, as the deserializer's cache does), a
// GenericDatumReader(writer, reader) resolving it to the reader schema, a BinaryDecoder over
// the bytes after the 5-byte prefix, a new GenericRecord each, the readers and decoder reused.
// All the values in one pass, in their order: writer versions in runs or interleaved value by
// value, as kafkalog reads them. Logical types stay their underlying values (no conversions
// registered), which flatters Java.
// Timed per round in wall time and in the main thread's CPU time (ThreadMXBean; the JIT's and
// the GC's threads are not counted); the best of ROUNDS after as many rounds of warm-up.
// Usage: AvroBench VALUES_FILE READER.avsc ROUNDS ID=WRITER.avsc [ID=WRITER.avsc ...]
// VALUES_FILE: each value as a 4-byte big-endian length and its framed bytes.
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.*;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class AvroBench {
    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        Schema reader = new Schema.Parser().parse(Files.readString(Paths.get(args[1])));
        int rounds = Integer.parseInt(args[2]);
        Map<Integer, GenericDatumReader<GenericRecord>> readers = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] idAndPath = args[i].split("=", 2);
            Schema writer = new Schema.Parser().parse(Files.readString(Paths.get(idAndPath[1])));
            readers.put(Integer.parseInt(idAndPath[0]), new GenericDatumReader<>(writer, reader));
        }
        List<int[]> spans = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.wrap(data);
        while (buf.remaining() >= 4) {
            int len = buf.getInt();
            spans.add(new int[] {buf.position(), len});
            buf.position(buf.position() + len);
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double bestWall = Double.MAX_VALUE, bestCpu = Double.MAX_VALUE;
        long sink = 0;
        BinaryDecoder decoder = null;
        GenericRecord record = null;
        for (int r = 0; r < 2 * rounds; r++) {
            long t = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
            for (int[] s : spans) {
                if (data[s[0]] != 0) throw new IllegalStateException("not framed");
                int o = s[0];
                int id = (data[o + 1] & 0xff) << 24 | (data[o + 2] & 0xff) << 16
                    | (data[o + 3] & 0xff) << 8 | (data[o + 4] & 0xff);
                GenericDatumReader<GenericRecord> datumReader = readers.get(id);
                decoder = DecoderFactory.get().binaryDecoder(data, s[0] + 5, s[1] - 5, decoder);
                record = datumReader.read(null, decoder);
                sink += record.get(0) != null ? 1 : 0;
            }
            double wall = (System.nanoTime() - t) / 1e9;
            double cpu = (mx.getCurrentThreadCpuTime() - c) / 1e9;
            if (r >= rounds) {
                bestWall = Math.min(bestWall, wall);
                bestCpu = Math.min(bestCpu, cpu);
            }
        }
        System.out.printf("{\"decoder\": \"java\", \"records\": %d, \"best_wall_s\": %.6f, \"best_cpu_s\": %.6f, \"sink\": %d}%n",
            spans.size(), bestWall, bestCpu, sink);
    }
}
