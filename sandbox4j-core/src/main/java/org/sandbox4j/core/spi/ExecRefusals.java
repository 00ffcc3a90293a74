package org.sandbox4j.core.spi;

import java.io.IOException;
import java.time.Duration;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The ways an exec is ended for the caller other than by the command's own exit, worded once for
 * every backend: past its output cap, past its timeout, the host unable to hold its output, the
 * caller's thread interrupted, the launcher unable to start. Each names the command (quoted and escaped: it is the caller's, and may
 * be long or hold control characters), the bound, how the backend ended it, and the fix.
 */
public final class ExecRefusals {

    /** How a backend that kills a command's whole tree says so, in the {@code ended} of the refusals. */
    public static final String KILLED_WITH_EVERY_PROCESS = "was killed with every process it started";

    private ExecRefusals() {
    }

    /**
     * @param shellLine the command as a shell line ({@code Command.toShellLine()})
     * @param capBytes  the cap it passed ({@code ExecOptions.outputCapBytes()})
     * @param ended     how the backend ended it, e.g. "was killed with every process it started"
     */
    public static SandboxExecOutputLimitExceeded outputCapExceeded(String shellLine, long capBytes, String ended) {
        return new SandboxExecOutputLimitExceeded("the command " + GuestText.quote(shellLine) + " wrote more than its "
                + "output cap of " + capBytes + " bytes (stdout and stderr together) and " + ended + ": raise the cap "
                + "with ExecOptions.withOutputCap, or write large results to a file and read that");
    }

    /**
     * @param shellLine the command as a shell line
     * @param timeout   the caller's bound ({@code ExecOptions.timeout()})
     * @param ended     how the backend ended it, e.g. "was killed with its process group"
     */
    public static SandboxTimeoutException timedOut(String shellLine, Duration timeout, String ended) {
        return new SandboxTimeoutException("the command " + GuestText.quote(shellLine) + " ran past its timeout of "
                + timeout.toMillis() + " ms and " + ended + ": raise the timeout, or make the command finish sooner");
    }

    /**
     * The host could not keep what the command printed (its heap ran out): nothing is returned as
     * if it were whole.
     */
    public static SandboxExecOutputLimitExceeded hostCouldNotHold(String shellLine, Throwable cause) {
        return new SandboxExecOutputLimitExceeded("the host could not hold the output of " + GuestText.quote(shellLine)
                + " (" + ErrorDetail.of(cause) + ") and killed the command; nothing of its output is returned: "
                + "lower the output cap, give this JVM more heap, or write large results to a file and read that",
                cause);
    }

    /**
     * @param ended how the backend ended the command, e.g. "the command was killed with every process it started"
     */
    public static SandboxInterrupted interrupted(String shellLine, String ended, InterruptedException cause) {
        return new SandboxInterrupted("the thread running " + GuestText.quote(shellLine) + " was interrupted; "
                + ended, cause);
    }

    /**
     * The host could not start the program that launches guest commands: a fault of this host,
     * never the command's exit code.
     *
     * @param launcher the host program, e.g. "bwrap"
     */
    public static SandboxException couldNotStart(String backendName, String launcher, IOException cause) {
        return new SandboxException("backend '" + backendName + "' could not start " + launcher + ": "
                + ErrorDetail.of(cause), cause);
    }

    /**
     * As {@link #couldNotStart(String, String, IOException)}, with the step that makes the launcher
     * startable (e.g. "install sbx or name it with SbxConfig.builder().sbxPath(path)").
     */
    public static SandboxException couldNotStart(String backendName, String launcher, String fix, IOException cause) {
        return new SandboxException("backend '" + backendName + "' could not start " + launcher + ": "
                + ErrorDetail.of(cause) + "; " + fix, cause);
    }

    /**
     * The exec's working directory does not exist in the guest: nothing ran. Every backend reports
     * this so, never as an exit code of the launcher or the command.
     */
    public static SandboxFileNotFound workingDirectoryMissing(String workingDirectory) {
        return new SandboxFileNotFound("the working directory " + GuestText.quote(workingDirectory) + " does not "
                + "exist in the sandbox, so nothing ran: create it first (writeFile creates a file's parents), or run "
                + "in one that exists");
    }

    /** The exec's working directory is a directory the guest's user may not enter: nothing ran. */
    public static SandboxFileException workingDirectoryNotEnterable(String workingDirectory) {
        return new SandboxFileException("the working directory " + GuestText.quote(workingDirectory) + " is a "
                + "directory the sandbox's user may not enter, so nothing ran: give it search permission (chmod u+x), "
                + "or run in another");
    }

    /** The exec's working directory is a file (or anything but a directory) in the guest: nothing ran. */
    public static SandboxNotADirectory workingDirectoryNotADirectory(String workingDirectory) {
        return new SandboxNotADirectory("the working directory " + GuestText.quote(workingDirectory) + " is not a "
                + "directory in the sandbox, so nothing ran: run in a directory");
    }

    /**
     * The launcher (bwrap, a wrapper, an engine's runtime) failed before the command started, so
     * nothing ran: never the command's own exit code.
     *
     * @param exitCode the launcher's exit code
     * @param said     what the launcher said (no guest code had run yet), or empty
     */
    public static SandboxException launcherFailed(String backendName, String launcher, String shellLine, int exitCode,
            String said) {
        return new SandboxException("backend '" + backendName + "': " + launcher + " failed before the command "
                + GuestText.quote(shellLine) + " started (it exited " + exitCode
                + (said.isEmpty() ? "" : " saying " + GuestText.quote(said)) + "), so nothing ran: this is the "
                + "host's launcher failing, not the command; check the backend's diagnostics()");
    }
}
