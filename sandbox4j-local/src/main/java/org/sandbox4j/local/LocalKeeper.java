package org.sandbox4j.local;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * What keeps open local backends tidy, once per JVM: a daemon thread that reaps each one's state
 * root every {@link #REAP_INTERVAL} (what another process left when it crashed), and a shutdown
 * hook that detaches what each one holds when the JVM exits normally, so the next process adopts
 * those sandboxes instead of reaping them as a crash's leftovers. Backends are held weakly: one
 * that is dropped without being closed stops being reaped when it is collected.
 */
final class LocalKeeper {

    /** How often an open backend's state root is reaped. */
    static final Duration REAP_INTERVAL = Duration.ofSeconds(30);
    private static final System.Logger LOG = System.getLogger(LocalKeeper.class.getName());
    private static final Set<LocalSandboxes> OPEN = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "sandbox4j-local-reaper");
        thread.setDaemon(true);
        return thread;
    });

    static {
        TIMER.scheduleWithFixedDelay(LocalKeeper::reapAll, REAP_INTERVAL.toMillis(), REAP_INTERVAL.toMillis(),
                TimeUnit.MILLISECONDS);
        Runtime.getRuntime().addShutdownHook(new Thread(LocalKeeper::detachAll, "sandbox4j-local-detach"));
    }

    private LocalKeeper() {
    }

    static void register(LocalSandboxes sandboxes) {
        OPEN.add(sandboxes);
    }

    static void unregister(LocalSandboxes sandboxes) {
        OPEN.remove(sandboxes);
    }

    private static List<LocalSandboxes> open() {
        synchronized (OPEN) {
            return List.copyOf(OPEN);
        }
    }

    private static void reapAll() {
        for (LocalSandboxes sandboxes : open()) {
            try {
                sandboxes.reapAbandoned();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "reaping " + sandboxes.store().root() + " failed: "
                        + ErrorDetail.of(e));
            }
        }
    }

    private static void detachAll() {
        for (LocalSandboxes sandboxes : open()) {
            try {
                sandboxes.detachHeld();
            } catch (RuntimeException e) {
                // The JVM is going: what could not be detached waits for its lease, as before.
            }
        }
    }
}
