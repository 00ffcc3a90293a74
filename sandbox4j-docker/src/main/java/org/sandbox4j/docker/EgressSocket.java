package org.sandbox4j.docker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;

/**
 * One allowlisting container's way out: the host-side proxy of {@code sandbox4j-egress} on a unix
 * socket in a directory of the container's own, which is bind-mounted read-only into the guest.
 * The directory's path follows from the container's name, so a process that adopts the container
 * binds its own proxy where the mount already points.
 */
final class EgressSocket implements AutoCloseable {

    /** Short on purpose: a unix socket path stops at 108 bytes. */
    static final String SOCKET_NAME = "sock";
    static final String AUDIT_SUFFIX = "-audit.jsonl";

    private final Path directory;
    private final EgressProxy proxy;
    private final Object socketKey;

    private EgressSocket(Path directory, EgressProxy proxy, Object socketKey) {
        this.directory = directory;
        this.proxy = proxy;
        this.socketKey = socketKey;
    }

    /**
     * Starts the proxy. The socket is left connectable by any uid (the container's user is not
     * this JVM's): the directories above it, owner-only, keep other host users away, and inside
     * the guest only the sandbox's own user exists.
     */
    static EgressSocket start(Path directory, EgressPolicy policy, EgressProxy.Settings settings, String backendName) {
        Path socket = directory.resolve(SOCKET_NAME);
        try {
            Files.createDirectories(directory);
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.deleteIfExists(socket);
            EgressProxy proxy = EgressProxy.start(socket, policy,
                    settings.withAuditFile(directory.resolveSibling(directory.getFileName() + AUDIT_SUFFIX)));
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
            return new EgressSocket(directory, proxy, socketKey(socket));
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            throw new SandboxException("backend '" + backendName + "' could not start the egress proxy at " + socket
                    + ": " + ErrorDetail.of(e) + (socket.toString().length() > 100 ? "; the path may be too long for a "
                    + "unix socket (108 bytes): use a shorter egress directory" : ""), e);
        }
    }

    /** Whether the proxy still runs and the socket at its path is still the one it bound. */
    boolean serving() {
        return !proxy.isClosed() && socketKey != null && socketKey.equals(socketKey(proxy.socket()));
    }

    Path directory() {
        return directory;
    }

    Path auditLog() {
        return directory.resolveSibling(directory.getFileName() + AUDIT_SUFFIX);
    }

    private static Object socketKey(Path socket) {
        try {
            return Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public void close() {
        proxy.close();
    }
}
