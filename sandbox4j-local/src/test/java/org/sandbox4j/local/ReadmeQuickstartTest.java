package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.ReadmeSnippet;

/**
 * The README's quickstart compiles and runs exactly as written, against a real bubblewrap sandbox:
 * the greeting it prints comes from python3 inside the guest. Its default state root lands under
 * {@code target/} (the build points {@code XDG_STATE_HOME} there).
 */
class ReadmeQuickstartTest {

    private static final int MOST_LINES = 25;

    @Test
    void theQuickstartCompilesAndRunsInABubblewrapSandbox(@TempDir Path work) throws Exception {
        ReadmeSnippet quickstart = ReadmeSnippet.under(Path.of("..", "README.md"), "## Quickstart");
        assertThat(quickstart.source().lines().count()).as("the quickstart stays short").isLessThanOrEqualTo(MOST_LINES);
        assertThat(quickstart.compileAndRun(work, "Quickstart")).isEqualTo("hi from " + BwrapLayout.GUEST_HOSTNAME + "\n");
    }
}
