package org.sandbox4j.microvm;

import java.time.Duration;

/** What a benchmark waits for before it measures a claim from a backend's warm pool. */
public final class WarmPools {

    private static final Duration LOOK_EVERY = Duration.ofMillis(20);

    private WarmPools() {
    }

    /**
     * Waits until {@code backend}'s warm pool holds an idle guest (its refill restores one in the
     * background after each claim).
     *
     * @throws IllegalStateException none is idle within {@code deadline}
     */
    public static void awaitIdleGuest(MicroVmBackend backend, Duration deadline) throws InterruptedException {
        long until = System.nanoTime() + deadline.toNanos();
        while (backend.idleGuests() == 0) {
            if (System.nanoTime() - until > 0) {
                throw new IllegalStateException("the warm pool of " + backend + " held no idle guest within "
                        + deadline.toSeconds() + " s: " + backend.diagnostics());
            }
            Thread.sleep(LOOK_EVERY.toMillis());
        }
    }
}
