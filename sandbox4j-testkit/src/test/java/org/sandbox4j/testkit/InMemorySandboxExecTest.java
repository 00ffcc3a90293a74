package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.WORK;
import static org.sandbox4j.testkit.Fixtures.text;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxInterrupted;

class InMemorySandboxExecTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final ExecOptions IN_WORK = ExecOptions.in(WORK, BOUND);

    @Test
    void everyCallIsRecordedInOrderWithItsQuotedShellLineAndOptions() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();
        ExecOptions elsewhere = ExecOptions.in("/tmp", Duration.ofSeconds(3)).withEnvironment(Map.of("A", "b"));

        sandbox.exec(Command.argv("printf", "%s", "a b$(echo injected)c"), IN_WORK);
        sandbox.exec(Command.shell("exit 7"), elsewhere);

        List<RecordedCommand> commands = sandbox.commands();
        assertThat(commands).hasSize(2);
        assertThat(commands.get(0).shellLine()).isEqualTo("'printf' '%s' 'a b$(echo injected)c'");
        assertThat(commands.get(0).command()).isEqualTo(Command.argv("printf", "%s", "a b$(echo injected)c"));
        assertThat(commands.get(0).workingDirectory()).isEqualTo(WORK);
        assertThat(commands.get(0).timeout()).isEqualTo(BOUND);
        assertThat(commands.get(1).shellLine()).isEqualTo("exit 7");
        assertThat(commands.get(1).options()).isEqualTo(elsewhere);
        assertThat(commands.get(1).workingDirectory()).isEqualTo("/tmp");
    }

    @Test
    void theFirstScriptedKeyInInsertionOrderWins() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("python", "from python")
                .output("python3 -c", "more specific, but added later")
                .output("exit", ExecResult.of("", "bye", 7, Duration.ZERO))
                .build();

        assertThat(sandbox.exec(Command.shell("python3 -c 'print(1)'"), IN_WORK).stdoutText()).isEqualTo("from python");
        ExecResult exited = sandbox.exec(Command.shell("exit 7"), IN_WORK);
        assertThat(exited.exitCode()).isEqualTo(7);
        assertThat(exited.stderrText()).isEqualTo("bye");
    }

    @Test
    void matchingIsAgainstTheQuotedShellLine() {
        InMemorySandbox sandbox = InMemorySandbox.builder().output("'cat' 'a.txt'", "contents").build();

        assertThat(sandbox.exec(List.of("cat", "a.txt"), WORK, BOUND).stdoutText()).isEqualTo("contents");
    }

    @Test
    void noMatchAnswersTheDefaultStdoutWithExitZero() {
        InMemorySandbox quiet = InMemorySandbox.builder().output("never", "x").build();
        InMemorySandbox chatty = InMemorySandbox.builder().defaultStdout("fallback").build();

        assertThat(quiet.exec(Command.shell("true"), IN_WORK)).isEqualTo(ExecResult.of("", "", 0, Duration.ZERO));
        assertThat(chatty.exec(Command.shell("true"), IN_WORK)).isEqualTo(ExecResult.of("fallback", "", 0, Duration.ZERO));
    }

    @Test
    void raisesThrowsFromExecAfterRecordingTheCall() {
        SandboxInterrupted error = new SandboxInterrupted("cancelled");
        InMemorySandbox sandbox = InMemorySandbox.builder().output("true", "matched").raises(error).build();

        assertThatThrownBy(() -> sandbox.exec(Command.shell("true"), IN_WORK)).isSameAs(error);

        assertThat(sandbox.commands()).extracting(RecordedCommand::shellLine).containsExactly("true");
    }

    @Test
    void outputUpToTheCapIsReturned() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("both", ExecResult.of("12345", "678", 0, Duration.ZERO)).build();

        assertThat(sandbox.exec(Command.shell("both"), IN_WORK.withOutputCap(8)).stdoutText()).isEqualTo("12345");
    }

    @Test
    void outputBeyondTheCapIsRefusedAndTheListenerGetsOnlyTheCap() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("both", ExecResult.of("12345", "678", 0, Duration.ZERO)).build();
        List<String> chunks = new ArrayList<>();
        ExecOptions options = IN_WORK.withOutputCap(6).withListener((stream, chunk) -> chunks.add(stream + ":" + text(chunk)));

        assertThatThrownBy(() -> sandbox.exec(Command.shell("both"), options))
                .isInstanceOf(SandboxExecOutputLimitExceeded.class)
                .hasMessageContaining("8 bytes")
                .hasMessageContaining("cap of 6 bytes")
                .hasMessageContaining("withOutputCap");
        assertThat(chunks).containsExactly("STDOUT:12345", "STDERR:6");
        assertThat(sandbox.commands()).hasSize(1);
    }

    @Test
    void theListenerReceivesBothStreamsAndNothingForAnEmptyOne() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("both", ExecResult.of("out", "err", 0, Duration.ZERO))
                .output("quiet", "only out")
                .build();
        List<String> chunks = new ArrayList<>();
        ExecOptions options = IN_WORK.withListener((stream, chunk) -> chunks.add(stream + ":" + text(chunk)));

        sandbox.exec(Command.shell("both"), options);
        sandbox.exec(Command.shell("quiet"), options);

        assertThat(chunks).containsExactly("STDOUT:out", "STDERR:err", "STDOUT:only out");
    }

    @Test
    void aFailingListenerDoesNotStopTheCommand() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("both", ExecResult.of("out", "err", 3, Duration.ZERO)).build();
        List<ExecStream> seen = new ArrayList<>();
        ExecOptions options = IN_WORK.withListener((stream, chunk) -> {
            seen.add(stream);
            throw new IllegalStateException("listener broke");
        });

        ExecResult result = sandbox.exec(Command.shell("both"), options);

        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(seen).containsExactly(ExecStream.STDOUT, ExecStream.STDERR);
    }
}
