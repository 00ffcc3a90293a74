package org.sandbox4j.testkit.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.ExecSuite;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;

/**
 * The EXEC suite against the reference backend: the correct instance passes every probe, and each
 * backend flaw fails exactly the probe that attacks it.
 */
class ExecSuiteTest {

    private static final String TREE_KILL_PROBE = "a-timeout-kills-the-whole-tree";

    @TempDir
    Path base;

    @AfterEach
    void killEscapedChildren() throws IOException {
        // Every guest command line of a run names its working directory, which lies under base.
        ProcessCleanup.killProcessesMentioning(base.toRealPath().toString());
    }

    @Test
    void theCorrectBackendPassesEveryProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base), ExecSuite.suite());

        report.assertPassed();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed()).hasSameSizeAs(ExecSuite.suite().probes());
    }

    @Test
    void leakingTheHostEnvironmentFailsExactlyTheHostEnvironmentProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.LEAKS_HOST_ENVIRONMENT),
                ExecSuite.suite());

        assertThat(report.failures()).extracting(ProbeResult::probe)
                .containsExactly("the-host-environment-does-not-leak");
        assertThat(report.result("the-host-environment-does-not-leak").detail())
                .contains(ExecSuite.HOST_SENTINEL_VARIABLE);
    }

    /** Only the fresh-work-dir probe acquires without the runner's mkdir: every other probe still passes. */
    @Test
    void leavingTheWorkDirUnmadeFailsExactlyTheWorkDirProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.LEAVES_WORK_DIR_UNMADE),
                ExecSuite.suite());

        assertThat(report.failures()).extracting(ProbeResult::probe)
                .containsExactly("the-working-directory-exists-after-acquire");
        assertThat(report.result("the-working-directory-exists-after-acquire").detail()).contains("test -d");
    }

    @Test
    void killingOnlyTheDirectChildFailsExactlyTheTreeKillProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.KILLS_ONLY_DIRECT_CHILD),
                ExecSuite.suite());

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly(TREE_KILL_PROBE);
        assertThat(report.result(TREE_KILL_PROBE).detail()).contains("double-forked", "setsid", "signal-ignoring");
    }
}
