package org.sandbox4j.core.outputs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiFunction;

import org.sandbox4j.core.spi.DirectoryHandles;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxLandingFailed;
import org.sandbox4j.core.SandboxLandingNotConfined;
import org.sandbox4j.core.SandboxOperationNotSupported;

/**
 * Lands artifacts as files under a host directory.
 *
 * <p>Every file-system step after opening the root is relative to an open directory
 * ({@link SecureDirectoryStream}, i.e. {@code openat}) and never follows a link: each parent
 * directory is created if missing and then opened no-follow from its already-open parent, so a
 * link anywhere below the root is refused rather than followed; the bytes go to a fresh temporary
 * file (exclusive create, no-follow) that is renamed onto the final name, so a reader never sees a
 * half-written file and an existing file is replaced whole. A link or a directory already at the
 * destination is refused. The root itself is host configuration and is trusted: it is resolved
 * once, when the sink is made.
 *
 * <p>Errors name the artifact only, never a host path: the output family may be shown to a model.
 * The host-side reason is kept as the cause. The {@linkplain LandedArtifact#handle() handle} of a
 * landed artifact is its host path, for the host alone.
 *
 * <p>Residual: a missing parent is created by path ({@code SecureDirectoryStream} has no
 * {@code mkdirat}), so a directory swapped for a link in that instant can receive an empty
 * directory; nothing is ever written through it, because the new directory is then opened
 * no-follow from its open parent.
 *
 * <p>Needs a platform whose directory streams are {@link SecureDirectoryStream}s (Linux, macOS);
 * elsewhere {@link #at} refuses.
 */
public final class FileSystemSink implements OutputSink {

    private static final String WITHOUT_HANDLES = "FileSystemSink cannot land files without following links; use "
            + "another OutputSink on this platform";
    private static final String TEMPORARY_PREFIX = ".sandbox4j-landing-";
    private static final String TEMPORARY_SUFFIX = ".part";
    private static final Set<OpenOption> TEMPORARY_FILE_OPTIONS =
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);

    private final Path root;
    private final BiFunction<Artifact, Path, String> display;

    private FileSystemSink(Path root, BiFunction<Artifact, Path, String> display) {
        this.root = root;
        this.display = display;
    }

    /**
     * A sink landing under {@code root} (created if missing), showing the model
     * {@code "<name> (<n> bytes)"}.
     *
     * @throws SandboxOperationNotSupported the platform offers no {@link SecureDirectoryStream}
     * @throws UncheckedIOException         the root cannot be created or resolved
     */
    public static FileSystemSink at(Path root) {
        return at(root, FileSystemSink::defaultDisplay);
    }

    /**
     * A sink landing under {@code root} (created if missing), showing the model what
     * {@code display} makes of the artifact and its host path. The display text is the only thing
     * a model sees: keep host paths and secrets out of it.
     *
     * @throws SandboxOperationNotSupported the platform offers no {@link SecureDirectoryStream}
     * @throws UncheckedIOException         the root cannot be created or resolved
     */
    public static FileSystemSink at(Path root, BiFunction<Artifact, Path, String> display) {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(display, "display");
        Path resolved;
        try {
            Files.createDirectories(root);
            resolved = root.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create or resolve the landing root " + root, e);
        }
        try {
            DirectoryHandles.open(resolved, WITHOUT_HANDLES).close();
            return new FileSystemSink(resolved, display);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the landing root " + resolved, e);
        }
    }

    /** The default model-visible text: {@code "<name> (<n> bytes)"}. */
    public static String defaultDisplay(Artifact artifact, Path destination) {
        return artifact.name() + " (" + artifact.size() + " bytes)";
    }

    /**
     * Writes the artifact to {@code <root>/<name>}, creating parents, replacing an existing file.
     *
     * @throws SandboxLandingNotConfined a link on the way or at the destination
     * @throws SandboxLandingFailed      a non-directory in the way, a directory or other non-file at
     *                                   the destination, or the host refused the write
     * @throws SandboxInterrupted        the thread was interrupted while writing
     */
    @Override
    public LandedArtifact deliver(Artifact artifact) {
        String name = artifact.name();
        String[] segments = name.split("/");
        try (DirectoryHandles opened = new DirectoryHandles()) {
            opened.keep(DirectoryHandles.open(root, WITHOUT_HANDLES));
            Path hostDirectory = root;
            for (int i = 0; i < segments.length - 1; i++) {
                opened.keep(enter(opened.last(), hostDirectory, segments[i], name));
                hostDirectory = hostDirectory.resolve(segments[i]);
            }
            land(opened.last(), segments[segments.length - 1], artifact);
        } catch (ClosedByInterruptException interrupted) {
            throw new SandboxInterrupted("interrupted while landing " + GuestText.quote(name), interrupted);
        } catch (IOException | InvalidPathException e) {
            throw failed(name, "the host's file system refused the write", e);
        }
        Path destination = root.resolve(name);
        return new LandedArtifact(name, display.apply(artifact, destination), Optional.of(destination.toString()));
    }

    @Override
    public String toString() {
        // The root is a host path: keep it out of anything that might be rendered.
        return "FileSystemSink";
    }

    /** Opens (creating if missing) the child directory {@code segment} of {@code parent}, never through a link. */
    private SecureDirectoryStream<Path> enter(
            SecureDirectoryStream<Path> parent, Path hostParent, String segment, String name) throws IOException {
        Path child = root.getFileSystem().getPath(segment);
        Optional<BasicFileAttributes> existing = DirectoryHandles.attributes(parent, child);
        if (existing.isEmpty()) {
            try {
                Files.createDirectory(hostParent.resolve(segment));
            } catch (FileAlreadyExistsException raced) {
                // Someone created it meanwhile; the no-follow open below decides whether it is usable.
            }
        } else {
            refuseUnlessDirectory(existing.get(), segment, name);
        }
        try {
            return parent.newDirectoryStream(child, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            Optional<BasicFileAttributes> now = DirectoryHandles.attributes(parent, child);
            if (now.isPresent()) {
                refuseUnlessDirectory(now.get(), segment, name);
            }
            throw e;
        }
    }

    private static void refuseUnlessDirectory(BasicFileAttributes attributes, String segment, String name) {
        if (attributes.isSymbolicLink()) {
            throw notConfined(name, GuestText.quote(segment) + " is a link in the sink; a landing never follows a link");
        }
        if (!attributes.isDirectory()) {
            throw failed(name, GuestText.quote(segment) + " already exists in the sink and is not a directory", null);
        }
    }

    /** Writes to a temporary name in {@code directory}, then renames it onto {@code leaf}. */
    private void land(SecureDirectoryStream<Path> directory, String leaf, Artifact artifact) throws IOException {
        String name = artifact.name();
        Path target = root.getFileSystem().getPath(leaf);
        Optional<BasicFileAttributes> existing = DirectoryHandles.attributes(directory, target);
        if (existing.isPresent()) {
            BasicFileAttributes attributes = existing.get();
            if (attributes.isSymbolicLink()) {
                throw notConfined(name, "a link already stands at its destination; a landing never follows a link");
            }
            if (!attributes.isRegularFile()) {
                throw failed(name, "its destination already exists and is not a regular file", null);
            }
        }
        Path temporary = root.getFileSystem().getPath(TEMPORARY_PREFIX + UUID.randomUUID() + TEMPORARY_SUFFIX);
        boolean moved = false;
        try {
            try (SeekableByteChannel channel = directory.newByteChannel(temporary, TEMPORARY_FILE_OPTIONS)) {
                ByteBuffer bytes = ByteBuffer.wrap(artifact.content());
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
            }
            // renameat replaces a file whole; a link swapped in meanwhile is replaced, never followed.
            directory.move(temporary, directory, target);
            moved = true;
        } finally {
            if (!moved) {
                deleteQuietly(directory, temporary);
            }
        }
    }

    private static void deleteQuietly(SecureDirectoryStream<Path> directory, Path temporary) {
        try {
            directory.deleteFile(temporary);
        } catch (IOException | RuntimeException ignored) {
            // Best effort: the write already failed and that failure is what the caller sees.
        }
    }


    private static SandboxLandingNotConfined notConfined(String name, String reason) {
        return new SandboxLandingNotConfined("the artifact " + GuestText.quote(name) + " was not landed: " + reason
                + "; remove the link from the sink or land under another name");
    }

    private static SandboxLandingFailed failed(String name, String reason, Throwable cause) {
        return new SandboxLandingFailed("the artifact " + GuestText.quote(name) + " was not landed: " + reason
                + (cause == null ? "; land it under another name" : "; the reason is in the host's log"), cause);
    }
}
