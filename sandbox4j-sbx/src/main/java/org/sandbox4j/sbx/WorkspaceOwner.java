package org.sandbox4j.sbx;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * Hands what a host-side write made to the owner of the workspace directory, so the guest user
 * (who owns its workspace, e.g. {@code agent}) can change the files the host wrote for it. Only
 * entries the host process itself owns are changed, one component at a time through open
 * directory handles ({@code fchownat(..., AT_SYMLINK_NOFOLLOW)}): a link the guest swaps in is
 * never followed. Where the workspace is the host user's own (the usual file sharing) nothing
 * changes.
 */
final class WorkspaceOwner {

    private WorkspaceOwner() {
    }

    /** @param components the path below the workspace, as written */
    static void handOver(Path workspace, UserPrincipal host, List<String> components) throws IOException {
        PosixFileAttributeView rootView = Files.getFileAttributeView(workspace, PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS);
        if (rootView == null || components.isEmpty()) {
            return;
        }
        UserPrincipal guest = rootView.readAttributes().owner();
        if (host.equals(guest)) {
            return;
        }
        DirectoryStream<Path> opened = Files.newDirectoryStream(workspace);
        if (!(opened instanceof SecureDirectoryStream<Path> root)) {
            opened.close();
            return;
        }
        Deque<SecureDirectoryStream<Path>> chain = new ArrayDeque<>();
        chain.push(root);
        try {
            SecureDirectoryStream<Path> directory = root;
            for (int i = 0; i < components.size(); i++) {
                Path name = workspace.getFileSystem().getPath(components.get(i));
                PosixFileAttributeView view = directory.getFileAttributeView(name, PosixFileAttributeView.class,
                        LinkOption.NOFOLLOW_LINKS);
                PosixFileAttributes attributes = view.readAttributes();
                if (attributes.isSymbolicLink()) {
                    return;
                }
                if (attributes.owner().equals(host)) {
                    view.setOwner(guest);
                    view.setGroup(rootView.readAttributes().group());
                }
                if (i == components.size() - 1 || !attributes.isDirectory()) {
                    return;
                }
                directory = directory.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
                chain.push(directory);
            }
        } finally {
            for (SecureDirectoryStream<Path> stream : chain) {
                try {
                    stream.close();
                } catch (IOException ignored) {
                    // Closing a read-only handle.
                }
            }
        }
    }

    /** Who this process creates files as: the owner of a file it makes beside the workspace. */
    static Optional<UserPrincipal> hostUser(Path workspace) {
        try {
            Path probe = Files.createTempFile(workspace.getParent(), ".sandbox4j-owner-", ".tmp");
            try {
                return Optional.of(Files.getOwner(probe, LinkOption.NOFOLLOW_LINKS));
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }
}
