package org.sandbox4j.egress;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;

/**
 * The last {@code capacity} decisions in memory (older ones are counted, not kept, so a chatty
 * guest cannot grow the host's heap) and, when configured, every decision appended to an audit
 * file as one JSON line.
 */
final class DecisionLog implements AutoCloseable {

    private final int capacity;
    private final ArrayDeque<EgressDecision> kept = new ArrayDeque<>();
    private final Writer audit;
    private long dropped;
    private long auditFailures;
    private boolean closed;

    DecisionLog(int capacity, Optional<Path> auditFile) throws IOException {
        this.capacity = capacity;
        this.audit = auditFile.isPresent()
                ? Files.newBufferedWriter(auditFile.get(), StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE)
                : null;
    }

    synchronized void record(EgressDecision decision) {
        if (kept.size() == capacity) {
            kept.removeFirst();
            dropped++;
        }
        kept.addLast(decision);
        if (audit != null && !closed) {
            try {
                audit.write(decision.toJson());
                audit.write('\n');
                audit.flush();
            } catch (IOException e) {
                // The proxy keeps serving: an audit disk that filled up must not cut the sandbox
                // off. The failure is counted where the host can see it.
                auditFailures++;
            }
        }
    }

    synchronized List<EgressDecision> snapshot() {
        return List.copyOf(kept);
    }

    synchronized long dropped() {
        return dropped;
    }

    synchronized long auditFailures() {
        return auditFailures;
    }

    @Override
    public synchronized void close() {
        if (audit != null && !closed) {
            closed = true;
            try {
                audit.close();
            } catch (IOException e) {
                auditFailures++;
            }
        }
    }
}
