// Kafka's own Java client, driven by the tests (tests/kafka_broker.py compiles and runs it).
//
//   produce        --bootstrap B [--spec FILE]   (JSON spec, else on stdin; see tests/kafka_broker.py)
//   consume        --bootstrap B --topic T [--partitions 0,1] [--isolation read_committed]
//                  [--offsets 0=5,1=7 | --from committed] [--group G [--commit [--commit-offsets 0=5]]]
//                  [--timeout-ms N]
//   list-offsets   --bootstrap B --topic T --spec earliest|latest|max-timestamp|<millis>
//                  [--isolation read_committed]
//   group-offsets  --bootstrap B G
//   describe       --bootstrap B --topic T
//
// Output: one JSON object per line on stdout; errors on stderr and a non-zero exit status.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaClientTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getEncoder();

    public static void main(String[] argv) {
        try {
            if (argv.length == 0) throw new IllegalArgumentException("usage: KafkaClientTool COMMAND --bootstrap B ...");
            Args args = new Args(argv);
            switch (argv[0]) {
                case "produce": produce(args); break;
                case "consume": consume(args); break;
                case "list-offsets": listOffsets(args); break;
                case "group-offsets": groupOffsets(args); break;
                case "describe": describe(args); break;
                case "topic-configs": topicConfigs(args); break;
                default: throw new IllegalArgumentException("unknown command " + argv[0]);
            }
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            System.out.flush();
            System.err.println("KafkaClientTool " + (argv.length > 0 ? argv[0] : "") + ": " + e);
            e.printStackTrace(System.err);
            System.exit(2);
        }
    }

    /** --name value options after the command, plus positional arguments. */
    static final class Args {
        final Map<String, String> options = new HashMap<>();
        final List<String> positional = new ArrayList<>();

        Args(String[] argv) {
            for (int i = 1; i < argv.length; i++) {
                if (argv[i].startsWith("--")) {
                    String name = argv[i].substring(2);
                    if (name.equals("commit")) {
                        options.put(name, "true");
                    } else {
                        if (i + 1 >= argv.length) throw new IllegalArgumentException("--" + name + " needs a value");
                        options.put(name, argv[++i]);
                    }
                } else {
                    positional.add(argv[i]);
                }
            }
        }

        String need(String name) {
            String v = options.get(name);
            if (v == null) throw new IllegalArgumentException("--" + name + " is required");
            return v;
        }

        String get(String name, String otherwise) {
            return options.getOrDefault(name, otherwise);
        }
    }

    static Properties common(Args args) {
        Properties p = new Properties();
        p.put("bootstrap.servers", args.need("bootstrap"));
        p.put("client.dns.lookup", "use_all_dns_ips");
        return p;
    }

    static void emit(ObjectNode node) throws Exception {
        System.out.println(JSON.writeValueAsString(node));
    }

    // ---- produce ---------------------------------------------------------------------------

    static void produce(Args args) throws Exception {
        String file = args.options.get("spec");
        JsonNode spec;
        if (file != null) {
            spec = JSON.readTree(Files.readAllBytes(Paths.get(file)));
        } else {
            InputStream in = System.in;
            spec = JSON.readTree(in.readAllBytes());
        }
        boolean quiet = spec.path("quiet").asBoolean(false);
        if (spec.has("topics")) {
            try (Admin admin = Admin.create(common(args))) {
                List<NewTopic> topics = new ArrayList<>();
                for (JsonNode t : spec.get("topics")) {
                    NewTopic nt = new NewTopic(t.get("name").asText(), t.path("partitions").asInt(1), (short) 1);
                    Map<String, String> configs = new HashMap<>();
                    Iterator<Map.Entry<String, JsonNode>> it = t.path("configs").fields();
                    while (it.hasNext()) {
                        Map.Entry<String, JsonNode> e = it.next();
                        configs.put(e.getKey(), e.getValue().asText());
                    }
                    topics.add(nt.configs(configs));
                }
                admin.createTopics(topics).all().get();
            }
        }
        for (JsonNode producerSpec : spec.path("producers")) {
            runProducer(args, producerSpec, quiet);
        }
    }

    static void runProducer(Args args, JsonNode spec, boolean quiet) throws Exception {
        Properties p = common(args);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (spec.has("compression")) p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, spec.get("compression").asText());
        if (spec.path("idempotent").asBoolean(false)) p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        String txId = spec.path("transactional_id").asText(null);
        if (txId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txId);
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        }
        Iterator<Map.Entry<String, JsonNode>> it = spec.path("config").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            p.put(e.getKey(), e.getValue().asText());
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            if (txId != null) producer.initTransactions();
            for (JsonNode action : spec.path("actions")) {
                String kind = action.get("action").asText();
                switch (kind) {
                    case "send": send(producer, action, quiet); break;
                    case "begin": producer.beginTransaction(); break;
                    case "commit": producer.commitTransaction(); break;
                    case "abort": producer.abortTransaction(); break;
                    case "flush": producer.flush(); break;
                    case "sleep": Thread.sleep(action.get("ms").asLong()); break;
                    case "halt":
                        // A producer that dies here: no close(), so an open transaction stays
                        // open until its coordinator times it out.
                        producer.flush();
                        System.out.flush();
                        Runtime.getRuntime().halt(0);
                        break;
                    default: throw new IllegalArgumentException("unknown producer action " + kind);
                }
            }
            producer.flush();
        }
    }

    static byte[] bytes(JsonNode record, String field) {
        JsonNode b64 = record.get(field + "_b64");
        if (b64 != null) return b64.isNull() ? null : Base64.getDecoder().decode(b64.asText());
        JsonNode text = record.get(field);
        if (text == null || text.isNull()) return null;
        return text.asText().getBytes(StandardCharsets.UTF_8);
    }

    static String fill(String template, int i) {
        return template.replace("{i}", Integer.toString(i));
    }

    static void send(KafkaProducer<byte[], byte[]> producer, JsonNode action, boolean quiet) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        List<JsonNode> records = new ArrayList<>();
        if (action.has("records")) action.get("records").forEach(records::add);
        if (action.has("repeat")) {
            // {"repeat": {"count": N, "topic": T, "partition": P, "key": "k{i}", "value": "v{i}", "pad": 100}}
            JsonNode r = action.get("repeat");
            int pad = r.path("pad").asInt(0);
            for (int i = 0; i < r.get("count").asInt(); i++) {
                ObjectNode rec = JSON.createObjectNode();
                rec.put("topic", r.get("topic").asText());
                if (r.has("partition")) rec.put("partition", r.get("partition").asInt());
                if (r.has("key")) rec.put("key", fill(r.get("key").asText(), i));
                String value = r.has("value") ? fill(r.get("value").asText(), i) : null;
                if (value != null && pad > 0) value = value + "x".repeat(pad);
                rec.put("value", value);
                if (r.has("timestamp")) rec.put("timestamp", r.get("timestamp").asLong() + i);
                records.add(rec);
            }
        }
        for (JsonNode r : records) {
            RecordHeaders headers = new RecordHeaders();
            for (JsonNode h : r.path("headers")) {
                byte[] v;
                if (h.size() > 2 && h.get(2).asBoolean(false)) v = h.get(1).isNull() ? null : Base64.getDecoder().decode(h.get(1).asText());
                else v = h.get(1).isNull() ? null : h.get(1).asText().getBytes(StandardCharsets.UTF_8);
                headers.add(h.get(0).asText(), v);
            }
            Integer partition = r.has("partition") ? r.get("partition").asInt() : null;
            Long ts = r.has("timestamp") && !r.get("timestamp").isNull() ? r.get("timestamp").asLong() : null;
            futures.add(producer.send(new ProducerRecord<>(r.get("topic").asText(), partition, ts, bytes(r, "key"), bytes(r, "value"), headers)));
        }
        if (action.path("flush").asBoolean(true)) producer.flush();
        for (Future<RecordMetadata> f : futures) {
            RecordMetadata m = f.get();
            if (!quiet) {
                ObjectNode o = JSON.createObjectNode();
                o.put("topic", m.topic());
                o.put("partition", m.partition());
                o.put("offset", m.offset());
                o.put("timestamp", m.timestamp());
                emit(o);
            }
        }
    }

    // ---- consume ---------------------------------------------------------------------------

    static List<TopicPartition> partitions(Args args, Admin admin) throws Exception {
        String topic = args.need("topic");
        List<TopicPartition> out = new ArrayList<>();
        String listed = args.options.get("partitions");
        if (listed != null) {
            for (String p : listed.split(",")) out.add(new TopicPartition(topic, Integer.parseInt(p.trim())));
            return out;
        }
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        d.partitions().forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        return out;
    }

    static List<TopicPartition> partitionsWithoutAdmin(Args args, KafkaConsumer<byte[], byte[]> consumer) {
        String topic = args.need("topic");
        List<TopicPartition> out = new ArrayList<>();
        String listed = args.options.get("partitions");
        if (listed != null) {
            for (String p : listed.split(",")) out.add(new TopicPartition(topic, Integer.parseInt(p.trim())));
            return out;
        }
        consumer.partitionsFor(topic).forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        return out;
    }

    static void consume(Args args) throws Exception {
        Properties p = common(args);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, args.get("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String group = args.options.get("group");
        if (group != null) p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        long timeoutMs = Long.parseLong(args.get("timeout-ms", "60000"));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            // Partitions through the consumer's own metadata: also works against servers that
            // answer only Metadata, ListOffsets and Fetch (no Admin API).
            List<TopicPartition> tps = partitionsWithoutAdmin(args, consumer);
            consumer.assign(tps);
            String from = args.get("from", "beginning");
            String offsets = args.options.get("offsets");
            if (offsets != null) {
                Map<Integer, Long> start = new HashMap<>();
                for (String kv : offsets.split(",")) {
                    String[] parts = kv.split("=");
                    start.put(Integer.parseInt(parts[0].trim()), Long.parseLong(parts[1].trim()));
                }
                for (TopicPartition tp : tps) {
                    if (start.containsKey(tp.partition())) consumer.seek(tp, start.get(tp.partition()));
                    else consumer.seekToBeginning(List.of(tp));
                }
            } else if (from.equals("committed")) {
                if (group == null) throw new IllegalArgumentException("--from committed needs --group");
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(tps));
                for (TopicPartition tp : tps) {
                    OffsetAndMetadata c = committed.get(tp);
                    if (c != null) consumer.seek(tp, c.offset());
                    else consumer.seekToBeginning(List.of(tp));
                }
            } else if (from.equals("beginning")) {
                consumer.seekToBeginning(tps);
            } else {
                throw new IllegalArgumentException("--from beginning|committed, not " + from);
            }
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!done(consumer, tps, end)) {
                if (System.currentTimeMillis() > deadline) {
                    StringBuilder where = new StringBuilder();
                    for (TopicPartition tp : tps) where.append(tp).append(" at ").append(consumer.position(tp)).append(" of ").append(end.get(tp)).append("; ");
                    throw new IllegalStateException("consume timed out: " + where);
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) continue;
                    emit(recordJson(r));
                }
            }
            if (group != null && args.options.containsKey("commit")) {
                Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
                // --commit-offsets 0=5,1=7 commits those offsets; otherwise where reading ended.
                Map<Integer, Long> at = new HashMap<>();
                String listed = args.options.get("commit-offsets");
                if (listed != null) {
                    for (String kv : listed.split(",")) {
                        String[] parts = kv.split("=");
                        at.put(Integer.parseInt(parts[0].trim()), Long.parseLong(parts[1].trim()));
                    }
                }
                for (TopicPartition tp : tps) {
                    long offset = at.getOrDefault(tp.partition(), end.get(tp));
                    commit.put(tp, new OffsetAndMetadata(offset, "kafkalog-tests"));
                }
                consumer.commitSync(commit);
            }
        }
    }

    static boolean done(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : tps) {
            if (consumer.position(tp) < end.get(tp)) return false;
        }
        return true;
    }

    static ObjectNode recordJson(ConsumerRecord<byte[], byte[]> r) {
        ObjectNode o = JSON.createObjectNode();
        o.put("topic", r.topic());
        o.put("partition", r.partition());
        o.put("offset", r.offset());
        o.put("timestamp", r.timestamp());
        o.put("timestampType", r.timestampType().id);
        if (r.key() == null) o.putNull("key"); else o.put("key", B64.encodeToString(r.key()));
        if (r.value() == null) o.putNull("value"); else o.put("value", B64.encodeToString(r.value()));
        ArrayNode headers = o.putArray("headers");
        for (Header h : r.headers()) {
            ArrayNode pair = headers.addArray();
            pair.add(h.key());
            if (h.value() == null) pair.addNull(); else pair.add(B64.encodeToString(h.value()));
        }
        if (r.leaderEpoch().isPresent()) o.put("leaderEpoch", r.leaderEpoch().get()); else o.putNull("leaderEpoch");
        return o;
    }

    // ---- admin -----------------------------------------------------------------------------

    static void listOffsets(Args args) throws Exception {
        String which = args.need("spec");
        OffsetSpec spec;
        switch (which) {
            case "earliest": spec = OffsetSpec.earliest(); break;
            case "latest": spec = OffsetSpec.latest(); break;
            case "max-timestamp": spec = OffsetSpec.maxTimestamp(); break;
            default: spec = OffsetSpec.forTimestamp(Long.parseLong(which));
        }
        IsolationLevel isolation = args.get("isolation", "read_uncommitted").equals("read_committed")
                ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
        try (Admin admin = Admin.create(common(args))) {
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            for (TopicPartition tp : partitions(args, admin)) request.put(tp, spec);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> result =
                    admin.listOffsets(request, new ListOffsetsOptions(isolation)).all().get();
            List<TopicPartition> sorted = new ArrayList<>(result.keySet());
            sorted.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            for (TopicPartition tp : sorted) {
                ListOffsetsResult.ListOffsetsResultInfo info = result.get(tp);
                ObjectNode o = JSON.createObjectNode();
                o.put("topic", tp.topic());
                o.put("partition", tp.partition());
                o.put("offset", info.offset());
                o.put("timestamp", info.timestamp());
                if (info.leaderEpoch().isPresent()) o.put("leaderEpoch", info.leaderEpoch().get()); else o.putNull("leaderEpoch");
                emit(o);
            }
        }
    }

    static void groupOffsets(Args args) throws Exception {
        if (args.positional.isEmpty()) throw new IllegalArgumentException("group-offsets needs a group id");
        String group = args.positional.get(0);
        try (Admin admin = Admin.create(common(args))) {
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            List<TopicPartition> sorted = new ArrayList<>(offsets.keySet());
            sorted.sort((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
            for (TopicPartition tp : sorted) {
                OffsetAndMetadata m = offsets.get(tp);
                ObjectNode o = JSON.createObjectNode();
                o.put("group", group);
                o.put("topic", tp.topic());
                o.put("partition", tp.partition());
                if (m == null) {
                    o.putNull("offset");
                } else {
                    o.put("offset", m.offset());
                    o.put("metadata", m.metadata());
                    if (m.leaderEpoch().isPresent()) o.put("leaderEpoch", m.leaderEpoch().get()); else o.putNull("leaderEpoch");
                }
                emit(o);
            }
        }
    }

    static void describe(Args args) throws Exception {
        String topic = args.need("topic");
        try (Admin admin = Admin.create(common(args))) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            ObjectNode o = JSON.createObjectNode();
            o.put("topic", topic);
            o.put("topicId", d.topicId().toString());
            o.put("partitions", d.partitions().size());
            emit(o);
        }
    }

    /** A topic's configs set on the topic itself (DescribeConfigs), one line each. */
    static void topicConfigs(Args args) throws Exception {
        String topic = args.need("topic");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Admin.create(common(args))) {
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            for (ConfigEntry e : config.entries()) {
                if (e.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) continue;
                ObjectNode o = JSON.createObjectNode();
                o.put("name", e.name());
                o.put("value", e.value());
                o.put("readOnly", e.isReadOnly());
                emit(o);
            }
        }
    }
}
