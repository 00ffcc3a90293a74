package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * How an exec fails before, or instead of, the command, through the emulator: the work dir exists
 * right after acquire, a missing program exits 127 and a non-executable one 126 in a shell's words
 * (never setpriv's), a missing or non-directory working directory is the typed refusal, and a
 * command that says and exits what a launcher would comes back as its own result.
 */
class SbxEmulatedExecFailuresTest {

    private static final String WORK = "/sandbox4j/fresh";
    private static final SandboxSpec SPEC = SandboxSpec.builder("exec-failures").workDir(WORK).egress(Egress.DENY_ALL)
            .build();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final List<String> LAUNCHER_WORDS = List.of("unshare", "nsenter", "setpriv", "setsid", "execvp",
            "sbx", "Cannot run program");

    @TempDir
    Path state;

    private SbxBackend backend;
    private final SandboxKey key = new SandboxKey("sbx-exec-failures", java.util.UUID.randomUUID().toString(), "agent");

    @BeforeEach
    void emulator() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(SbxConformanceTest.EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
        Path home = Files.createDirectories(state.resolve("emulator"));
        Files.writeString(home.resolve("settings.json"), "{\"ssh.agentForwardingEnabled\": false}");
        backend = new SbxBackend(SbxConfig.builder().sbxPath(SbxConformanceTest.EMULATOR.toString())
                .workspaceRoot(state.resolve("workspaces")).environment("SBX_EMULATOR_HOME", home.toString()).build());
    }

    @AfterEach
    void dispose() {
        if (backend != null) {
            backend.disposeScope(key.scope(), key.threadId());
        }
    }

    private static ExecResult run(Sandbox sandbox, Command command) {
        return sandbox.exec(command, ExecOptions.in(WORK, TIMEOUT));
    }

    @Test
    void everyFailureBeforeTheCommandIsToldApartFromTheCommandsOwnResult() {
        Sandbox sandbox = backend.acquire(key, SPEC);

        // The work dir exists before anything was written, seen from / and as the working directory.
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

        // A directory its user may not enter: nothing ran, and it is no exit code either.
        assertThat(run(sandbox, Command.shell("mkdir locked && chmod 000 locked")).exitCode()).isZero();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK + "/locked", TIMEOUT)))
                .isInstanceOf(SandboxFileException.class).hasMessageContaining("may not enter");

        // A command that itself says a launcher's words, or the refusal's, and exits its codes is its own result.
        List<String> said = List.of("sandbox4j: the working directory /x does not exist in the guest",
                "setpriv: failed to execute x: No such file or directory",
                ExecRefusals.workingDirectoryMissing(absent).getMessage());
        for (int code : new int[] {1, 125, 126, 127}) {
            for (String words : said) {
                ExecResult own = run(sandbox, Command.argv("sh", "-c", "printf '%s\\n' \"$0\" >&2; exit " + code,
                        words));
                assertThat(own.exitCode()).isEqualTo(code);
                assertThat(own.stderr()).isEqualTo((words + "\n").getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void anSbxThatCannotBeStartedIsTheHostsFaultAndNamesTheFix() throws IOException {
        Path bin = Files.createDirectories(state.resolve("bin"));
        Path sbx = Files.copy(SbxConformanceTest.EMULATOR, bin.resolve("sbx"));
        Path away = bin.resolve("sbx.away");
        SbxBackend own = new SbxBackend(SbxConfig.builder().sbxPath(sbx.toString())
                .workspaceRoot(state.resolve("own-workspaces"))
                .environment("SBX_EMULATOR_HOME", state.resolve("emulator").toString()).build());
        try {
            Sandbox sandbox = own.acquire(key, SPEC);
            Files.move(sbx, away);
            try {
                assertThatThrownBy(() -> run(sandbox, Command.argv("true")))
                        .isExactlyInstanceOf(org.sandbox4j.core.SandboxException.class)
                        .hasMessageContaining("could not start " + sbx)
                        .hasMessageContaining("SbxConfig.builder().sbxPath(path)");
            } finally {
                Files.move(away, sbx);
            }
        } finally {
            own.disposeScope(key.scope(), key.threadId());
        }
    }
}
