package org.sandbox4j.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.ReadmeSnippet;

/**
 * The module README's examples compile and run as written, on a real bubblewrap sandbox. Their
 * default state root lands under {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeExamplesTest {

    private static final Path README = Path.of("README.md");

    @Test
    void theQuickstartRunsExecuteCodeForAnAiService(@TempDir Path work) throws Exception {
        ReadmeSnippet quickstart = ReadmeSnippet.under(README, "## Quickstart");
        assertThat(quickstart.compileAndRun(work, "Lc4jQuickstart")).isEqualTo("The program said: stdout:\n45\n");
    }

    @Test
    void theEngineExampleRunsCodeInASandbox(@TempDir Path work) throws Exception {
        ReadmeSnippet engine = ReadmeSnippet.under(README, "## CodeExecutionEngine");
        assertThat(engine.source()).contains("was: CodeExecutionEngine engine = new GraalVmPythonExecutionEngine();");
        assertThat(engine.compileAndRun(work, "EngineQuickstart")).isEqualTo("stdout:\n42\n");
    }
}
