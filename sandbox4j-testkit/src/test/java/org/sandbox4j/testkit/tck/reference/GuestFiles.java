package org.sandbox4j.testkit.tck.reference;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.NoFollowStat;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/**
 * The five file methods, done on the host over the guest's view: a guest path under the work base
 * is that path below this sandbox's storage; any other guest path is the same host path (the guest
 * sees the host's root outside the work base). Honest mode confines every path and walks every
 * ancestor with a no-follow stat through {@link GuestPaths}; with {@code followsLinks} (the
 * {@code FOLLOWS_SYMLINKS} flaw) it skips the walk and resolves links like a naive implementation.
 */
final class GuestFiles {

    private static final String ROOT = "/";
    private static final String WORKING_DIRECTORY_ITSELF = ".";
    private static final int CHUNK_BYTES = 8192;
    /** How many links a following resolution crosses before giving up (as the kernel's ELOOP does). */
    private static final int MAX_LINK_HOPS = 40;
    private static final String TEMPORARY_PREFIX = ".sandbox4j-write-";
    private static final String WRITTEN_FILE_PERMISSIONS = "rw-r--r--";

    private final Path storage;
    private final String workBase;
    private final boolean followsLinks;
    /** Who gets what this side creates, so the guest can change and delete what was planted for it. */
    private final Optional<GuestUser> guestUser;
    private final NoFollowStat noFollowStat = this::kindOf;

    GuestFiles(Path storage, String workBase, boolean followsLinks, Optional<GuestUser> guestUser) {
        this.storage = Objects.requireNonNull(storage, "storage");
        this.workBase = Objects.requireNonNull(workBase, "workBase");
        this.followsLinks = followsLinks;
        this.guestUser = Objects.requireNonNull(guestUser, "guestUser");
    }

    // ---------------------------------------------------------------- the five methods

    void writeFile(String path, byte[] content, String workingDirectory) {
        Objects.requireNonNull(content, "content");
        String target;
        if (followsLinks) {
            String confined = GuestPaths.confine(path, workingDirectory);
            refuseWorkingDirectoryItself(confined, path, workingDirectory, "write over");
            target = resolveFollowing(confined, true);
        } else {
            target = GuestPaths.confineWritePath(noFollowStat, path, workingDirectory);
        }
        createMissingParents(target, path);
        Path host = host(target);
        Path parent = host.getParent();
        try {
            Path temporary = Files.createTempFile(parent, TEMPORARY_PREFIX, ".tmp");
            try {
                Files.write(temporary, content);
                Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString(WRITTEN_FILE_PERMISSIONS));
                handToTheGuest(temporary);
                // rename(2) replaces a link at the leaf rather than following it.
                Files.move(temporary, host, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException e) {
            throw translate(e, path, "write");
        }
    }

    void mkdir(String path, String workingDirectory) {
        String target = followsLinks
                ? resolveFollowing(GuestPaths.confine(path, workingDirectory), true)
                : GuestPaths.refuseSymlinkedParents(noFollowStat, path, workingDirectory, true);
        Optional<EntryKind> kind = kindOf(target);
        if (kind.isPresent() && kind.get() != EntryKind.DIRECTORY) {
            throw new SandboxNotADirectory(GuestText.quote(path) + " exists and is not a directory");
        }
        createMissing(GuestPaths.directoryChain(target), path);
    }

    Optional<SandboxEntry> stat(String path, String workingDirectory) {
        String target = followsLinks
                ? resolveFollowing(GuestPaths.confine(path, workingDirectory), false)
                : GuestPaths.refuseSymlinkedParents(noFollowStat, path, workingDirectory, false);
        return describe(target, relativeName(GuestPaths.confine(path, workingDirectory), workingDirectory));
    }

    byte[] readFile(String path, String workingDirectory, long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes cannot be negative, not " + maxBytes);
        }
        String target = followsLinks
                ? resolveFollowing(GuestPaths.confine(path, workingDirectory), true)
                : GuestPaths.refuseSymlinkedParents(noFollowStat, path, workingDirectory, false);
        EntryKind kind = kindOf(target).orElseThrow(() -> notFound(path, workingDirectory));
        switch (kind) {
            case FILE:
                return readBounded(host(target), path, maxBytes);
            case DIRECTORY:
                throw new SandboxIsADirectory(GuestText.quote(path) + " is a directory; only regular files are read "
                        + "(list it with listDir)");
            case SYMLINK:
                throw new SandboxNotARegularFile(GuestText.quote(path) + " is a link; only regular files are read, and "
                        + "a link is never followed: read the file it names by its own path");
            default:
                throw new SandboxNotARegularFile(GuestText.quote(path) + " is not a regular file (a device, socket or "
                        + "FIFO); only regular files are read");
        }
    }

    List<SandboxEntry> listDir(String path, String workingDirectory) {
        String confined = GuestPaths.confine(path, workingDirectory);
        String directory = followsLinks
                ? resolveFollowing(confined, true)
                : GuestPaths.refuseSymlinkedParents(noFollowStat, path, workingDirectory, true);
        EntryKind kind = kindOf(directory).orElseThrow(() -> notFound(path, workingDirectory));
        if (kind != EntryKind.DIRECTORY) {
            throw new SandboxNotADirectory(GuestText.quote(path) + " is not a directory; stat it instead of listing it");
        }
        TreeSet<String> names = new TreeSet<>();
        try (DirectoryStream<Path> children = Files.newDirectoryStream(host(directory))) {
            for (Path child : children) {
                names.add(child.getFileName().toString());
            }
        } catch (IOException e) {
            throw translate(e, path, "list");
        }
        String prefix = relativeName(confined, workingDirectory);
        List<SandboxEntry> entries = new ArrayList<>(names.size());
        for (String name : names) {
            String relative = prefix.equals(WORKING_DIRECTORY_ITSELF) ? name : prefix + "/" + name;
            // An entry removed since the listing is simply left out.
            describe(child(directory, name), relative).ifPresent(entries::add);
        }
        return List.copyOf(entries);
    }

    void remove(String path, String workingDirectory, boolean recursive) {
        String confined = GuestPaths.confine(path, workingDirectory);
        refuseWorkingDirectoryItself(confined, path, workingDirectory, "remove");
        String target = followsLinks
                ? resolveFollowing(confined, false)
                : GuestPaths.refuseSymlinkedParents(noFollowStat, confined, workingDirectory, false);
        Optional<EntryKind> kind = kindOf(target);
        if (kind.isEmpty()) {
            return;
        }
        try {
            if (kind.get() != EntryKind.DIRECTORY) {
                // A link is unlinked, never followed.
                Files.deleteIfExists(host(target));
                return;
            }
            if (!recursive) {
                throw new SandboxFileException(GuestText.quote(path) + " is a directory; nothing was removed: pass "
                        + "recursive = true to remove it and everything under it");
            }
            HostTrees.deleteRecursively(host(target), followsLinks);
        } catch (IOException e) {
            throw translate(e, path, "remove");
        }
    }

    // ---------------------------------------------------------------- the guest's view on the host

    /** Where the guest's {@code absoluteGuestPath} is on the host. */
    Path host(String absoluteGuestPath) {
        String normal = GuestPaths.normalize(absoluteGuestPath);
        return GuestPaths.relativeTo(normal, workBase)
                .map(below -> below.isEmpty() ? storage : storage.resolve(below))
                .orElseGet(() -> Path.of(normal));
    }

    /** The unconfined no-follow stat the ancestor walk uses. */
    Optional<EntryKind> kindOf(String absoluteGuestPath) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(host(absoluteGuestPath), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            return Optional.of(kindOf(attributes));
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Optional.empty();
        } catch (FileSystemException e) {
            if (isNotADirectory(e)) {
                return Optional.empty();
            }
            throw new SandboxFileException("the guest refused to describe " + GuestText.quote(absoluteGuestPath) + ": "
                    + reason(e), e);
        } catch (IOException e) {
            throw new SandboxFileException("the guest refused to describe " + GuestText.quote(absoluteGuestPath) + ": "
                    + reason(e), e);
        }
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

    private Optional<SandboxEntry> describe(String absoluteGuestPath, String relative) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(host(absoluteGuestPath), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            switch (kindOf(attributes)) {
                case FILE:
                    return Optional.of(SandboxEntry.file(relative, attributes.size()));
                case DIRECTORY:
                    return Optional.of(SandboxEntry.directory(relative));
                case SYMLINK:
                    return Optional.of(SandboxEntry.symlink(relative));
                default:
                    return Optional.of(SandboxEntry.other(relative));
            }
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw translate(e, relative, "describe");
        }
    }

    /** Creates each missing directory from the root down, one level at a time (never following a link). */
    private void createMissingParents(String target, String path) {
        createMissing(GuestPaths.directoryChain(GuestPaths.parent(target)), path);
    }

    private void createMissing(List<String> chain, String path) {
        for (String directory : chain) {
            Optional<EntryKind> kind = kindOf(directory);
            if (kind.isEmpty()) {
                try {
                    Path created = Files.createDirectory(host(directory));
                    handToTheGuest(created);
                } catch (FileAlreadyExistsException e) {
                    kind = kindOf(directory);
                } catch (IOException e) {
                    throw translate(e, path, "create a parent of");
                }
            }
            if (kind.isPresent() && kind.get() == EntryKind.SYMLINK && !followsLinks) {
                throw new SandboxPathNotConfined(GuestText.quote(directory) + " became a link during the write; a path "
                        + "through a link is refused");
            }
            if (kind.isPresent() && kind.get() != EntryKind.DIRECTORY && kind.get() != EntryKind.SYMLINK) {
                throw new SandboxNotADirectory(GuestText.quote(directory) + " is not a directory");
            }
        }
    }

    /** Gives a file or directory this side just created to the guest's user, when the guest is not root. */
    private void handToTheGuest(Path created) throws IOException {
        if (guestUser.isPresent()) {
            guestUser.get().own(created);
        }
    }

    private byte[] readBounded(Path host, String path, long maxBytes) {
        try (SeekableByteChannel channel = Files.newByteChannel(host, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ByteBuffer chunk = ByteBuffer.allocate(CHUNK_BYTES);
            long total = 0;
            int read;
            // At most maxBytes + 1 bytes are ever held: enough to tell "too large" from "exactly the cap".
            while ((read = channel.read(chunk.clear().limit(window(maxBytes - total)))) > 0) {
                total += read;
                bytes.write(chunk.array(), 0, read);
                if (total > maxBytes) {
                    throw new SandboxTransferCapExceeded(GuestText.quote(path) + " holds more than the " + maxBytes
                            + " bytes this read allows; nothing was read (a read is refused whole, never truncated): "
                            + "raise the cap or make the file smaller");
                }
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw translate(e, path, "read");
        }
    }

    /** How much the next read may take: a full chunk, or what is left of the cap plus the one byte that proves it exceeded. */
    private static int window(long leftOfCap) {
        return leftOfCap >= CHUNK_BYTES ? CHUNK_BYTES : (int) leftOfCap + 1;
    }

    /**
     * The flaw: resolves {@code confined} component by component, following every link (each
     * target a guest path, mapped again), the leaf too when {@code followLeaf}.
     */
    private String resolveFollowing(String confined, boolean followLeaf) {
        Deque<String> pending = new ArrayDeque<>(components(confined));
        String current = ROOT;
        int hops = 0;
        while (!pending.isEmpty()) {
            String next = child(current, pending.removeFirst());
            boolean leaf = pending.isEmpty();
            Path host = host(next);
            if (Files.isSymbolicLink(host) && (followLeaf || !leaf)) {
                if (++hops > MAX_LINK_HOPS) {
                    throw new SandboxFileException(GuestText.quote(confined) + " crosses too many links");
                }
                String target;
                try {
                    target = Files.readSymbolicLink(host).toString();
                } catch (IOException e) {
                    throw translate(e, confined, "follow");
                }
                String resolved = GuestPaths.normalize(target.startsWith(ROOT) ? target : current + "/" + target);
                List<String> parts = components(resolved);
                for (int i = parts.size() - 1; i >= 0; i--) {
                    pending.addFirst(parts.get(i));
                }
                current = ROOT;
            } else {
                current = next;
            }
        }
        return current;
    }

    // ---------------------------------------------------------------- helpers

    private static List<String> components(String absolutePath) {
        List<String> parts = new ArrayList<>();
        for (String part : GuestPaths.normalize(absolutePath).split("/")) {
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts;
    }

    private static String child(String directory, String name) {
        return directory.equals(ROOT) ? ROOT + name : directory + "/" + name;
    }

    private static String relativeName(String confined, String workingDirectory) {
        String below = GuestPaths.relativeTo(confined, workingDirectory).orElseThrow(() ->
                new IllegalStateException(confined + " was confined but is not below " + workingDirectory));
        return below.isEmpty() ? WORKING_DIRECTORY_ITSELF : below;
    }

    private static void refuseWorkingDirectoryItself(String confined, String path, String workingDirectory,
            String action) {
        if (confined.equals(GuestPaths.normalize(workingDirectory))) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " names the working directory itself; refusing to "
                    + action + " the working directory");
        }
    }

    private static SandboxFileNotFound notFound(String path, String workingDirectory) {
        return new SandboxFileNotFound("nothing exists at " + GuestText.quote(path) + " in "
                + GuestText.quote(workingDirectory) + "; check the path and the working directory");
    }

    private static boolean isNotADirectory(FileSystemException e) {
        return e.getReason() != null && e.getReason().contains("Not a directory");
    }

    /** The OS's reason alone: host paths stay out of messages. */
    private static String reason(IOException e) {
        if (e instanceof FileSystemException) {
            String reason = ((FileSystemException) e).getReason();
            return reason != null ? reason : e.getClass().getSimpleName();
        }
        return e.getClass().getSimpleName();
    }

    private static SandboxFileException translate(IOException e, String path, String action) {
        if (e instanceof NoSuchFileException) {
            return new SandboxFileNotFound("could not " + action + " " + GuestText.quote(path) + ": a component is "
                    + "missing", e);
        }
        if (e instanceof NotDirectoryException
                || e instanceof FileSystemException && isNotADirectory((FileSystemException) e)
                || e instanceof FileAlreadyExistsException) {
            return new SandboxNotADirectory("could not " + action + " " + GuestText.quote(path) + ": a component is "
                    + "not a directory", e);
        }
        return new SandboxFileException("the guest refused to " + action + " " + GuestText.quote(path) + ": "
                + reason(e), e);
    }
}
