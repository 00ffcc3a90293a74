package org.sandbox4j.egress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.EgressRefusals;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * The host half of every allowlisting sandbox's way out, for a backend whose guests reach the host
 * through a unix socket: one {@link EgressProxy} per sandbox, on {@value #SOCKET_NAME} in a
 * directory of that sandbox's own (the directory is what the backend mounts into the guest).
 *
 * <p>A proxy is reused while it serves, and replaced when its socket is gone or is no longer the
 * file it bound (another process disposed of the sandbox, or adopted it and bound its own).
 */
public final class ProxySockets implements AutoCloseable {

    /** Short on purpose: a unix socket path stops at 108 bytes. */
    public static final String SOCKET_NAME = "sock";

    /** The modes a backend delivers with these sockets and a guest whose only network device is loopback. */
    public static final List<Egress> MODES = List.of(Egress.CLOSED, Egress.ALLOWLIST);

    /** Who may connect to a socket. */
    public enum Access {
        /** This JVM's user only: the guest runs as it (a user namespace mapped onto it). */
        OWNER,
        /**
         * Any uid, the guest's user not being this JVM's: owner-only directories above the socket keep
         * other host users away, and inside the guest only the sandbox's own user exists.
         */
        EVERY_UID
    }

    private final String backendName;
    private final EgressProxy.Settings settings;
    private final Access access;
    private final String shorterPathFix;
    private final ConcurrentHashMap<String, Running> running = new ConcurrentHashMap<>();

    /**
     * @param shorterPathFix what shortens the socket's path when it is too long, e.g. "use a shorter
     *                       state root"
     */
    public ProxySockets(String backendName, EgressProxy.Settings settings, Access access, String shorterPathFix) {
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.access = Objects.requireNonNull(access, "access");
        this.shorterPathFix = Objects.requireNonNull(shorterPathFix, "shorterPathFix");
    }

    /**
     * The policy of a spec, for a backend delivering {@link #MODES}: none for {@link Egress#CLOSED},
     * the parsed allowlist for {@link Egress#ALLOWLIST}.
     *
     * @param whyNoOtherMode what about the backend's guests rules the other modes out
     * @throws org.sandbox4j.core.SandboxEgressNotEnforced any other mode
     * @throws IllegalArgumentException                    an allowlist that does not parse
     */
    public static Optional<EgressPolicy> policyFor(SandboxSpec spec, String backendName, String whyNoOtherMode) {
        return switch (spec.egress()) {
            case CLOSED -> Optional.empty();
            case ALLOWLIST -> Optional.of(EgressPolicy.parse(spec.egressAllow()));
            default -> throw EgressRefusals.modeNotEnforced(backendName, spec.egress(), whyNoOtherMode, MODES);
        };
    }

    /**
     * Makes sure a proxy for {@code id} serves at {@code directory}/{@value #SOCKET_NAME}, logging
     * its decisions to {@code auditFile}. The caller holds the sandbox's lock; the policy is the
     * same on every call, being part of the sandbox's identity.
     *
     * @return {@code directory}
     * @throws SandboxException the proxy could not start (the path is named, and the fix when it is
     *                          too long for a unix socket)
     */
    public Path ensure(String id, Path directory, Path auditFile, EgressPolicy policy) {
        running.compute(id, (ignored, current) -> {
            if (current != null && current.serving()) {
                return current;
            }
            if (current != null) {
                current.proxy.close();
            }
            return start(directory, auditFile, policy);
        });
        return directory;
    }

    /** Stops the proxy of {@code id}, if this process runs one. */
    public void stop(String id) {
        Running stopped = running.remove(id);
        if (stopped != null) {
            stopped.proxy.close();
        }
    }

    /** Stops every proxy this process runs. */
    @Override
    public void close() {
        running.values().forEach(current -> current.proxy.close());
        running.clear();
    }

    private Running start(Path directory, Path auditFile, EgressPolicy policy) {
        Path socket = directory.resolve(SOCKET_NAME);
        try {
            Files.createDirectories(directory);
            if (access == Access.EVERY_UID) {
                Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            // A socket left by an earlier process (a crash, another replica) is replaced, never followed.
            Files.deleteIfExists(socket);
            EgressProxy proxy = EgressProxy.start(socket, policy, settings.withAuditFile(auditFile));
            if (access == Access.EVERY_UID) {
                Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
            }
            return new Running(proxy, fileKey(proxy.socket()));
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            throw new SandboxException("backend '" + backendName + "' could not start the egress proxy at " + socket
                    + ": " + ErrorDetail.of(e) + (socket.toString().length() > 100 ? "; the path may be too long for a "
                    + "unix socket (108 bytes): " + shorterPathFix : ""), e);
        }
    }

    private static Object fileKey(Path socket) {
        try {
            return Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /** A proxy and the identity of the socket file it bound. */
    private record Running(EgressProxy proxy, Object socketKey) {

        /** Whether the proxy still runs and the socket at its path is still the one it bound. */
        boolean serving() {
            return !proxy.isClosed() && socketKey != null && socketKey.equals(fileKey(proxy.socket()));
        }
    }
}
