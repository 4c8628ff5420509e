// protobuf-java's DynamicMessage.parseFrom as the speed anchor of kafkalog's Protobuf values
// (issue 34): what Spark's from_protobuf and Confluent's KafkaProtobufDeserializer (without a
// generated class) run per value. The protobuf-java here is the one PySpark's jars carry,
// shaded into Spark's core (org.sparkproject.spark_core.protobuf). Each value is parsed from
// the bytes after its Confluent framing (magic byte, 4-byte schema id, message indexes) into
// a new DynamicMessage of the message's descriptor, built once from a FileDescriptorSet.
// Timed per round in wall time and in the main thread's CPU time (ThreadMXBean; the JIT's and
// the GC's threads are not counted).
// Usage: ProtobufBench VALUES_FILE DESCRIPTOR_SET MESSAGE [ROUNDS]
// VALUES_FILE: each value as a 4-byte big-endian length and its framed bytes.
import org.sparkproject.spark_core.protobuf.CodedInputStream;
import org.sparkproject.spark_core.protobuf.DescriptorProtos.FileDescriptorProto;
import org.sparkproject.spark_core.protobuf.DescriptorProtos.FileDescriptorSet;
import org.sparkproject.spark_core.protobuf.Descriptors.Descriptor;
import org.sparkproject.spark_core.protobuf.Descriptors.FileDescriptor;
import org.sparkproject.spark_core.protobuf.DynamicMessage;
import org.sparkproject.spark_core.protobuf.RuntimeVersion;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.*;
import java.util.*;

public class ProtobufBench {
    static FileDescriptor build(String name, Map<String, FileDescriptorProto> protos,
                                Map<String, FileDescriptor> built) throws Exception {
        FileDescriptor done = built.get(name);
        if (done != null) return done;
        FileDescriptorProto proto = protos.get(name);
        List<FileDescriptor> deps = new ArrayList<>();
        for (String dep : proto.getDependencyList()) deps.add(build(dep, protos, built));
        FileDescriptor file = FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
        built.put(name, file);
        return file;
    }

    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        FileDescriptorSet set = FileDescriptorSet.parseFrom(Files.readAllBytes(Paths.get(args[1])));
        String message = args[2];
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 21;
        Map<String, FileDescriptorProto> protos = new HashMap<>();
        for (FileDescriptorProto p : set.getFileList()) protos.put(p.getName(), p);
        Map<String, FileDescriptor> built = new HashMap<>();
        Descriptor descriptor = null;
        for (String name : protos.keySet()) {
            for (Descriptor d : build(name, protos, built).getMessageTypes()) {
                if (d.getFullName().equals(message)) descriptor = d;
            }
        }
        if (descriptor == null) throw new IllegalArgumentException("no message " + message);
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
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
            for (int[] s : spans) {
                // Confluent's framing: magic byte 0, the schema id, then the message indexes
                // (here the single 0 byte of the first message).
                if (data[s[0]] != 0 || data[s[0] + 5] != 0) throw new IllegalStateException("framing");
                CodedInputStream in = CodedInputStream.newInstance(data, s[0] + 6, s[1] - 6);
                DynamicMessage m = DynamicMessage.parseFrom(descriptor, in);
                sink ^= System.identityHashCode(m);
            }
            double wall = (System.nanoTime() - t) / 1e9;
            double cpu = (mx.getCurrentThreadCpuTime() - c) / 1e9;
            bestWall = Math.min(bestWall, wall);
            bestCpu = Math.min(bestCpu, cpu);
        }
        System.out.printf("{\"values\": %d, \"best_wall_s\": %.6f, \"best_cpu_s\": %.6f, \"protobuf_java\": \"%d.%d.%d\", \"sink\": %d}%n",
            spans.size(), bestWall, bestCpu, RuntimeVersion.MAJOR, RuntimeVersion.MINOR, RuntimeVersion.PATCH, sink);
    }
}
