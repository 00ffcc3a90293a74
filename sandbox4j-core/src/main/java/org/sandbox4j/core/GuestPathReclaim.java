package org.sandbox4j.core;

import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.PosixShell;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Removes a call's guest path (e.g. {@code <work dir>/<call id>}) when the call ends, so a later
 * call in the same warm sandbox cannot read what it left.
 *
 * <p>Cleanup must never replace the call's real outcome, so {@link #reclaim} does not throw: it
 * returns why the path was left behind, and the caller logs it or reports a
 * {@link ReclaimFailure}. Only {@link SandboxInterrupted} propagates, because cancellation must.
 *
 * <p>The guards run whatever way the path was derived: it must confine to the working directory,
 * must not be the working directory itself, and must be at least
 * {@value #MIN_PATH_COMPONENTS} components deep, so a mistake can never remove {@code /} or
 * {@code /tmp}. The removal is {@code rm -rf} over {@link Capability#EXEC} (every sandbox has it;
 * few specs require {@link Capability#FILES_DELETE}), run from {@code /} because no backend
 * creates the working directory. {@code rm -rf} removes links inside the tree without following
 * them.
 */
public final class GuestPathReclaim {

    /** Shallowest path that may be reclaimed: {@code /a/b} is 2 components; {@code /tmp} is refused. */
    public static final int MIN_PATH_COMPONENTS = 2;

    private static final String RUN_FROM = "/";

    private GuestPathReclaim() {
    }

    /**
     * Removes {@code path} (relative to, or absolute inside, {@code workingDirectory}) and
     * everything under it.
     *
     * @param timeout bound on the removal command
     * @return empty when the path is gone (or never existed); otherwise why it was left behind
     * @throws SandboxInterrupted       the calling thread was interrupted; cancellation propagates
     * @throws NullPointerException     an argument is null (a programming error, raised before anything runs)
     * @throws IllegalArgumentException {@code timeout} is not positive (likewise)
     */
    public static Optional<String> reclaim(Sandbox sandbox, String path, String workingDirectory, Duration timeout) {
        Objects.requireNonNull(sandbox, "sandbox");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(workingDirectory, "workingDirectory");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a reclaim timeout must be positive, not " + timeout);
        }
        String absolute;
        try {
            absolute = GuestPaths.confine(path, workingDirectory);
        } catch (SandboxPathNotConfined outside) {
            return Optional.of(outside.getMessage());
        }
        if (absolute.equals(GuestPaths.normalize(workingDirectory))) {
            return Optional.of(GuestText.quote(path) + " is the working directory itself; only a path below it is "
                    + "reclaimed");
        }
        if (GuestPaths.directoryChain(absolute).size() < MIN_PATH_COMPONENTS) {
            return Optional.of(GuestText.quote(absolute) + " is too close to the root to remove (fewer than "
                    + MIN_PATH_COMPONENTS + " path components)");
        }
        ExecResult removal;
        try {
            removal = sandbox.exec(Command.shell("rm -rf " + PosixShell.quote(absolute)),
                    ExecOptions.in(RUN_FROM, timeout));
        } catch (SandboxInterrupted cancelled) {
            throw cancelled;
        } catch (RuntimeException failure) {
            return Optional.of("the removal call failed: " + ErrorDetail.of(failure));
        }
        if (removal.exitCode() != 0) {
            String stderr = removal.stderrText().strip();
            return Optional.of("the guest refused it: rm exited " + removal.exitCode()
                    + (stderr.isEmpty() ? "" : " — " + GuestText.quote(stderr)));
        }
        return Optional.empty();
    }
}
