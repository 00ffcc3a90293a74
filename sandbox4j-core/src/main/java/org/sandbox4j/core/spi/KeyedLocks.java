package org.sandbox4j.core.spi;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One lock per key, held only while someone holds or waits for it: the backend duty "serialise
 * concurrent get-or-create per key" (tool calls of one assistant message race) without a map that
 * grows with every key a long-lived backend ever saw. Reentrant, like {@code synchronized}.
 *
 * @param <K> the key (a sandbox name, a slot); equal keys share one lock
 */
public final class KeyedLocks<K> {

    /** A lock and how many threads hold or wait for it; changed only inside the map's compute. */
    private static final class Entry {
        final ReentrantLock lock = new ReentrantLock();
        int users;
    }

    private final ConcurrentHashMap<K, Entry> entries = new ConcurrentHashMap<>();

    /** Runs {@code body} holding {@code key}'s lock and returns what it returns. */
    public <T> T withLock(K key, Supplier<T> body) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(body, "body");
        Entry entry = entries.compute(key, (k, held) -> {
            Entry e = held == null ? new Entry() : held;
            e.users++;
            return e;
        });
        try {
            entry.lock.lock();
            try {
                return body.get();
            } finally {
                entry.lock.unlock();
            }
        } finally {
            // The last user out drops the entry; a thread arriving later makes a fresh one.
            entries.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
        }
    }

    /** Runs {@code body} holding {@code key}'s lock. */
    public void withLock(K key, Runnable body) {
        Objects.requireNonNull(body, "body");
        withLock(key, () -> {
            body.run();
            return null;
        });
    }

    /** How many keys have a holder or a waiter now (for tests and diagnostics). */
    public int keysInUse() {
        return entries.size();
    }
}
