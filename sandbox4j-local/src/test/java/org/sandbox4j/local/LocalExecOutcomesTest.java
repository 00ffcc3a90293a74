package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * How an exec ends on both local backends when it is not the command that ends it: a missing
 * program exits 127 and a non-executable one 126 (argv and shell line alike), a missing or
 * non-directory working directory is its typed refusal, and a launcher failing before the
 * command started is a {@link SandboxException}, never an exit code; while a command that exits
 * with those codes, or prints what a launcher would, keeps its own result.
 */
@EnabledOnOs(OS.LINUX)
class LocalExecOutcomesTest {

    private static final SandboxKey KEY = new SandboxKey("outcomes", "thread", "agent");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String MISSING_PROGRAM = "sandbox4j-no-such-program";

    @TempDir
    Path tempDir;

    private LocalBackendUnderTest local;

    @BeforeEach
    void fresh() throws IOException {
        local = LocalBackendUnderTest.fresh("s4jo", KEY);
    }

    @AfterEach
    void cleanUp() throws Exception {
        local.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void theWorkDirExistsRightAfterAcquire(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();

        ExecResult result = sandbox.exec(Command.argv("pwd"), ExecOptions.in(work, TIMEOUT));

        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(result.stdoutText()).isEqualTo(work + "\n");
    }

    static Stream<Arguments> programsThatCannotRun() {
        return Stream.of(BubblewrapBackend.TYPE, ProcessBackend.TYPE).flatMap(type -> Stream.of(
                Arguments.of(type, Command.argv("/nonexistent/" + MISSING_PROGRAM, "an argument"), 127),
                Arguments.of(type, Command.argv(MISSING_PROGRAM), 127),
                Arguments.of(type, Command.shell(MISSING_PROGRAM + " an-argument"), 127),
                Arguments.of(type, Command.argv("/etc/passwd"), 126),
                Arguments.of(type, Command.shell("/etc/passwd"), 126),
                Arguments.of(type, Command.argv("/usr"), 126)));
    }

    @ParameterizedTest
    @MethodSource("programsThatCannotRun")
    void aProgramThatCannotRunExitsWithTheShellsCodeNeverTheLaunchers(String type, Command command, int code) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");

        ExecResult result = acquired.sandbox().exec(command, ExecOptions.in(acquired.workDir(), TIMEOUT));

        assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(code);
        assertThat(result.stderrText()).as("a launcher's own message").doesNotContain("bwrap", "setsid", "execvp");
    }

    /**
     * A process-backend guest shares the host's file system: it can find its launch's report and
     * swap a FIFO in for it. The host's read of the report must not wait for a writer that never
     * comes; the launch then counts as unreported, a typed failure of that exec alone.
     */
    @Test
    void aReportTheGuestSwappedForAFifoNeverBlocksTheHost() {
        LocalBackendUnderTest.Acquired acquired = local.acquire(ProcessBackend.TYPE, "outcomes");
        Command swap = Command.shell("d=$PWD; while [ ! -d \"$d/" + LaunchReport.DIRECTORY + "\" ] && [ \"$d\" != / ]; "
                + "do d=$(dirname \"$d\"); done; for f in \"$d/" + LaunchReport.DIRECTORY + "\"/*; do "
                + "rm -f \"$f\" && mkfifo \"$f\"; done; [ -p \"$f\" ]");

        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThatThrownBy(() ->
                acquired.sandbox().exec(swap, ExecOptions.in(acquired.workDir(), TIMEOUT)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("failed before the command"));
        ExecResult after = acquired.sandbox().exec(Command.argv("true"), ExecOptions.in(acquired.workDir(), TIMEOUT));
        assertThat(after.exitCode()).as("the next exec is unaffected").isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void anArgvWordIsNeverShellText(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();

        ExecResult result = sandbox.exec(Command.argv("printf", "%s|", "$(touch pwned)", "; exit 3", "'\""),
                ExecOptions.in(work, TIMEOUT));

        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(result.stdoutText()).isEqualTo("$(touch pwned)|; exit 3|'\"|");
        assertThat(sandbox.stat("pwned", work)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aCommandKeepsItsOwnCodesAndWordsEvenWhenTheyLookLikeALaunchersFailure(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();

        for (int code : List.of(1, 125, 126, 127)) {
            ExecResult result = sandbox.exec(Command.shell("echo \"bwrap: Can't chdir to $PWD/missing: No such file "
                    + "or directory\" >&2; exit " + code), ExecOptions.in(work, TIMEOUT));
            assertThat(result.exitCode()).as(result.stderrText()).isEqualTo(code);
            assertThat(result.stderrText()).contains("Can't chdir to");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aMissingWorkingDirectoryIsRefusedAsMissing(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        for (String missing : List.of(acquired.workDir() + "/not-made", "/sandbox4j-nonexistent/dir")) {
            assertEveryExecRefused(acquired.sandbox(), missing, ExecRefusals.workingDirectoryMissing(missing));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aWorkingDirectoryThatIsAFileIsRefusedAsNotADirectory(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();
        sandbox.writeFile("plain.txt", "not a directory", work);
        String file = work + "/plain.txt";

        assertEveryExecRefused(sandbox, file, ExecRefusals.workingDirectoryNotADirectory(file));
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aWorkingDirectoryTheGuestRemovedOrLinkedAwayIsRefusedAsTheChdirSaw(String type) {
        LocalBackendUnderTest.Acquired acquired = local.acquire(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();
        ExecResult made = sandbox.exec(Command.shell("mkdir gone && ln -s nowhere dangling && : > file "
                + "&& ln -s file to-a-file"), ExecOptions.in(work, TIMEOUT));
        assertThat(made.exitCode()).as(made.stderrText()).isZero();
        sandbox.remove("gone", work, true);

        assertEveryExecRefused(sandbox, work + "/gone", ExecRefusals.workingDirectoryMissing(work + "/gone"));
        assertEveryExecRefused(sandbox, work + "/dangling", ExecRefusals.workingDirectoryMissing(work + "/dangling"));
        assertEveryExecRefused(sandbox, work + "/to-a-file",
                ExecRefusals.workingDirectoryNotADirectory(work + "/to-a-file"));
    }

    /**
     * The launchers between the JVM and the command cannot write the launch's report (its
     * directory is a file): they fail before the command starts, with an exit code of their own
     * that must not be returned as the command's.
     */
    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aLauncherFailingBeforeTheCommandIsATypedFailureNeverAnExitCode(String type) throws IOException {
        // The launchers of one bwrap per command (a resident agent reports through its protocol instead).
        LocalBackendUnderTest.Acquired acquired = local.acquirePerCommand(type, "outcomes");
        Sandbox sandbox = acquired.sandbox();
        String work = acquired.workDir();
        Path reports = ((LocalSandbox) sandbox).directory().resolve(LaunchReport.DIRECTORY);
        LocalStore.deleteTree(reports);
        Files.writeString(reports, "in the way");

        assertThatThrownBy(() -> sandbox.exec(Command.shell("echo ran > ran.txt"), ExecOptions.in(work, TIMEOUT)))
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("failed before the command 'echo ran > ran.txt' started")
                .hasMessageContaining("so nothing ran");
        assertThat(sandbox.stat("ran.txt", work)).as("the command never ran").isEmpty();

        Files.delete(reports);
        assertThat(sandbox.exec(Command.argv("true"), ExecOptions.in(work, TIMEOUT)).exitCode()).isZero();
    }

    /** bwrap itself failing (here: before it even clones, as when namespaces are refused) is no exit code either. */
    @Test
    void aBwrapThatFailsOnlyForExecsIsATypedFailure() throws IOException {
        Path fake = LocalBackendUnderTest.script(tempDir.resolve("bwrap"), "#!/bin/sh\ncase \" $* \" in "
                + "*\" --json-status-fd \"*) echo 'bwrap: Creating new namespace failed: Resource temporarily "
                + "unavailable' >&2; exit 1;; esac\nexec bwrap \"$@\"\n");
        BubblewrapBackend backend = local.use(BubblewrapBackend.builder().stateRoot(local.stateRoot())
                .bwrap(fake.toString()).residentAgent(false).build());
        SandboxSpec spec = SandboxSpec.builder("outcomes").build();
        Sandbox sandbox = backend.acquire(KEY, spec);

        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(spec.workDir(), TIMEOUT)))
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("bwrap failed before the command ''true'' started (it exited 1 saying "
                        + "'bwrap: Creating new namespace failed");
    }

    /** A resident agent whose bwrap fails after the backend was built is a typed failure quoting bwrap, never a hang. */
    @Test
    void aResidentAgentThatCannotLaunchIsATypedFailure() throws IOException {
        Path failing = tempDir.resolve("agents-fail");
        Path fake = LocalBackendUnderTest.script(tempDir.resolve("bwrap"), "#!/bin/sh\nif [ -e '" + failing
                + "' ]; then case \" $* \" in *s4j-agent*) echo 'bwrap: Creating new namespace failed: Resource "
                + "temporarily unavailable' >&2; exit 1;; esac; fi\nexec bwrap \"$@\"\n");
        BubblewrapBackend backend = local.use(BubblewrapBackend.builder().stateRoot(local.stateRoot())
                .bwrap(fake.toString()).build());
        assumeTrue(backend.diagnostics().stream().anyMatch(line -> line.startsWith("commands: resident agent")),
                "no resident agent on this host");
        SandboxSpec spec = SandboxSpec.builder("outcomes").build();
        Sandbox sandbox = backend.acquire(KEY, spec);
        Files.writeString(failing, "");

        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(spec.workDir(), TIMEOUT)))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("Creating new namespace failed");
        Files.delete(failing);
        assertThat(sandbox.exec(Command.argv("true"), ExecOptions.in(spec.workDir(), TIMEOUT)).exitCode())
                .as("the next call starts a fresh agent").isZero();
    }

    /** The line {@code launchCommand} gives still runs as is: with no report, bwrap is asked for no status. */
    @Test
    void theLaunchCommandRunsAsIsWithoutAReport() throws Exception {
        SandboxSpec spec = local.backendOf(BubblewrapBackend.TYPE, "outcomes");
        Sandbox sandbox = local.backend().acquire(KEY, spec);
        List<String> line = ((BubblewrapBackend) local.backend()).launchCommand(sandbox,
                Command.argv("sh", "-c", "exit 7"), ExecOptions.in(spec.workDir(), TIMEOUT));

        assertThat(line).doesNotContain("--json-status-fd");
        ProcessBuilder direct = new ProcessBuilder(line).redirectErrorStream(true);
        direct.environment().clear();
        direct.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
        Process process = direct.start();
        process.getOutputStream().close();
        String said = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(said).isEqualTo(7);
    }

    /** An argv command and a shell line in {@code workingDirectory} are both refused with {@code expected}. */
    private static void assertEveryExecRefused(Sandbox sandbox, String workingDirectory, RuntimeException expected) {
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            assertThatThrownBy(() -> sandbox.exec(command, ExecOptions.in(workingDirectory, TIMEOUT)))
                    .isExactlyInstanceOf(expected.getClass())
                    .hasMessage(expected.getMessage());
        }
    }
}
