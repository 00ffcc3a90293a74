package org.sandbox4j.cli;

import java.util.Optional;

/**
 * What {@code --memory} and {@code --pids-limit} asked of the backend; empty means its own default.
 *
 * @param memoryBytes the most memory the sandbox's processes may hold together
 * @param processes   the most processes (and threads) it may run at once
 */
record GuestLimits(Optional<Long> memoryBytes, Optional<Integer> processes) {

    /** Nothing asked: each backend's defaults (doctor and the inventory commands). */
    static final GuestLimits DEFAULTS = new GuestLimits(Optional.empty(), Optional.empty());

    static final String MEMORY_FLAG = "--memory";
    static final String PROCESSES_FLAG = "--pids-limit";

    boolean asked() {
        return memoryBytes.isPresent() || processes.isPresent();
    }
}
