package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.HostResolver;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/**
 * The TCK's view of {@link BubblewrapBackend}: every {@link #newBackend()} is a new instance over
 * one state root (another replica, a restarted JVM), and the egress fixture is four loopback
 * servers. The allowed one is reached by a name the allowlist pins to 127.0.0.1 (so the proxy
 * admits loopback for it alone); every other name resolves, through the proxy's resolver, to
 * loopback or a metadata address, and must be refused.
 */
final class BubblewrapTarget implements ConformanceTarget, AutoCloseable {

    static final String ALLOWED_HOST = "allowed.sandbox4j.test";
    static final String UNLISTED_HOST = "unlisted.sandbox4j.test";
    static final String INTERNAL_HOST = "internal.sandbox4j.test";
    static final String METADATA_HOST = "metadata.sandbox4j.test";

    private final Path stateRoot;
    /** Where the backend looks for control groups, when not the host's own. */
    private final Optional<Path> cgroupRoot;
    private final LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
    private final LoopbackHttpServer unlisted = LoopbackHttpServer.start("unlisted");
    private final LoopbackHttpServer ipLiteral = LoopbackHttpServer.start("ip-literal");
    private final LoopbackHttpServer internal = LoopbackHttpServer.start("internal");

    BubblewrapTarget(Path stateRoot) {
        this(stateRoot, Optional.empty());
    }

    private BubblewrapTarget(Path stateRoot, Optional<Path> cgroupRoot) {
        this.stateRoot = stateRoot;
        this.cgroupRoot = cgroupRoot;
    }

    /** A target over a fresh, short state root (a unix socket path must stay under 108 bytes). */
    static BubblewrapTarget fresh() {
        return new BubblewrapTarget(freshStateRoot());
    }

    /** As {@link #fresh()}, with control groups looked for under {@code cgroupRoot} (an empty directory: none). */
    static BubblewrapTarget fresh(Path cgroupRoot) {
        return new BubblewrapTarget(freshStateRoot(), Optional.of(cgroupRoot));
    }

    private static Path freshStateRoot() {
        try {
            return Files.createTempDirectory("s4jt");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Names the test servers resolve to; nothing here reaches a DNS server or a private range. */
    static HostResolver resolver() {
        return name -> switch (name) {
            case UNLISTED_HOST, INTERNAL_HOST, "localhost" -> List.of(InetAddress.getByName("127.0.0.1"));
            case METADATA_HOST -> List.of(InetAddress.getByName("169.254.169.254"));
            default -> throw new java.net.UnknownHostException(name + " (the test resolver knows only its fixtures)");
        };
    }

    @Override
    public SandboxBackend newBackend() {
        BubblewrapBackend.Builder builder = BubblewrapBackend.builder().stateRoot(stateRoot)
                .egressSettings(EgressProxy.Settings.defaults().withResolver(resolver()));
        cgroupRoot.ifPresent(builder::cgroupRoot);
        return builder.build();
    }

    @Override
    public Optional<EgressFixture> egressFixture() {
        return Optional.of(new EgressFixture(List.of(ALLOWED_HOST + ":" + allowed.port() + "=127.0.0.1"),
                allowed.url(ALLOWED_HOST), unlisted.url(UNLISTED_HOST), ipLiteral.url(),
                List.of(internal.url(INTERNAL_HOST), internal.url("localhost"),
                        URI.create("http://" + METADATA_HOST + "/latest/meta-data/")),
                Optional.of("curl"), LoopbackHttpServer.witness(List.of(allowed, unlisted, ipLiteral, internal))));
    }

    /** The workspace's bound (its tmpfs) is the largest: each exec's /tmp and /var/tmp are smaller. */
    @Override
    public Optional<Long> storageBound() {
        return Optional.of(Math.max(LocalLimits.DEFAULT.workspaceBytes(), LocalLimits.DEFAULT.tmpBytes()));
    }

    Path stateRoot() {
        return stateRoot;
    }

    @Override
    public void close() {
        for (LoopbackHttpServer server : List.of(allowed, unlisted, ipLiteral, internal)) {
            server.close();
        }
        LocalStore.deleteTree(stateRoot);
    }
}
