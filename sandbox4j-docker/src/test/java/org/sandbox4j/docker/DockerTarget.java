package org.sandbox4j.docker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
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
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/**
 * The TCK's view of {@link DockerBackend} on one engine and runtime: every {@link #newBackend()}
 * is a new instance (another replica) over the same engine, whose labels are the shared record.
 * The egress fixture is four loopback servers: the allowed one reached by a name the allowlist
 * pins to 127.0.0.1, every other name resolving (through the proxy's resolver) to loopback or a
 * metadata address, which the proxy must refuse. Containers have no network device but loopback,
 * so nothing reaches a private range.
 */
final class DockerTarget implements ConformanceTarget, AutoCloseable {

    static final String ALLOWED_HOST = "allowed.sandbox4j.test";
    static final String UNLISTED_HOST = "unlisted.sandbox4j.test";
    static final String INTERNAL_HOST = "internal.sandbox4j.test";
    static final String METADATA_HOST = "metadata.sandbox4j.test";

    private final String host;
    private final String runtime;
    private final String backendName;
    private final Path egressRoot;
    private final List<DockerBackend> made = new ArrayList<>();
    private final LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
    private final LoopbackHttpServer unlisted = LoopbackHttpServer.start("unlisted");
    private final LoopbackHttpServer ipLiteral = LoopbackHttpServer.start("ip-literal");
    private final LoopbackHttpServer internal = LoopbackHttpServer.start("internal");

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
        return name -> switch (name) {
            case UNLISTED_HOST, INTERNAL_HOST, "localhost" -> List.of(InetAddress.getByName("127.0.0.1"));
            case METADATA_HOST -> List.of(InetAddress.getByName("169.254.169.254"));
            default -> throw new java.net.UnknownHostException(name + " (the test resolver knows only its fixtures)");
        };
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
        return Optional.of(new EgressFixture(List.of(ALLOWED_HOST + ":" + allowed.port() + "=127.0.0.1"),
                allowed.url(ALLOWED_HOST), unlisted.url(UNLISTED_HOST), ipLiteral.url(),
                List.of(internal.url(INTERNAL_HOST), internal.url("localhost"),
                        URI.create("http://" + METADATA_HOST + "/latest/meta-data/")),
                Optional.of("curl"), LoopbackHttpServer.witness(List.of(allowed, unlisted, ipLiteral, internal))));
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
        for (LoopbackHttpServer server : List.of(allowed, unlisted, ipLiteral, internal)) {
            server.close();
        }
        try (Stream<Path> walk = Files.walk(egressRoot)) {
            walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // Best effort: a temp directory.
        }
    }
}
