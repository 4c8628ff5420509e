// Jackson as the speed anchor of kafkalog's JSON Schema values (issue 34): each
// Confluent-framed value (magic byte, 4-byte schema id) read as Confluent's
// KafkaJsonSchemaDeserializer reads it when no type is configured: ObjectMapper.readTree over
// the bytes after the 5-byte prefix, into a new JsonNode tree each (a reused ObjectMapper).
// Also readTree of the same payloads as Java Strings (decoded from UTF-8 before timing), the
// form Spark's from_json is handed. The tree is all Jackson builds; nothing is converted to
// columns, which flatters Java. Timed per round in wall time and in the main thread's CPU time
// (ThreadMXBean; the JIT's and the GC's threads are not counted).
// Usage: JsonBench VALUES_FILE [ROUNDS]
// VALUES_FILE: each value as a 4-byte big-endian length and its bytes.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.ArrayList;
import java.util.List;

public class JsonBench {
    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 21;
        List<int[]> spans = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.wrap(data);
        while (buf.remaining() >= 4) {
            int len = buf.getInt();
            spans.add(new int[] {buf.position(), len});
            buf.position(buf.position() + len);
        }
        String[] strings = new String[spans.size()];
        for (int i = 0; i < strings.length; i++) {
            int[] s = spans.get(i);
            strings[i] = new String(data, s[0] + 5, s[1] - 5, StandardCharsets.UTF_8);
        }
        ObjectMapper mapper = new ObjectMapper();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (String mode : new String[] {"bytes", "strings"}) {
            double bestWall = Double.MAX_VALUE, bestCpu = Double.MAX_VALUE;
            for (int r = 0; r < rounds; r++) {
                long t = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
                if (mode.equals("bytes")) {
                    for (int[] s : spans) {
                        if (data[s[0]] != 0) throw new IllegalStateException("not framed");
                        JsonNode tree = mapper.readTree(data, s[0] + 5, s[1] - 5);
                        sink += tree.size();
                    }
                } else {
                    for (String s : strings) {
                        JsonNode tree = mapper.readTree(s);
                        sink += tree.size();
                    }
                }
                double wall = (System.nanoTime() - t) / 1e9;
                double cpu = (mx.getCurrentThreadCpuTime() - c) / 1e9;
                bestWall = Math.min(bestWall, wall);
                bestCpu = Math.min(bestCpu, cpu);
            }
            System.out.printf(
                "{\"decoder\": \"jackson readTree %s\", \"records\": %d, \"best_wall_s\": %.6f, \"best_cpu_s\": %.6f, \"sink\": %d}%n",
                mode, spans.size(), bestWall, bestCpu, sink);
        }
    }
}
