package org.sandbox4j.sbx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
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
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK through {@link SbxBackend} against the sbx emulator in
 * {@code src/test/resources/sbx-emulator/sbx} (namespaces in place of microVMs; it needs host
 * root). Skipped where the emulator cannot run.
 */
class SbxConformanceTest {

    static final Path EMULATOR = Path.of("src/test/resources/sbx-emulator/sbx").toAbsolutePath();
    /** Made on first use only, so a class that reads {@link #EMULATOR} leaves no directory behind. */
    private static final class State {
        static final Path DIR = temporary();
    }

    private static volatile boolean stateMade;

    private static Path temporary() {
        try {
            Path state = Files.createTempDirectory("sandbox4j-sbx-tck");
            Files.createDirectories(state.resolve("emulator"));
            Files.writeString(state.resolve("emulator").resolve("settings.json"),
                    "{\"ssh.agentForwardingEnabled\": false}");
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
         * The one egress mode it declares: deny-all (an sbx guest has a NIC whose connections end
         * at the host-side proxy). The EGRESS_DENY_ALL suite shapes its own specs the same way.
         */
        @Override
        public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
            return suiteSpec.egress(Egress.DENY_ALL).build();
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

    /** Every suite the backend declares, isolation included, with no exception. */
    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        assumeEmulator();
        return Conformance.declaredTests(TARGET, Suites.all());
    }
}
