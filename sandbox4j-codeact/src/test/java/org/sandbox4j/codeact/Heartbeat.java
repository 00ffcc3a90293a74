package org.sandbox4j.codeact;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Whether a child that writes a heartbeat is dead. The kernel tears a PID namespace down after
 * the call that ended it returns, so a last beat may still land a moment later on a loaded host;
 * what must hold is that the beats stop, soon: the size settles within a generous bound and then
 * stays put.
 */
final class Heartbeat {

    /** How long the size must stay put to count as stopped. */
    static final Duration QUIET = Duration.ofSeconds(1);
    /** How long the teardown may take: generous, not a timing. */
    static final Duration BOUND = Duration.ofSeconds(20);

    private Heartbeat() {
    }

    /**
     * The size once it has not changed for {@link #QUIET}.
     *
     * @throws AssertionError when it keeps changing for {@link #BOUND}: the writer lives
     */
    static long settled(LongSupplier size) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        long last = size.getAsLong();
        while (System.nanoTime() < deadline) {
            Thread.sleep(QUIET.toMillis());
            long now = size.getAsLong();
            if (now == last) {
                return now;
            }
            last = now;
        }
        throw new AssertionError("the heartbeat kept growing for " + BOUND.toSeconds() + " s (now " + last
                + " bytes): the child was not killed");
    }
}
