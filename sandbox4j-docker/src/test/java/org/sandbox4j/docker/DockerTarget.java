package org.sandbox4j.docker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.egress.HostResolver;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackEgressServers;

/**
 * The TCK's view of {@link DockerBackend} on one engine and runtime: every {@link #newBackend()}
 * is a new instance (another replica) over the same engine, whose labels are the shared record.
 * The egress fixture is four loopback servers: the allowed one reached by a name the allowlist
 * pins to 127.0.0.1, every other name resolving (through the proxy's resolver) to loopback or a
 * metadata address, which the proxy must refuse. Containers have no network device but loopback,
 * so nothing reaches a private range.
 */
final class DockerTarget implements ConformanceTarget, AutoCloseable {

    private final String host;
    private final String runtime;
    private final String backendName;
    private final Path egressRoot;
    private final List<DockerBackend> made = new ArrayList<>();
    private final LoopbackEgressServers servers = LoopbackEgressServers.start();

    DockerTarget(String host, String runtime, String backendName) {
        this.host = host;
        this.runtime = runtime;
        this.backendName = backendName;
        try {
            this.egressRoot = Files.createTempDirectory("s4jd");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Each engine and runtime the backend is tested on, with the TCK target that reaches it. */
    enum Engine {
        DOCKER_RUNC(() -> DockerTarget.dockerWith("runc")),
        DOCKER_RUNSC(() -> DockerTarget.dockerWith("runsc")),
        PODMAN_RUNC(DockerTarget::podman);

        private final Supplier<DockerTarget> target;

        Engine(Supplier<DockerTarget> target) {
            this.target = target;
        }

        /**
         * A new target on this engine; close it.
         *
         * @throws AssertionError the engine is not provisioned (the reason says why)
         */
        DockerTarget target() {
            return target.get();
        }
    }

    static DockerTarget dockerWith(String runtime) {
        return new DockerTarget(TestEngines.dockerHost(), runtime, "docker-" + runtime);
    }

    static DockerTarget podman() {
        return new DockerTarget(TestEngines.podmanHost(), "runc", "podman-runc");
    }

    /** Names the test servers resolve to; nothing here reaches a DNS server or a private range. */
    static HostResolver resolver() {
        return LoopbackEgressServers::resolve;
    }

    DockerBackend.Builder builder() {
        return DockerBackend.builder().name(backendName).host(host).image(TestEngines.image()).runtime(runtime)
                .egressRoot(egressRoot).egressSettings(EgressProxy.Settings.defaults().withResolver(resolver()));
    }

    @Override
    public synchronized DockerBackend newBackend() {
        DockerBackend backend = builder().build();
        made.add(backend);
        return backend;
    }

    @Override
    public Optional<EgressFixture> egressFixture() {
        return Optional.of(servers.fixture(Optional.of("curl")));
    }

    /**
     * A container's {@code /tmp} (a tmpfs of its own) keeps what one exec writes for the next, as
     * every container does; the work area is where state is meant to live, and the root is read-only.
     */
    @Override
    public boolean persistentRoot() {
        return true;
    }

    /** The work area's tmpfs is the largest place a guest may write: /tmp is smaller, the root read-only. */
    @Override
    public Optional<Long> storageBound() {
        return Optional.of(Math.max(DockerLimits.DEFAULT.workAreaBytes(), DockerLimits.DEFAULT.tmpBytes()));
    }

    @Override
    public synchronized void close() {
        for (DockerBackend backend : made) {
            backend.close();
        }
        made.clear();
        servers.close();
        try (Stream<Path> walk = Files.walk(egressRoot)) {
            walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // Best effort: a temp directory.
        }
    }
}
