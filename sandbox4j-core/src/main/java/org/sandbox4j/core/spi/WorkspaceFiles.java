package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.io.UncheckedIOException;
import java.util.function.Function;

/**
 * Host-side file methods over one sandbox's workspace directory: the host directory the guest
 * sees at {@code mountPoint}. A guest path under the mount point is the same path below the
 * workspace; any other guest path is not reachable from the host side and is refused.
 *
 * <h2>How a path is handled</h2>
 * <ol>
 *   <li>Confinement is {@link GuestPaths}' alone: {@link GuestPaths#confine} (an escape is
 *       {@link SandboxPathNotConfined}), then the shared ancestor walk
 *       ({@link GuestPaths#refuseSymlinkedParents}, {@link GuestPaths#confineWritePath}) with a
 *       no-follow stat that itself reads the workspace through open directory handles. That walk
 *       gives every refusal its type and message, exactly as every other backend's.</li>
 *   <li>The I/O then happens through {@link SecureDirectoryStream}s only: the workspace is opened
 *       once per call, and each component below it is opened from its already-open parent with
 *       {@code openat(..., O_NOFOLLOW)}. A link met there (one the guest swapped in after the
 *       walk) is refused, never followed, so the walk-then-act race cannot reach outside the
 *       workspace: at worst it turns a call into a refusal. This layer alone refuses every link
 *       the walk refuses; the walk is kept so that refusals read the same on every backend.</li>
 * </ol>
 *
 * <p>A working directory above the mount point (say {@code /}) is accepted when the path it
 * confines lands under the mount point; a path that lands elsewhere is refused with a plain
 * {@link SandboxFileException} naming the mount point (not an escape: it is simply out of reach).
 *
 * <p>The guest's directories above the mount point (its root, the scaffolding the bind mount sits
 * in) are not visible from here; the walk takes them as the directories the backend made them,
 * and no host I/O ever passes through them.
 *
 * <p>A missing parent directory is made without resolving any guest-influenced path: a fresh,
 * randomly named directory is created directly in the workspace root (a single host-chosen
 * component under a trusted host path; {@code mkdir} never follows its last component), then
 * renamed into place with {@code renameat} between open handles, then opened no-follow. Writes go
 * to an exclusive-create temporary file in the target's open directory, renamed onto the name.
 *
 * <p>Residuals: (1) {@code renameat} replaces an <em>empty</em> directory, so when another party
 * (the guest, another JVM) creates the same missing directory at the same instant as this host,
 * one of the two empty directories wins; a process already holding the loser open writes into an
 * unlinked directory. Creations in this JVM are serialised, so two host writers never collide.
 * (2) Java has no non-blocking open, so a FIFO swapped in between the no-follow stat and the open
 * could block the thread opening it until something opened the FIFO's other end. A backend whose
 * guests cannot make FIFOs says so ({@link Fifos#CANNOT_EXIST}: bubblewrap's seccomp filter); for
 * any other, files are opened for reading <em>and writing</em> where this host user may (such an
 * open of a FIFO returns at once, and is then refused), a directory is first tried the same way
 * (a FIFO opens, a directory says "is a directory"), and every call runs under a deadline
 * ({@link HostCalls}): a call the remaining window still catches fails with a typed timeout, never
 * hangs its caller, and a sandbox cannot tie up more than {@link HostCalls#MAX_STUCK} host threads.
 * It can never redirect I/O outside the workspace. (3) The temporary file and the staging directory are
 * briefly visible to the guest under {@code .sandbox4j-} names; a guest that tampers with them can
 * only make the call fail, and a failed call removes what it left.
 */
public final class WorkspaceFiles extends ConfinedFiles<SecureDirectoryStream<Path>> {

    /** How long a recursive removal may take. */
    private static final Duration REMOVAL_DEADLINE = Duration.ofSeconds(8);
    /** How long one host call on a workspace may take before it is abandoned with a typed timeout. */
    public static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    /** Whether the guest can make FIFOs in its workspace, whose opens would block. */
    public enum Fifos {
        /** The backend forbids them (bubblewrap's seccomp filter): every open is a plain no-follow open. */
        CANNOT_EXIST,
        /** The guest may make them: opens are made so that a FIFO cannot block them (see the class notes). */
        MAY_EXIST
    }

    private static final int CHUNK_BYTES = 8192;
    private static final String TEMPORARY_PREFIX = ".sandbox4j-write-";
    private static final String TEMPORARY_SUFFIX = ".tmp";
    private static final String STAGING_PREFIX = ".sandbox4j-mkdir-";
    private static final FileAttribute<?> FILE_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--"));
    private static final FileAttribute<?> DIRECTORY_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x"));
    private static final Set<OpenOption> TEMPORARY_FILE_OPTIONS =
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
    private static final Set<OpenOption> READ_OPTIONS = Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    private static final Set<OpenOption> READ_WRITE_OPTIONS = Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS);
    /** Serialises directory creation in this JVM: renameat would otherwise let one writer replace another's. */
    private static final Object DIRECTORY_CREATION = new Object();

    private final Path workspace;
    private final String mountPoint;
    private final String backendName;
    private final Fifos fifos;
    private final HostCalls calls;

    /** As {@link #WorkspaceFiles(Path, String, String, Fifos)} for a guest that may make FIFOs. */
    public WorkspaceFiles(Path workspace, String mountPoint, String backendName) {
        this(workspace, mountPoint, backendName, Fifos.MAY_EXIST);
    }

    /**
     * @param workspace   the host directory the guest sees at {@code mountPoint}; the path itself is
     *                    host configuration and trusted, nothing below it is
     * @param mountPoint  the absolute guest path where the workspace is bound (e.g. {@code /sandbox4j})
     * @param backendName for messages
     * @param fifos       whether the guest can make FIFOs there
     */
    public WorkspaceFiles(Path workspace, String mountPoint, String backendName, Fifos fifos) {
        this.workspace = Objects.requireNonNull(workspace, "workspace").toAbsolutePath();
        Objects.requireNonNull(mountPoint, "mountPoint");
        if (!mountPoint.startsWith("/") || mountPoint.indexOf('\\') >= 0 || mountPoint.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("the mount point must be an absolute guest path, not "
                    + GuestText.quote(mountPoint));
        }
        this.mountPoint = GuestPaths.normalize(mountPoint);
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.fifos = Objects.requireNonNull(fifos, "fifos");
        this.calls = new HostCalls(backendName, CALL_DEADLINE);
    }

    // ---------------------------------------------------------------- the kit's primitives

    /** Opens the workspace once for the call, under the call deadline, and translates what the host said. */
    @Override
    protected <T> T call(String path, String operation, Function<SecureDirectoryStream<Path>, T> body) {
        return withWorkspace(path, operation, body::apply);
    }

    /** A guest path outside the mount point is out of the host's reach (not an escape). */
    @Override
    protected void refuseUnreachable(String confined, String path) {
        reachable(confined, path);
    }

    /**
     * The no-follow, unconfined stat the shared walk uses, answered through the open workspace: a
     * directory above the mount point is the scaffolding the backend built (invisible from here).
     */
    @Override
    protected Optional<Stat> lstat(SecureDirectoryStream<Path> root, String absolute) {
        Optional<String> below = GuestPaths.relativeTo(absolute, mountPoint);
        if (below.isEmpty()) {
            if (GuestPaths.relativeTo(mountPoint, absolute).isPresent()) {
                return Optional.of(Stat.of(EntryKind.DIRECTORY));
            }
            throw new IllegalStateException(absolute + " is neither under nor above the mount point " + mountPoint);
        }
        List<String> parts = components(below.get());
        if (parts.isEmpty()) {
            return Optional.of(Stat.of(EntryKind.DIRECTORY));
        }
        try (DirectoryHandles opened = new DirectoryHandles()) {
            Optional<SecureDirectoryStream<Path>> parent;
            try {
                parent = openChain(root, parts.subList(0, parts.size() - 1), opened);
            } catch (SandboxNotADirectory notADirectory) {
                return Optional.empty();
            }
            if (parent.isEmpty()) {
                return Optional.empty();
            }
            return attributes(parent.get(), name(parts.get(parts.size() - 1))).map(WorkspaceFiles::statOf);
        } catch (IOException e) {
            throw translate(e, absolute, "describe");
        }
    }

    @Override
    protected void write(SecureDirectoryStream<Path> root, String confined, byte[] content, String path) {
        List<String> parts = reachable(confined, path);
        try (DirectoryHandles opened = new DirectoryHandles()) {
            SecureDirectoryStream<Path> directory = root;
            for (int i = 0; i < parts.size() - 1; i++) {
                directory = enterOrCreate(root, directory, parts.get(i), guestPath(parts, i + 1), path);
                opened.keep(directory);
            }
            land(directory, parts.get(parts.size() - 1), content, path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected void makeDirectories(SecureDirectoryStream<Path> root, String confined, String path) {
        List<String> parts = reachable(confined, path);
        try (DirectoryHandles opened = new DirectoryHandles()) {
            SecureDirectoryStream<Path> directory = root;
            for (int i = 0; i < parts.size(); i++) {
                directory = enterOrCreate(root, directory, parts.get(i), guestPath(parts, i + 1), path);
                opened.keep(directory);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** However large the cap, no read holds more than {@link HostCeilings#MAX_BUFFERED_BYTES}. */
    @Override
    protected byte[] read(SecureDirectoryStream<Path> root, String confined, Stat stat, long cap, String path) {
        List<String> parts = reachable(confined, path);
        try (DirectoryHandles opened = new DirectoryHandles()) {
            SecureDirectoryStream<Path> parent = openChain(root, parts.subList(0, parts.size() - 1), opened)
                    .orElseThrow(() -> FileRefusals.goneDuringTheCall(path));
            Path leaf = name(parts.get(parts.size() - 1));
            BasicFileAttributes attributes = attributes(parent, leaf)
                    .orElseThrow(() -> FileRefusals.goneDuringTheCall(path));
            FileRefusals.refuseUnlessRegular(kindOf(attributes), path);
            if (attributes.size() > cap) {
                throw FileRefusals.readOverCap(path, attributes.size(), cap);
            }
            SeekableByteChannel channel;
            try {
                channel = openForReading(parent, leaf, path);
            } catch (IOException e) {
                // Swapped since the stat: say what is there now.
                FileRefusals.refuseUnlessRegular(kindOf(attributes(parent, leaf)
                        .orElseThrow(() -> FileRefusals.goneDuringTheCall(path))), path);
                throw e;
            }
            try (channel) {
                return readBounded(channel, path, cap);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Bounded while it is read: a guest decides how large its directories are. */
    @Override
    protected Map<String, Stat> list(SecureDirectoryStream<Path> root, String confined, String path) {
        List<String> parts = reachable(confined, path);
        try (DirectoryHandles opened = new DirectoryHandles()) {
            SecureDirectoryStream<Path> directory = openChain(root, parts, opened)
                    .orElseThrow(() -> FileRefusals.goneDuringTheCall(path));
            // The Path keeps the name's exact bytes for the no-follow stat.
            Map<String, Path> names = new TreeMap<>();
            long nameChars = 0;
            for (Path child : directory) {
                Path name = child.getFileName();
                String text = name.toString();
                nameChars += text.length();
                if (names.size() >= HostCeilings.MAX_LISTED_ENTRIES || nameChars > HostCeilings.MAX_LISTED_NAME_CHARS) {
                    throw FileRefusals.listingTooLarge(path);
                }
                names.put(text, name);
            }
            Map<String, Stat> children = new TreeMap<>();
            for (Map.Entry<String, Path> child : names.entrySet()) {
                // An entry removed since the listing is simply left out.
                attributes(directory, child.getValue()).ifPresent(found -> children.put(child.getKey(), statOf(found)));
            }
            return children;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected void unlink(SecureDirectoryStream<Path> root, String confined, Stat stat, boolean recursive,
            String path) {
        List<String> parts = reachable(confined, path);
        if (parts.isEmpty()) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " names the workspace's mount point "
                    + GuestText.quote(mountPoint) + " itself; refusing to remove the workspace");
        }
        try (DirectoryHandles opened = new DirectoryHandles()) {
            Optional<SecureDirectoryStream<Path>> parent = openChain(root, parts.subList(0, parts.size() - 1), opened);
            if (parent.isEmpty()) {
                return;
            }
            Path leaf = name(parts.get(parts.size() - 1));
            Optional<BasicFileAttributes> attributes = attributes(parent.get(), leaf);
            if (attributes.isEmpty()) {
                return;
            }
            if (!attributes.get().isDirectory() || attributes.get().isSymbolicLink()) {
                // unlinkat: a link is removed as a link, never followed.
                deleteFileIfExists(parent.get(), leaf);
                return;
            }
            if (!recursive) {
                throw FileRefusals.removalNeedsRecursive(path);
            }
            removeTree(parent.get(), leaf, path, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------- the guest's view of the workspace

    /**
     * The components of {@code confined} below the mount point (empty for the mount point itself).
     *
     * @throws SandboxFileException the path is not under the mount point: the host cannot reach it
     */
    private List<String> reachable(String confined, String path) {
        Optional<String> below = GuestPaths.relativeTo(confined, mountPoint);
        if (below.isEmpty()) {
            throw new SandboxFileException(GuestText.quote(path) + " resolves to " + GuestText.quote(confined)
                    + ", outside the workspace mounted at " + GuestText.quote(mountPoint) + "; backend '" + backendName
                    + "' reaches guest files only under " + GuestText.quote(mountPoint) + ": use a working "
                    + "directory and path under it");
        }
        return components(below.get());
    }

    /** The guest path of the first {@code count} components below the mount point. */
    private String guestPath(List<String> parts, int count) {
        String joined = String.join("/", parts.subList(0, count));
        return mountPoint.equals("/") ? "/" + joined : mountPoint + "/" + joined;
    }

    // ---------------------------------------------------------------- openat-relative steps

    @FunctionalInterface
    private interface WorkspaceCall<T> {
        T run(SecureDirectoryStream<Path> root) throws IOException;
    }

    /** Opens the workspace once for this call, runs {@code body}, and translates what the host said. */
    private <T> T withWorkspace(String path, String action, WorkspaceCall<T> body) {
        return calls.run(action + " " + GuestText.quote(path), () -> withWorkspaceNow(path, action, body));
    }

    private <T> T withWorkspaceNow(String path, String action, WorkspaceCall<T> body) {
        try (SecureDirectoryStream<Path> root = openWorkspace()) {
            return body.run(root);
        } catch (UncheckedIOException e) {
            IOException cause = e.getCause();
            if (cause instanceof ClosedByInterruptException interrupted) {
                throw new SandboxInterrupted("interrupted while trying to " + action + " " + GuestText.quote(path),
                        interrupted);
            }
            throw translate(cause, path, action);
        } catch (ClosedByInterruptException interrupted) {
            throw new SandboxInterrupted("interrupted while trying to " + action + " " + GuestText.quote(path),
                    interrupted);
        } catch (DirectoryIteratorException e) {
            throw translate(e.getCause(), path, action);
        } catch (IOException e) {
            throw translate(e, path, action);
        }
    }

    private SecureDirectoryStream<Path> openWorkspace() throws IOException {
        return DirectoryHandles.open(workspace, "backend '" + backendName + "' cannot reach its workspace without "
                + "following links; run it on Linux");
    }

    /**
     * Opens each of {@code parts} in turn from the one before, never through a link; every handle
     * opened is pushed on {@code opened} for the caller to close.
     *
     * @return the last directory ({@code root} for no parts), or empty when a component is missing
     */
    private Optional<SecureDirectoryStream<Path>> openChain(SecureDirectoryStream<Path> root, List<String> parts,
            DirectoryHandles opened) throws IOException {
        SecureDirectoryStream<Path> directory = root;
        for (int i = 0; i < parts.size(); i++) {
            Optional<SecureDirectoryStream<Path>> child = enter(directory, parts.get(i), guestPath(parts, i + 1));
            if (child.isEmpty()) {
                return Optional.empty();
            }
            directory = child.get();
            opened.keep(directory);
        }
        return Optional.of(directory);
    }

    /**
     * Opens {@code leaf} for reading without following a link. Where the guest may make FIFOs, it
     * is opened for reading and writing where this user may: such an open of a FIFO returns at once
     * (a plain read-only open would wait for a writer), and the seek it cannot do refuses it. The
     * file is never written through this channel.
     */
    private SeekableByteChannel openForReading(SecureDirectoryStream<Path> parent, Path leaf, String path)
            throws IOException {
        if (fifos == Fifos.CANNOT_EXIST) {
            return parent.newByteChannel(leaf, READ_OPTIONS);
        }
        SeekableByteChannel channel;
        try {
            channel = parent.newByteChannel(leaf, READ_WRITE_OPTIONS);
        } catch (FileSystemException notWritable) {
            if (notWritable instanceof java.nio.file.AccessDeniedException || reasonIs(notWritable, "Text file busy")) {
                // Not writable to this user, or a program the guest runs: a regular file an instant ago.
                return parent.newByteChannel(leaf, READ_OPTIONS);
            }
            throw notWritable;
        }
        try {
            channel.position();
            return channel;
        } catch (IOException unseekable) {
            channel.close();
            throw new SandboxNotARegularFile(GuestText.quote(path) + " is not a regular file (a FIFO, socket or "
                    + "device); only regular files are read");
        }
    }

    /**
     * Opens the directory {@code segment} of {@code parent} with {@code O_NOFOLLOW}.
     *
     * @return empty when nothing is there
     * @throws SandboxPathNotConfined it is a link
     * @throws SandboxNotADirectory  it is something else
     */
    private Optional<SecureDirectoryStream<Path>> enter(SecureDirectoryStream<Path> parent, String segment,
            String guestDirectory) throws IOException {
        Path child = name(segment);
        Optional<BasicFileAttributes> existing = attributes(parent, child);
        if (existing.isEmpty()) {
            return Optional.empty();
        }
        refuseUnlessDirectory(existing.get(), guestDirectory);
        if (fifos == Fifos.MAY_EXIST) {
            refuseAFifoInPlaceOfADirectory(parent, child, guestDirectory);
        }
        try {
            return Optional.of(parent.newDirectoryStream(child, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException e) {
            // Swapped since the stat: refuse for what is there now.
            Optional<BasicFileAttributes> now = attributes(parent, child);
            if (now.isEmpty()) {
                return Optional.empty();
            }
            refuseUnlessDirectory(now.get(), guestDirectory);
            throw e;
        }
    }

    /**
     * A directory open waits forever on a FIFO swapped in for the directory: first try the name as
     * a file for reading and writing, which a FIFO answers at once and a directory refuses ("is a
     * directory"). What is left is the instant between this and the directory's own open.
     */
    private static void refuseAFifoInPlaceOfADirectory(SecureDirectoryStream<Path> parent, Path child,
            String guestDirectory) throws IOException {
        try (SeekableByteChannel opened = parent.newByteChannel(child, READ_WRITE_OPTIONS)) {
            throw new SandboxNotADirectory(GuestText.quote(guestDirectory) + " is not a directory");
        } catch (FileSystemException answered) {
            // "Is a directory" is the answer hoped for; a refusal of write access leaves the plain open to decide.
        }
    }

    /** Opens the directory {@code segment} of {@code parent}, first making it if it is missing. */
    private SecureDirectoryStream<Path> enterOrCreate(SecureDirectoryStream<Path> root,
            SecureDirectoryStream<Path> parent, String segment, String guestDirectory, String path) throws IOException {
        Optional<SecureDirectoryStream<Path>> existing = enter(parent, segment, guestDirectory);
        if (existing.isPresent()) {
            return existing.get();
        }
        createDirectory(root, parent, name(segment));
        return enter(parent, segment, guestDirectory).orElseThrow(() -> new SandboxFileException("the directory "
                + GuestText.quote(guestDirectory) + " vanished while it was being made for " + GuestText.quote(path)
                + "; nothing was written: try again"));
    }

    /**
     * Makes the directory {@code name} in {@code parent} without resolving a guest-influenced path:
     * a fresh directory is made directly in the workspace root, then renamed between open handles.
     * Whatever is at {@code name} afterwards is judged by the no-follow open that follows.
     */
    private void createDirectory(SecureDirectoryStream<Path> root, SecureDirectoryStream<Path> parent, Path name)
            throws IOException {
        synchronized (DIRECTORY_CREATION) {
            if (attributes(parent, name).isPresent()) {
                return;
            }
            Path staging = name(STAGING_PREFIX + UUID.randomUUID());
            // The one path-based call: one fresh host-chosen component under the trusted workspace path.
            Files.createDirectory(workspace.resolve(staging.toString()), DIRECTORY_MODE);
            try {
                root.move(staging, parent, name);
            } catch (IOException e) {
                deleteQuietly(root, staging, true);
                if (attributes(parent, name).isPresent()) {
                    return;
                }
                throw e;
            }
        }
    }

    /** Writes {@code content} to a temporary file in {@code directory}, then renames it onto {@code leafName}. */
    private void land(SecureDirectoryStream<Path> directory, String leafName, byte[] content, String path)
            throws IOException {
        Path leaf = name(leafName);
        Optional<BasicFileAttributes> existing = attributes(directory, leaf);
        if (existing.isPresent()) {
            refuseAsDestination(existing.get(), path);
        }
        Path temporary = name(TEMPORARY_PREFIX + UUID.randomUUID() + TEMPORARY_SUFFIX);
        boolean moved = false;
        try {
            try (SeekableByteChannel channel = directory.newByteChannel(temporary, TEMPORARY_FILE_OPTIONS, FILE_MODE)) {
                ByteBuffer bytes = ByteBuffer.wrap(content);
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
            }
            try {
                // renameat replaces a file whole; a link swapped in meanwhile is replaced, never followed.
                directory.move(temporary, directory, leaf);
            } catch (IOException e) {
                Optional<BasicFileAttributes> now = attributes(directory, leaf);
                if (now.isPresent()) {
                    refuseAsDestination(now.get(), path);
                }
                throw e;
            }
            moved = true;
        } finally {
            if (!moved) {
                deleteQuietly(directory, temporary, false);
            }
        }
    }

    /**
     * Removes the directory {@code name} of {@code parent} and everything under it, unlinking
     * links, however deep ({@link TreeRemoval}: handle-relative, a bounded number of handles open).
     */
    private void removeTree(SecureDirectoryStream<Path> parent, Path name, String path, int depth) throws IOException {
        try {
            // Messages name guest paths only: the removal is told where it is in the guest's terms.
            TreeRemoval.remove(parent, workspace.getFileSystem().getPath(GuestPaths.parent(
                    GuestPaths.normalize(path.startsWith("/") ? path : "/" + path))), name, REMOVAL_DEADLINE);
        } catch (TreeRemoval.Incomplete incomplete) {
            throw new SandboxFileException(GuestText.quote(path) + " could not be removed whole (the guest may still "
                    + "be changing it); part of it may be gone: remove it again", incomplete);
        }
    }

    // ---------------------------------------------------------------- small steps

    private static Optional<BasicFileAttributes> attributes(SecureDirectoryStream<Path> directory, Path entry)
            throws IOException {
        return DirectoryHandles.attributes(directory, entry);
    }

    private static Stat statOf(BasicFileAttributes attributes) {
        EntryKind kind = kindOf(attributes);
        Stat stat = kind == EntryKind.FILE ? Stat.file(attributes.size()) : Stat.of(kind);
        Instant modified = attributes.lastModifiedTime().toInstant();
        if (attributes instanceof PosixFileAttributes posix) {
            return stat.with(modeBits(posix.permissions()), modified);
        }
        return new Stat(stat.kind(), stat.size(), OptionalInt.empty(), Optional.of(modified));
    }

    /** The rwx bits Java's POSIX view gives (it has no view of set-user-id, set-group-id or sticky). */
    private static int modeBits(Set<PosixFilePermission> permissions) {
        int bits = 0;
        for (PosixFilePermission permission : permissions) {
            bits |= 0400 >> permission.ordinal();
        }
        return bits;
    }

    private static EntryKind kindOf(BasicFileAttributes attributes) {
        if (attributes.isSymbolicLink()) {
            return EntryKind.SYMLINK;
        }
        if (attributes.isDirectory()) {
            return EntryKind.DIRECTORY;
        }
        return attributes.isRegularFile() ? EntryKind.FILE : EntryKind.OTHER;
    }

    private static void refuseUnlessDirectory(BasicFileAttributes attributes, String guestDirectory) {
        if (attributes.isSymbolicLink()) {
            throw new SandboxPathNotConfined(GuestText.quote(guestDirectory) + " is a link rather than a real "
                    + "directory; a path through a link is refused");
        }
        if (!attributes.isDirectory()) {
            throw new SandboxNotADirectory(GuestText.quote(guestDirectory) + " is not a directory");
        }
    }

    private static void refuseAsDestination(BasicFileAttributes attributes, String path) {
        if (attributes.isSymbolicLink()) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " is a link; a write never follows a link");
        }
        if (attributes.isDirectory()) {
            throw new SandboxIsADirectory(GuestText.quote(path) + " is a directory; a write needs a file path");
        }
    }

    private static byte[] readBounded(SeekableByteChannel channel, String path, long maxBytes) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_BYTES);
        long total = 0;
        int read;
        // At most maxBytes + 1 bytes are ever held: enough to tell "too large" from "exactly the cap".
        while ((read = channel.read(chunk.clear().limit(window(maxBytes - total)))) > 0) {
            total += read;
            bytes.write(chunk.array(), 0, read);
            if (total > maxBytes) {
                throw FileRefusals.readOverCap(path, -1, maxBytes);
            }
        }
        return bytes.toByteArray();
    }

    /** How much the next read may take: a full chunk, or what is left of the cap plus the one byte that proves it exceeded. */
    private static int window(long leftOfCap) {
        return leftOfCap >= CHUNK_BYTES ? CHUNK_BYTES : (int) leftOfCap + 1;
    }

    private static void deleteFileIfExists(SecureDirectoryStream<Path> directory, Path entry) throws IOException {
        try {
            directory.deleteFile(entry);
        } catch (NoSuchFileException gone) {
            // Already gone: the outcome asked for.
        }
    }

    private static void deleteQuietly(SecureDirectoryStream<Path> directory, Path entry, boolean isDirectory) {
        try {
            if (isDirectory) {
                directory.deleteDirectory(entry);
            } else {
                directory.deleteFile(entry);
            }
        } catch (IOException | RuntimeException ignored) {
            // Best effort: the call already failed, and that failure is what the caller sees.
        }
    }


    /** One component as a relative path for the open-directory calls; never a separator, '.' or '..'. */
    private Path name(String component) {
        if (component.isEmpty() || component.equals(".") || component.equals("..") || component.indexOf('/') >= 0) {
            throw new IllegalStateException("not a single path component: " + GuestText.quote(component));
        }
        try {
            return workspace.getFileSystem().getPath(component);
        } catch (java.nio.file.InvalidPathException unencodable) {
            throw new SandboxFileException("the name " + GuestText.quote(component) + " cannot be passed to this "
                    + "host's file system in this JVM's file-name encoding (" + System.getProperty("sun.jnu.encoding")
                    + "); run the JVM with a UTF-8 locale (LANG=C.UTF-8) to reach such names", unencodable);
        }
    }

    private static List<String> components(String relative) {
        List<String> parts = new ArrayList<>();
        for (String part : relative.split("/")) {
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts;
    }

    /** The OS's reason alone: host paths stay out of messages. */
    private static String reason(IOException e) {
        if (e instanceof FileSystemException fileSystem && fileSystem.getReason() != null) {
            return fileSystem.getReason();
        }
        return e.getClass().getSimpleName();
    }

    private static boolean reasonIs(IOException e, String text) {
        return e instanceof FileSystemException fileSystem && fileSystem.getReason() != null
                && fileSystem.getReason().contains(text);
    }

    private SandboxFileException translate(IOException e, String path, String action) {
        if (e instanceof NoSuchFileException) {
            return new SandboxFileNotFound("could not " + action + " " + GuestText.quote(path) + ": a component is "
                    + "missing", e);
        }
        if (e instanceof NotDirectoryException || reasonIs(e, "Not a directory")) {
            return new SandboxNotADirectory("could not " + action + " " + GuestText.quote(path) + ": a component is "
                    + "not a directory", e);
        }
        if (reasonIs(e, "Is a directory")) {
            return new SandboxIsADirectory("could not " + action + " " + GuestText.quote(path) + ": it is a directory",
                    e);
        }
        return new SandboxFileException("backend '" + backendName + "' could not " + action + " "
                + GuestText.quote(path) + " in its workspace: " + reason(e), e);
    }
}
