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

    private static final String LAUNCHER_PROBE = "a-launcher-failure-is-never-the-commands-exit";

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
        String launcherFailure = switch (flaw) {
            case RUNTIME_WORDS_AS_STDERR -> "the launcher's words (\"OCI runtime\")";
            case MISSING_PROGRAM_EXITS_ONE -> "the launcher's words (\"bwrap\")";
            case WORKING_DIRECTORY_AS_EXIT_CODE -> "instead of raising SandboxException";
            case GUESSES_LAUNCHER_FAILURE_FROM_STDERR -> "was taken for a launcher failure";
            default -> null;
        };
        if (launcherFailure != null) {
            assertThat(report.result(LAUNCHER_PROBE).detail()).contains(launcherFailure);
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
                    "the-working-directory-exists-after-acquire", "a-non-executable-file-exits-126",
                    "a-missing-working-directory-is-a-clear-error", "a-file-as-the-working-directory-is-not-a-directory",
                    "a-launcher-failure-is-never-the-commands-exit");
            case LATE_TIMEOUT -> Set.of("a-timeout-raises-timeout-error", "a-timeout-kills-the-whole-tree");
            case MISSING_PROGRAM_EXITS_ONE -> Set.of("a-missing-program-exits-127", "a-non-executable-file-exits-126",
                    LAUNCHER_PROBE);
            case RUNTIME_WORDS_AS_STDERR -> Set.of(LAUNCHER_PROBE);
            case WORKING_DIRECTORY_AS_EXIT_CODE -> Set.of("a-missing-working-directory-is-a-clear-error",
                    "a-file-as-the-working-directory-is-not-a-directory", LAUNCHER_PROBE);
            case GUESSES_LAUNCHER_FAILURE_FROM_STDERR -> Set.of(LAUNCHER_PROBE);
        };
    }

}
