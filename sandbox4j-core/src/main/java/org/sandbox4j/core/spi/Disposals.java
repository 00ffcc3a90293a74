package org.sandbox4j.core.spi;

import org.sandbox4j.core.SandboxDisposed;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * How a backend tells an exec that a kill ended whether its sandbox was disposed of meanwhile, so
 * that it ends with {@link SandboxDisposed} rather than with the exit code the kill left. A
 * disposal made by this process is known at once; one made by another is seen in the provider's
 * own record, which may lag the kill a little, so that is asked for a short while.
 */
public final class Disposals {

    /** How long an exec ended by a signal keeps asking whether its sandbox is gone. */
    public static final Duration NOTICE = Duration.ofMillis(750);
    private static final Duration POLL = Duration.ofMillis(50);

    private final Set<String> underWay = ConcurrentHashMap.newKeySet();

    /** Runs the removal of sandbox {@code id}, known to this process as under way while it runs. */
    public void removing(String id, Runnable removal) {
        underWay.add(id);
        try {
            removal.run();
        } finally {
            underWay.remove(id);
        }
    }

    /**
     * Whether sandbox {@code id} was disposed of: its removal is under way here, or
     * {@code goneNow} says so within {@link #NOTICE}.
     */
    public boolean wasDisposedOf(String id, BooleanSupplier goneNow) {
        if (underWay.contains(id)) {
            return true;
        }
        long deadline = System.nanoTime() + NOTICE.toNanos();
        while (true) {
            if (underWay.contains(id) || goneNow.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
