package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.egress.EgressDecision;
import org.sandbox4j.egress.EgressPolicy;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.GuestBridge;
import org.sandbox4j.egress.GuestProxyEnvironment;

/**
 * One allowlisting sandbox's way out: the host-side proxy on a unix socket in a directory of its
 * own (the only thing mounted into the guest), its audit log beside the sandbox, and the guest
 * half — the bridge script and the proxy environment.
 */
final class EgressLink implements AutoCloseable {

    /** The directory inside a sandbox directory that holds the socket and is mounted into the guest. */
    static final String HOST_DIRECTORY = "egress";
    /** The audit log's name inside a sandbox directory (outside what the guest sees). */
    static final String AUDIT_FILE = "egress-audit.jsonl";
    /** Short on purpose: a unix socket path stops at 108 bytes, and the state root comes first. */
    static final String SOCKET_NAME = "sock";
    static final int GUEST_PORT = GuestProxyEnvironment.GUEST_BRIDGE_PORT;
    static final String BRIDGE_PROBE = GuestBridge.PROBE_SCRIPT;

    private final Path hostDirectory;
    private final EgressProxy proxy;
    /** The socket file's identity when this proxy bound it (another process may replace the file). */
    private final Object socketKey;

    private EgressLink(Path hostDirectory, EgressProxy proxy, Object socketKey) {
        this.hostDirectory = hostDirectory;
        this.proxy = proxy;
        this.socketKey = socketKey;
    }

    /**
     * Starts the proxy for one sandbox. A socket left by an earlier process (a crash, another
     * replica) is replaced: the caller holds the sandbox's lock, and the policy is the same,
     * since the allowlist is part of the sandbox's identity.
     */
    static EgressLink start(Path hostDirectory, EgressPolicy policy, EgressProxy.Settings settings,
            String backendName) {
        Path socket = hostDirectory.resolve(SOCKET_NAME);
        try {
            Files.createDirectories(hostDirectory);
            Files.deleteIfExists(socket);
            EgressProxy proxy = EgressProxy.start(socket, policy,
                    settings.withAuditFile(hostDirectory.resolveSibling(AUDIT_FILE)));
            return new EgressLink(hostDirectory, proxy, socketKey(proxy.socket()));
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            throw new SandboxException("backend '" + backendName + "' could not start the egress proxy at " + socket
                    + ": " + ErrorDetail.of(e) + (socket.toString().length() > 100 ? "; the path may be too long for "
                    + "a unix socket (108 bytes): use a shorter state root" : ""), e);
        }
    }

    Path hostDirectory() {
        return hostDirectory;
    }

    /** Whether the proxy still runs and the socket at its path is still the one it bound. */
    boolean serving() {
        return !proxy.isClosed() && socketKey != null && socketKey.equals(socketKey(proxy.socket()));
    }

    private static Object socketKey(Path socket) {
        try {
            return Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    List<EgressDecision> decisions() {
        return proxy.decisions();
    }

    /** The environment that points every common client in the guest at the bridge. */
    static Map<String, String> guestEnvironment() {
        return GuestProxyEnvironment.variables();
    }

    /** {@code command} behind the bridge: the guest listens on 127.0.0.1:3128 before the command starts. */
    static List<String> bridged(String guestDirectory, List<String> command) {
        return GuestBridge.argv(guestDirectory + "/" + SOCKET_NAME, command);
    }

    @Override
    public void close() {
        proxy.close();
    }
}
