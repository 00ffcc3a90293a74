package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.HostResolver;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackEgressServers;

/**
 * The TCK's view of {@link BubblewrapBackend}: every {@link #newBackend()} is a new instance over
 * one state root (another replica, a restarted JVM), and the egress fixture is four loopback
 * servers. The allowed one is reached by a name the allowlist pins to 127.0.0.1 (so the proxy
 * admits loopback for it alone); every other name resolves, through the proxy's resolver, to
 * loopback or a metadata address, and must be refused.
 */
final class BubblewrapTarget implements ConformanceTarget, AutoCloseable {

    private final Path stateRoot;
    /** Where the backend looks for control groups, when not the host's own. */
    private final Optional<Path> cgroupRoot;
    private final LoopbackEgressServers servers = LoopbackEgressServers.start();

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
        return LoopbackEgressServers::resolve;
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
        return Optional.of(servers.fixture(Optional.of("curl")));
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
        servers.close();
        LocalStore.deleteTree(stateRoot);
    }
}
