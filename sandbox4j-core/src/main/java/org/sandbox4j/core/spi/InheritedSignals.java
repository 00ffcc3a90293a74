package org.sandbox4j.core.spi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A JVM started with signals ignored (a shell's background job ignores INT and QUIT, {@code nohup}
 * ignores HUP) passes that on to every process it starts, across every exec, and a POSIX shell cannot
 * trap a signal it was started ignoring. A guest command must see the dispositions a terminal gives
 * it, so that {@code SandboxProcess.signal} reaches what it traps: a backend whose commands are this
 * JVM's descendants starts them behind {@link #resetting()}.
 */
public final class InheritedSignals {

    private static final System.Logger LOG = System.getLogger(InheritedSignals.class.getName());
    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path ENV = Path.of("/usr/bin/env");
    /** Resets every signal to its default action, then runs the rest (coreutils 8.31 and later). */
    private static final List<String> RESET = List.of(ENV.toString(), "--default-signal");
    private static final List<String> PREFIX = prefix();

    private InheritedSignals() {
    }

    /** Words to put before a launcher's argv: {@code env --default-signal} when this JVM ignores a signal, else none. */
    public static List<String> resetting() {
        return PREFIX;
    }

    private static List<String> prefix() {
        long ignored = ignoredMask();
        if (ignored == 0) {
            return List.of();
        }
        if (!envResets()) {
            LOG.log(System.Logger.Level.WARNING, () -> "this JVM ignores signals (mask 0x" + Long.toHexString(ignored)
                    + ", as a background job or nohup starts it) and " + ENV + " cannot reset them (coreutils 8.31 "
                    + "or later has --default-signal): commands it starts cannot trap those signals");
            return List.of();
        }
        return RESET;
    }

    /** The SigIgn mask of this process; 0 when it cannot be read (not Linux). */
    private static long ignoredMask() {
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith("SigIgn:")) {
                    return Long.parseUnsignedLong(line.substring("SigIgn:".length()).strip(), 16);
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            LOG.log(System.Logger.Level.DEBUG, () -> "no signal mask in " + STATUS + ": " + ErrorDetail.of(unreadable));
        }
        return 0;
    }

    private static boolean envResets() {
        try {
            Process probe = new ProcessBuilder(ENV.toString(), "--default-signal", "true")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
