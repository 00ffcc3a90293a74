package org.sandbox4j.testkit.tck;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.Sandbox;

/**
 * The default {@link GuestSide}: files are planted with {@link Sandbox#writeFile} (from their own
 * parent directory), everything else with POSIX commands over {@link Sandbox#exec}. Every command
 * is an argv; paths reach {@code sh -c} scripts only as positional parameters, never inside the
 * script text.
 */
public final class PosixGuestSide implements GuestSide {

    private static final String ROOT = "/";

    private final Sandbox sandbox;
    private final Duration timeout;

    public PosixGuestSide(Sandbox sandbox, Duration timeout) {
        this.sandbox = Objects.requireNonNull(sandbox, "sandbox");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    @Override
    public void plantFile(String absolutePath, byte[] content) {
        String parent = GuestPaths.parent(absolutePath);
        plantDirectory(parent);
        sandbox.writeFile(GuestPaths.fileName(absolutePath), content, parent);
    }

    @Override
    public void plantSymlink(String absolutePath, String target) {
        plantDirectory(GuestPaths.parent(absolutePath));
        succeed("ln", "-sfn", target, absolutePath);
    }

    @Override
    public void plantDirectory(String absolutePath) {
        succeed("mkdir", "-p", absolutePath);
    }

    @Override
    public boolean exists(String absolutePath) {
        return test("test -e \"$1\" || test -L \"$1\"", absolutePath);
    }

    @Override
    public boolean isRegularFile(String absolutePath) {
        return test("test -f \"$1\" && ! test -L \"$1\"", absolutePath);
    }

    @Override
    public boolean isDirectory(String absolutePath) {
        return test("test -d \"$1\" && ! test -L \"$1\"", absolutePath);
    }

    @Override
    public boolean isSymlink(String absolutePath) {
        return test("test -L \"$1\"", absolutePath);
    }

    @Override
    public byte[] read(String absolutePath) {
        if (!isRegularFile(absolutePath)) {
            throw new AssertionError("expected a regular file at " + absolutePath);
        }
        return succeed("cat", "--", absolutePath).stdout();
    }

    /** {@code cat}, which follows links as any guest program would. */
    @Override
    public byte[] readThroughLinks(String absolutePath) {
        return succeed("cat", "--", absolutePath).stdout();
    }

    /** POSIX {@code chmod} and {@code touch -t} (in UTC: the guest's own zone may be any). */
    @Override
    public void stamp(String absolutePath, int mode, Instant modified) {
        succeed("chmod", Integer.toOctalString(mode), absolutePath);
        String stamp = TOUCH_TIME.format(modified.atOffset(ZoneOffset.UTC));
        ExecResult touched = sandbox.exec(Command.argv("touch", "-t", stamp, absolutePath),
                ExecOptions.in(ROOT, timeout).withEnvironment(Map.of("TZ", "UTC0")));
        if (touched.exitCode() != 0) {
            throw new IllegalStateException("guest command touch -t " + stamp + " " + absolutePath + " exited "
                    + touched.exitCode() + ": " + touched.stderrText().strip());
        }
    }

    /** {@code touch -t}'s [[CC]YY]MMDDhhmm[.SS]. */
    private static final DateTimeFormatter TOUCH_TIME = DateTimeFormatter.ofPattern("yyyyMMddHHmm.ss");

    private boolean test(String script, String path) {
        return run(List.of("sh", "-c", script, "guest-side", path)).exitCode() == 0;
    }

    private ExecResult succeed(String... argv) {
        ExecResult result = run(List.of(argv));
        if (result.exitCode() != 0) {
            throw new IllegalStateException("guest command " + String.join(" ", argv) + " exited "
                    + result.exitCode() + ": " + result.stderrText().strip());
        }
        return result;
    }

    private ExecResult run(List<String> argv) {
        return sandbox.exec(Command.argv(argv), ExecOptions.in(ROOT, timeout));
    }
}
