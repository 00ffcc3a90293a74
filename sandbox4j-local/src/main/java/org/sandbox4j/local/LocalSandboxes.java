package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import org.sandbox4j.core.ErrorDetail;
import org.sandbox4j.core.KeyDigest;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;

/**
 * The lifecycle every local backend shares: sandboxes made or adopted under a lock, disposed of
 * from the state root (so any process sharing it can), reaped when their owner crashed, and each
 * given its own control group (or rlimits) through one {@link ResourceLimiter}.
 */
final class LocalSandboxes {

    /** Debris (half-built or half-removed sandboxes) younger than this may belong to a live operation. */
    private static final Duration DEBRIS_AGE = Duration.ofMinutes(1);

    private final LocalStore store;
    private final ResourceLimiter limiter;
    private final Duration lease;
    private final String backendName;
    /** Names this store's control groups apart from another state root's. */
    private final String groupPrefix;
    /** Told of each sandbox just before it is removed (a backend stops what it runs for it). */
    private final Consumer<String> beforeRemoval;

    LocalSandboxes(LocalStore store, ResourceLimiter limiter, Duration lease, String backendName,
            Consumer<String> beforeRemoval) {
        this.store = store;
        this.limiter = limiter;
        this.lease = lease;
        this.backendName = backendName;
        this.beforeRemoval = beforeRemoval;
        this.groupPrefix = "s4j-" + KeyDigest.sha256Hex(store.root().toString()).substring(0, 8) + "-";
    }

    /**
     * The directory of the sandbox {@code id}: adopted (and its lease renewed) when it exists,
     * else made whole with an empty {@code workDirName} in its workspace.
     */
    Path acquire(String id, SandboxKey key, String kind, String fingerprint, String workDirName) {
        return store.locked(id, () -> {
            try {
                if (store.record(id).isPresent()) {
                    store.record(id).get().renewed(lease).write(store.directory(id));
                    return store.directory(id);
                }
                return store.create(SandboxRecord.fresh(id, key, kind, fingerprint, lease),
                        building -> Files.createDirectories(building.resolve(LocalStore.WORKSPACE)
                                .resolve(workDirName)));
            } catch (IOException e) {
                throw new SandboxException("backend '" + backendName + "' could not create a sandbox under "
                        + store.root() + ": " + ErrorDetail.of(e), e);
            }
        });
    }

    void dispose(SandboxKey key) {
        for (SandboxRecord record : store.records()) {
            if (record.belongsTo(key)) {
                dispose(record.id());
            }
        }
    }

    int disposeScope(String scope, String threadId) {
        int removed = 0;
        for (SandboxRecord record : store.records()) {
            if (record.belongsTo(scope, threadId) && dispose(record.id())) {
                removed++;
            }
        }
        return removed;
    }

    /** The sandboxes the state root holds for {@code query}, oldest first. */
    List<SandboxListing> list(SandboxQuery query) {
        return store.records().stream().filter(record -> record.matches(query))
                .sorted(Comparator.comparing(SandboxRecord::createdAt).thenComparing(SandboxRecord::id))
                .map(record -> record.listing(backendName, query, store.recordWritten(record.id()))).toList();
    }

    /** Disposes of every sandbox {@link #list} would return. */
    int dispose(SandboxQuery query) {
        int removed = 0;
        for (SandboxRecord record : store.records()) {
            if (record.matches(query) && dispose(record.id())) {
                removed++;
            }
        }
        return removed;
    }

    /** Reclaims what crashed owners left; see {@link BubblewrapBackend#reapAbandoned()}. */
    int reapAbandoned() {
        Instant now = Instant.now();
        int reaped = 0;
        for (SandboxRecord record : store.records()) {
            if (record.abandoned(now) && store.locked(record.id(),
                    () -> store.record(record.id()).map(current -> current.abandoned(now)).orElse(false))
                    && dispose(record.id())) {
                reaped++;
            }
        }
        for (Path debris : store.debris()) {
            if (olderThan(debris, DEBRIS_AGE)) {
                LocalStore.deleteTree(debris);
            }
        }
        for (String group : limiter.existingGroups()) {
            if (group.startsWith(groupPrefix)
                    && !Files.isDirectory(store.directory(group.substring(groupPrefix.length())))) {
                limiter.release(group);
            }
        }
        return reaped;
    }

    /** The words that start a command inside the sandbox's limits. */
    List<String> launchPrefix(String id) {
        return limiter.launchPrefix(groupPrefix + id);
    }

    /** Renews the sandbox's lease under its lock; returns until when it now runs. */
    Instant renewLease(String id) {
        store.locked(id, () -> {
            store.record(id).ifPresent(record -> {
                try {
                    record.renewed(lease).write(store.directory(id));
                } catch (IOException e) {
                    throw new SandboxException("backend '" + backendName + "' could not renew the lease of " + id
                            + ": " + ErrorDetail.of(e), e);
                }
            });
            return null;
        });
        return Instant.now().plus(lease);
    }

    Duration lease() {
        return lease;
    }

    LocalStore store() {
        return store;
    }

    ResourceLimiter limiter() {
        return limiter;
    }

    private boolean dispose(String id) {
        return store.locked(id, () -> {
            beforeRemoval.accept(id);
            limiter.release(groupPrefix + id);
            return store.remove(id);
        });
    }

    private static boolean olderThan(Path path, Duration age) {
        try {
            return Files.getLastModifiedTime(path).toInstant().isBefore(Instant.now().minus(age));
        } catch (IOException e) {
            return false;
        }
    }
}
