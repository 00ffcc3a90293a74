package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Pattern;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * The EXEC probes of how an exec fails before, or instead of, the command: the same answer on every
 * backend. The working directory exists once {@code acquire} returns; a missing program exits 127
 * and a non-executable one 126, as an argv and as a shell line; a working directory that is missing
 * or a file is {@link ExecRefusals}' typed refusal, never an exit code; and the words and exit codes
 * of a launcher (bwrap, unshare, an OCI runtime, the JDK's {@code ProcessBuilder}) are never handed
 * back as if the command had said them.
 *
 * <p>Every fixture is made with {@code exec} itself (an empty file by {@code : > file}), so these
 * probes need nothing beyond the suite's gate.
 */
final class ExecFailureProbes {

    /** What a shell and {@code execve} report for a program that is not there. */
    static final int MISSING_PROGRAM_EXIT = 127;

    /** What a shell reports for a program it found but may not execute. */
    static final int NOT_EXECUTABLE_EXIT = 126;

    /** A file every Linux guest has, readable and never executable (mode 0644). */
    static final String NON_EXECUTABLE_SYSTEM_FILE = "/etc/passwd";

    /**
     * Words only a host-side launcher or runtime prints: bubblewrap, util-linux's namespace tools, the
     * OCI runtimes behind Docker and Podman (runc, gVisor's runsc, crun, containerd) and the JDK's
     * {@code ProcessBuilder}. A guest's own report of a missing program (a shell's
     * {@code sh: 1: x: not found}, or a wrapper's {@code exec: x: not found}) holds none of them.
     */
    static final List<String> LAUNCHER_WORDS = List.of("bwrap", "bubblewrap", "unshare", "nsenter", "setpriv",
            "OCI runtime", "runc", "runsc", "crun", "containerd", "execvp", "Cannot run program");

    /**
     * What a command may itself print and exit with, and what launchers print and exit with when they
     * fail: Docker's daemon (125) and runtime (126, 127), bwrap (1), the reference backend's old
     * bootstrap. Each must come back as the command's own result, word for word.
     */
    private static final List<Imitation> IMITATIONS = List.of(
            new Imitation(125, "OCI runtime exec failed: exec failed: unable to start container process: chdir to "
                    + "cwd (\"/no-such-directory\") set in config.json failed: no such file or directory: unknown"),
            new Imitation(126, "sandbox4j: the working directory /no-such-directory does not exist in the guest or "
                    + "is not a directory"),
            new Imitation(127, "crun: executable file `no-such-program` not found in $PATH: No such file or "
                    + "directory: OCI runtime attempted to invoke a command that was not found"),
            new Imitation(1, "bwrap: Can't chdir to /no-such-directory: No such file or directory"));

    private static final String MISSING_DIRECTORY = "no-such-directory";
    private static final String FILE_AS_DIRECTORY = "a-file-not-a-directory";
    private static final String NOT_EXECUTABLE = "not-executable";
    private static final String FRESH_WORK_DIR = "fresh-work-dir";

    private ExecFailureProbes() {
    }

    /** In the order they run; none tears its sandbox down, so they run before the timeout probes. */
    static List<Probe> probes() {
        return List.of(
                Probe.of("the-working-directory-exists-after-acquire",
                        "a fresh sandbox's working directory does not exist until something is written there, so "
                                + "the first command of a conversation fails on one backend and runs on another",
                        ExecFailureProbes::workingDirectoryExistsAfterAcquire),
                Probe.of("a-missing-program-exits-127",
                        "a program that is not there gives another exit code than 127 (bwrap's 1, a runtime's 125), "
                                + "so a caller cannot tell \"not installed\" from the program's own failure",
                        ExecFailureProbes::missingProgramExits127),
                Probe.of("a-non-executable-file-exits-126",
                        "a file that may not be executed gives another exit code than 126, so a caller cannot tell "
                                + "\"not executable\" from \"not there\" or from the program's own failure",
                        ExecFailureProbes::nonExecutableExits126),
                Probe.of("a-missing-working-directory-is-a-clear-error",
                        "a command in a missing directory hangs, runs elsewhere, creates it, or ends as an exit "
                                + "code instead of the typed SandboxFileNotFound every backend raises",
                        ExecFailureProbes::missingWorkingDirectory),
                Probe.of("a-file-as-the-working-directory-is-not-a-directory",
                        "a command whose working directory is a file runs elsewhere or ends as an exit code instead "
                                + "of the typed SandboxNotADirectory every backend raises",
                        ExecFailureProbes::fileAsWorkingDirectory),
                Probe.of("a-launcher-failure-is-never-the-commands-exit",
                        "the launcher's failure is handed back as the command's exit code or stderr, or the "
                                + "command's own exit code is taken for the launcher's failure: a caller (or a model) "
                                + "acts on words the command never said",
                        ExecFailureProbes::launcherFailureIsNeverTheCommandsExit));
    }

    /**
     * A fresh key and a work dir no suite planted: the runner's own {@code mkdir} cannot make it
     * exist. It is looked for from {@code /} before any exec runs in it, so a backend that makes it
     * on the first exec there (and so would also make a missing one) fails too.
     */
    private static void workingDirectoryExistsAfterAcquire(ProbeContext context) {
        SandboxSpec spec = ProbeSandboxes.withFreshWorkDir(context, FRESH_WORK_DIR);
        try (ProbeSandboxes.FreshKey fresh = ProbeSandboxes.fresh(context, FRESH_WORK_DIR)) {
            Sandbox sandbox = context.backend().acquire(fresh.key(), spec);
            String workingDirectory = spec.workDirIn(sandbox);
            ExecResult seen = sandbox.exec(ExecSuite.shellCommand("test -d \"$1\"", workingDirectory),
                    ExecOptions.in("/", context.execTimeout()));
            Check.equal(0, seen.exitCode(), "test -d " + workingDirectory + ", run from / right after acquire, "
                    + "before anything was written (0: the working directory exists); stderr " + seen.stderrText());
            ExecResult there = sandbox.exec(Command.argv("pwd"), ExecOptions.in(workingDirectory, context.execTimeout()));
            Check.equal(0, there.exitCode(), "exit code of pwd in the fresh working directory; stderr "
                    + there.stderrText());
            Check.equal(workingDirectory + "\n", there.stdoutText(), "pwd in the fresh working directory");
        }
    }

    private static void missingProgramExits127(ProbeContext context) {
        String program = missingProgramName();
        String absolute = "/" + program + "-directory/" + program;
        checkExit(context, Command.argv(List.of(program)), MISSING_PROGRAM_EXIT, "the missing program " + program
                + " as an argv");
        checkExit(context, Command.argv(List.of(absolute)), MISSING_PROGRAM_EXIT, "the missing program " + absolute
                + " as an argv");
        checkExit(context, Command.shell(program), MISSING_PROGRAM_EXIT, "the missing program " + program
                + " as a shell line");
    }

    private static void nonExecutableExits126(ProbeContext context) {
        Check.equal(0, context.exec("test", "-f", NON_EXECUTABLE_SYSTEM_FILE).exitCode(), "test -f "
                + NON_EXECUTABLE_SYSTEM_FILE + " (positive control: the guest has the file this probe tries to run)");
        String file = makeEmptyFile(context, NOT_EXECUTABLE);
        checkExit(context, Command.argv(List.of(NON_EXECUTABLE_SYSTEM_FILE)), NOT_EXECUTABLE_EXIT,
                NON_EXECUTABLE_SYSTEM_FILE + " as an argv");
        checkExit(context, Command.argv(List.of(file)), NOT_EXECUTABLE_EXIT, "the empty mode-0644 file " + file
                + " as an argv");
        checkExit(context, Command.shell("./" + NOT_EXECUTABLE), NOT_EXECUTABLE_EXIT, "the empty mode-0644 file ./"
                + NOT_EXECUTABLE + " as a shell line");
    }

    private static void missingWorkingDirectory(ProbeContext context) {
        Check.equal(0, context.exec("true").exitCode(), "exit code of true in the working directory (positive control)");
        String missing = context.paths().in(MISSING_DIRECTORY);
        refusedInTheOneWording(context, SandboxFileNotFound.class, missing, "missing",
                ExecRefusals.workingDirectoryMissing(missing), "workingDirectoryMissing");
        Check.that(!context.guest().exists(missing), "the exec created the missing directory " + missing);
    }

    private static void fileAsWorkingDirectory(ProbeContext context) {
        String file = makeEmptyFile(context, FILE_AS_DIRECTORY);
        refusedInTheOneWording(context, SandboxNotADirectory.class, file, "a file",
                ExecRefusals.workingDirectoryNotADirectory(file), "workingDirectoryNotADirectory");
        Check.that(context.guest().isRegularFile(file), "the file the exec was asked to run in is no longer a "
                + "regular file: " + file);
    }

    /**
     * {@code true} as an argv and as a shell line (a backend may start the two by different routes)
     * must each raise {@code expected} with exactly {@code oneWording}'s message.
     */
    private static void refusedInTheOneWording(ProbeContext context, Class<? extends SandboxException> expected,
            String directory, String what, SandboxException oneWording, String refusalName) {
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            SandboxException refused = refusedInDirectory(context, expected, command, directory, what);
            Check.equal(oneWording.getMessage(), refused.getMessage(), "the refusal of " + command.toShellLine()
                    + " in the working directory (" + what + ", ExecRefusals." + refusalName + ", the one wording)");
        }
    }

    /**
     * Two halves no real backend passes by accident. Handing everything back as the command's result
     * fails the first: the missing program's report carries the launcher's words, and the missing
     * working directory comes back as an exit code. Guessing a launcher failure from the exit code or
     * from stderr fails the second: a command that itself exits 125, 126, 127 or 1, saying what a
     * launcher says, must come back word for word. Only a backend that tells its launcher's failure
     * from the command's through a channel the command cannot write (a check before the start, a
     * status the command never sees, the runtime's own API) passes both.
     */
    private static void launcherFailureIsNeverTheCommandsExit(ProbeContext context) {
        String program = missingProgramName();
        for (Command command : List.of(Command.argv(List.of(program)), Command.shell(program))) {
            ExecResult missing = context.sandbox().exec(command, ExecSuite.options(context));
            String stderr = missing.stderrText();
            Check.that(stderr.contains(program), "the report of the missing program " + program + " (" + command
                    .toShellLine() + ") does not name it (positive control: this is the report to check): "
                    + Check.show(stderr));
            for (String word : LAUNCHER_WORDS) {
                Check.that(!saysWord(stderr, word), "the missing program " + program + " (" + command.toShellLine()
                        + ") came back with the launcher's words (\"" + word + "\") as the command's stderr: "
                        + Check.show(stderr));
            }
        }
        String absent = context.paths().in(MISSING_DIRECTORY);
        for (Command command : List.of(Command.argv("true"), Command.shell("true"))) {
            refusedInDirectory(context, SandboxException.class, command, absent, "missing");
        }
        List<Imitation> imitations = new ArrayList<>(IMITATIONS);
        imitations.add(new Imitation(1, ExecRefusals.workingDirectoryMissing(absent).getMessage()));
        for (Imitation imitation : imitations) {
            ExecResult own;
            try {
                own = context.sandbox().exec(ExecSuite.shellCommand("printf '%s\\n' \"$1\" >&2; exit \"$2\"",
                        imitation.stderr(), Integer.toString(imitation.exitCode())), ExecSuite.options(context));
            } catch (SandboxException taken) {
                throw new AssertionError("a command that itself exited " + imitation.exitCode() + " saying "
                        + Check.show(imitation.stderr()) + " was taken for a launcher failure: raised "
                        + taken.getClass().getSimpleName() + ": " + taken.getMessage());
            }
            Check.equal(imitation.exitCode(), own.exitCode(), "the command's own exit code after saying "
                    + Check.show(imitation.stderr()));
            Check.equal(imitation.stderr() + "\n", own.stderrText(), "the command's own stderr");
            Check.equal("", own.stdoutText(), "the command's own stdout");
        }
    }

    // ---- helpers

    private static void checkExit(ProbeContext context, Command command, int expected, String what) {
        ExecResult result = context.sandbox().exec(command, ExecSuite.options(context));
        Check.equal(expected, result.exitCode(), "exit code of " + what + "; stderr " + Check.show(result.stderrText()));
        Check.equal("", result.stdoutText(), "stdout of " + what);
    }

    /** The exec in {@code directory} must raise {@code expected} promptly, and never run or return. */
    private static <T extends SandboxException> T refusedInDirectory(ProbeContext context, Class<T> expected,
            Command command, String directory, String what) {
        ExecOptions there = ExecSuite.options(context).withWorkingDirectory(directory)
                .withTimeout(ExecSuite.HANG_BOUND);
        ExecResult result;
        try {
            result = context.sandbox().exec(command, there);
        } catch (SandboxTimeoutException hung) {
            throw new AssertionError(command.toShellLine() + " in the working directory " + directory + " (" + what + ")"
                    + " hung for " + ExecSuite.HANG_BOUND.toSeconds() + " s instead of being refused");
        } catch (SandboxException refused) {
            Check.that(expected.isInstance(refused), command.toShellLine() + " in the working directory "
                    + directory + " (" + what + "): expected " + expected.getSimpleName() + " but raised "
                    + refused.getClass().getSimpleName() + ": " + refused.getMessage());
            return expected.cast(refused);
        }
        throw new AssertionError(command.toShellLine() + " in the working directory " + directory + " (" + what + ")"
                + " returned exit code " + result.exitCode() + " (stderr " + Check.show(result.stderrText())
                + ") instead of raising " + expected.getSimpleName() + ": a launcher's failure reported as the "
                + "command's exit");
    }

    /** An empty file made by the guest in the working directory: mode 0666 less the umask, never executable. */
    private static String makeEmptyFile(ProbeContext context, String name) {
        String path = context.paths().in(name);
        ExecResult made = context.shell(": > \"$1\" && test -f \"$1\" && ! test -x \"$1\"", path);
        Check.equal(0, made.exitCode(), "making the empty, non-executable file " + path + " (positive control); "
                + "stderr " + made.stderrText());
        return path;
    }

    /** A name no guest has on its PATH. */
    private static String missingProgramName() {
        return "sandbox4j-tck-no-such-program-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** Whether {@code text} holds {@code word} as a word of its own (so {@code runc} is not found in "truncate"). */
    static boolean saysWord(String text, String word) {
        return Pattern.compile("(?<![A-Za-z0-9])" + Pattern.quote(word.toLowerCase(Locale.ROOT)) + "(?![A-Za-z0-9])")
                .matcher(text.toLowerCase(Locale.ROOT)).find();
    }

    /**
     * @param exitCode what the command exits with
     * @param stderr   the one line it prints on stderr
     */
    private record Imitation(int exitCode, String stderr) {
    }
}
