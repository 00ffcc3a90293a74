package org.sandbox4j.aca;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.aca.emulator.AcaEmulator;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.egress.HostResolver;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK, as the backend declares it, through {@link AcaBackend} against the
 * {@link AcaEmulator} (the REST data plane on loopback, exec in a real bubblewrap guest). Every
 * {@code newBackend()} is a fresh {@code AcaBackend} on the same emulator, so the lifecycle
 * suite's second instance finds and purges by label what the first created.
 *
 * <p>The egress fixture is four loopback servers. The allowlist names one host, as a service host
 * rule would; the emulator's internet places that public host on the allowed server (pinned, that
 * port only). Every other name resolves, through the emulated proxy's resolver, to loopback or a
 * metadata address, and must be refused; nothing here reaches DNS or a private range.
 */
class AcaConformanceTest {

    private static final String TOKEN = "conformance-token";
    static final String ALLOWED_HOST = "allowed.sandbox4j.test";
    static final String UNLISTED_HOST = "unlisted.sandbox4j.test";
    static final String INTERNAL_HOST = "internal.sandbox4j.test";
    static final String METADATA_HOST = "metadata.sandbox4j.test";

    private static Path stateRoot;
    private static AcaEmulator emulator;
    private static List<LoopbackHttpServer> servers;

    @BeforeAll
    static void startEmulator() throws IOException {
        servers = List.of(LoopbackHttpServer.start("allowed"), LoopbackHttpServer.start("unlisted"),
                LoopbackHttpServer.start("ip-literal"), LoopbackHttpServer.start("internal"));
        stateRoot = Files.createTempDirectory("sandbox4j-aca-conformance-");
        emulator = AcaEmulator.start(stateRoot.resolve("state"), TOKEN).egressResolver(resolver())
                .publicHost(ALLOWED_HOST, new InetSocketAddress(InetAddress.getLoopbackAddress(), allowed().port()));
    }

    @AfterAll
    static void stopEmulator() throws IOException {
        if (emulator != null) {
            emulator.close();
        }
        if (servers != null) {
            servers.forEach(LoopbackHttpServer::close);
        }
        if (stateRoot != null) {
            org.sandbox4j.core.spi.TreeRemoval.remove(stateRoot, org.sandbox4j.core.spi.TreeRemoval.Mode.PROCESSES_STOPPED,
                    org.sandbox4j.core.spi.TreeRemoval.DEFAULT_DEADLINE);
        }
    }

    private static LoopbackHttpServer allowed() {
        return servers.get(0);
    }

    /**
     * The emulated proxy's DNS: the fixture's other names lead to loopback or metadata, which it must refuse. The
     * allowed host is not here: the emulator pins it to its server, so the proxy never resolves it.
     */
    static HostResolver resolver() {
        return name -> switch (name) {
            case UNLISTED_HOST, INTERNAL_HOST, "localhost" -> List.of(InetAddress.getByName("127.0.0.1"));
            case METADATA_HOST -> List.of(InetAddress.getByName("169.254.169.254"));
            default -> throw new UnknownHostException(name + " (the test resolver knows only its fixtures)");
        };
    }

    /** The spec with DENY_ALL where it asked for CLOSED, which no sandbox on the service can be. */
    static SandboxSpec denyAllUnlessNamed(SandboxSpec spec) {
        return spec.egress() == Egress.CLOSED ? spec.toBuilder().egress(Egress.DENY_ALL).build() : spec;
    }

    @TestFactory
    Stream<DynamicNode> conformance() {
        ConformanceTarget target = new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new AcaBackend(AcaConfig.builder().endpoint(emulator.baseUrl()).subscription("sub")
                        .resourceGroup("rg").sandboxGroup("group").build(), scope -> TOKEN);
            }

            /**
             * A sandbox on the service always has a NIC behind the platform's filter, so the suites that name no
             * egress mode (the TCK's default is CLOSED) run with DENY_ALL; the egress suites keep theirs.
             */
            @Override
            public SandboxSpec spec(SandboxSpec.Builder builder) {
                return denyAllUnlessNamed(builder.image("python").build());
            }

            @Override
            public boolean persistentRoot() {
                return true;
            }

            @Override
            public Optional<String> emulatedHypervisor() {
                return Optional.of("the ACA emulator runs each guest in namespaces here; the service boots a "
                        + "microVM (AcaLiveTest runs this probe against it)");
            }

            @Override
            public Optional<EgressFixture> egressFixture() {
                LoopbackHttpServer unlisted = servers.get(1);
                LoopbackHttpServer ipLiteral = servers.get(2);
                LoopbackHttpServer internal = servers.get(3);
                return Optional.of(new EgressFixture(List.of(ALLOWED_HOST), allowed().url(ALLOWED_HOST),
                        unlisted.url(UNLISTED_HOST), ipLiteral.url(),
                        List.of(internal.url(INTERNAL_HOST), internal.url("localhost"),
                                URI.create("http://" + METADATA_HOST + "/latest/meta-data/")),
                        Optional.of("curl"), LoopbackHttpServer.witness(servers)));
            }
        };
        return Conformance.declaredTests(target, Suites.all());
    }
}
