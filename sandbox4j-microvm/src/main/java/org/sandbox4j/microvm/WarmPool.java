package org.sandbox4j.microvm;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * Idle guests restored ahead of need, up to {@code size} for each launch in use, so that an acquire
 * claims one instead of waiting for a restore. Guests of one backend differ in their launch only by
 * the egress port, so the pool keeps them by that. One daemon thread refills it, started by the
 * first claim: a restore never runs on a caller's path, and one the refill made after {@link #close()}
 * is ended at once. A launch whose idle guests cannot be made is
 * tried again after {@link #RETRY}.
 */
final class WarmPool implements AutoCloseable {

    /** The most idle guests a backend may keep per launch. */
    static final int MAX_SIZE = 16;
    /** How long a launch whose idle guest could not be made waits before the next try. */
    static final Duration RETRY = Duration.ofSeconds(10);
    /** How long {@link #close()} waits for a restore under way; the backend's close then ends what is left. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);
    private static final System.Logger LOG = System.getLogger(WarmPool.class.getName());

    /** Makes one idle guest: restored, renewed, leased, its record matching no key. */
    @FunctionalInterface
    interface Source {
        /** @return the guest, or empty when none can be restored now */
        Optional<MicroVm> restoreIdle(boolean egress);
    }

    private final int size;
    private final String backendName;
    private final Source source;
    /** Ends a guest and removes its directory. */
    private final Consumer<MicroVm> remove;
    /** The idle guests by egress port: a launch is in use once it has an entry. Guarded by this. */
    private final Map<Boolean, Deque<MicroVm>> idle = new HashMap<>();
    /** When ({@link System#nanoTime()}) a launch whose guest could not be made is tried again. Guarded by this. */
    private final Map<Boolean, Long> retryAt = new HashMap<>();
    private final AtomicLong claims = new AtomicLong();
    private final AtomicLong misses = new AtomicLong();
    private Thread refiller;
    private boolean closed;

    WarmPool(int size, String backendName, Source source, Consumer<MicroVm> remove) {
        this.size = size;
        this.backendName = backendName;
        this.source = source;
        this.remove = remove;
    }

    /**
     * An idle guest of the launch with (or without) the egress port, out of the pool; empty, a miss,
     * when there is none. Either way the launch is in use from now on, and the pool refills it.
     */
    Optional<MicroVm> claim(boolean egress) {
        List<MicroVm> dead = new ArrayList<>();
        MicroVm claimed;
        synchronized (this) {
            if (closed) {
                return Optional.empty();
            }
            Deque<MicroVm> guests = idle.computeIfAbsent(egress, launch -> new ArrayDeque<>());
            while ((claimed = guests.pollFirst()) != null && !usable(claimed)) {
                dead.add(claimed);
            }
            startRefilling();
            notifyAll();
        }
        dead.forEach(remove);
        (claimed == null ? misses : claims).incrementAndGet();
        return Optional.ofNullable(claimed);
    }

    private static boolean usable(MicroVm vm) {
        return !vm.closed() && vm.process().isAlive() && vm.agent().isOpen();
    }

    /** The guests idle now, for every launch. */
    synchronized int idleGuests() {
        return idle.values().stream().mapToInt(Deque::size).sum();
    }

    /** What {@code diagnostics()} says of the pool. */
    String describe() {
        return "warm pool: up to " + size + " idle guest(s) per launch in use, " + idleGuests() + " idle now; "
                + claims.get() + " claim(s), " + misses.get() + " miss(es)";
    }

    private void startRefilling() {
        if (refiller == null) {
            refiller = new Thread(this::refill, "sandbox4j-microvm-pool-" + backendName);
            refiller.setDaemon(true);
            refiller.start();
        }
    }

    private void refill() {
        while (true) {
            boolean egress;
            synchronized (this) {
                Optional<Boolean> wanted;
                while (!closed && (wanted = wanted()).isEmpty()) {
                    try {
                        wait(untilNextRetry());
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                egress = wanted().orElseThrow();
            }
            Optional<MicroVm> made;
            try {
                made = source.restoreIdle(egress);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "': an idle guest could not "
                        + "be restored for the warm pool: " + ErrorDetail.of(e));
                made = Optional.empty();
            }
            boolean kept;
            synchronized (this) {
                kept = made.isPresent() && !closed;
                if (kept) {
                    idle.get(egress).addLast(made.get());
                } else if (made.isEmpty()) {
                    retryAt.put(egress, System.nanoTime() + RETRY.toNanos());
                }
            }
            if (!kept) {
                made.ifPresent(remove);
            }
        }
    }

    /** A launch in use with fewer idle guests than the pool holds, and no retry pending. Under this. */
    private Optional<Boolean> wanted() {
        long now = System.nanoTime();
        return idle.entrySet().stream().filter(entry -> entry.getValue().size() < size)
                .filter(entry -> retryAt.getOrDefault(entry.getKey(), now) - now <= 0).map(Map.Entry::getKey)
                .findFirst();
    }

    /** Milliseconds to wait for: until the next retry is due, or (0) until a claim or close wakes us. Under this. */
    private long untilNextRetry() {
        long now = System.nanoTime();
        return retryAt.values().stream().filter(at -> at - now > 0).mapToLong(at -> (at - now) / 1_000_000 + 1)
                .min().orElse(0);
    }

    /**
     * Stops refilling and ends every idle guest. A restore under way is waited for (it takes well
     * under a second), not interrupted: a restore that fails discards its snapshot.
     */
    @Override
    public void close() {
        Thread stopping;
        List<MicroVm> ending = new ArrayList<>();
        synchronized (this) {
            closed = true;
            stopping = refiller;
            idle.values().forEach(ending::addAll);
            idle.clear();
            notifyAll();
        }
        if (stopping != null) {
            try {
                stopping.join(STOP_WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ending.forEach(remove);
    }
}
