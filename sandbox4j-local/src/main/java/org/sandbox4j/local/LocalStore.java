package org.sandbox4j.local;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
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
import org.sandbox4j.core.ErrorDetail;
import org.sandbox4j.core.SandboxException;

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
    private static final String BUILDING = ".building-";
    private static final String REMOVING = ".removing-";
    private static final String OWNER_ONLY = "rwx------";

    /**
     * One in-JVM lock per lock file, shared by every store in this JVM: a file lock belongs to the
     * whole JVM, so a second store (another backend over the same state root) taking it through its
     * own channel would get an OverlappingFileLockException instead of waiting its turn.
     */
    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    private final Path root;

    private LocalStore(Path root) {
        this.root = root;
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
            Path probe = Files.createTempFile(root, ".probe-", "");
            Files.delete(probe);
        } catch (IOException | UnsupportedOperationException e) {
            throw new SandboxException("backend '" + backendName + "' cannot use the state root " + stateRoot + ": "
                    + ErrorDetail.of(e) + "; give it a directory this user can write (stateRoot(...) on the "
                    + "builder, or set XDG_STATE_HOME)", e);
        }
        return new LocalStore(root);
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

    Path directory(String id) {
        return root.resolve(id);
    }

    /** Runs {@code body} holding the sandbox's lock, in this JVM and across processes. */
    <T> T locked(String id, Supplier<T> body) {
        Path lockFile = root.resolve(LOCKS).resolve(id + ".lock");
        ReentrantLock local = JVM_LOCKS.computeIfAbsent(lockFile, ignored -> new ReentrantLock());
        local.lock();
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = channel.lock()) {
            return body.get();
        } catch (IOException e) {
            throw new SandboxException("could not lock the local sandbox " + id + " under " + root + ": "
                    + ErrorDetail.of(e), e);
        } finally {
            local.unlock();
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
        try {
            populate.accept(building);
            record.write(building);
            Path target = directory(record.id());
            Files.move(building, target, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException | RuntimeException e) {
            deleteTree(building);
            throw e;
        }
    }

    /** Every readable record under this store. */
    List<SandboxRecord> records() {
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

    /** Removes the sandbox directory: renamed away first (it vanishes at once), then deleted. */
    boolean remove(String id) {
        Path directory = directory(id);
        Path removing = root.resolve(REMOVING + UUID.randomUUID());
        try {
            Files.move(directory, removing, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException gone) {
            return false;
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not remove the local sandbox " + directory + ": "
                    + ErrorDetail.of(e));
            return false;
        }
        deleteTree(removing);
        return true;
    }

    /**
     * Deletes a tree without following any link in it (a link the guest made is removed as a
     * link), making directories the guest locked writable on the way down; best effort.
     */
    static void deleteTree(Path top) {
        try {
            Files.walkFileTree(top, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(OWNER_ONLY));
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "could not delete all of " + top + ": " + ErrorDetail.of(e));
        }
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
