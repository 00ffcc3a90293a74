package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The whole TCK against {@link BubblewrapBackend} in rlimit mode as whoever runs the build (root
 * in CI): its cgroup root is an empty directory no controller backs, so no sandbox gets a control
 * group and disposal must stop processes through the launches it recorded. As root nothing then
 * bounds the guest's processes, so the backend declares {@code os_process} and the suites above
 * that rung are not run (said in the report). Unprivileged rlimit
 * mode is {@link UnprivilegedConformanceTest}; cgroup mode is {@link BubblewrapConformanceTest}.
 */
class BubblewrapRlimitConformanceTest {

    private static final Path NO_CGROUPS = emptyDirectory();
    private static final BubblewrapTarget TARGET = BubblewrapTarget.fresh(NO_CGROUPS);

    @AfterAll
    static void cleanUp() {
        TARGET.close();
        LocalStore.deleteTree(NO_CGROUPS);
    }

    @Test
    void theBackendRunsWithoutControlGroups() {
        try (BubblewrapBackend backend = (BubblewrapBackend) TARGET.newBackend()) {
            assertThat(backend.diagnostics()).as("the rlimit fallback is in use")
                    .anySatisfy(line -> assertThat(line).startsWith("limits: rlimits"))
                    .noneSatisfy(line -> assertThat(line).startsWith("limits: cgroup"));
            // As root nothing then bounds the guest's processes (ISOLATION's fork bomb would fail): no container.
            assertThat(backend.declarations().isolation()).isEqualTo(HostUser.current().isRoot() ? Isolation.OS_PROCESS
                    : Isolation.CONTAINER);
        }
    }

    @TestFactory
    Stream<DynamicNode> everySuiteTheBackendDeclares() {
        return Conformance.declaredTests(TARGET, Suites.all());
    }

    private static Path emptyDirectory() {
        try {
            return Files.createTempDirectory("s4jcg");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
