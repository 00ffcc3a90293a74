package org.sandbox4j.local;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * One started command: feeds stdin, reads stdout and stderr concurrently under one shared cap
 * (nothing is buffered past it), hands each chunk to the listener as it arrives, and enforces the
 * caller's timeout by killing the whole process tree with the backend's own {@link TreeKill}.
 */
final class ProcessRun {

    private static final System.Logger LOG = System.getLogger(ProcessRun.class.getName());
    private static final int CHUNK_BYTES = 8192;
    /** How long the streams may take to close after a kill before the run stops waiting for them. */
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    /** How a backend kills everything a command started (a PID namespace, a process group). */
    @FunctionalInterface
    interface TreeKill {
        void kill(Process process);
    }

    private final Process process;
    private final TreeKill treeKill;
    private final ExecOptions options;
    private final String description;
    private final String backendName;
    private final OutputBudget budget;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    /** Why a reader stopped before its stream ended (it could not hold what came): the call then fails. */
    private volatile Throwable readerFailure;

    private ProcessRun(Process process, TreeKill treeKill, ExecOptions options, String description,
            String backendName) {
        this.process = process;
        this.treeKill = treeKill;
        this.options = options;
        this.description = description;
        this.backendName = backendName;
        this.budget = new OutputBudget(options.outputCapBytes());
    }

    /**
     * Waits for {@code process} under {@code options} and returns its result.
     *
     * @param description the command as the caller wrote it, for messages
     */
    static ExecResult await(Process process, TreeKill treeKill, ExecOptions options, String description,
            String backendName, long startNanos) {
        return new ProcessRun(process, treeKill, options, description, backendName).await(startNanos);
    }

    private ExecResult await(long startNanos) {
        long deadline = startNanos + options.timeout().toNanos();
        Thread feeder = daemon("stdin", () -> feed(options.stdin()));
        Thread outReader = daemon("stdout", () -> drain(process.getInputStream(), ExecStream.STDOUT, stdout));
        Thread errReader = daemon("stderr", () -> drain(process.getErrorStream(), ExecStream.STDERR, stderr));
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
                if (budget.exceeded()) {
                    throw outputLimitExceeded();
                }
                if (readerFailure != null) {
                    throw readerFailed();
                }
                throw ExecRefusals.timedOut(description, options.timeout(), "was killed with every process it started");
            }
            if (budget.exceeded()) {
                throw outputLimitExceeded();
            }
            if (readerFailure != null) {
                throw readerFailed();
            }
            return new ExecResult(snapshot(stdout), snapshot(stderr), process.exitValue(),
                    Duration.ofNanos(System.nanoTime() - startNanos));
        } catch (InterruptedException e) {
            killTree();
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("the thread running " + GuestText.quote(description) + " was interrupted; "
                    + "the command was killed with every process it started", e);
        }
    }

    private SandboxExecOutputLimitExceeded outputLimitExceeded() {
        return ExecRefusals.outputCapExceeded(description, options.outputCapBytes(), "was killed");
    }

    /** A reader that could not keep what came never lets a result through as if it were whole. */
    private SandboxExecOutputLimitExceeded readerFailed() {
        return new SandboxExecOutputLimitExceeded("the host could not hold the output of " + GuestText.quote(description)
                + " (" + ErrorDetail.of(readerFailure) + ") and killed the command; nothing of its output is returned: "
                + "lower the output cap, give this JVM more heap, or write large results to a file and read that",
                readerFailure);
    }

    private void killTree() {
        treeKill.kill(process);
        try {
            process.waitFor(DRAIN_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void feed(Optional<byte[]> input) {
        try (OutputStream in = process.getOutputStream()) {
            if (input.isPresent()) {
                in.write(input.get());
            }
        } catch (IOException e) {
            // The command closed its stdin or exited before reading it all: not an error of the run.
            LOG.log(System.Logger.Level.DEBUG, () -> "stdin not fully delivered: " + ErrorDetail.of(e));
        }
    }

    /** Reads one stream until it closes or the shared cap is exceeded; never buffers past the cap. */
    private void drain(InputStream stream, ExecStream which, ByteArrayOutputStream sink) {
        byte[] chunk = new byte[CHUNK_BYTES];
        try (stream) {
            int read;
            while ((read = stream.read(chunk)) >= 0) {
                int accepted = budget.take(read);
                if (accepted > 0) {
                    byte[] kept = Arrays.copyOf(chunk, accepted);
                    synchronized (sink) {
                        sink.write(kept, 0, accepted);
                    }
                    deliver(which, kept);
                }
                if (accepted < read) {
                    treeKill.kill(process);
                    return;
                }
            }
        } catch (IOException e) {
            // The process was killed under the reader; what was read is kept.
            LOG.log(System.Logger.Level.DEBUG, () -> which + " closed: " + ErrorDetail.of(e));
        } catch (OutOfMemoryError | RuntimeException e) {
            // Keeping more was impossible: stop the command rather than let it run on unread (or die of SIGPIPE).
            readerFailure = e;
            treeKill.kill(process);
        }
    }

    private void deliver(ExecStream which, byte[] chunk) {
        Optional<ExecListener> listener = options.listener();
        if (listener.isEmpty()) {
            return;
        }
        try {
            listener.get().onOutput(which, chunk);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "': an exec listener threw, and the "
                    + "command goes on: " + ErrorDetail.of(e));
        }
    }

    private static byte[] snapshot(ByteArrayOutputStream sink) {
        synchronized (sink) {
            return sink.toByteArray();
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

    private static Thread daemon(String role, Runnable body) {
        Thread thread = new Thread(body, "sandbox4j-local-" + role);
        // A reader blocked on a pipe some escaped process still holds must never keep the JVM alive.
        thread.setDaemon(true);
        return thread;
    }

    /** The one cap stdout and stderr share. */
    private static final class OutputBudget {
        private final long cap;
        private long used;
        private boolean exceeded;

        OutputBudget(long cap) {
            this.cap = cap;
        }

        /** How many of {@code offered} bytes fit; fewer marks the budget exceeded. */
        synchronized int take(int offered) {
            int accepted = (int) Math.min(offered, cap - used);
            used += accepted;
            if (accepted < offered) {
                exceeded = true;
            }
            return accepted;
        }

        synchronized boolean exceeded() {
            return exceeded;
        }
    }

    /** Thrown when the host cannot start the launcher at all. */
    static SandboxException couldNotStart(String backendName, String launcher, IOException cause) {
        return new SandboxException("backend '" + backendName + "' could not start " + launcher + ": "
                + ErrorDetail.of(cause), cause);
    }
}
