package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The EXEC suite against a real backend: a correct one passes, each flawed one fails exactly its probe. */
class ExecSuiteTest {

    @TempDir
    Path base;

    /** A correct backend with a real process boundary. */
    static ConformanceTarget honestTarget(Path base) {
        return ThrowawayProcessBackend.target(base, true, true);
    }

    @Test
    void aCorrectBackendPassesEveryProbe() {
        ConformanceReport report = Conformance.run(honestTarget(base), ExecSuite.suite());

        report.assertPassed();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed()).hasSize(ExecSuite.suite().probes().size());
    }

    @Test
    void aBackendLeakingTheHostEnvironmentFailsExactlyTheHostEnvironmentProbe() {
        ConformanceReport report = Conformance.run(ThrowawayProcessBackend.target(base, true, false), ExecSuite.suite());

        assertThat(report.failures()).extracting(ProbeResult::probe)
                .containsExactly("the-host-environment-does-not-leak");
    }

    @Test
    void aBackendKillingOnlyTheDirectChildFailsExactlyTheTreeKillProbe() {
        ConformanceReport report = Conformance.run(ThrowawayProcessBackend.target(base, false, true), ExecSuite.suite());

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly("a-timeout-kills-the-whole-tree");
        assertThat(report.result("a-timeout-kills-the-whole-tree").detail())
                .contains("double-forked", "setsid", "signal-ignoring");
    }
}
