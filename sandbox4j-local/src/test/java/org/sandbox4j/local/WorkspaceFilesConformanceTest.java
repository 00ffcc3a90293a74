package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The TCK's FILES_IN, FILES_OUT, FILES_LIST and FILES_DELETE suites against sandboxes whose file
 * methods are {@link WorkspaceFiles} and whose guest is a real bubblewrap namespace over the same
 * workspace, so every planted link really leads where the probes say (the
 * {@code planted-links-lead-outside} probes prove it). Every probe must pass, none skipped. A
 * canary file next to the workspace proves the suites touched nothing outside it.
 */
@EnabledOnOs(OS.LINUX)
class WorkspaceFilesConformanceTest {

    static final String MOUNT_POINT = "/sandbox4j";
    private static final String WORK_BASE = MOUNT_POINT + "/work";
    private static final byte[] CANARY = "outside the workspace\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    @TempDir
    static Path tempDir;

    private static Path workspace;
    private static Path canary;

    @BeforeAll
    static void prepare() throws IOException {
        assertThat(Path.of(WorkspaceTestSandbox.BWRAP)).as("bubblewrap, which keeps the guest off the host")
                .isExecutable();
        workspace = Files.createDirectory(tempDir.toRealPath().resolve("workspace"));
        canary = Files.write(tempDir.toRealPath().resolve("canary.txt"), CANARY);
    }

    @AfterAll
    static void nothingOutsideTheWorkspaceChanged() throws IOException {
        assertThat(Files.readAllBytes(canary)).isEqualTo(CANARY);
        try (Stream<Path> next = Files.list(tempDir)) {
            assertThat(next.map(path -> path.getFileName().toString())).containsExactlyInAnyOrder("workspace",
                    "canary.txt");
        }
    }

    @TestFactory
    Stream<DynamicNode> fileSuites() {
        return Conformance.tests(new Target(), Suites.files());
    }

    /** Each call a new backend instance over the same workspace. */
    private static final class Target implements ConformanceTarget {
        @Override
        public SandboxBackend newBackend() {
            if (workspace == null) {
                throw new UncheckedIOException(new IOException("the workspace was not prepared"));
            }
            return new WorkspaceTestBackend(workspace, MOUNT_POINT);
        }

        @Override
        public String workBase() {
            return WORK_BASE;
        }
    }
}
