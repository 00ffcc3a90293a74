package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK through {@link SbxBackend} against the sbx emulator in
 * {@code src/test/resources/sbx-emulator/sbx} (namespaces in place of microVMs; it needs host
 * root). Skipped where the emulator cannot run.
 */
class SbxConformanceTest {

    static final Path EMULATOR = Path.of("src/test/resources/sbx-emulator/sbx").toAbsolutePath();
    private static final Path STATE = temporary();

    private static Path temporary() {
        try {
            Path state = Files.createTempDirectory("sandbox4j-sbx-tck");
            Files.createDirectories(state.resolve("emulator"));
            Files.writeString(state.resolve("emulator").resolve("settings.json"),
                    "{\"ssh.agentForwardingEnabled\": false}");
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
                    .workspaceRoot(STATE.resolve("workspaces"))
                    .environment("SBX_EMULATOR_HOME", STATE.resolve("emulator").toString())
                    .build());
        }

        /** An sbx guest keeps its disk between commands and across idle stops (SBX-PROTOCOL.md). */
        @Override
        public boolean persistentRoot() {
            return true;
        }
    };

    /** The one isolation probe an sbx guest fails by design; see {@link #theIsolationSuiteButNoNewPrivs()}. */
    static final String SUDO_BY_DESIGN = "the-guest-cannot-gain-privileges";

    private static void assumeEmulator() {
        Assumptions.assumeTrue(Files.isExecutable(EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclaresButIsolation() {
        assumeEmulator();
        List<Suite> suites = Suites.all().stream().filter(suite -> !suite.name().equals(Suites.isolation().name()))
                .toList();
        return Conformance.declaredTests(TARGET, suites);
    }

    /**
     * Every isolation probe passes but one: the {@code shell} template gives its {@code agent} user
     * passwordless {@code sudo} (SBX-PROTOCOL.md), so {@code no_new_privs} is not set and cannot be
     * without breaking sudo. Privilege inside the guest stays inside the microVM; the deviation is
     * pinned here so that a change either way is seen.
     */
    @Test
    void theIsolationSuiteButNoNewPrivs() {
        assumeEmulator();
        ConformanceReport report = Conformance.run(TARGET, Suites.isolation());
        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly(SUDO_BY_DESIGN);
        assertThat(report.passed()).isNotEmpty();
    }
}
