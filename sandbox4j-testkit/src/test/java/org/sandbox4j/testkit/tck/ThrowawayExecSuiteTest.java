package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ThrowawayExecSuiteTest {

    @TempDir
    Path base;

    @Test
    void correct() {
        ConformanceReport report = Conformance.run(ThrowawayProcessBackend.target(base, true, true), ExecSuite.suite());
        report.results().forEach(r -> System.out.println(r.outcome() + " " + r.probe() + " " + r.detail()));
        report.assertPassed();
    }

    @Test
    void flawed() {
        ConformanceReport report = Conformance.run(ThrowawayProcessBackend.target(base, false, false), ExecSuite.suite());
        report.results().forEach(r -> System.out.println(r.outcome() + " " + r.probe() + " " + r.detail()));
        assertThat(report.failures()).extracting(ProbeResult::probe)
                .containsExactlyInAnyOrder("the-host-environment-does-not-leak", "a-timeout-kills-the-whole-tree");
    }
}
