package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * How an exec fails before, or instead of, its command, on each engine: the work dir exists once
 * {@code acquire} returns (and a link the guest put there is never followed to make it), a missing
 * program exits 127 and a non-executable one 126, a missing working directory or a file in its
 * place is {@link ExecRefusals}' typed refusal, and the engine's failure to start the command is a
 * {@link SandboxException}, while a command that itself exits 125 saying what a launcher says comes
 * back word for word.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(DockerTarget.Engine.class)
class DockerExecFailuresTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final List<String> LAUNCHER_WORDS = List.of("OCI runtime", "runc", "runsc", "crun", "containerd");

    @Parameter
    DockerTarget.Engine engine;

    private DockerTarget target;
    private DockerBackend backend;
    private SandboxKey key;

    @AfterEach
    void cleanUp() {
        if (backend != null && key != null) {
            backend.dispose(key);
        }
        if (target != null) {
            target.close();
        }
    }

    private Sandbox acquire(String workDir) {
        return acquire(workDir, Function.identity());
    }

    private Sandbox acquire(String workDir, Function<DockerBackend.Builder, DockerBackend.Builder> configured) {
        target = engine.target();
        backend = configured.apply(target.builder()).build();
        key = new SandboxKey("sandbox4j-docker-exec-failures", "t-" + UUID.randomUUID(), "agent");
        return backend.acquire(key, SandboxSpec.builder("exec-failures").workDir(workDir).build());
    }

    private static String freshWorkDir() {
        return "/workspace/fresh-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static ExecResult shell(Sandbox sandbox, String workingDirectory, String line) {
        return sandbox.exec(Command.shell(line), ExecOptions.in(workingDirectory, TIMEOUT));
    }

    @Test
    void theWorkDirExistsRightAfterAcquire() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        ExecResult seen = sandbox.exec(Command.argv("test", "-d", workDir), ExecOptions.in("/", TIMEOUT));
        assertThat(seen.exitCode()).as(seen.stderrText()).isZero();
        ExecResult there = sandbox.exec(Command.argv("pwd"), ExecOptions.in(workDir, TIMEOUT));
        assertThat(there.exitCode()).as(there.stderrText()).isZero();
        assertThat(there.stdoutText()).isEqualTo(workDir + "\n");
        // The guest's own user owns it: it can write there.
        assertThat(shell(sandbox, workDir, ": > written && test -f written").exitCode()).isZero();
    }

    @Test
    void aWorkDirTheGuestRemovedIsMadeAgainAtTheNextAcquire() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        assertThat(shell(sandbox, "/", "rm -rf -- '" + workDir + "'").exitCode()).isZero();
        Sandbox again = backend.acquire(key, SandboxSpec.builder("exec-failures").workDir(workDir).build());
        ExecResult there = again.exec(Command.argv("pwd"), ExecOptions.in(workDir, TIMEOUT));
        assertThat(there.stdoutText()).as(there.stderrText()).isEqualTo(workDir + "\n");
    }

    /** The engine's archive endpoint never follows a link the guest put in the work dir's place. */
    @Test
    void aLinkTheGuestPutInTheWorkDirsPlaceIsNotFollowed() {
        String workDir = freshWorkDir();
        String elsewhere = "/tmp/elsewhere-" + UUID.randomUUID().toString().substring(0, 8);
        Sandbox sandbox = acquire(workDir);
        assertThat(shell(sandbox, "/", "rmdir -- '" + workDir + "' && ln -s '" + elsewhere + "' '" + workDir + "'")
                .exitCode()).isZero();
        Sandbox again = backend.acquire(key, SandboxSpec.builder("exec-failures").workDir(workDir).build());
        ExecResult looked = shell(again, "/", "test -L '" + workDir + "' && ! test -e '" + elsewhere + "'");
        assertThat(looked.exitCode()).as("the link stays a link, and nothing was made where it points").isZero();
        assertThatThrownBy(() -> again.exec(Command.argv("true"), ExecOptions.in(workDir, TIMEOUT)))
                .isInstanceOf(SandboxFileNotFound.class)
                .hasMessage(ExecRefusals.workingDirectoryMissing(workDir).getMessage());
    }

    @Test
    void aMissingProgramExits127AndANonExecutableOne126() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        String program = "sandbox4j-no-such-program-" + UUID.randomUUID().toString().substring(0, 8);
        assertThat(shell(sandbox, workDir, ": > plain").exitCode()).isZero();
        for (Command command : List.of(Command.argv(program), Command.argv("/no-such-directory/" + program),
                Command.shell(program))) {
            ExecResult missing = sandbox.exec(command, ExecOptions.in(workDir, TIMEOUT));
            assertThat(missing.exitCode()).as(command.toShellLine() + ": " + missing.stderrText()).isEqualTo(127);
            assertThat(missing.stdoutText()).isEmpty();
            assertThat(missing.stderrText()).contains(program).doesNotContain(LAUNCHER_WORDS);
        }
        for (Command command : List.of(Command.argv("/etc/passwd"), Command.argv(workDir + "/plain"),
                Command.shell("./plain"))) {
            ExecResult refused = sandbox.exec(command, ExecOptions.in(workDir, TIMEOUT));
            assertThat(refused.exitCode()).as(command.toShellLine() + ": " + refused.stderrText()).isEqualTo(126);
            assertThat(refused.stdoutText()).isEmpty();
            assertThat(refused.stderrText()).doesNotContain(LAUNCHER_WORDS);
        }
    }

    @Test
    void aMissingWorkingDirectoryOrAFileInItsPlaceIsTheTypedRefusal() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        assertThat(shell(sandbox, workDir, ": > a-file").exitCode()).isZero();
        String missing = workDir + "/no-such-directory";
        String file = workDir + "/a-file";
        String belowAFile = file + "/below";
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(missing, TIMEOUT)))
                    .isInstanceOf(SandboxFileNotFound.class)
                    .hasMessage(ExecRefusals.workingDirectoryMissing(missing).getMessage());
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(file, TIMEOUT)))
                    .isInstanceOf(SandboxNotADirectory.class)
                    .hasMessage(ExecRefusals.workingDirectoryNotADirectory(file).getMessage());
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(belowAFile, TIMEOUT)))
                    .isInstanceOf(SandboxFileNotFound.class)
                    .hasMessage(ExecRefusals.workingDirectoryMissing(belowAFile).getMessage());
        }
        // With stdin too: the wrapper takes it before it changes directory.
        assertThatThrownBy(() -> sandbox.exec(Command.argv("cat"), ExecOptions.in(missing, TIMEOUT)
                .withStdin(new byte[] {'x'})))
                .isInstanceOf(SandboxFileNotFound.class);
        assertThat(shell(sandbox, "/", "test -e '" + missing + "'").exitCode()).as("nothing made it").isEqualTo(1);
    }

    @Test
    void aDirectoryTheGuestMayNotEnterIsRefusedAndNothingRuns() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        assertThat(shell(sandbox, workDir, "mkdir shut && chmod 0 shut").exitCode()).isZero();
        String shut = workDir + "/shut";
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(shut, TIMEOUT)))
                .isExactlyInstanceOf(SandboxFileException.class)
                .hasMessageContaining(shut)
                .hasMessageContaining("may not enter");
    }

    /** The wrapper's word comes before the command runs: what the command prints or exits with is its own. */
    @Test
    void aCommandThatSaysWhatALauncherSaysIsReportedWordForWord() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir);
        ExecResult cd = shell(sandbox, workDir, "printf 'sh: 1: cd: can'\\''t cd to /nowhere\\n' >&2; exit 125");
        assertThat(cd.exitCode()).isEqualTo(125);
        assertThat(cd.stderrText()).isEqualTo("sh: 1: cd: can't cd to /nowhere\n");
        ExecResult preamble = shell(sandbox, workDir, "printf '" + GuestScripts.PREAMBLE + "1 no-directory\\n'; exit 125");
        assertThat(preamble.exitCode()).isEqualTo(125);
        assertThat(preamble.stdoutText()).isEqualTo(GuestScripts.PREAMBLE + "1 no-directory\n");
        ExecResult oci = shell(sandbox, workDir, "echo 'OCI runtime exec failed: exec failed: unable to start "
                + "container process' ; exit 126");
        assertThat(oci.exitCode()).isEqualTo(126);
        assertThat(oci.stdoutText()).startsWith("OCI runtime exec failed");
    }

    /**
     * An image whose {@code sh} is gone (here the guest, root in its own container with a writable
     * root file system, moved it): on the engine's path (a container without the agent), the
     * engine's runtime cannot start the wrapper, says so, and exits 126 or 127. That is the engine's
     * failure, never the command's exit code or output.
     */
    @Test
    void anEngineThatCannotStartTheCommandIsALauncherFailure() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir, builder -> builder.user(0, 0).readOnlyRoot(false).guestAgent(false));
        ExecResult moved = sandbox.exec(Command.argv("mv", "/usr/bin/dash", "/usr/bin/dash-moved"),
                ExecOptions.in("/", TIMEOUT));
        assertThat(moved.exitCode()).as(moved.stderrText()).isZero();
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(workDir, TIMEOUT)))
                    .isExactlyInstanceOf(SandboxException.class)
                    .hasMessageContaining("could not start")
                    .hasMessageContaining("nothing ran");
        }
    }

    /**
     * The same image through the agent, which needs no shell: an argv runs, and a shell line's
     * missing {@code sh} is a missing program (127, named on stderr), as any other.
     */
    @Test
    void throughTheAgentAnArgvNeedsNoShell() {
        String workDir = freshWorkDir();
        Sandbox sandbox = acquire(workDir, builder -> builder.user(0, 0).readOnlyRoot(false));
        ExecResult moved = sandbox.exec(Command.argv("mv", "/usr/bin/dash", "/usr/bin/dash-moved"),
                ExecOptions.in("/", TIMEOUT));
        assertThat(moved.exitCode()).as(moved.stderrText()).isZero();
        assertThat(sandbox.exec(Command.argv("true"), ExecOptions.in(workDir, TIMEOUT)).exitCode()).isZero();
        ExecResult shell = sandbox.exec(Command.shell("true"), ExecOptions.in(workDir, TIMEOUT));
        assertThat(shell.exitCode()).isEqualTo(127);
        assertThat(shell.stderrText()).contains("'sh': not found").doesNotContain(LAUNCHER_WORDS);
    }
}
