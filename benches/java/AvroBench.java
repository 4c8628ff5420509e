// Apache Avro's Java decoder as the speed anchor of kafkalog's Avro values (issue 26): each
// Confluent-framed value (magic byte, 4-byte schema id) decoded as Confluent's
// KafkaAvroDeserializer does, with a GenericDatumReader of the writer schema resolved to the
// reader schema and a BinaryDecoder over the bytes after the 5-byte prefix, into a
// new GenericRecord each (as the deserializer reads), the reader and decoder reused. Logical
// types stay their underlying values (no conversions registered), which flatters Java.
// Timed per round in wall time and in the main thread's CPU time (ThreadMXBean; the JIT's and
// the GC's threads are not counted). Usage: AvroBench VALUES_FILE WRITER.avsc READER.avsc [ROUNDS]
// VALUES_FILE: each value as a 4-byte big-endian length and its bytes.
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
import java.util.List;

public class AvroBench {
    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        Schema writer = new Schema.Parser().parse(Files.readString(Paths.get(args[1])));
        Schema reader = new Schema.Parser().parse(Files.readString(Paths.get(args[2])));
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        List<int[]> spans = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.wrap(data);
        while (buf.remaining() >= 4) {
            int len = buf.getInt();
            spans.add(new int[] {buf.position(), len});
            buf.position(buf.position() + len);
        }
        GenericDatumReader<GenericRecord> datumReader = new GenericDatumReader<>(writer, reader);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double bestWall = Double.MAX_VALUE, bestCpu = Double.MAX_VALUE;
        long sink = 0;
        BinaryDecoder decoder = null;
        GenericRecord record = null;
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
            for (int[] s : spans) {
                if (data[s[0]] != 0) throw new IllegalStateException("not framed");
                decoder = DecoderFactory.get().binaryDecoder(data, s[0] + 5, s[1] - 5, decoder);
                record = datumReader.read(null, decoder);
                sink += record.get(0) != null ? 1 : 0;
            }
            double wall = (System.nanoTime() - t) / 1e9;
            double cpu = (mx.getCurrentThreadCpuTime() - c) / 1e9;
            bestWall = Math.min(bestWall, wall);
            bestCpu = Math.min(bestCpu, cpu);
        }
        System.out.printf("{\"records\": %d, \"best_wall_s\": %.6f, \"best_cpu_s\": %.6f, \"sink\": %d}%n",
            spans.size(), bestWall, bestCpu, sink);
    }
}
