package org.sandbox4j.testkit.tck;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

/**
 * The egress suites' fixture for a backend whose guests reach the host's allowlisting proxy: four
 * loopback servers and the names that reach them. The allowed one is reached by a name the
 * allowlist pins to 127.0.0.1 (so the proxy admits loopback for it alone); the other names resolve,
 * through {@link #resolve}, which the backend's proxy is given as its resolver, to loopback or a
 * metadata address, and must be refused. Nothing here reaches a DNS server or a private range.
 */
public final class LoopbackEgressServers implements AutoCloseable {

    public static final String ALLOWED_HOST = "allowed.sandbox4j.test";
    public static final String UNLISTED_HOST = "unlisted.sandbox4j.test";
    public static final String INTERNAL_HOST = "internal.sandbox4j.test";
    public static final String METADATA_HOST = "metadata.sandbox4j.test";

    private final LoopbackHttpServer allowed = LoopbackHttpServer.start("allowed");
    private final LoopbackHttpServer unlisted = LoopbackHttpServer.start("unlisted");
    private final LoopbackHttpServer ipLiteral = LoopbackHttpServer.start("ip-literal");
    private final LoopbackHttpServer internal = LoopbackHttpServer.start("internal");

    /** Starts the four servers. */
    public static LoopbackEgressServers start() {
        return new LoopbackEgressServers();
    }

    private LoopbackEgressServers() {
    }

    /** What the proxy's resolver answers for {@code name}: only the fixture's names resolve. */
    public static List<InetAddress> resolve(String name) throws UnknownHostException {
        return switch (name) {
            case UNLISTED_HOST, INTERNAL_HOST, "localhost" -> List.of(InetAddress.getByName("127.0.0.1"));
            case METADATA_HOST -> List.of(InetAddress.getByName("169.254.169.254"));
            default -> throw new UnknownHostException(name + " (the test resolver knows only its fixtures)");
        };
    }

    /** The fixture, with the guest's HTTP client the probes use. */
    public EgressFixture fixture(Optional<String> httpClient) {
        return new EgressFixture(List.of(ALLOWED_HOST + ":" + allowed.port() + "=127.0.0.1"),
                allowed.url(ALLOWED_HOST), unlisted.url(UNLISTED_HOST), ipLiteral.url(),
                List.of(internal.url(INTERNAL_HOST), internal.url("localhost"),
                        URI.create("http://" + METADATA_HOST + "/latest/meta-data/")),
                httpClient, LoopbackHttpServer.witness(List.of(allowed, unlisted, ipLiteral, internal)));
    }

    @Override
    public void close() {
        for (LoopbackHttpServer server : List.of(allowed, unlisted, ipLiteral, internal)) {
            server.close();
        }
    }
}
