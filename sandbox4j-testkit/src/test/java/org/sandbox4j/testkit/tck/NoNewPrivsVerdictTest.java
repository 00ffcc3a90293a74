package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecResult;

/**
 * The verdict of {@code the-guest-cannot-gain-privileges}: the status file's NoNewPrivs line when
 * the kernel prints one, prctl's answer only when it does not, and a failure whenever neither
 * shows the flag set. (The probe runs against real guests in every backend's conformance test;
 * this pins the rule for the one status file real kernels here cannot produce: gVisor's.)
 */
class NoNewPrivsVerdictTest {

    private static final Map<String, String> LINE_SET = Map.of("CapEff", "0", "NoNewPrivs", "1");
    private static final Map<String, String> LINE_CLEAR = Map.of("CapEff", "0", "NoNewPrivs", "0");
    private static final Map<String, String> NO_LINE = Map.of("CapEff", "0");

    @Test
    void theStatusLineDecidesWhenThereIsOne() {
        assertThatCode(() -> IsolationSuite.noNewPrivsShownSet(LINE_SET, Optional.empty())).doesNotThrowAnyException();
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(LINE_CLEAR, Optional.empty()))
                .hasMessageContaining("NoNewPrivs: expected \"1\"");
        // A prctl answer never overrides a line that says the flag is clear.
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(LINE_CLEAR, Optional.of(result(0, "1\n", ""))))
                .hasMessageContaining("NoNewPrivs: expected \"1\"");
    }

    @Test
    void withoutTheLinePrctlMustAnswerOne() {
        assertThatCode(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE, Optional.of(result(0, "1\n", ""))))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE, Optional.of(result(0, "0\n", ""))))
                .hasMessageContaining("prctl(PR_GET_NO_NEW_PRIVS)").hasMessageContaining("\"0\"");
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE, Optional.of(result(0, "-1\n", ""))))
                .hasMessageContaining("\"-1\"");
    }

    @Test
    void withoutTheLineAndWithoutAnAnswerTheFlagIsNotShown() {
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE, Optional.empty()))
                .hasMessageContaining("cannot be shown to be set");
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE, Optional.of(result(127, "", ""))))
                .hasMessageContaining("no python3");
        assertThatThrownBy(() -> IsolationSuite.noNewPrivsShownSet(NO_LINE,
                Optional.of(result(1, "", "Traceback: AttributeError: prctl")))).hasMessageContaining("AttributeError");
    }

    private static ExecResult result(int exit, String stdout, String stderr) {
        return new ExecResult(stdout.getBytes(StandardCharsets.UTF_8), stderr.getBytes(StandardCharsets.UTF_8), exit,
                Duration.ofMillis(1));
    }
}
