package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.ProcessBackend;

/**
 * Refuse, never degrade: {@code execute_code} never asks for unrestricted egress, and the
 * {@code os_process} backend cannot close the network, so the tool is refused when it is built —
 * not served with the network open.
 */
class CodeActProcessBackendTest {

    @Test
    void aBackendThatCannotCloseTheNetworkIsRefusedAtConstruction() throws Exception {
        Path stateRoot = Files.createTempDirectory("s4jp");
        ProcessBackend backend = ProcessBackend.builder().stateRoot(stateRoot).build();
        SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.OS_PROCESS).build();
        CallerContext context = CallerContext.of(() -> "s", () -> "t", FileListing.ALL);
        assertThatThrownBy(() -> CodeAct.builder(router, "agent", context).build())
                .isInstanceOf(SandboxEgressNotEnforced.class)
                .hasMessageContaining("'process'").hasMessageContaining("closed");
        try (var walk = Files.walk(stateRoot)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
