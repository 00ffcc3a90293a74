package org.sandbox4j.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * Every suite {@link ProcessBackend} declares, on this host, as whoever runs the build (root in
 * CI; {@link UnprivilegedConformanceTest} runs them unprivileged). It declares os_process and
 * egress unrestricted, so ISOLATION and the EGRESS suites are listed as not run, saying why.
 */
class ProcessConformanceTest {

    static final class ProcessTarget implements ConformanceTarget {
        private final Path stateRoot;

        ProcessTarget(Path stateRoot) {
            this.stateRoot = stateRoot;
        }

        @Override
        public SandboxBackend newBackend() {
            return ProcessBackend.builder().stateRoot(stateRoot).build();
        }

        /** Its guest shares the host's network: the only egress mode it declares. */
        @Override
        public SandboxSpec spec(SandboxSpec.Builder suiteSpec) {
            return suiteSpec.egress(org.sandbox4j.core.Egress.UNRESTRICTED).build();
        }
    }

    private static final Path STATE = fresh();
    private static final ProcessTarget TARGET = new ProcessTarget(STATE);

    private static Path fresh() {
        try {
            return Files.createTempDirectory("s4jp");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void cleanUp() {
        LocalStore.deleteTree(STATE);
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        return Conformance.declaredTests(TARGET, Suites.all());
    }
}
