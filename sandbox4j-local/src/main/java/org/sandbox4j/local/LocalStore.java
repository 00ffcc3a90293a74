package org.sandbox4j.local;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.PassedHostChecks;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The on-disk record of one local backend type under a state root: one directory per sandbox
 * ({@code <root>/<type>/<id>/}) holding its {@link SandboxRecord} and workspace, created whole
 * (built under a temporary name, then renamed into place) and removed whole (renamed away, then
 * deleted). Every change to one sandbox holds its lock: a lock in this JVM and a file lock other
 * processes honour.
 */
final class LocalStore {

    private static final System.Logger LOG = System.getLogger(LocalStore.class.getName());
    /** The workspace directory's name inside a sandbox directory. */
    static final String WORKSPACE = "workspace";
    private static final String LOCKS = ".locks";
    private static final String HOST_CHECKS = ".host-checks";
    /** The guest's own /etc files of a bubblewrap backend (see {@link BwrapLayout}). */
    static final String GUEST_ETC = ".guest-etc";
    private static final String BUILDING = ".building-";
    static final String REMOVING = ".removing-";
    private static final String OWNER_ONLY = "rwx------";
    private static final String LOCK_SUFFIX = ".lock";

    /**
     * One in-JVM lock per lock file, shared by every store in this JVM: a file lock belongs to the
     * whole JVM, so a second store (another backend over the same state root) taking it through its
     * own channel would get an OverlappingFileLockException instead of waiting its turn. An entry
     * lives while someone holds or waits for it.
     */
    private static final JvmLocks JVM_LOCKS = new JvmLocks();

    /** Reentrant locks by lock file, counted by users, dropped when the last lets go. */
    private static final class JvmLocks {
        private final ConcurrentHashMap<Path, Counted> locks = new ConcurrentHashMap<>();

        private static final class Counted {
            final ReentrantLock lock = new ReentrantLock();
            int users;
        }

        ReentrantLock acquire(Path key) {
            Counted counted = locks.compute(key, (ignored, existing) -> {
                Counted entry = existing == null ? new Counted() : existing;
                entry.users++;
                return entry;
            });
            counted.lock.lock();
            return counted.lock;
        }

        void release(Path key, ReentrantLock lock) {
            lock.unlock();
            locks.computeIfPresent(key, (ignored, entry) -> --entry.users == 0 ? null : entry);
        }

        int size() {
            return locks.size();
        }
    }

    /** How many in-JVM lock entries exist now (for tests: none outlives its users). */
    static int jvmLockEntries() {
        return JVM_LOCKS.size();
    }

    private final Path root;
    private final SandboxIndex index;
    /**
     * How many times each thread listed the whole root: a seam for tests that acquire and dispose
     * never do (per thread, so the reaper's own listings do not count).
     */
    private final ThreadLocal<long[]> rootListings = ThreadLocal.withInitial(() -> new long[1]);

    private LocalStore(Path root) {
        this.root = root;
        this.index = SandboxIndex.in(root);
    }

    /**
     * The store for {@code backendType} under {@code stateRoot}, created owner-only if missing.
     *
     * @throws SandboxException naming the directory and the fix when it cannot be made or written
     */
    static LocalStore open(Path stateRoot, String backendType, String backendName) {
        Path root = stateRoot.toAbsolutePath().normalize().resolve(backendType);
        try {
            makeOwnerOnly(stateRoot.toAbsolutePath().normalize());
            makeOwnerOnly(root);
            makeOwnerOnly(root.resolve(LOCKS));
            makeOwnerOnly(root.resolve(SandboxIndex.DIRECTORY));
            Path probe = Files.createTempFile(root, ".probe-", "");
            Files.delete(probe);
        } catch (IOException | UnsupportedOperationException e) {
            throw new SandboxException("backend '" + backendName + "' cannot use the state root " + stateRoot + ": "
                    + ErrorDetail.of(e) + "; give it a directory this user can write (stateRoot(...) on the "
                    + "builder, or set XDG_STATE_HOME)", e);
        }
        LocalStore store = new LocalStore(root);
        store.indexIfNeeded();
        return store;
    }

    /**
     * Indexes every record of a state root written before the index (or whose index was lost),
     * once: later sandboxes are indexed as they are made.
     */
    private void indexIfNeeded() {
        if (index.ready()) {
            return;
        }
        try {
            for (SandboxRecord record : records()) {
                if (!SandboxIndex.wellFormed(SandboxIndex.entryOf(record))) {
                    continue; // garbled: no conversation's hashes find it, and the reaper judges it by its owner
                }
                locked(record.id(), () -> {
                    record(record.id()).ifPresent(current -> {
                        try {
                            index.add(SandboxIndex.entryOf(current));
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                    return null;
                });
            }
            index.markReady();
        } catch (IOException | RuntimeException e) {
            // Not ready: the next backend tries again, and the reaper adds what is missing meanwhile.
            LOG.log(System.Logger.Level.WARNING, () -> "could not index the sandboxes under " + root + ": "
                    + ErrorDetail.of(e));
        }
    }

    private static void makeOwnerOnly(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            Files.createDirectories(directory);
            if (directory.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString(OWNER_ONLY));
            }
        }
    }

    Path root() {
        return root;
    }

    /**
     * Whether {@code name}, directly under a store's root, is the backend's own (locks, index, guest /etc,
     * host checks) rather than a sandbox's or the debris of one.
     */
    static boolean isBackendEntry(String name) {
        return name.equals(LOCKS) || name.equals(SandboxIndex.DIRECTORY) || name.equals(GUEST_ETC)
                || name.equals(HOST_CHECKS);
    }

    /** Where this backend's host checks that passed are remembered (see {@link PassedHostChecks}). */
    PassedHostChecks hostChecks() {
        return PassedHostChecks.in(root.resolve(HOST_CHECKS));
    }

    SandboxIndex index() {
        return index;
    }

    /** How many times the calling thread listed this store's whole root (records, debris): for tests. */
    long rootListingsByThisThread() {
        return rootListings.get()[0];
    }

    Path directory(String id) {
        return root.resolve(id);
    }

    /**
     * Runs {@code body} holding the sandbox's lock, in this JVM and across processes. The lock file
     * goes with its sandbox ({@link #removeLock}); a waiter that then gets the lock of the removed
     * file sees that its token is not the one at the path and takes the lock again.
     */
    <T> T locked(String id, Supplier<T> body) {
        Path lockFile = lockFile(id);
        ReentrantLock local = JVM_LOCKS.acquire(lockFile);
        try {
            while (true) {
                try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                        FileLock ignored = channel.lock()) {
                    if (!holdsTheCurrentFile(channel, lockFile)) {
                        continue;
                    }
                    return body.get();
                }
            }
        } catch (IOException e) {
            throw new SandboxException("could not lock the local sandbox " + id + " under " + root + ": "
                    + ErrorDetail.of(e), e);
        } finally {
            JVM_LOCKS.release(lockFile, local);
        }
    }

    /**
     * Removes the sandbox's lock file; call only holding its lock. Waiters holding the removed file
     * notice ({@link #holdsTheCurrentFile}) and lock the path afresh.
     */
    void removeLock(String id) {
        try {
            Files.deleteIfExists(lockFile(id));
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not remove the lock file of " + id + ": "
                    + ErrorDetail.of(e));
        }
    }

    /** The ids of lock files whose sandbox directory does not exist (left by an interrupted acquire). */
    List<String> orphanLocks() {
        List<String> ids = new ArrayList<>();
        try (Stream<Path> locks = Files.list(root.resolve(LOCKS))) {
            locks.map(path -> path.getFileName().toString()).filter(name -> name.endsWith(LOCK_SUFFIX))
                    .map(name -> name.substring(0, name.length() - LOCK_SUFFIX.length()))
                    .filter(id -> !Files.exists(directory(id), LinkOption.NOFOLLOW_LINKS)).forEach(ids::add);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not list the lock files under " + root + ": "
                    + ErrorDetail.of(e));
        }
        return ids;
    }

    private Path lockFile(String id) {
        return root.resolve(LOCKS).resolve(id + LOCK_SUFFIX);
    }

    /**
     * Whether the locked {@code channel} is the file now at {@code lockFile}: a fresh token written
     * through the channel must be what the path reads. (Java cannot fstat a channel to compare.)
     */
    private static boolean holdsTheCurrentFile(FileChannel channel, Path lockFile) throws IOException {
        byte[] token = UUID.randomUUID().toString().getBytes(StandardCharsets.US_ASCII);
        channel.truncate(0);
        channel.write(ByteBuffer.wrap(token), 0);
        try {
            return java.util.Arrays.equals(token, Files.readAllBytes(lockFile));
        } catch (NoSuchFileException removed) {
            return false;
        }
    }

    Optional<SandboxRecord> record(String id) {
        return SandboxRecord.read(directory(id));
    }

    /**
     * Builds a new sandbox directory: {@code populate} fills a temporary directory, the record is
     * written, and the whole is renamed to its id, so no other process ever sees half a sandbox.
     */
    Path create(SandboxRecord record, IoConsumer populate) throws IOException {
        Path building = root.resolve(BUILDING + UUID.randomUUID());
        Files.createDirectory(building);
        SandboxIndex.Entry entry = SandboxIndex.entryOf(record);
        try {
            populate.accept(building);
            record.write(building);
            // Indexed before it can be found: whoever finds the sandbox finds its entry.
            index.add(entry);
            Path target = directory(record.id());
            Files.move(building, target, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException | RuntimeException e) {
            index.remove(entry);
            deleteTree(building);
            throw e;
        }
    }

    /** Every readable record under this store. */
    List<SandboxRecord> records() {
        rootListings.get()[0]++;
        List<SandboxRecord> found = new ArrayList<>();
        try (Stream<Path> children = Files.list(root)) {
            children.filter(path -> path.getFileName().toString().startsWith("sbx-"))
                    .map(SandboxRecord::read).flatMap(Optional::stream).forEach(found::add);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not list the sandboxes under " + root + ": "
                    + ErrorDetail.of(e));
        }
        return found;
    }

    /** When the sandbox's record was last written: at its last acquire or lease renewal. */
    Optional<Instant> recordWritten(String id) {
        try {
            return Optional.of(Files.getLastModifiedTime(directory(id).resolve(SandboxRecord.FILE_NAME)).toInstant());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Leftovers of builds and removals a crash interrupted. */
    List<Path> debris() {
        rootListings.get()[0]++;
        List<Path> found = new ArrayList<>();
        try (Stream<Path> children = Files.list(root)) {
            children.filter(path -> {
                String name = path.getFileName().toString();
                return name.startsWith(BUILDING) || name.startsWith(REMOVING);
            }).forEach(found::add);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "could not list " + root + ": " + ErrorDetail.of(e));
        }
        return found;
    }

    /**
     * Takes the sandbox directory out of use: renamed away at once (no process finds it by its id
     * again, and an exec starting now fails to bind it), to be emptied by {@link #deleteRetired}.
     *
     * @return where it now is; empty when it was already gone
     */
    Optional<Path> retire(String id) {
        Path directory = directory(id);
        Path removing = root.resolve(REMOVING + UUID.randomUUID());
        try {
            Files.move(directory, removing, StandardCopyOption.ATOMIC_MOVE);
            // Unindexed once no one can find it by its id: never before.
            SandboxRecord.read(removing).map(SandboxIndex::entryOf).ifPresent(index::remove);
            return Optional.of(removing);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not remove the local sandbox " + directory + ": "
                    + ErrorDetail.of(e));
            return Optional.empty();
        }
    }

    /**
     * Deletes a retired sandbox directory, once nothing runs in it any more; best effort: what a
     * deadline or the guest's permissions leave stays under its {@code .removing-} name, which the
     * reaper takes again.
     */
    static void deleteRetired(Path retired) {
        deleteTree(retired, TreeRemoval.Mode.PROCESSES_STOPPED);
    }

    /**
     * Deletes a tree without following any link in it ({@link TreeRemoval}); best effort.
     *
     * @param mode whether a guest may still be changing it
     */
    static void deleteTree(Path top, TreeRemoval.Mode mode) {
        try {
            TreeRemoval.remove(top, mode, TreeRemoval.DEFAULT_DEADLINE);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not delete all of " + top + ": " + ErrorDetail.of(e));
        }
    }

    /** Deletes a tree this host made and no guest can reach (a state root, a build directory); best effort. */
    static void deleteTree(Path top) {
        deleteTree(top, TreeRemoval.Mode.PROCESSES_STOPPED);
    }

    /** A step that fills a directory and may fail with an I/O error. */
    @FunctionalInterface
    interface IoConsumer {
        void accept(Path directory) throws IOException;
    }

    /** The default state root: {@code $XDG_STATE_HOME/sandbox4j}, else {@code ~/.local/state/sandbox4j}; never temp. */
    static Path defaultStateRoot() {
        String xdg = System.getenv("XDG_STATE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "sandbox4j");
        }
        return Path.of(System.getProperty("user.home"), ".local", "state", "sandbox4j");
    }

    static Duration requirePositive(Duration duration, String what) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, not " + duration);
        }
        return duration;
    }
}
