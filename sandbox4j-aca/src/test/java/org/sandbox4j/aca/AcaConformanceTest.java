package org.sandbox4j.aca;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.aca.emulator.AcaEmulator;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK, as the backend declares it, through {@link AcaBackend} against the
 * {@link AcaEmulator} (the REST data plane on loopback, exec in a real bubblewrap guest). Every
 * {@code newBackend()} is a fresh {@code AcaBackend} on the same emulator, so the lifecycle
 * suite's second instance finds and purges by label what the first created.
 */
class AcaConformanceTest {

    private static final String TOKEN = "conformance-token";

    private static Path stateRoot;
    private static AcaEmulator emulator;

    @BeforeAll
    static void startEmulator() throws IOException {
        stateRoot = Files.createTempDirectory("sandbox4j-aca-conformance-");
        emulator = AcaEmulator.start(stateRoot.resolve("state"), TOKEN);
    }

    @AfterAll
    static void stopEmulator() throws IOException {
        if (emulator != null) {
            emulator.close();
        }
        if (stateRoot != null) {
            try (Stream<Path> paths = Files.walk(stateRoot)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @TestFactory
    Stream<DynamicNode> conformance() {
        ConformanceTarget target = new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                return new AcaBackend(AcaConfig.builder().endpoint(emulator.baseUrl()).subscription("sub")
                        .resourceGroup("rg").sandboxGroup("group").build(), scope -> TOKEN);
            }

            @Override
            public SandboxSpec spec(SandboxSpec.Builder builder) {
                return builder.image("python-3.13").build();
            }

            @Override
            public boolean persistentRoot() {
                return true;
            }
        };
        return Conformance.declaredTests(target, Suites.all());
    }
}
