package org.sandbox4j.egress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One sandbox's way out: an HTTP forward proxy with {@code CONNECT}, listening on a unix domain
 * socket (no TCP port on the host), admitting exactly what its {@link EgressPolicy} lists.
 *
 * <p>A backend mounts the socket into the guest, where {@link GuestBridge} forwards
 * {@code 127.0.0.1:3128} to it and {@link GuestProxyEnvironment} points every client there. Per
 * client connection the proxy reads one bounded request head, checks the destination against
 * the policy, resolves a name itself with {@link Settings#resolver()}, refuses any internal
 * address no rule names, connects to exactly an address it checked, and then pipes bytes both
 * ways. An absolute-form {@code http://} request is sent on in origin form with {@code Host}
 * replaced by the checked authority, hop-by-hop and {@code Proxy-*} fields removed, and
 * {@code Connection: close}: the client's {@code Host} is ignored (RFC 9112 section 3.2.2), so it
 * cannot smuggle a second destination past the check. Refusals are answered with one plain-text
 * line and no connection attempt.
 *
 * <p>Every buffer is bounded; each connection has one or two daemon threads named
 * {@code sandbox4j-egress-...}, and the connection cap bounds them. {@link #close()} stops
 * accepting, closes every live connection, deletes the socket file, and may be called again.
 */
public final class EgressProxy implements AutoCloseable {

    /** Decisions kept in memory; older ones are counted by {@link #droppedDecisions()}. */
    public static final int DECISIONS_KEPT = 10_000;

    /** How long {@link #close()} waits for live connections to record their decision. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(2);

    private static final Set<PosixFilePermission> OWNER_ONLY =
            EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    private static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
    private static final String STAGING_PREFIX = ".s4j";
    private static final String STAGING_NAME = "s";
    private static final int BACKLOG = 64;

    /**
     * How long a refused client's connection stays open after the answer. Closing a unix socket
     * with unread request bytes resets the peer, which may then lose the answer; the proxy reads
     * and discards what arrives during this window instead.
     */
    static final Duration LINGER = Duration.ofMillis(250);
    /** The most a lingering connection may make the proxy read and discard. */
    static final int LINGER_DRAIN_BYTES = 64 * 1024;

    private static final AtomicLong PROXIES = new AtomicLong();

    private final Path socket;
    private final EgressPolicy policy;
    private final Settings settings;
    private final Connector connector;
    private final ServerSocketChannel server;
    private final DecisionLog log;
    private final ScheduledExecutorService timer;
    private final Set<ProxyConnection> live = ConcurrentHashMap.newKeySet();
    private final Set<SocketChannel> lingering = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong connectionIds = new AtomicLong();
    private final String threadPrefix;
    private final Thread acceptor;

    /**
     * Limits and collaborators of one proxy. Start from {@link #defaults()} and change what you
     * need with the {@code with...} methods.
     *
     * @param resolver       turns names into addresses; the proxy connects only to what it returned
     * @param maxConnections live client connections at once; one more is answered 503 and closed
     * @param headerTimeout  how long a client has to send its whole request head (then 408)
     * @param idleTimeout    how long a tunnel or forward may pass no byte either way before it is closed
     * @param connectTimeout how long a connect to the destination may take (then 502)
     * @param maxHeaderBytes the largest request head accepted (then 431)
     * @param auditFile      where to append one JSON line per decision; empty for none
     */
    public record Settings(
            HostResolver resolver, int maxConnections, Duration headerTimeout, Duration idleTimeout,
            Duration connectTimeout, int maxHeaderBytes, Optional<Path> auditFile) {

        /** 64 live connections per sandbox. */
        public static final int DEFAULT_MAX_CONNECTIONS = 64;
        /** 10 seconds to send a request head. */
        public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
        /** 5 minutes without a byte either way. */
        public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);
        /** 10 seconds to connect to a destination. */
        public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
        /** 64 KiB of request head. */
        public static final int DEFAULT_MAX_HEADER_BYTES = 64 * 1024;

        public Settings {
            Objects.requireNonNull(resolver, "resolver");
            requirePositive("maxConnections", maxConnections);
            requirePositive("headerTimeout", headerTimeout);
            requirePositive("idleTimeout", idleTimeout);
            requirePositive("connectTimeout", connectTimeout);
            requirePositive("maxHeaderBytes", maxHeaderBytes);
            Objects.requireNonNull(auditFile, "auditFile");
        }

        /** The system resolver, no audit file, and every limit at its {@code DEFAULT_} constant. */
        public static Settings defaults() {
            return new Settings(HostResolver.SYSTEM, DEFAULT_MAX_CONNECTIONS, DEFAULT_HEADER_TIMEOUT,
                    DEFAULT_IDLE_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_HEADER_BYTES, Optional.empty());
        }

        public Settings withResolver(HostResolver value) {
            return new Settings(value, maxConnections, headerTimeout, idleTimeout, connectTimeout, maxHeaderBytes, auditFile);
        }

        public Settings withMaxConnections(int value) {
            return new Settings(resolver, value, headerTimeout, idleTimeout, connectTimeout, maxHeaderBytes, auditFile);
        }

        public Settings withHeaderTimeout(Duration value) {
            return new Settings(resolver, maxConnections, value, idleTimeout, connectTimeout, maxHeaderBytes, auditFile);
        }

        public Settings withIdleTimeout(Duration value) {
            return new Settings(resolver, maxConnections, headerTimeout, value, connectTimeout, maxHeaderBytes, auditFile);
        }

        public Settings withConnectTimeout(Duration value) {
            return new Settings(resolver, maxConnections, headerTimeout, idleTimeout, value, maxHeaderBytes, auditFile);
        }

        public Settings withMaxHeaderBytes(int value) {
            return new Settings(resolver, maxConnections, headerTimeout, idleTimeout, connectTimeout, value, auditFile);
        }

        public Settings withAuditFile(Path value) {
            return new Settings(resolver, maxConnections, headerTimeout, idleTimeout, connectTimeout, maxHeaderBytes,
                    Optional.of(value));
        }

        private static void requirePositive(String name, int value) {
            if (value <= 0) {
                throw new IllegalArgumentException(name + " must be positive, not " + value);
            }
        }

        private static void requirePositive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, not " + value);
            }
        }
    }

    private EgressProxy(Path socket, EgressPolicy policy, Settings settings, Connector connector,
                        ServerSocketChannel server, DecisionLog log) {
        this.socket = socket;
        this.policy = policy;
        this.settings = settings;
        this.connector = connector;
        this.server = server;
        this.log = log;
        this.threadPrefix = "sandbox4j-egress-" + PROXIES.incrementAndGet();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, threadPrefix + "-timer"));
        this.acceptor = daemon(this::acceptLoop, threadPrefix + "-accept");
    }

    /**
     * Starts a proxy listening on a new unix socket at {@code socket}.
     *
     * @throws IllegalArgumentException when something already exists at {@code socket}
     * @throws UncheckedIOException     when the socket cannot be created or the audit file opened
     */
    public static EgressProxy start(Path socket, EgressPolicy policy, Settings settings) {
        return start(socket, policy, settings, Connector.TCP);
    }

    static EgressProxy start(Path socket, EgressPolicy policy, Settings settings, Connector connector) {
        Objects.requireNonNull(socket, "socket");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(settings, "settings");
        Path absolute = socket.toAbsolutePath();
        if (Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException("cannot start the egress proxy at " + absolute
                    + ": something already exists there; remove it or choose a fresh path");
        }
        ServerSocketChannel server = null;
        DecisionLog log = null;
        try {
            server = bindOwnerOnly(absolute);
            log = new DecisionLog(DECISIONS_KEPT, settings.auditFile());
            EgressProxy proxy = new EgressProxy(absolute, policy, settings, connector, server, log);
            proxy.acceptor.start();
            return proxy;
        } catch (IOException e) {
            closeQuietly(server);
            if (server != null) {
                deleteQuietly(absolute);
            }
            throw new UncheckedIOException("cannot start the egress proxy at " + absolute + ": " + e.getMessage(), e);
        }
    }

    /**
     * Binds so that no other user can ever connect: the socket is bound inside a fresh owner-only
     * directory next to {@code target}, restricted to its owner, and only then hard-linked to
     * {@code target} (which fails, rather than replaces, if something appeared there meanwhile).
     * Where that is not possible (no POSIX permissions, no hard links), it binds in place and
     * restricts the file right after.
     */
    private static ServerSocketChannel bindOwnerOnly(Path target) throws IOException {
        Path parent = target.getParent();
        Path staging = null;
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            try {
                staging = Files.createTempDirectory(parent, STAGING_PREFIX);
                Files.setPosixFilePermissions(staging, OWNER_ONLY_DIRECTORY);
                Path staged = staging.resolve(STAGING_NAME);
                server.bind(UnixDomainSocketAddress.of(staged), BACKLOG);
                Files.setPosixFilePermissions(staged, OWNER_ONLY);
                Files.createLink(target, staged);
                Files.delete(staged);
                return server;
            } catch (FileAlreadyExistsException e) {
                throw new IllegalArgumentException("cannot start the egress proxy at " + target
                        + ": something already exists there; remove it or choose a fresh path", e);
            } catch (UnsupportedOperationException | IOException e) {
                if (server.getLocalAddress() != null) {
                    // Bound in staging but could not be linked: start over in place.
                    server.close();
                    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                }
                server.bind(UnixDomainSocketAddress.of(target), BACKLOG);
                try {
                    Files.setPosixFilePermissions(target, OWNER_ONLY);
                } catch (UnsupportedOperationException noPosix) {
                    // A file system without POSIX permissions: the directory must protect the socket.
                }
                return server;
            }
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        } finally {
            if (staging != null) {
                deleteQuietly(staging.resolve(STAGING_NAME));
                deleteQuietly(staging);
            }
        }
    }

    /** The socket file guests connect to. */
    public Path socket() {
        return socket;
    }

    /** The policy this proxy enforces. */
    public EgressPolicy policy() {
        return policy;
    }

    /** The limits and collaborators this proxy runs with. */
    public Settings settings() {
        return settings;
    }

    /** The last {@value #DECISIONS_KEPT} decisions, oldest first; a copy. */
    public List<EgressDecision> decisions() {
        return log.snapshot();
    }

    /** How many decisions were dropped from {@link #decisions()} to keep it bounded. */
    public long droppedDecisions() {
        return log.dropped();
    }

    /** How many audit lines could not be written (a full disk does not stop the proxy). */
    public long auditWriteFailures() {
        return log.auditFailures();
    }

    /** Client connections open right now. */
    public int liveConnections() {
        return live.size();
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed.get();
    }

    /** Stops accepting, closes every live connection, deletes the socket file. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closeQuietly(server);
        deleteQuietly(socket);
        for (ProxyConnection connection : live) {
            connection.abort();
        }
        long deadline = System.nanoTime() + CLOSE_GRACE.toNanos();
        for (ProxyConnection connection : live) {
            connection.awaitEnd(Math.max(0, deadline - System.nanoTime()));
        }
        try {
            acceptor.join(CLOSE_GRACE.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timer.shutdownNow();
        lingering.forEach(EgressProxy::closeQuietly);
        log.close();
    }

    private void acceptLoop() {
        while (!closed.get()) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed.get()) {
                    return;
                }
                continue;
            }
            if (live.size() >= settings.maxConnections()) {
                refuseOverCap(client);
                continue;
            }
            ProxyConnection connection = new ProxyConnection(this, client, connectionIds.incrementAndGet());
            live.add(connection);
            if (closed.get()) {
                connection.abort();
            }
            connection.start();
        }
    }

    private void refuseOverCap(SocketChannel client) {
        String reason = EgressGate.PREFIX + "this sandbox already has " + settings.maxConnections()
                + " open connections, the limit; retry when one closes";
        try {
            client.configureBlocking(false);
            // A 503 is small enough for an empty socket buffer; a client that filled its own
            // buffer without reading loses the answer rather than stalling the acceptor.
            client.write(ByteBuffer.wrap(HttpStatus.SERVICE_UNAVAILABLE.response(reason)));
        } catch (IOException e) {
            // The client left; the decision is recorded all the same.
        }
        log.record(new EgressDecision(Instant.now(), "", "", 0, EgressDecision.Verdict.REFUSED, reason, 0, 0));
        closeGently(client);
    }

    /**
     * Ends a connection the proxy has answered itself: half-closes it, then reads and discards
     * what the client still sends for {@link #LINGER} before closing, so the answer is not lost
     * to a reset. Bounded: at most {@code maxConnections} connections linger at once (others are
     * closed at once), and each is drained of at most {@value #LINGER_DRAIN_BYTES} bytes.
     */
    void closeGently(SocketChannel channel) {
        try {
            channel.shutdownOutput();
            channel.configureBlocking(false);
            drain(channel);
        } catch (IOException | RuntimeException e) {
            closeQuietly(channel);
            return;
        }
        if (closed.get() || lingering.size() >= settings.maxConnections()) {
            closeQuietly(channel);
            return;
        }
        lingering.add(channel);
        try {
            timer.schedule(() -> {
                drain(channel);
                closeQuietly(channel);
                lingering.remove(channel);
            }, LINGER.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            closeQuietly(channel);
            lingering.remove(channel);
        }
    }

    private static void drain(SocketChannel channel) {
        ByteBuffer sink = ByteBuffer.allocate(RequestHead.READ_CHUNK);
        int total = 0;
        try {
            int n;
            while (total < LINGER_DRAIN_BYTES && (n = channel.read(sink)) > 0) {
                total += n;
                sink.clear();
            }
        } catch (IOException | RuntimeException e) {
            // Nothing more to read: the close follows.
        }
    }

    // Collaborators for ProxyConnection.

    Connector connector() {
        return connector;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    Thread newThread(Runnable body, long connectionId, String role) {
        return daemon(body, threadPrefix + "-conn-" + connectionId + "-" + role);
    }

    void record(EgressDecision decision) {
        log.record(decision);
    }

    void ended(ProxyConnection connection) {
        live.remove(connection);
    }

    private static Thread daemon(Runnable body, String name) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            // Closing is best effort: the other end may already be gone.
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // Nothing more to do: the path stays, and the next start at it says so.
        }
    }
}
