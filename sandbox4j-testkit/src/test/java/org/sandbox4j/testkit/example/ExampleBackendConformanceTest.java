package org.sandbox4j.testkit.example;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.sandbox4j.core.spi.TreeRemoval;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.ConformanceTestSuite;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;

/** The worked example passes its suites through {@link ConformanceTestSuite}, exactly as TCK.md shows. */
class ExampleBackendConformanceTest extends ConformanceTestSuite {

    private static final Path ROOT = temporaryRoot();

    @Override
    protected ConformanceTarget target() {
        return new ConformanceTarget() {
            @Override
            public org.sandbox4j.core.SandboxBackend newBackend() {
                return new ExampleBackend(ROOT);
            }

            @Override
            public String workBase() {
                return ExampleBackend.MOUNT_POINT + "/work";
            }
        };
    }

    @Override
    protected List<Suite> suites() {
        return List.of(Suites.filesIn(), Suites.filesOut(), Suites.filesList(), Suites.filesDelete(), Suites.exec(),
                Suites.lifecycle());
    }

    @AfterAll
    static void removeRoot() throws IOException {
        TreeRemoval.remove(ROOT, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private static Path temporaryRoot() {
        try {
            return Files.createTempDirectory("sandbox4j-example-");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
