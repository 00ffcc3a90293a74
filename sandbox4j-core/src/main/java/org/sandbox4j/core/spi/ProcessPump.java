package org.sandbox4j.core.spi;

import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;

/**
 * Runs one started host process as a guest command, for every backend whose commands are host
 * processes: feeds stdin, drains stdout and stderr concurrently into one {@link ExecCapture}, waits
 * until the caller's deadline, and ends the command with the backend's own {@link TreeKill} on a
 * timeout, past the cap, or when the caller's thread is interrupted. The refusals are
 * {@link ExecRefusals}'.
 */
public final class ProcessPump {

    private static final System.Logger LOG = System.getLogger(ProcessPump.class.getName());
    /** How long the streams may take to close after a kill before the pump stops waiting for them. */
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);
    private static final String KILLED = ExecRefusals.KILLED_WITH_EVERY_PROCESS;

    /** How a backend kills everything a command started (a PID namespace, a process group). */
    @FunctionalInterface
    public interface TreeKill {
        void kill(Process process);
    }

    private final Process process;
    private final TreeKill treeKill;
    private final ExecOptions options;
    private final String shellLine;
    private final ExecCapture capture;

    private ProcessPump(Process process, TreeKill treeKill, ExecOptions options, String shellLine, String backendName) {
        this.process = process;
        this.treeKill = treeKill;
        this.options = options;
        this.shellLine = shellLine;
        this.capture = new ExecCapture(options, backendName);
    }

    /**
     * Waits for {@code process} under {@code options} and returns its result.
     *
     * @param shellLine  the command as the caller wrote it, for messages
     * @param startNanos when the command was started ({@link System#nanoTime()}); the timeout counts from it
     */
    public static ExecResult await(Process process, TreeKill treeKill, ExecOptions options, String shellLine,
            String backendName, long startNanos) {
        return new ProcessPump(process, treeKill, options, shellLine, backendName).await(startNanos);
    }

    private ExecResult await(long startNanos) {
        long deadline = startNanos + options.timeout().toNanos();
        Runnable stop = () -> treeKill.kill(process);
        Thread feeder = daemon("stdin", () -> feed(process, options.stdin()));
        Thread outReader = daemon("stdout", () -> capture.drain(process.getInputStream(), ExecStream.STDOUT, stop));
        Thread errReader = daemon("stderr", () -> capture.drain(process.getErrorStream(), ExecStream.STDERR, stop));
        feeder.start();
        outReader.start();
        errReader.start();
        try {
            boolean exited = process.waitFor(remaining(deadline), TimeUnit.NANOSECONDS);
            // A guest process left holding the pipes keeps them open; that still counts against the deadline.
            boolean drained = exited && join(outReader, deadline) && join(errReader, deadline);
            if (!drained) {
                killTree();
                joinWithin(outReader, DRAIN_GRACE);
                joinWithin(errReader, DRAIN_GRACE);
                throw capture.refusal(shellLine, KILLED)
                        .orElseGet(() -> ExecRefusals.timedOut(shellLine, options.timeout(), KILLED));
            }
            Optional<RuntimeException> refused = capture.refusal(shellLine, KILLED);
            if (refused.isPresent()) {
                throw refused.get();
            }
            return capture.result(process.exitValue(), Duration.ofNanos(System.nanoTime() - startNanos));
        } catch (InterruptedException e) {
            killTree();
            Thread.currentThread().interrupt();
            throw ExecRefusals.interrupted(shellLine, "the command " + KILLED, e);
        }
    }

    private void killTree() {
        treeKill.kill(process);
        try {
            process.waitFor(DRAIN_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes {@code input} to the process's stdin and closes it; a command that stops reading early is no error. */
    public static void feed(Process process, Optional<byte[]> input) {
        try (OutputStream in = process.getOutputStream()) {
            if (input.isPresent()) {
                in.write(input.get());
            }
        } catch (IOException e) {
            // The command closed its stdin or exited before reading it all: not an error of the run.
            LOG.log(System.Logger.Level.DEBUG, () -> "stdin not fully delivered: " + ErrorDetail.of(e));
        }
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    private static boolean join(Thread thread, long deadline) throws InterruptedException {
        long left = remaining(deadline);
        if (left > 0) {
            TimeUnit.NANOSECONDS.timedJoin(thread, left);
        }
        return !thread.isAlive();
    }

    private static void joinWithin(Thread thread, Duration grace) {
        try {
            thread.join(grace.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A daemon thread: a reader blocked on a pipe some escaped process still holds must never keep the JVM alive. */
    public static Thread daemon(String role, Runnable body) {
        Thread thread = new Thread(body, "sandbox4j-exec-" + role);
        thread.setDaemon(true);
        return thread;
    }
}
