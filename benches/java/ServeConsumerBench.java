import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * `produce BOOTSTRAP TOPIC COUNT VALUE_BYTES`: writes COUNT records of VALUE_BYTES random
 * (incompressible) bytes with lz4, so that the log holds about COUNT * VALUE_BYTES bytes.
 *
 * Otherwise reads every partition of TOPIC from BOOTSTRAP from the beginning to the end offsets known at
 * the start, as an application consumer does (ByteArrayDeserializer, the client's defaults but
 * for the ones given), and prints one JSON line: records, value bytes, seconds, records/s.
 * Used by benches/serve_bench.py against a real broker and against kafkalog serve.
 *
 *   java -cp CLASSES:KAFKA_JARS/* ServeConsumerBench BOOTSTRAP TOPIC
 */
public class ServeConsumerBench {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) {
            produce(args[1], args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]));
            return;
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        String topic = args[1];
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            consumer.partitionsFor(topic).forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long records = 0, bytes = 0;
            long start = System.nanoTime();
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp) < end.get(tp)) done = false;
                }
                if (done) break;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    records++;
                    if (r.value() != null) bytes += r.value().length;
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT,
                "{\"records\": %d, \"value_bytes\": %d, \"seconds\": %.3f, \"records_per_s\": %.0f}%n",
                records, bytes, seconds, records / seconds);
        }
    }

    static void produce(String bootstrap, String topic, long count, int valueBytes) throws Exception {
        Properties p = new Properties();
        p.put(org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(org.apache.kafka.clients.producer.ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(org.apache.kafka.clients.producer.ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(org.apache.kafka.clients.producer.ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        p.put(org.apache.kafka.clients.producer.ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
              org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        p.put(org.apache.kafka.clients.producer.ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
              org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
        Random random = new Random(45);
        byte[] pool = new byte[1 << 22];
        random.nextBytes(pool);
        try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> producer =
                 new org.apache.kafka.clients.producer.KafkaProducer<>(p)) {
            for (long i = 0; i < count; i++) {
                int at = random.nextInt(pool.length - valueBytes);
                byte[] value = Arrays.copyOfRange(pool, at, at + valueBytes);
                byte[] key = Long.toString(i).getBytes();
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, key, value));
            }
            producer.flush();
        }
    }
}
