package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.spi.PosixShell;

/** The exec wrapper run by this machine's sh, as executeShellCommand would run it. */
class AcaExecScriptTest {

    @TempDir
    Path work;

    private String run(String line) throws Exception {
        Process process = new ProcessBuilder("sh", "-c", line).directory(work.toFile()).redirectErrorStream(false).start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void argvIsJoinedWithPosixQuoting() {
        Command command = Command.argv(List.of("printf", "%s", "it's $HOME; `x`"));
        assertThat(command.toShellLine()).isEqualTo(PosixShell.join(List.of("printf", "%s", "it's $HOME; `x`")));
        String line = AcaExecScript.line(command.toShellLine(), work.toString(), Map.of("GIVEN", "a'b"), Duration.ofSeconds(5), 100,
                Optional.empty());
        assertThat(line).startsWith("exec 'sh' '-c' ").contains(PosixShell.quote("export GIVEN='a'\\''b'; "));
    }

    @Test
    void theCallersEnvironmentReachesOnlyTheCommandSoItsPathNeverBreaksTheWrapper() throws Exception {
        String line = AcaExecScript.line("printf '%s|%s' \"$PATH\" \"$GIVEN\"", work.toString(),
                Map.of("PATH", "/nonexistent", "GIVEN", "a'b $x"), Duration.ofSeconds(10), 1000, Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.stdout()).asString().isEqualTo("/nonexistent|a'b $x");
        assertThat(finished.exitCode()).isZero();
    }

    @Test
    void everyByteOfBothStreamsSurvives() throws Exception {
        String line = AcaExecScript.line("printf '\\000\\377\\n'; printf 'err\\001' >&2; exit 3", work.toString(), Map.of(),
                Duration.ofSeconds(10), 1000, Optional.empty());
        AcaExecScript.Outcome outcome = AcaExecScript.parse(run(line));
        assertThat(outcome).isInstanceOf(AcaExecScript.Finished.class);
        AcaExecScript.Finished finished = (AcaExecScript.Finished) outcome;
        assertThat(finished.stdout()).containsExactly(0, 0xff - 256, '\n');
        assertThat(finished.stderr()).containsExactly('e', 'r', 'r', 1);
        assertThat(finished.exitCode()).isEqualTo(3);
    }

    @Test
    void stdinComesFromTheUploadedFileWhichIsThenRemoved() throws Exception {
        Path input = work.resolve("stdin");
        Files.write(input, new byte[] {1, 2, 3, 0, 10});
        String line = AcaExecScript.line("cat", work.toString(), Map.of(), Duration.ofSeconds(10), 1000, Optional.of(input.toString()));
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.stdout()).containsExactly(1, 2, 3, 0, 10);
        assertThat(input).doesNotExist();
    }

    @Test
    void noStdinMeansEndOfInput() throws Exception {
        String line = AcaExecScript.line("cat", work.toString(), Map.of(), Duration.ofSeconds(10), 1000, Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.stdout()).isEmpty();
        assertThat(finished.exitCode()).isZero();
    }

    @Test
    void theTimeoutKillsTheWholeGroup() throws Exception {
        Path marker = work.resolve("survivor");
        String line = AcaExecScript.line("(sleep 2; touch " + PosixShell.quote(marker.toString()) + ") & sleep 30",
                work.toString(), Map.of(), Duration.ofMillis(500), 1000, Optional.empty());
        long started = System.nanoTime();
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(finished.killed()).isTrue();
        assertThat(finished.exitCode()).isEqualTo(137);
        Thread.sleep(2500);
        assertThat(marker).doesNotExist();
    }

    @Test
    void theTimeoutAlsoKillsChildrenThatLeftTheGroup() throws Exception {
        Path marker = work.resolve("setsid-survivor");
        String line = AcaExecScript.line("setsid sh -c 'sleep 2; touch " + marker + "' & sleep 30",
                work.toString(), Map.of(), Duration.ofMillis(500), 1000, Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.killed()).isTrue();
        Thread.sleep(2500);
        assertThat(marker).doesNotExist();
    }

    @Test
    void aCommandsOwnExit137Or124IsAnOrdinaryResultNotAKill() throws Exception {
        for (int code : new int[] {137, 124}) {
            String line = AcaExecScript.line("echo before; exit " + code, work.toString(), Map.of(), Duration.ofSeconds(10), 1000,
                    Optional.empty());
            AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
            assertThat(finished.exitCode()).as("exit " + code).isEqualTo(code);
            assertThat(finished.killed()).as("exit " + code).isFalse();
            assertThat(finished.stdout()).asString().isEqualTo("before\n");
        }
        // A command killed by a signal it sent itself is recorded as finished, with the shell's 128 + 9.
        AcaExecScript.Finished selfKilled = (AcaExecScript.Finished) AcaExecScript.parse(run(AcaExecScript.line(
                "sh -c 'kill -KILL $$'", work.toString(), Map.of(), Duration.ofSeconds(10), 1000, Optional.empty())));
        assertThat(selfKilled.exitCode()).isEqualTo(137);
        assertThat(selfKilled.killed()).isFalse();
    }

    @Test
    void aCommandThatEndsLeavesItsBackgroundChildrenRunning() throws Exception {
        Path marker = work.resolve("background");
        String line = AcaExecScript.line("setsid sh -c 'sleep 1; touch " + marker + "' >/dev/null 2>&1 &",
                work.toString(), Map.of(), Duration.ofSeconds(10), 1000, Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.exitCode()).isZero();
        Thread.sleep(2000);
        assertThat(marker).exists();
    }

    @Test
    void outputPastTheCapIsRefusedPromptly() throws Exception {
        String line = AcaExecScript.line("yes endless", work.toString(), Map.of(), Duration.ofSeconds(30), 1024 * 1024,
                Optional.empty());
        long started = System.nanoTime();
        assertThat(AcaExecScript.parse(run(line))).isInstanceOf(AcaExecScript.Capped.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void outputOfExactlyTheCapIsKept() throws Exception {
        String line = AcaExecScript.line("head -c 1000 /dev/zero", work.toString(), Map.of(), Duration.ofSeconds(10), 1000,
                Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.stdout()).hasSize(1000);
    }

    @Test
    void aWorkingDirectoryTheWrapperCannotEnterIsItsFirstLineAndNothingRuns() throws Exception {
        Path marker = work.resolve("ran");
        Path file = Files.writeString(work.resolve("a-file"), "x");
        Path dangling = Files.createSymbolicLink(work.resolve("dangling"), work.resolve("nowhere"));
        Path stdin = Files.writeString(work.resolve("stdin"), "in");
        for (Map.Entry<Path, String> expected : Map.of(work.resolve("absent"), AcaExecScript.WORKDIR_MISSING, dangling,
                AcaExecScript.WORKDIR_MISSING, file, AcaExecScript.WORKDIR_NOT_A_DIRECTORY).entrySet()) {
            String line = AcaExecScript.line("touch " + PosixShell.quote(marker.toString()), expected.getKey().toString(),
                    Map.of(), Duration.ofSeconds(10), 1000, Optional.of(stdin.toString()));
            assertThat(AcaExecScript.parse(run(line))).isEqualTo(new AcaExecScript.WorkingDirectory(expected.getValue()));
            assertThat(marker).doesNotExist();
            assertThat(stdin).as("the uploaded stdin is removed all the same").doesNotExist();
            Files.writeString(stdin, "in");
        }
        assertThat(work.resolve("absent")).doesNotExist();
    }

    @Test
    void theCommandRunsInTheWorkingDirectoryAndItsOwnWordsAreNeverTheMarker() throws Exception {
        Path inner = Files.createDirectory(work.resolve("inner"));
        String forged = AcaExecScript.WORKDIR + " " + AcaExecScript.WORKDIR_MISSING;
        String line = AcaExecScript.line("pwd; echo " + PosixShell.quote(forged) + "; exit 125", inner.toString(),
                Map.of(), Duration.ofSeconds(10), 1000, Optional.empty());
        AcaExecScript.Finished finished = (AcaExecScript.Finished) AcaExecScript.parse(run(line));
        assertThat(finished.stdout()).asString().isEqualTo(inner.toRealPath() + "\n" + forged + "\n");
        assertThat(finished.exitCode()).isEqualTo(125);
    }
}
