package org.sandbox4j.sbx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.EgressFixture;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK through {@link SbxBackend} against the sbx emulator in
 * {@code src/test/resources/sbx-emulator/sbx} (namespaces in place of microVMs; it needs host
 * root). Skipped where the emulator cannot run.
 */
class SbxConformanceTest {

    static final Path EMULATOR = Path.of("src/test/resources/sbx-emulator/sbx").toAbsolutePath();
    /** The name the allowlist suite's spec allows. */
    static final String ALLOWED_HOST = "allowed.sbx.test";
    /** A name the guest can resolve and the allowlist does not name. */
    static final String UNLISTED_HOST = "unlisted.sbx.test";
    /** A name that leads to a loopback server the allowlist does not name. */
    static final String INTERNAL_HOST = "internal.sbx.test";

    /** Made on first use only, so a class that reads {@link #EMULATOR} leaves no directory behind. */
    private static final class State {
        /** allowed, unlisted, the IP literal's, internal: each on 127.0.0.1 of this host's namespace. */
        static final List<LoopbackHttpServer> SERVERS = List.of(LoopbackHttpServer.start("allowed"),
                LoopbackHttpServer.start("unlisted"), LoopbackHttpServer.start("ip-literal"),
                LoopbackHttpServer.start("internal"));
        static final Path DIR = temporary();
    }

    private static volatile boolean stateMade;

    private static Path temporary() {
        try {
            Path state = Files.createTempDirectory("sandbox4j-sbx-tck");
            Files.createDirectories(state.resolve("emulator"));
            Files.writeString(state.resolve("emulator").resolve("settings.json"),
                    "{\"ssh.agentForwardingEnabled\": false}");
            // The emulator's only name resolution (test-only): each name to its server's port on
            // 127.0.0.1. The IP literal's server has no name, so nothing but its literal leads there.
            Files.writeString(state.resolve("emulator").resolve("hosts.json"), "{\"" + ALLOWED_HOST
                    + "\": \"127.0.0.1:" + State.SERVERS.get(0).port() + "\", \"" + UNLISTED_HOST + "\": \"127.0.0.1:"
                    + State.SERVERS.get(1).port() + "\", \"" + INTERNAL_HOST + "\": \"127.0.0.1:"
                    + State.SERVERS.get(3).port() + "\"}");
            stateMade = true;
            return state;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static final ConformanceTarget TARGET = new ConformanceTarget() {
        @Override
        public SandboxBackend newBackend() {
            return new SbxBackend(SbxConfig.builder()
                    .sbxPath(EMULATOR.toString())
                    .workspaceRoot(State.DIR.resolve("workspaces"))
                    .environment("SBX_EMULATOR_HOME", State.DIR.resolve("emulator").toString())
                    .build());
        }

        /**
         * Deny-all for every suite but the allowlist's, which shapes its own spec (an sbx guest
         * has a NIC whose connections end at the host-side proxy, so never CLOSED).
         */
        @Override
        public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
            SandboxSpec shaped = suiteSpec.build();
            return shaped.egress() == Egress.ALLOWLIST ? shaped : suiteSpec.egress(Egress.DENY_ALL).build();
        }

        /**
         * The allowlist suite's servers. The guest resolves the three names (the emulator puts
         * them in its hosts file) and reaches them only through the host-side filter, which
         * connects to a server only for a name the sandbox's rules admit.
         */
        @Override
        public Optional<EgressFixture> egressFixture() {
            List<LoopbackHttpServer> servers = State.SERVERS;
            return Optional.of(new EgressFixture(List.of(ALLOWED_HOST), servers.get(0).url(ALLOWED_HOST),
                    servers.get(1).url(UNLISTED_HOST), servers.get(2).url(),
                    List.of(servers.get(3).url(INTERNAL_HOST), servers.get(3).url("localhost"),
                            URI.create("http://169.254.169.254/latest/meta-data/")),
                    Optional.of("curl"), LoopbackHttpServer.witness(servers)));
        }

        @Override
        public Optional<String> emulatedHypervisor() {
            return Optional.of("the sbx emulator runs each guest in namespaces here; the real sbx boots a microVM "
                    + "(SbxLiveTest runs this probe against it)");
        }

        /** An sbx guest keeps its disk between commands and across idle stops (SBX-PROTOCOL.md). */
        @Override
        public boolean persistentRoot() {
            return true;
        }
    };

    /**
     * Removes every emulated sandbox the suite may have left (none, when every disposal probe
     * passed) and then the state directory, so no sandbox, cgroup or directory outlives the class.
     */
    @AfterAll
    static void removeTheEmulatorsState() throws Exception {
        if (!stateMade) {
            return;
        }
        State.SERVERS.forEach(LoopbackHttpServer::close);
        Path home = State.DIR.resolve("emulator");
        Path sandboxes = home.resolve("sandboxes");
        if (Files.isDirectory(sandboxes)) {
            try (Stream<Path> names = Files.list(sandboxes)) {
                for (Path sandbox : names.toList()) {
                    ProcessBuilder rm = new ProcessBuilder(EMULATOR.toString(), "rm", "--force",
                            sandbox.getFileName().toString()).redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
                    rm.environment().put("SBX_EMULATOR_HOME", home.toString());
                    Process process = rm.start();
                    if (!process.waitFor(60, TimeUnit.SECONDS)) {
                        process.destroyForcibly();
                    }
                }
            }
        }
        try (Stream<Path> tree = Files.walk(State.DIR)) {
            for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static void assumeEmulator() {
        Assumptions.assumeTrue(Files.isExecutable(EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
    }

    /**
     * Every suite the backend declares, isolation included, with no exception; a developer may run
     * only some, named in {@value #SUITES_PROPERTY} (comma-separated suite names, e.g.
     * {@code -Dsandbox4j.tck.suites=INTERACTIVE_EXEC,INTERACTIVE_EXEC_DECLARED}).
     */
    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        assumeEmulator();
        String named = System.getProperty(SUITES_PROPERTY, "").strip();
        List<org.sandbox4j.testkit.tck.Suite> suites = Suites.all();
        if (!named.isEmpty()) {
            List<String> names = List.of(named.split(","));
            suites = suites.stream().filter(suite -> names.contains(suite.name())).toList();
            Assumptions.assumeFalse(suites.isEmpty(), "no suite is named " + named);
        }
        return Conformance.declaredTests(TARGET, suites);
    }

    /** Names the suites {@link #everySuiteTheBackendDeclares} runs; unset, all of them. */
    static final String SUITES_PROPERTY = "sandbox4j.tck.suites";
}
