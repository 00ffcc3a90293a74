package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.core.Capability;
import org.sandbox4j.testkit.tck.FlawedExecTarget.ExecFlaw;
import org.sandbox4j.testkit.tck.reference.NamespaceShellTarget;

/**
 * Each EXEC probe can fail: a correct target with one exec behaviour broken fails the probes that
 * attack it. Only those probes run, to keep the test short; the full-suite runs are in
 * {@code reference.ExecSuiteTest}.
 */
class ExecSuiteFlawsTest {

    @TempDir
    Path base;

    @ParameterizedTest
    @EnumSource(ExecFlaw.class)
    void aBrokenExecFailsTheProbesThatAttackIt(ExecFlaw flaw) {
        Set<String> attacking = attackedBy(flaw);
        Suite only = Suite.builder(ExecSuite.NAME).gate(Capability.EXEC)
                .probes(ExecSuite.suite().probes().stream().filter(p -> attacking.contains(p.name())).toList())
                .build();
        assertThat(only.probes()).hasSize(attacking.size());

        ConformanceReport report = Conformance.run(new FlawedExecTarget(NamespaceShellTarget.create(base), flaw), only);

        assertThat(report.failures()).as(report.results().toString()).extracting(ProbeResult::probe)
                .containsExactlyInAnyOrderElementsOf(attacking);
        if (flaw == ExecFlaw.ARGV_THROUGH_SHELL) {
            assertThat(report.result("argv-is-quoted").detail()).contains("run by a shell", "argv-injected");
        }
    }

    private static Set<String> attackedBy(ExecFlaw flaw) {
        return switch (flaw) {
            case ARGV_THROUGH_SHELL -> Set.of("argv-is-quoted");
            case MERGES_STREAMS -> Set.of("stdout-and-stderr-are-kept-apart-byte-exactly",
                    "a-listener-receives-exactly-the-output", "parallel-execs-return-their-own-output");
            case CUTS_AT_NUL -> Set.of("stdout-and-stderr-are-kept-apart-byte-exactly", "stdin-is-delivered");
            case FLATTENS_EXIT_CODES -> Set.of("exit-code-fidelity", "parallel-execs-return-their-own-output");
            case LAX_OUTPUT_CAP -> Set.of("output-past-the-cap-is-refused", "the-cap-counts-both-streams-together");
            case DROPS_ENVIRONMENT -> Set.of("environment-given-to-exec-is-seen", "the-host-environment-does-not-leak");
            case DROPS_STDIN -> Set.of("stdin-is-delivered", "a-large-stdin-streams-without-deadlock");
            case SILENT_LISTENER -> Set.of("a-listener-receives-exactly-the-output");
            case RUNS_ONE_LEVEL_UP -> Set.of("working-directory-is-honoured",
                    "a-missing-working-directory-is-a-clear-error");
            case LATE_TIMEOUT -> Set.of("a-timeout-raises-timeout-error", "a-timeout-kills-the-whole-tree");
        };
    }

}
