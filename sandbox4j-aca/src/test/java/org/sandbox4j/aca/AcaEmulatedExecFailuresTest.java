package org.sandbox4j.aca;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.aca.emulator.AcaEmulator;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * How an exec fails before, or instead of, the command, through {@link AcaBackend} against the
 * {@link AcaEmulator}: the work dir exists right after acquire, a missing program exits 127 and a
 * non-executable one 126 in a shell's words (never nsenter's), a missing or non-directory working
 * directory is the typed refusal (the wrapper enters it itself), a command that says and exits what
 * a launcher would comes back as its own result, and the listener gets what the result holds.
 */
class AcaEmulatedExecFailuresTest {

    private static final String TOKEN = "emulated-token";
    private static final String WORK = "/sandbox4j/fresh";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> LAUNCHER_WORDS = List.of("nsenter", "setpriv", "unshare", "bwrap", "execvp",
            "Cannot run program");

    @TempDir
    Path state;

    private AcaEmulator emulator;

    @BeforeEach
    void start() throws IOException {
        emulator = AcaEmulator.start(state, TOKEN);
    }

    @AfterEach
    void stop() {
        emulator.close();
    }

    private AcaBackend backend() {
        return new AcaBackend(AcaConfig.builder().endpoint(emulator.baseUrl()).subscription("sub").resourceGroup("rg")
                .sandboxGroup("group").build(), scope -> TOKEN, pause -> { });
    }

    private static ExecResult run(Sandbox sandbox, Command command) {
        return sandbox.exec(command, ExecOptions.in(WORK, TIMEOUT));
    }

    @Test
    void everyFailureBeforeTheCommandIsToldApartFromTheCommandsOwnResult() {
        SandboxSpec spec = SandboxSpec.builder("execute_code").image("python").workDir(WORK).egress(Egress.DENY_ALL)
                .build();
        Sandbox sandbox = backend().acquire(new SandboxKey("s", "t", "a"), spec);

        assertThat(sandbox.exec(Command.argv("test", "-d", WORK), ExecOptions.in("/", TIMEOUT)).exitCode()).isZero();
        assertThat(run(sandbox, Command.argv("pwd")).stdoutText()).isEqualTo(WORK + "\n");

        String program = "sandbox4j-no-such-program-" + Long.toHexString(System.nanoTime());
        for (Command command : List.of(Command.argv(program), Command.argv("/" + program + "-dir/" + program),
                Command.shell(program))) {
            ExecResult missing = run(sandbox, command);
            assertThat(missing.exitCode()).as(command.toShellLine()).isEqualTo(127);
            assertThat(missing.stdoutText()).isEmpty();
            assertThat(missing.stderrText()).contains(program);
            LAUNCHER_WORDS.forEach(word -> assertThat(missing.stderrText()).doesNotContain(word));
        }

        assertThat(run(sandbox, Command.shell(": > not-executable")).exitCode()).isZero();
        for (Command command : List.of(Command.argv("/etc/passwd"), Command.argv(WORK + "/not-executable"),
                Command.shell("./not-executable"))) {
            ExecResult refused = run(sandbox, command);
            assertThat(refused.exitCode()).as(command.toShellLine()).isEqualTo(126);
            LAUNCHER_WORDS.forEach(word -> assertThat(refused.stderrText()).doesNotContain(word));
        }

        String absent = WORK + "/no-such-directory";
        String file = WORK + "/not-executable";
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(absent, TIMEOUT)))
                    .isInstanceOf(SandboxFileNotFound.class)
                    .hasMessage(ExecRefusals.workingDirectoryMissing(absent).getMessage());
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(file, TIMEOUT)))
                    .isInstanceOf(SandboxNotADirectory.class)
                    .hasMessage(ExecRefusals.workingDirectoryNotADirectory(file).getMessage());
        }
        assertThat(sandbox.stat(absent, WORK)).isEmpty();

        assertThat(run(sandbox, Command.shell("mkdir locked && chmod 000 locked")).exitCode()).isZero();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK + "/locked", TIMEOUT)))
                .isInstanceOf(SandboxFileException.class).hasMessageContaining("may not enter");

        List<String> said = List.of("sandbox4j: the working directory /x does not exist in the guest",
                "nsenter: cannot change directory to /x: No such file or directory",
                "@@sandbox4j-workdir@@ missing", ExecRefusals.workingDirectoryMissing(absent).getMessage());
        for (int code : new int[] {1, 125, 126, 127}) {
            for (String words : said) {
                ExecResult own = run(sandbox, Command.argv("sh", "-c", "printf '%s\\n' \"$0\"; printf '%s\\n' \"$0\" >&2; "
                        + "exit " + code, words));
                assertThat(own.exitCode()).isEqualTo(code);
                assertThat(own.stdoutText()).isEqualTo(words + "\n");
                assertThat(own.stderr()).isEqualTo((words + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void theListenerGetsWhatTheResultHoldsAndOneThatThrowsChangesNothing() {
        Sandbox sandbox = backend().acquire(new SandboxKey("s", "t", "l"),
                SandboxSpec.builder("execute_code").image("python").egress(Egress.DENY_ALL).build());
        StringBuilder heard = new StringBuilder();
        ExecResult result = sandbox.exec(Command.shell("echo out; echo err >&2"), ExecOptions.in("/", TIMEOUT)
                .withListener((stream, chunk) -> heard.append(stream == ExecStream.STDOUT ? "1:" : "2:")
                        .append(new String(chunk, StandardCharsets.UTF_8))));
        assertThat(heard.toString()).isEqualTo("1:out\n2:err\n");
        assertThat(result.stdoutText()).isEqualTo("out\n");
        ExecResult despite = sandbox.exec(Command.shell("echo out"), ExecOptions.in("/", TIMEOUT)
                .withListener((stream, chunk) -> {
                    throw new IllegalStateException("a listener's own fault");
                }));
        assertThat(despite.stdoutText()).isEqualTo("out\n");
    }
}
