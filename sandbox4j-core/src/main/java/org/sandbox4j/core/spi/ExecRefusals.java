package org.sandbox4j.core.spi;

import java.time.Duration;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The two ways an exec is ended for the caller, worded once for every backend: past its output
 * cap, past its timeout. Each names the command (quoted and escaped: it is the caller's, and may
 * be long or hold control characters), the bound, how the backend ended it, and the fix.
 */
public final class ExecRefusals {

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
}
