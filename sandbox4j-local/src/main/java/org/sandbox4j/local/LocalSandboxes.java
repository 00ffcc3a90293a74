package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The lifecycle every local backend shares: sandboxes made or adopted under a lock, disposed of
 * from the state root (so any process sharing it can), reaped when their owner crashed, and each
 * given its own control group (or rlimits) through one {@link ResourceLimiter}.
 *
 * <p>Disposal is safe by construction, in this order: the sandbox's directory is renamed away (no
 * process finds it again, and no new command can start in it), every command still running in it
 * is stopped (its recorded launches, its control group, whatever the backend adds), and only then
 * is the tree removed, never following a link ({@link TreeRemoval}); its lock file goes last.
 *
 * <p>A sandbox stays attached to the process that acquired it until that process's backend closes
 * or its JVM exits normally; then it is detached and kept until its lease runs out, for the next
 * process to adopt. An attached sandbox whose owner is gone was left by a crash: the next backend
 * on the state root reaps it at once, and a reaper runs periodically while a backend is open.
 */
final class LocalSandboxes {

    /** Half-built sandboxes younger than this may belong to a build under way in another process. */
    private static final Duration DEBRIS_AGE = Duration.ofMinutes(1);
    /** How long disposal waits for the sandbox's commands to be gone after killing them. */
    private static final Duration STOP_PATIENCE = Duration.ofSeconds(5);

    private final LocalStore store;
    private final ResourceLimiter limiter;
    private final Duration lease;
    private final String backendName;
    /** Names this store's control groups apart from another state root's. */
    private final String groupPrefix;
    /** Told of each sandbox just before it is removed (a backend stops what it runs for it). */
    private final Consumer<String> beforeRemoval;

    /** The sandboxes this instance acquired and still holds: detached when it closes. */
    private final Set<String> held = ConcurrentHashMap.newKeySet();

    LocalSandboxes(LocalStore store, ResourceLimiter limiter, Duration lease, String backendName,
            Consumer<String> beforeRemoval) {
        this.store = store;
        this.limiter = limiter;
        this.lease = lease;
        this.backendName = backendName;
        this.beforeRemoval = beforeRemoval;
        this.groupPrefix = "s4j-" + KeyDigest.sha256Hex(store.root().toString()).substring(0, 8) + "-";
        LocalKeeper.register(this);
    }

    /** Readies a sandbox under its lock each time it is acquired (its keeper, its work dir). */
    @FunctionalInterface
    interface Preparer {
        /**
         * @param directory the sandbox's directory
         * @param made      whether it was made just now (else adopted)
         */
        void prepare(Path directory, boolean made) throws IOException;
    }

    /**
     * The directory of the sandbox {@code id}: adopted (and its lease renewed) when it exists,
     * else made whole with an empty workspace; {@code preparer} readies it, still under its lock.
     */
    Path acquire(String id, SandboxKey key, String kind, String fingerprint, Preparer preparer) {
        return store.locked(id, () -> {
            try {
                held.add(id);
                Path directory;
                Optional<SandboxRecord> existing = store.record(id);
                boolean made = existing.isEmpty();
                if (!made) {
                    existing.get().renewed(lease).write(store.directory(id));
                    directory = store.directory(id);
                } else {
                    directory = store.create(SandboxRecord.fresh(id, key, kind, fingerprint, lease), building -> {
                        Files.createDirectories(building.resolve(LocalStore.WORKSPACE));
                        Files.createDirectory(building.resolve(Launches.DIRECTORY));
                    });
                }
                preparer.prepare(directory, made);
                return directory;
            } catch (IOException e) {
                throw new SandboxException("backend '" + backendName + "' could not create a sandbox under "
                        + store.root() + ": " + ErrorDetail.of(e), e);
            }
        });
    }

    /** Disposes of every sandbox of {@code key}, found through the index: no other record is read. */
    void dispose(SandboxKey key) {
        disposeIndexed(KeyDigest.sha256Hex(key.scope()), Optional.of(KeyDigest.sha256Hex(key.threadId())),
                record -> record.belongsTo(key));
    }

    int disposeScope(String scope, String threadId) {
        return disposeIndexed(KeyDigest.sha256Hex(scope), Optional.of(KeyDigest.sha256Hex(threadId)),
                record -> record.belongsTo(scope, threadId));
    }

    /** The sandboxes the state root holds for {@code query}, oldest first. */
    List<SandboxListing> list(SandboxQuery query) {
        return candidates(KeyDigest.sha256Hex(query.scope()), query.threadId().map(KeyDigest::sha256Hex)).stream()
                .map(store::record).flatMap(Optional::stream).filter(record -> record.matches(query))
                .sorted(Comparator.comparing(SandboxRecord::createdAt).thenComparing(SandboxRecord::id))
                .map(record -> record.listing(backendName, query, store.recordWritten(record.id()))).toList();
    }

    /** Disposes of every sandbox {@link #list} would return. */
    int dispose(SandboxQuery query) {
        return disposeIndexed(KeyDigest.sha256Hex(query.scope()), query.threadId().map(KeyDigest::sha256Hex),
                record -> record.matches(query));
    }

    /**
     * Disposes of the sandboxes of a conversation (a scope, and a thread when given) that
     * {@code belongs} accepts. The index names the candidates; each is judged again from its own
     * record under its lock, and an entry whose record is gone, or names another conversation, is
     * dropped (it is never trusted to dispose of anything).
     */
    private int disposeIndexed(String scopeHash, Optional<String> threadHash, Predicate<SandboxRecord> belongs) {
        int removed = 0;
        for (String id : candidates(scopeHash, threadHash)) {
            boolean disposed = store.locked(id, () -> {
                Optional<SandboxRecord> record = store.record(id);
                if (record.isPresent() && belongs.test(record.get())) {
                    return disposeLocked(List.of(id)) == 1;
                }
                if (record.isEmpty() || !record.get().scopeHash().equals(scopeHash)
                        || threadHash.map(hash -> !record.get().threadHash().equals(hash)).orElse(false)) {
                    dropStale(id, scopeHash, threadHash);
                }
                return false;
            });
            if (disposed) {
                removed++;
            }
        }
        return removed;
    }

    /**
     * The ids the index names for the conversation, or, where it cannot answer (too many names,
     * unreadable), those of every record in it.
     */
    private List<String> candidates(String scopeHash, Optional<String> threadHash) {
        SandboxIndex index = store.index();
        Optional<List<String>> indexed = threadHash.isPresent() ? index.ids(scopeHash, threadHash.get())
                : index.entries(scopeHash).map(entries -> entries.stream().map(SandboxIndex.Entry::id).toList());
        return indexed.orElseGet(() -> store.records().stream().filter(record -> record.scopeHash().equals(scopeHash)
                && threadHash.map(record.threadHash()::equals).orElse(true)).map(SandboxRecord::id).toList());
    }

    /** Drops what the index says of {@code id} under this conversation; call holding the sandbox's lock. */
    private void dropStale(String id, String scopeHash, Optional<String> threadHash) {
        List<SandboxIndex.Entry> stale = threadHash.map(thread -> List.of(new SandboxIndex.Entry(scopeHash, thread, id)))
                .orElseGet(() -> store.index().entries(scopeHash).orElse(List.of()).stream()
                        .filter(entry -> entry.id().equals(id)).toList());
        stale.forEach(store.index()::remove);
        if (!Files.exists(store.directory(id), LinkOption.NOFOLLOW_LINKS)) {
            store.removeLock(id);
        }
    }

    /** Reclaims what crashed owners left; see {@link BubblewrapBackend#reapAbandoned()}. */
    int reapAbandoned() {
        Instant now = Instant.now();
        List<SandboxRecord> records = store.records();
        List<String> abandoned = records.stream().filter(record -> record.abandoned(now))
                .map(SandboxRecord::id).toList();
        // Judged again under the locks: another process may have adopted one meanwhile.
        int reaped = abandoned.isEmpty() ? 0 : lockedAll(abandoned, () -> disposeLocked(abandoned.stream()
                .filter(id -> store.record(id).map(current -> current.abandoned(now)).orElse(false)).toList()));
        List<Path> debris = store.debris().stream().filter(path -> path.getFileName().toString()
                .startsWith(LocalStore.REMOVING) || olderThan(path, DEBRIS_AGE)).toList();
        // A removal is never under way for long in a live process, and is safe to finish twice.
        Launches.stopAll(debris, STOP_PATIENCE);
        debris.forEach(WorkspaceKeeper::end);
        debris.forEach(LocalStore::deleteRetired);
        for (String group : limiter.existingGroups()) {
            if (group.startsWith(groupPrefix)
                    && !Files.isDirectory(store.directory(group.substring(groupPrefix.length())))) {
                limiter.release(group);
            }
        }
        WorkspaceKeeper.endOrphans();
        healIndex(records);
        for (String id : store.orphanLocks()) {
            store.locked(id, () -> {
                if (!Files.exists(store.directory(id), LinkOption.NOFOLLOW_LINKS)) {
                    store.removeLock(id);
                }
                return null;
            });
        }
        return reaped;
    }

    /**
     * Makes the index say what the records say, for what a crash or an older version left: an entry
     * for each record (listed just before) that lacks one, and none for a sandbox that is gone.
     * Each change is judged again under the sandbox's lock.
     */
    private void healIndex(List<SandboxRecord> records) {
        SandboxIndex index = store.index();
        Set<SandboxIndex.Entry> indexed = new java.util.HashSet<>(index.all());
        Set<SandboxIndex.Entry> recorded = new java.util.HashSet<>();
        for (SandboxRecord record : records) {
            SandboxIndex.Entry entry = SandboxIndex.entryOf(record);
            recorded.add(entry);
            if (!indexed.contains(entry) && SandboxIndex.wellFormed(entry)) {
                lockedQuietly(record.id(), () -> {
                    store.record(record.id()).map(SandboxIndex::entryOf).filter(entry::equals).ifPresent(current -> {
                        try {
                            index.add(current);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                });
            }
        }
        for (SandboxIndex.Entry entry : indexed) {
            if (!recorded.contains(entry)) {
                lockedQuietly(entry.id(), () -> {
                    if (store.record(entry.id()).map(SandboxIndex::entryOf).filter(entry::equals).isEmpty()) {
                        dropStale(entry.id(), entry.scopeHash(), Optional.of(entry.threadHash()));
                    }
                });
            }
        }
    }

    /** Runs {@code body} under the sandbox's lock for the reaper: a failure is logged, and the next round tries again. */
    private void lockedQuietly(String id, Runnable body) {
        try {
            store.locked(id, () -> {
                body.run();
                return null;
            });
        } catch (RuntimeException e) {
            System.getLogger(LocalSandboxes.class.getName()).log(System.Logger.Level.WARNING,
                    () -> "could not bring the index entry of " + id + " in line with its record: " + ErrorDetail.of(e));
        }
    }

    /**
     * Lets go of the sandboxes this instance holds: each stays, detached, until its lease runs
     * out, for the next process to adopt or a reaper to take. Called when the backend closes and
     * when the JVM exits normally (a crash never gets here: that is how a crash is told apart).
     */
    void detachHeld() {
        for (String id : List.copyOf(held)) {
            held.remove(id);
            try {
                store.locked(id, () -> {
                    store.record(id).filter(SandboxRecord::ownedHere).filter(SandboxRecord::attached)
                            .ifPresent(record -> {
                                try {
                                    record.detached().write(store.directory(id));
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            });
                    return null;
                });
            } catch (RuntimeException e) {
                // Gone meanwhile, or the state root is going away: its reaper judges it by its lease.
                System.getLogger(LocalSandboxes.class.getName()).log(System.Logger.Level.DEBUG,
                        () -> "could not detach " + id + ": " + ErrorDetail.of(e));
            }
        }
    }

    /** Detaches what this instance holds and stops reaping for it. */
    void close() {
        LocalKeeper.unregister(this);
        detachHeld();
    }

    /** The words that start a command inside the sandbox's limits (and, first, its keeper's namespaces). */
    List<String> launchPrefix(String id, List<String> enterKeeper) {
        return limiter.launchPrefix(groupPrefix + id, enterKeeper);
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

    /**
     * Disposes of the sandboxes {@code ids}, whose locks the caller holds: each is retired (and
     * unindexed), then everything running in any of them is killed, then all are waited for at
     * once, and only then are their trees removed and their lock files with them.
     *
     * @return how many existed
     */
    private int disposeLocked(List<String> ids) {
        List<Path> retired = new ArrayList<>();
        for (String id : ids) {
            held.remove(id);
            store.retire(id).ifPresent(retired::add);
            beforeRemoval.accept(id);
        }
        Launches.stopAll(retired, STOP_PATIENCE);
        retired.forEach(WorkspaceKeeper::end);
        limiter.release(ids.stream().map(id -> groupPrefix + id).toList());
        retired.forEach(LocalStore::deleteRetired);
        ids.forEach(store::removeLock);
        return retired.size();
    }

    /** Runs {@code body} holding the locks of {@code ids}, taken in sorted order (so two callers never deadlock). */
    private <T> T lockedAll(List<String> ids, java.util.function.Supplier<T> body) {
        List<String> ordered = ids.stream().distinct().sorted().toList();
        return lockedFrom(ordered, 0, body);
    }

    private <T> T lockedFrom(List<String> ids, int from, java.util.function.Supplier<T> body) {
        if (from == ids.size()) {
            return body.get();
        }
        return store.locked(ids.get(from), () -> lockedFrom(ids, from + 1, body));
    }

    private static boolean olderThan(Path path, Duration age) {
        try {
            return Files.getLastModifiedTime(path).toInstant().isBefore(Instant.now().minus(age));
        } catch (IOException e) {
            return false;
        }
    }
}
