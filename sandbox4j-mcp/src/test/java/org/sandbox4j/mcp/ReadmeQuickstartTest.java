package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.ReadmeSnippet;

/**
 * The module README's quickstart compiles and runs as written: a loopback HTTP server with a
 * bearer token, the SDK's client calling execute_code in a real bubblewrap sandbox. Its default
 * state root lands under {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeQuickstartTest {

    @Test
    void theQuickstartServesExecuteCodeToAnMcpClient(@TempDir Path work) throws Exception {
        ReadmeSnippet quickstart = ReadmeSnippet.under(Path.of("README.md"), "## Quickstart");
        assertThat(quickstart.compileAndRun(work, "McpQuickstart")).isEqualTo("stdout:\n45\n");
    }
}
