import java.io.FileReader;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * bench/transactions.py's probe: Kafka's own producer runs `count` transactions shaped as an exactly-once
 * MirrorMaker 2 task's under a paced feed (one record to each partition of the data topic, flushed, then one
 * record to each of `partitions` partitions of the offsets topic, as Connect writes a poll's source offsets,
 * then commit), `gapMs` apart (0: back to back, as the task polls again as soon as it committed).
 *
 * Run as a single source file: java -cp '<kafka libs>/*' TransactionProbe.java CLIENT_PROPERTIES DATA_TOPIC
 * OFFSETS_TOPIC PARTITIONS COUNT GAP_MS TRANSACTIONAL_ID. Prints one JSON line: the nanoseconds of each
 * transaction's two steps (data: begin, send, flush; commit: offsets, commitTransaction), the transactions
 * committed, and the error that stopped it, if one did.
 */
public class TransactionProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (FileReader reader = new FileReader(args[0])) {
            props.load(reader);
        }
        String data = args[1], offsets = args[2];
        int partitions = Integer.parseInt(args[3]), count = Integer.parseInt(args[4]);
        long gapMs = Long.parseLong(args[5]);
        props.put("transactional.id", args[6]);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        byte[] value = new byte[512];
        new Random(count).nextBytes(value);
        List<Long> dataNanos = new ArrayList<>(), commitNanos = new ArrayList<>();
        String error = null;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            for (int i = 0; i < count; i++) {
                if (gapMs > 0) {
                    Thread.sleep(gapMs);
                }
                long began = System.nanoTime();
                producer.beginTransaction();
                for (int p = 0; p < partitions; p++) {
                    producer.send(new ProducerRecord<>(data, p, ("r" + i).getBytes(), value));
                }
                producer.flush();
                long sent = System.nanoTime();
                for (int p = 0; p < partitions; p++) {
                    producer.send(new ProducerRecord<>(offsets, p, ("partition-" + p).getBytes(), ("" + i).getBytes()));
                }
                producer.commitTransaction();
                dataNanos.add(sent - began);
                commitNanos.add(System.nanoTime() - sent);
            }
        } catch (Exception e) {
            error = e.getClass().getName() + ": " + e.getMessage();
        }
        Map<String, Object> result = new LinkedHashMap<>();  // Jackson (on Kafka's classpath) writes the JSON
        result.put("data_ns", dataNanos);
        result.put("commit_ns", commitNanos);
        result.put("committed", dataNanos.size());
        result.put("error", error);
        System.out.println(new ObjectMapper().writeValueAsString(result));
    }
}
