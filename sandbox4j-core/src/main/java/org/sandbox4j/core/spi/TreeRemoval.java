package org.sandbox4j.core.spi;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Removes a directory tree a guest may have shaped, without ever following a link in it: every
 * step is {@code openat}/{@code unlinkat}/{@code renameat} relative to a directory already open
 * ({@link SecureDirectoryStream}, {@code O_NOFOLLOW}), so a directory swapped for a link while the
 * removal runs is unlinked as a link, and nothing outside the tree is ever named. The one rule for
 * host-side deletion; every backend that deletes host-side state uses it.
 *
 * <p>Bounded: at most {@value #MAX_OPEN_DEPTH} directories are held open at once, whatever the
 * tree's depth (a directory met deeper is first moved up, between open handles, to the top of
 * the tree, and removed from there), and the whole removal stops at its deadline, saying so.
 *
 * <p>A directory the guest made unwritable is made writable through its own open handle
 * ({@code fchmod}). One the host user cannot even open (a non-root host whose guest removed its
 * own read or search permission) is fixed by a path-based {@code chmod} only when the caller says
 * no process can still change the tree ({@link Mode#PROCESSES_STOPPED}); otherwise the removal
 * stops there and says so. Root needs neither.
 */
public final class TreeRemoval {

    /** The most directories held open at once; a deeper directory is moved up first. */
    public static final int MAX_OPEN_DEPTH = 8;
    /** How long a removal may take unless the caller says otherwise. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofMinutes(2);
    /** A path-based fix is attempted only on paths this short (below PATH_MAX with room to spare). */
    private static final int MAX_FIX_PATH_BYTES = 3072;
    private static final String MOVED_UP_PREFIX = ".sandbox4j-deep-";
    /** Names taken from one listing before it is closed: a huge directory is emptied a batch at a time. */
    private static final int BATCH = 4096;
    private static final Set<PosixFilePermission> OWNER_ALL = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    /** Whether anything can still change the tree while it is removed. */
    public enum Mode {
        /**
         * A guest may still be running: only handle-relative steps are taken, and a directory this
         * user cannot open ends the removal.
         */
        GUEST_MAY_RUN,
        /**
         * Every process that could change the tree has been stopped: a directory this user cannot
         * open may also be fixed by a path-based {@code chmod} (its path having just been checked).
         */
        PROCESSES_STOPPED
    }

    /** A removal that stopped part way: what is left stays where it was, under its top. */
    public static final class Incomplete extends IOException {
        private static final long serialVersionUID = 1L;

        Incomplete(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Path topPath;
    private final Mode mode;
    private final long deadlineNanos;
    private final Duration deadline;

    private TreeRemoval(Path topPath, Mode mode, Duration deadline) {
        this.topPath = topPath;
        this.mode = mode;
        this.deadline = deadline;
        this.deadlineNanos = System.nanoTime() + deadline.toNanos();
    }

    /**
     * Removes the host directory {@code top} (a path the host chose; nothing below it is trusted)
     * and everything under it. A link or file at {@code top} itself is unlinked. Missing is success.
     *
     * @throws Incomplete the deadline passed, or a directory could not be opened or emptied; what
     *                    is left is still under {@code top}
     */
    public static void remove(Path top, Mode mode, Duration deadline) throws IOException {
        Path absolute = top.toAbsolutePath().normalize();
        Path parentPath = absolute.getParent();
        if (parentPath == null) {
            throw new IllegalArgumentException("refusing to remove the root directory");
        }
        try (SecureDirectoryStream<Path> parent = DirectoryHandles.open(parentPath,
                "a tree cannot be removed without following links; run on Linux")) {
            new TreeRemoval(absolute, mode, deadline).removeEntry(parent, absolute.getFileName());
        } catch (NoSuchFileException gone) {
            // The parent itself is gone: so is the tree.
        }
    }

    /**
     * Removes the entry {@code name} of the open directory {@code parent}, and, when it is a real
     * directory, everything under it. For trees inside a live guest's workspace: handle-relative
     * steps only ({@link Mode#GUEST_MAY_RUN}).
     *
     * @param parentPath where {@code parent} is, for messages only
     */
    public static void remove(SecureDirectoryStream<Path> parent, Path parentPath, Path name, Duration deadline)
            throws IOException {
        new TreeRemoval(parentPath.resolve(name.toString()), Mode.GUEST_MAY_RUN, deadline).removeEntry(parent, name);
    }

    private void removeEntry(SecureDirectoryStream<Path> parent, Path name) throws IOException {
        Optional<BasicFileAttributes> attributes = DirectoryHandles.attributes(parent, name);
        if (attributes.isEmpty()) {
            return;
        }
        if (!isRealDirectory(attributes.get())) {
            unlink(parent, name);
            return;
        }
        Optional<SecureDirectoryStream<Path>> opened = open(parent, name, topPath);
        if (opened.isEmpty()) {
            return;
        }
        try (SecureDirectoryStream<Path> top = opened.get()) {
            empty(top, top, topPath, 0);
        }
        deleteDirectory(parent, name, topPath);
    }

    /**
     * Empties {@code directory} (depth {@code depth} below the top), listing it again until a
     * listing comes back empty: a huge directory is taken a batch at a time, and directories moved
     * up to the top from below are taken by the top's later listings.
     */
    private void empty(SecureDirectoryStream<Path> top, SecureDirectoryStream<Path> directory, Path where,
            int depth) throws IOException {
        boolean fixedPermissions = false;
        while (true) {
            List<Path> batch = names(directory, where);
            if (batch.isEmpty()) {
                return;
            }
            for (Path child : batch) {
                checkDeadline(where);
                Optional<BasicFileAttributes> attributes = DirectoryHandles.attributes(directory, child);
                if (attributes.isEmpty()) {
                    continue;
                }
                try {
                    if (!isRealDirectory(attributes.get())) {
                        unlink(directory, child);
                    } else if (depth + 1 >= MAX_OPEN_DEPTH) {
                        moveUp(directory, child, top, where.resolve(child.toString()));
                    } else {
                        Path childPath = where.resolve(child.toString());
                        Optional<SecureDirectoryStream<Path>> opened = open(directory, child, childPath);
                        if (opened.isEmpty()) {
                            continue;
                        }
                        try (SecureDirectoryStream<Path> inner = opened.get()) {
                            empty(top, inner, childPath, depth + 1);
                        }
                        deleteDirectory(directory, child, childPath);
                    }
                } catch (AccessDeniedException denied) {
                    if (fixedPermissions) {
                        throw incomplete(where, "this user may not change it even after making it writable", denied);
                    }
                    // The guest took write permission from this directory: give it back through its own handle.
                    directory.getFileAttributeView(PosixFileAttributeView.class).setPermissions(OWNER_ALL);
                    fixedPermissions = true;
                }
            }
        }
    }

    /**
     * Moves the directory {@code name} of {@code directory} to the top under a fresh name
     * ({@code renameat} between open handles), to be taken from there with few handles open.
     * Moving a directory needs write permission on it (its {@code ..} changes): given back first
     * through its own handle when the guest took it away.
     */
    private void moveUp(SecureDirectoryStream<Path> directory, Path name, SecureDirectoryStream<Path> top,
            Path where) throws IOException {
        Path target = topPath.getFileSystem().getPath(MOVED_UP_PREFIX + UUID.randomUUID());
        try {
            directory.move(name, top, target);
        } catch (AccessDeniedException denied) {
            Optional<SecureDirectoryStream<Path>> opened = open(directory, name, where);
            if (opened.isEmpty()) {
                return;
            }
            try (SecureDirectoryStream<Path> moving = opened.get()) {
                moving.getFileAttributeView(PosixFileAttributeView.class).setPermissions(OWNER_ALL);
            }
            directory.move(name, top, target);
        }
    }

    /**
     * The next names of {@code directory}, at most a batch, from a fresh listing of it (a stream
     * lists once; {@code .} is opened relative to its handle, so nothing is resolved by path).
     */
    private List<Path> names(SecureDirectoryStream<Path> directory, Path where) throws IOException {
        List<Path> names = new ArrayList<>();
        try (SecureDirectoryStream<Path> listing = directory.newDirectoryStream(
                topPath.getFileSystem().getPath("."), LinkOption.NOFOLLOW_LINKS)) {
            for (Path child : listing) {
                names.add(child.getFileName());
                if (names.size() >= BATCH) {
                    break;
                }
            }
        } catch (DirectoryIteratorException e) {
            throw incomplete(where, "its entries could not be read", e.getCause());
        }
        return names;
    }

    /**
     * Opens the directory {@code name} of {@code parent} without following a link; empty when it
     * is gone or turned out not to be a directory (then it was unlinked as what it is now).
     */
    private Optional<SecureDirectoryStream<Path>> open(SecureDirectoryStream<Path> parent, Path name, Path where)
            throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return Optional.of(parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS));
            } catch (NoSuchFileException gone) {
                return Optional.empty();
            } catch (AccessDeniedException denied) {
                if (attempt > 0 || !fixUnopenable(parent, name, where)) {
                    throw incomplete(where, "this user cannot open it (its guest took the permission away)", denied);
                }
            } catch (FileSystemException e) {
                // Swapped for a link or a file since the stat: unlink what is there now, never follow it.
                Optional<BasicFileAttributes> now = DirectoryHandles.attributes(parent, name);
                if (now.isEmpty()) {
                    return Optional.empty();
                }
                if (!isRealDirectory(now.get())) {
                    unlink(parent, name);
                    return Optional.empty();
                }
                throw incomplete(where, "it could not be opened", e);
            }
        }
    }

    /**
     * Gives a directory this user cannot open its owner's permissions back: only when nothing else
     * can change the tree, only on a short path, and only after the path was checked to be that
     * directory (chmod follows a link; nothing can swap one in when every process is stopped).
     */
    private boolean fixUnopenable(SecureDirectoryStream<Path> parent, Path name, Path where) throws IOException {
        if (mode != Mode.PROCESSES_STOPPED || where.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                > MAX_FIX_PATH_BYTES) {
            return false;
        }
        BasicFileAttributes viaPath = Files.readAttributes(where, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        Optional<BasicFileAttributes> viaHandle = DirectoryHandles.attributes(parent, name);
        if (!viaPath.isDirectory() || viaPath.isSymbolicLink() || viaHandle.isEmpty()
                || viaPath.fileKey() == null || !viaPath.fileKey().equals(viaHandle.get().fileKey())) {
            return false;
        }
        Files.setPosixFilePermissions(where, OWNER_ALL);
        return true;
    }

    private void deleteDirectory(SecureDirectoryStream<Path> parent, Path name, Path where) throws IOException {
        try {
            parent.deleteDirectory(name);
        } catch (NoSuchFileException gone) {
            // Removed meanwhile: the outcome asked for.
        } catch (DirectoryNotEmptyException refilled) {
            throw incomplete(where, "it gained entries while it was being removed (is a guest still running?)",
                    refilled);
        } catch (AccessDeniedException denied) {
            parent.getFileAttributeView(PosixFileAttributeView.class).setPermissions(OWNER_ALL);
            parent.deleteDirectory(name);
        } catch (FileSystemException e) {
            if (e.getReason() != null && e.getReason().contains("Not a directory")) {
                // Swapped for a link or a file since it was emptied: the parent's next listing unlinks it.
                return;
            }
            throw e;
        }
    }

    private static void unlink(SecureDirectoryStream<Path> directory, Path name) throws IOException {
        try {
            directory.deleteFile(name);
        } catch (NoSuchFileException gone) {
            // Removed meanwhile.
        } catch (FileSystemException e) {
            if (e.getReason() != null && e.getReason().contains("Is a directory")) {
                // Swapped for a directory since the stat: leave it for the next pass, which opens it no-follow.
                return;
            }
            throw e;
        }
    }

    private void checkDeadline(Path where) throws Incomplete {
        if (System.nanoTime() > deadlineNanos) {
            throw new Incomplete("the removal of " + topPath + " ran past its deadline of " + deadline.toSeconds()
                    + " s at " + where + "; what is left stays under " + topPath, null);
        }
    }

    private Incomplete incomplete(Path where, String why, Throwable cause) {
        return new Incomplete("could not remove all of " + topPath + ": " + where + ": " + why
                + (cause == null ? "" : " (" + ErrorDetail.of(cause) + ")"), cause);
    }


    private static boolean isRealDirectory(BasicFileAttributes attributes) {
        return attributes.isDirectory() && !attributes.isSymbolicLink();
    }
}
