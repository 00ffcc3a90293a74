package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.PosixShell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.fakes.RecordedCommand;
import org.sandbox4j.core.fakes.ScriptedSandbox;

class GuestPathReclaimTest {

    private static final String WD = "/sandbox4j/work";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void aCallPathIsRemovedWithRmFromTheRoot() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        Optional<String> reason = GuestPathReclaim.reclaim(sandbox, "call-1f2e3d", WD, TIMEOUT);

        assertThat(reason).isEmpty();
        assertThat(sandbox.commands()).singleElement().satisfies(command -> {
            assertThat(command.command()).isEqualTo(Command.shell("rm -rf '/sandbox4j/work/call-1f2e3d'"));
            assertThat(command.workingDirectory()).isEqualTo("/");
            assertThat(command.timeout()).isEqualTo(TIMEOUT);
        });
    }

    @Test
    void anAbsolutePathInsideIsAccepted() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, WD + "/sub/../call", WD, TIMEOUT)).isEmpty();
        assertThat(sandbox.commands()).extracting(RecordedCommand::shellLine)
                .containsExactly("rm -rf '/sandbox4j/work/call'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"x'; rm -rf / #", "$(reboot)", "`id`", "a b\tc", "it's"})
    void hostileNamesAreQuotedNeverInterpreted(String name) {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, name, WD, TIMEOUT)).isEmpty();
        assertThat(sandbox.commands()).extracting(RecordedCommand::shellLine)
                .containsExactly("rm -rf " + PosixShell.quote(WD + "/" + name));
    }

    @ParameterizedTest
    @ValueSource(strings = {"../elsewhere", "/etc", "/sandbox4j/work-outside/x", "sub/../../x"})
    void aPathOutsideIsLeftWithTheConfinementMessageAndNothingRuns(String path) {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        Optional<String> reason = GuestPathReclaim.reclaim(sandbox, path, WD, TIMEOUT);

        assertThat(reason).get().asString().contains("resolves outside the working directory");
        assertThat(sandbox.commands()).isEmpty();
    }

    @Test
    void aBackslashIsLeftAndNothingRuns() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "a\\b", WD, TIMEOUT)).get().asString().contains("backslash");
        assertThat(sandbox.commands()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {".", "", "/sandbox4j/work", "/sandbox4j/work/", "sub/.."})
    void theWorkingDirectoryItselfIsLeftAndNothingRuns(String path) {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, path, WD, TIMEOUT)).get().asString()
                .contains("is the working directory itself");
        assertThat(sandbox.commands()).isEmpty();
    }

    @Test
    void aPathOneComponentFromTheRootIsLeftAndNothingRuns() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "tmp", "/", TIMEOUT)).get().asString()
                .contains("too close to the root");
        assertThat(sandbox.commands()).isEmpty();
    }

    @Test
    void twoComponentsFromTheRootIsDeepEnough() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "tmp/call", "/", TIMEOUT)).isEmpty();
        assertThat(sandbox.commands()).extracting(RecordedCommand::shellLine).containsExactly("rm -rf '/tmp/call'");
    }

    @Test
    void aGuestRefusalBecomesTheReasonWithItsStderr() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder()
                .output("rm -rf", ExecResult.of("", "rm: cannot remove 'x': Permission denied\n", 1, Duration.ZERO))
                .build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT))
                .contains("the guest refused it: rm exited 1 — 'rm: cannot remove 'x': Permission denied'");
    }

    @Test
    void aGuestRefusalWithoutStderrNamesTheExitCodeAlone() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder()
                .output("rm -rf", ExecResult.of("", "", 2, Duration.ZERO)).build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT)).contains("the guest refused it: rm exited 2");
    }

    @Test
    void hugeGuestStderrIsCut() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder()
                .output("rm -rf", ExecResult.of("", "e".repeat(10_000), 1, Duration.ZERO)).build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT)).get().asString()
                .hasSizeLessThan(GuestText.MAX_QUOTED_CHARS + 100).endsWith("(truncated)");
    }

    @Test
    void aTransportFailureBecomesTheReason() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder()
                .raises(new SandboxException("connection reset by the provider")).build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT))
                .contains("the removal call failed: SandboxException: connection reset by the provider");
    }

    @Test
    void aTimeoutBecomesTheReason() {
        ScriptedSandbox sandbox = ScriptedSandbox.builder().raises(new SandboxTimeoutException("30 s passed")).build();

        assertThat(GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT)).get().asString()
                .startsWith("the removal call failed: SandboxTimeoutException");
    }

    @Test
    void cancellationPropagates() {
        SandboxInterrupted interrupted = new SandboxInterrupted("cancelled");
        ScriptedSandbox sandbox = ScriptedSandbox.builder().raises(interrupted).build();

        assertThatThrownBy(() -> GuestPathReclaim.reclaim(sandbox, "call", WD, TIMEOUT)).isSameAs(interrupted);
    }

    @Test
    void aReclaimFailureCarriesWhatWasLeftAndWhy() {
        SandboxKey key = new SandboxKey("tenant", "thread-7", "agent");
        ReclaimFailure failure = new ReclaimFailure("execute_code", key, WD + "/call", "the guest refused it: rm exited 1");

        assertThat(failure.key()).isEqualTo(key);
        assertThatThrownBy(() -> new ReclaimFailure("execute_code", key, WD + "/call", null))
                .isInstanceOf(NullPointerException.class);
    }
}
