package org.sandbox4j.core.spi;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxProcessKilled;
import org.sandbox4j.core.SandboxProcessLimitExceeded;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The one implementation of {@link SandboxProcess} every backend shares: its states, its lifetime,
 * the per-sandbox limit, the bounded windows, listener delivery and the wording. A backend supplies a
 * {@link Driver} (how to write stdin, signal the group and kill the tree) and feeds what happens
 * into {@link #output}, {@link #outputEnded}, {@link #exited} and {@link #lost}.
 */
public final class GuestProcess implements SandboxProcess {

    /** What a backend does for a started process. */
    public interface Driver {
        /** Writes to the command's stdin, waiting while the guest does not read. */
        void writeStdin(byte[] bytes, int off, int len) throws IOException;

        /** Ends the command's stdin. */
        void closeStdin() throws IOException;

        /** Sends {@code signal} to the command's process group. */
        void signal(ProcessSignal signal);

        /**
         * Kills everything the command started and returns once it is gone, within the backend's own
         * bound; a backend that cannot confirm it retires the sandbox. Called again after the leader
         * exited by itself, for what it left behind.
         */
        void killTree();

        /** Whether the sandbox was disposed of (asked after a death by signal; may take {@link Disposals#NOTICE}). */
        boolean sandboxDisposed();
    }

    private static final System.Logger LOG = System.getLogger(GuestProcess.class.getName());
    /** How much of stdin the host holds for one process before {@link #write} waits. */
    public static final int STDIN_WINDOW_BYTES = 64 * 1024;
    /**
     * How long the output streams may stay open once the process ended (something the kill could
     * not reach holding a pipe) before they are ended here.
     */
    public static final Duration END_GRACE = Duration.ofSeconds(5);
    /** A death by signal is reported as this plus the signal's number, as {@code exec} reports it. */
    public static final int SIGNAL_EXIT_BASE = 128;
    private static final ScheduledExecutorService TIMERS = timers();

    private enum State { RUNNING, EXITED, TIMED_OUT, KILLED, DISPOSED, LOST }

    private final String backendName;
    private final String sandboxId;
    private final String shellLine;
    private final ProcessOptions options;
    private final ProcessSlots.Slot slot;
    private final Object lock = new Object();
    private final ProcessWindow stdout;
    private final ProcessWindow stderr;
    private final ProcessWindow stdin;
    private final ReentrantLock writing = new ReentrantLock();
    private final List<Runnable> whenEnded = new CopyOnWriteArrayList<>();
    private final AtomicBoolean cleanedUp = new AtomicBoolean();
    private volatile Driver driver;
    private volatile ScheduledFuture<?> lifetime;
    private State state = State.RUNNING;
    /** The ending's kill is done: until then a waiter is not told the process ended (it may still run). */
    private boolean settled;
    private int exitCode;
    private SandboxException lostBecause;
    private boolean stdinClosed;
    private boolean closed;

    private GuestProcess(String backendName, String sandboxId, String shellLine, ProcessOptions options,
            ProcessSlots.Slot slot) {
        this.backendName = backendName;
        this.sandboxId = sandboxId;
        this.shellLine = shellLine;
        this.options = options;
        this.slot = slot;
        boolean pull = options.listener().isEmpty();
        this.stdout = pull ? new ProcessWindow(lock, options.windowBytes()) : null;
        this.stderr = pull ? new ProcessWindow(lock, options.windowBytes()) : null;
        this.stdin = new ProcessWindow(lock, STDIN_WINDOW_BYTES);
    }

    /**
     * A process about to be started in sandbox {@code sandboxId}, holding one of its slots; call
     * {@link #attach} once it started, or {@link #abandon} if it did not.
     *
     * @param shellLine the command as a shell line, for messages
     * @throws SandboxProcessLimitExceeded the sandbox runs as many as it may, or their windows would pass the host's bound
     */
    public static GuestProcess reserve(String backendName, String sandboxId, String shellLine, ProcessOptions options) {
        long held = 2L * options.windowBytes() + STDIN_WINDOW_BYTES;
        ProcessSlots.Slot slot = ProcessSlots.reserve(backendName + "/" + sandboxId, held).orElseThrow(() ->
                new SandboxProcessLimitExceeded("backend '" + backendName + "': sandbox " + sandboxId + " already runs "
                        + "as many started processes as it may (at most " + HostCeilings.MAX_PROCESSES_PER_SANDBOX
                        + ", their windows at most " + HostCeilings.MAX_BUFFERED_BYTES + " bytes in all); nothing was "
                        + "started: close a process you no longer need, use smaller windows "
                        + "(ProcessOptions.withWindow), or run one-shot work with exec"));
        return new GuestProcess(backendName, sandboxId, shellLine, options, slot);
    }

    /** Gives back the slot of a process that never started. */
    public void abandon() {
        synchronized (lock) {
            state = State.LOST;
        }
        settle();
        cleanUp();
    }

    /** The process started: {@code driver} serves it from now on, and its lifetime counts. */
    public void attach(Driver driver) {
        this.driver = Objects.requireNonNull(driver, "driver");
        ProcessPump.daemon("stdin", this::feedStdin).start();
        lifetime = TIMERS.schedule(() -> ProcessPump.daemon("lifetime", () -> end(State.TIMED_OUT)).start(),
                options.lifetime().toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Runs {@code cleanup} once the process ended (at once if it has), e.g. to drop the backend's record of it. */
    public void whenEnded(Runnable cleanup) {
        whenEnded.add(cleanup);
        if (cleanedUp.get() && whenEnded.remove(cleanup)) {
            cleanup.run();
        }
    }

    // ---- what the backend feeds in

    /**
     * Output of the command: waits while the stream's window is full (or while the listener works),
     * which makes the guest wait. False when nobody will read any more: stop reading the stream.
     */
    public boolean output(ExecStream stream, byte[] bytes, int off, int len) {
        Objects.checkFromIndexSize(off, len, bytes.length);
        if (len == 0) {
            return true;
        }
        if (options.listener().isPresent()) {
            ExecListener listener = options.listener().get();
            ExecCapture.deliver(listener, backendName, stream, java.util.Arrays.copyOfRange(bytes, off, off + len));
            return !closedOrGone();
        }
        try {
            return window(stream).put(bytes, off, len);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The stream reached its end. */
    public void outputEnded(ExecStream stream) {
        if (options.listener().isEmpty()) {
            window(stream).end();
        }
    }

    /**
     * The command's leader exited with {@code code} (128 + n for a death by signal n): what it left
     * behind is killed now, and a death by signal while the sandbox was disposed of is a disposal.
     */
    public void exited(int code) {
        synchronized (lock) {
            if (state != State.RUNNING) {
                return;
            }
        }
        killQuietly();
        State ending = code >= SIGNAL_EXIT_BASE && driver().sandboxDisposed() ? State.DISPOSED : State.EXITED;
        if (claim(ending, code, null)) {
            settle();
            cleanUp();
        }
    }

    /**
     * The leader ended with no exit code of the command's (the launcher failed, or was killed under
     * it, as a disposal kills it): a disposal when the sandbox was disposed of, else the process is
     * {@link #lost} with {@code why}. Never an exit code: the launcher's is not the command's.
     */
    public void endedUnreported(SandboxException why) {
        synchronized (lock) {
            if (state != State.RUNNING) {
                return;
            }
        }
        if (driver().sandboxDisposed()) {
            killQuietly();
            if (claim(State.DISPOSED, 0, null)) {
                settle();
                cleanUp();
            }
            return;
        }
        lost(why);
    }

    /** The backend lost the process (a stream or connection broke): its tree is killed, and waitFor says why. */
    public void lost(SandboxException why) {
        if (claim(State.LOST, 0, why)) {
            killQuietly();
            settle();
            cleanUp();
        }
    }

    // ---- the handle

    @Override
    public int write(byte[] bytes, Duration wait) {
        Objects.requireNonNull(bytes, "bytes");
        long deadline = deadline(wait);
        synchronized (lock) {
            requireOpen();
            if (stdinClosed) {
                throw new IllegalStateException("stdin of " + GuestText.quote(shellLine) + " was closed; no more can "
                        + "be written");
            }
            if (state == State.DISPOSED) {
                throw disposed();
            }
            if (state != State.RUNNING) {
                return 0;
            }
        }
        try {
            if (!writing.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                return 0;
            }
            try {
                return stdin.offer(bytes, 0, bytes.length, deadline);
            } finally {
                writing.unlock();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("the write to " + GuestText.quote(shellLine) + " was interrupted; the "
                    + "process goes on", e);
        }
    }

    @Override
    public void closeStdin() {
        synchronized (lock) {
            requireOpen();
            stdinClosed = true;
        }
        stdin.end();
    }

    @Override
    public ProcessOutput read(Duration wait) {
        long deadline = deadline(wait);
        if (options.listener().isPresent()) {
            throw new IllegalStateException("the output of " + GuestText.quote(shellLine) + " goes to its listener; "
                    + "start it without one to read it");
        }
        synchronized (lock) {
            requireOpen();
            try {
                while (!stdout.hasBytes() && !stderr.hasBytes() && !(stdout.drained() && stderr.drained())
                        && state != State.DISPOSED) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("the read from " + GuestText.quote(shellLine) + " was interrupted; the "
                        + "process goes on", e);
            }
            if (state == State.DISPOSED && !stdout.hasBytes() && !stderr.hasBytes()) {
                throw disposed();
            }
            byte[] out = stdout.takeAll();
            byte[] err = stderr.takeAll();
            return new ProcessOutput(out, err, stdout.drained(), stderr.drained());
        }
    }

    @Override
    public OptionalInt waitFor(Duration wait) {
        long deadline = deadline(wait);
        synchronized (lock) {
            requireOpen();
            try {
                while (state == State.RUNNING || !settled) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return OptionalInt.empty();
                    }
                    lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("the wait for " + GuestText.quote(shellLine) + " was interrupted; the "
                        + "process goes on (kill or close it to end it)", e);
            }
            return switch (state) {
                case EXITED -> OptionalInt.of(exitCode);
                case TIMED_OUT -> throw new SandboxTimeoutException("the process " + GuestText.quote(shellLine)
                        + " ran past its lifetime of " + options.lifetime().toMillis() + " ms and "
                        + ExecRefusals.KILLED_WITH_EVERY_PROCESS + ": start it with a longer lifetime "
                        + "(ProcessOptions.withLifetime), or make it finish sooner");
                case KILLED -> throw new SandboxProcessKilled("the process " + GuestText.quote(shellLine) + " was "
                        + "killed by its handle (kill or close) with everything it started; its exit code is not "
                        + "the command's word and is not reported");
                case DISPOSED -> throw disposed();
                case LOST -> throw new SandboxException(lostBecause.getMessage(), lostBecause);
                case RUNNING -> throw new IllegalStateException("still running");
            };
        }
    }

    @Override
    public boolean isAlive() {
        synchronized (lock) {
            return !settled;
        }
    }

    @Override
    public void signal(ProcessSignal signal) {
        Objects.requireNonNull(signal, "signal");
        synchronized (lock) {
            requireOpen();
            if (state == State.DISPOSED) {
                throw disposed();
            }
            if (state != State.RUNNING) {
                return;
            }
        }
        driver().signal(signal);
    }

    @Override
    public void kill() {
        end(State.KILLED);
    }

    @Override
    public void close() {
        kill();
        synchronized (lock) {
            closed = true;
        }
        if (stdout != null) {
            stdout.discard();
            stderr.discard();
        }
        stdin.discard();
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "GuestProcess[" + backendName + "/" + sandboxId + " " + GuestText.quote(shellLine) + " "
                    + state + "]";
        }
    }

    // ---- the rules

    private void end(State ending) {
        if (claim(ending, 0, null)) {
            killQuietly();
            settle();
            cleanUp();
        } else {
            awaitSettled();
        }
    }

    /** Another ending is under way (its kill may take the backend's bound): a kill returns once it is done. */
    private void awaitSettled() {
        boolean interrupted = false;
        synchronized (lock) {
            while (!settled) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Moves a running process to {@code ending}; false if it already ended (the first end is the one
     * told). Waiters hear of it once it is {@link #settle settled}: after the ending's kill.
     */
    private boolean claim(State ending, int code, SandboxException why) {
        synchronized (lock) {
            if (state != State.RUNNING) {
                return false;
            }
            state = ending;
            exitCode = code;
            lostBecause = why;
            return true;
        }
    }

    /** The process is gone: its slot is free before any waiter wakes, so a waiter may start another at once. */
    private void settle() {
        synchronized (lock) {
            slot.release();
            settled = true;
            lock.notifyAll();
        }
    }

    private void killQuietly() {
        boolean interrupted = Thread.interrupted();
        try {
            driver().killTree();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "' could not kill the process "
                    + GuestText.quote(shellLine) + ": " + ErrorDetail.of(e));
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Once ended: stdin stops, the streams end within {@link #END_GRACE}, the slot and the backend's record go. */
    private void cleanUp() {
        if (!cleanedUp.compareAndSet(false, true)) {
            return;
        }
        ScheduledFuture<?> timer = lifetime;
        if (timer != null) {
            timer.cancel(false);
        }
        stdin.discard();
        if (stdout != null) {
            TIMERS.schedule(() -> {
                stdout.end();
                stderr.end();
            }, END_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        }
        for (Runnable cleanup : whenEnded) {
            if (whenEnded.remove(cleanup)) {
                try {
                    cleanup.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "' could not clean up after "
                            + GuestText.quote(shellLine) + ": " + ErrorDetail.of(e));
                }
            }
        }
    }

    /** The stdin writer: what the caller wrote, in order, to the driver; then the end of input. */
    private void feedStdin() {
        try {
            while (true) {
                byte[] chunk;
                synchronized (lock) {
                    while (!stdin.hasBytes() && !stdin.ended()) {
                        lock.wait();
                    }
                    if (!stdin.hasBytes()) {
                        break;
                    }
                    chunk = stdin.takeAll();
                }
                driver().writeStdin(chunk, 0, chunk.length);
            }
            synchronized (lock) {
                if (!stdinClosed) {
                    return;
                }
            }
            driver().closeStdin();
        } catch (IOException e) {
            // The command closed its stdin or ended: later writes get nothing in, which is no error.
            LOG.log(System.Logger.Level.DEBUG, () -> "stdin of " + shellLine + " ended: " + ErrorDetail.of(e));
            stdin.discard();
        } catch (InterruptedException e) {
            stdin.discard();
        }
    }

    private boolean closedOrGone() {
        synchronized (lock) {
            return closed;
        }
    }

    private ProcessWindow window(ExecStream stream) {
        return stream == ExecStream.STDOUT ? stdout : stderr;
    }

    private Driver driver() {
        Driver attached = driver;
        if (attached == null) {
            throw new IllegalStateException("the process was not attached to its backend");
        }
        return attached;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the process " + GuestText.quote(shellLine) + " was closed");
        }
    }

    private SandboxDisposed disposed() {
        return new SandboxDisposed("backend '" + backendName + "': the sandbox " + sandboxId + " was disposed of "
                + "while " + GuestText.quote(shellLine) + " ran; it was stopped with everything it started: acquire "
                + "the sandbox again and start it anew");
    }

    private static long deadline(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative() || wait.isZero()) {
            throw new IllegalArgumentException("a wait must be positive, not " + wait);
        }
        return System.nanoTime() + Math.min(wait.toNanos(), org.sandbox4j.core.ExecOptions.MAX_TIMEOUT.toNanos());
    }

    private static ScheduledExecutorService timers() {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, body -> {
            Thread thread = new Thread(body, "sandbox4j-process-timers");
            thread.setDaemon(true);
            return thread;
        });
        timers.setRemoveOnCancelPolicy(true);
        return timers;
    }
}
