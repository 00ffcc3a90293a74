package org.sandbox4j.core.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxException;

/**
 * A {@link GuestProcess.Driver} over a started host {@link Process}, for every backend whose command
 * is a host process (a launcher, a client): two readers feed its windows (a full window stops the
 * reader, so the pipe fills and the guest waits), a third waits for the leader, and stdin, signals
 * and the tree kill go to the process and the backend's own means.
 */
public final class HostProcess implements GuestProcess.Driver {

    /**
     * Whether a launcher's exit code is its command's: empty when it is, else why not (the launcher
     * failed, or was killed before its command's end was recorded).
     */
    @FunctionalInterface
    public interface LeaderExit {
        Optional<SandboxException> notTheCommands(int launcherExit);
    }

    /** How a backend signals a command's process group. */
    @FunctionalInterface
    public interface Signaller {
        void signal(Process launcher, ProcessSignal signal);
    }

    private static final System.Logger LOG = System.getLogger(HostProcess.class.getName());
    /** How long a kill may take to end the launcher before the handle stops waiting for it. */
    public static final Duration KILL_GRACE = Duration.ofSeconds(5);
    private static final int CHUNK_BYTES = 8192;

    private final GuestProcess handle;
    private final Process process;
    private final ProcessPump.TreeKill treeKill;
    private final Signaller signaller;
    private final BooleanSupplier disposed;
    private final LeaderExit leaderExit;
    private final OutputStream stdin;

    private HostProcess(GuestProcess handle, Process process, ProcessPump.TreeKill treeKill, Signaller signaller,
            BooleanSupplier disposed, LeaderExit leaderExit) {
        this.handle = handle;
        this.process = process;
        this.treeKill = treeKill;
        this.signaller = signaller;
        this.disposed = disposed;
        this.leaderExit = leaderExit;
        this.stdin = process.getOutputStream();
    }

    /**
     * Attaches {@code process} to {@code handle} and starts its readers and its leader's watch.
     *
     * @param treeKill kills everything the command started; it is also called once the leader ended by
     *                 itself, for what it left behind, so it must not close the launcher's streams (as
     *                 {@link Process#destroyForcibly} does, losing the tail of the output): kill the
     *                 launcher through {@link Process#toHandle()}, its group, or its children
     * @param disposed whether the sandbox was disposed of, asked after a death by signal
     */
    public static void serve(GuestProcess handle, Process process, ProcessPump.TreeKill treeKill, Signaller signaller,
            BooleanSupplier disposed) {
        serve(handle, process, treeKill, signaller, disposed, launcherExit -> Optional.empty());
    }

    /**
     * As {@link #serve(GuestProcess, Process, ProcessPump.TreeKill, Signaller, BooleanSupplier)}, for a
     * process that is a launcher in front of the command: {@code leaderExit} says whether its exit
     * code is the command's; when it is not, the handle ends as disposed of (the sandbox was) or
     * lost, never with the launcher's code.
     */
    public static void serve(GuestProcess handle, Process process, ProcessPump.TreeKill treeKill, Signaller signaller,
            BooleanSupplier disposed, LeaderExit leaderExit) {
        HostProcess driver = new HostProcess(handle, process, treeKill, signaller, disposed, leaderExit);
        handle.attach(driver);
        ProcessPump.daemon("stdout", () -> driver.pump(process.getInputStream(), ExecStream.STDOUT)).start();
        ProcessPump.daemon("stderr", () -> driver.pump(process.getErrorStream(), ExecStream.STDERR)).start();
        ProcessPump.daemon("leader", driver::awaitLeader).start();
    }

    /**
     * Whether the launch's stdout begins with {@code preamble} (a line the launch writes just before
     * it runs the command, so that a launcher that failed first is told apart) within {@code deadline};
     * false when it wrote something else, ended, or the deadline passed. Only the preamble is read.
     */
    public static boolean startConfirmed(Process process, byte[] preamble, Duration deadline) {
        CompletableFuture<Boolean> seen = new CompletableFuture<>();
        ProcessPump.daemon("start", () -> {
            try {
                seen.complete(Arrays.equals(process.getInputStream().readNBytes(preamble.length), preamble));
            } catch (IOException e) {
                seen.complete(false);
            }
        }).start();
        try {
            return seen.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * What a launch that never started its command left on {@code stream}: at most {@code maxBytes},
     * read for at most {@code deadline} (nothing of the guest's ran, so it is the launcher's own words).
     */
    public static byte[] leftOver(InputStream stream, int maxBytes, Duration deadline) {
        CompletableFuture<byte[]> read = new CompletableFuture<>();
        ProcessPump.daemon("leftover", () -> {
            try {
                read.complete(stream.readNBytes(maxBytes));
            } catch (IOException e) {
                read.complete(new byte[0]);
            }
        }).start();
        try {
            return read.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return new byte[0];
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new byte[0];
        }
    }

    private void pump(InputStream stream, ExecStream which) {
        byte[] chunk = new byte[CHUNK_BYTES];
        try (stream) {
            for (int n = stream.read(chunk); n >= 0; n = stream.read(chunk)) {
                if (!handle.output(which, chunk, 0, n)) {
                    return;
                }
            }
        } catch (IOException e) {
            // The pipe broke: the process ended or was killed; the stream ends here.
        } finally {
            handle.outputEnded(which);
        }
    }

    private void awaitLeader() {
        try {
            int code = process.waitFor();
            Optional<SandboxException> notTheCommands = leaderExit.notTheCommands(code);
            if (notTheCommands.isPresent()) {
                handle.endedUnreported(notTheCommands.get());
            } else {
                handle.exited(code);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void writeStdin(byte[] bytes, int off, int len) throws IOException {
        stdin.write(bytes, off, len);
        stdin.flush();
    }

    @Override
    public void closeStdin() throws IOException {
        stdin.close();
    }

    @Override
    public void signal(ProcessSignal signal) {
        signaller.signal(process, signal);
    }

    @Override
    public void killTree() {
        treeKill.kill(process);
        try {
            if (!process.waitFor(KILL_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
                LOG.log(System.Logger.Level.WARNING, () -> "the launcher " + process.pid() + " of a started process "
                        + "did not end within " + KILL_GRACE.toSeconds() + " s of its tree kill");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean sandboxDisposed() {
        return disposed.getAsBoolean();
    }
}
