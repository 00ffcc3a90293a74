package org.sandbox4j.core.spi;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.sandbox4j.core.HostCeilings;

/**
 * How many started processes each sandbox runs in this JVM, and how many bytes their windows may
 * hold: at most {@link HostCeilings#MAX_PROCESSES_PER_SANDBOX} and {@link HostCeilings#MAX_BUFFERED_BYTES}
 * per sandbox, however many handles on it there are.
 */
final class ProcessSlots {

    private record Use(int processes, long bytes) {
    }

    private static final Map<String, Use> IN_USE = new ConcurrentHashMap<>();

    /** One process's hold on its sandbox's count. */
    static final class Slot {
        private final String sandbox;
        private final long bytes;
        private boolean released;

        private Slot(String sandbox, long bytes) {
            this.sandbox = sandbox;
            this.bytes = bytes;
        }

        synchronized void release() {
            if (released) {
                return;
            }
            released = true;
            IN_USE.computeIfPresent(sandbox, (key, use) -> use.processes() == 1 ? null
                    : new Use(use.processes() - 1, use.bytes() - bytes));
        }
    }

    private ProcessSlots() {
    }

    /** A slot in {@code sandbox} for a process whose windows hold {@code bytes}; empty when that would pass a bound. */
    static Optional<Slot> reserve(String sandbox, long bytes) {
        boolean[] granted = {false};
        IN_USE.compute(sandbox, (key, use) -> {
            Use now = use == null ? new Use(0, 0) : use;
            if (now.processes() >= HostCeilings.MAX_PROCESSES_PER_SANDBOX
                    || now.bytes() + bytes > HostCeilings.MAX_BUFFERED_BYTES) {
                return use;
            }
            granted[0] = true;
            return new Use(now.processes() + 1, now.bytes() + bytes);
        });
        return granted[0] ? Optional.of(new Slot(sandbox, bytes)) : Optional.empty();
    }
}
