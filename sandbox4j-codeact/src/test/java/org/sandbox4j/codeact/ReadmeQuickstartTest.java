package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.ReadmeSnippet;

/**
 * The module README's quickstart compiles and runs as written: {@code execute_code} of
 * {@code print(sum(range(10)))} in a real bubblewrap sandbox prints the reference's report. Its
 * default state root lands under {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeQuickstartTest {

    @Test
    void theQuickstartRunsExecuteCodeInABubblewrapSandbox(@TempDir Path work) throws Exception {
        ReadmeSnippet quickstart = ReadmeSnippet.under(Path.of("README.md"), "## Quickstart");
        assertThat(quickstart.compileAndRun(work, "ExecuteCode")).isEqualTo("stdout:\n45\n");
    }
}
