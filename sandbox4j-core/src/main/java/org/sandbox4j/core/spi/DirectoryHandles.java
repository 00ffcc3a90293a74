package org.sandbox4j.core.spi;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import org.sandbox4j.core.SandboxOperationNotSupported;

/**
 * Host directories reached handle by handle ({@code openat}) and never through a link: how the kit
 * opens what a guest can change. An instance is the chain of handles one call opened; closing it
 * closes them all.
 */
public final class DirectoryHandles implements AutoCloseable {

    private final Deque<SecureDirectoryStream<Path>> opened = new ArrayDeque<>();

    /**
     * Opens a directory the host controls (a workspace or sink root) as a handle.
     *
     * @param withoutIt what cannot be done on a platform without such handles, and the fix, e.g.
     *                  "a tree cannot be removed without following links; run on Linux"
     * @throws SandboxOperationNotSupported the platform's directory streams are not handle-relative
     */
    public static SecureDirectoryStream<Path> open(Path directory, String withoutIt) throws IOException {
        DirectoryStream<Path> stream = Files.newDirectoryStream(directory);
        if (stream instanceof SecureDirectoryStream<Path> secure) {
            return secure;
        }
        stream.close();
        throw new SandboxOperationNotSupported("this platform's file system offers no SecureDirectoryStream "
                + "(openat-relative, no-follow access), so " + withoutIt);
    }

    /**
     * The no-follow stat of {@code name} in the open {@code directory}; empty when nothing is there.
     * {@link java.nio.file.attribute.PosixFileAttributes} (with the permission bits) where the
     * platform offers them.
     */
    public static Optional<BasicFileAttributes> attributes(SecureDirectoryStream<Path> directory, Path name)
            throws IOException {
        try {
            PosixFileAttributeView posix = directory.getFileAttributeView(name, PosixFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (posix != null) {
                return Optional.of(posix.readAttributes());
            }
            return Optional.of(directory.getFileAttributeView(name, BasicFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS).readAttributes());
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        }
    }

    /** Adds {@code handle} to this chain, to be closed with it. */
    public SecureDirectoryStream<Path> keep(SecureDirectoryStream<Path> handle) {
        opened.push(handle);
        return handle;
    }

    /** The handle kept last. */
    public SecureDirectoryStream<Path> last() {
        return opened.element();
    }

    /** Closes every handle kept; closing a directory handle cannot lose data, so a failure is ignored. */
    @Override
    public void close() {
        for (SecureDirectoryStream<Path> stream : opened) {
            try {
                stream.close();
            } catch (IOException ignored) {
                // Nothing was written through it.
            }
        }
        opened.clear();
    }
}
