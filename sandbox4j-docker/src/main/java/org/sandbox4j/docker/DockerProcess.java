package org.sandbox4j.docker;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.model.Frame;
import java.io.IOException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.spi.GuestProcess;

/**
 * The backend's side of one started process: the command's exec (its frames feed the handle's
 * windows; a full window blocks that exec's own docker-java thread, so the engine and then the
 * guest wait), the feeder exec that carries stdin into the command's FIFO, and a watch that asks
 * the engine every {@link #EXIT_POLL} whether the leader still runs, since leftovers holding its
 * pipes keep the exec's stream open after the leader exited.
 */
final class DockerProcess implements GuestProcess.Driver {

    /** How often the watch asks the engine whether the leader still runs. */
    static final Duration EXIT_POLL = Duration.ofMillis(200);
    /** Engine calls the watch may see fail in a row before it gives the process up as lost. */
    private static final int MAX_FAILED_POLLS = 25;
    /** A death by SIGKILL, as the engine reports one: what a removed container's process died of. */
    private static final int KILLED_EXIT = GuestProcess.SIGNAL_EXIT_BASE + 9;

    private final DockerSandbox sandbox;
    private final GuestProcess handle;
    private final String token;
    private final long group;
    private final String execId;
    private final ExecOutput output;
    private final FeedPipe stdin;
    private final Feeder feeder;

    private DockerProcess(DockerSandbox sandbox, GuestProcess handle, String token, long group, String execId,
            ExecOutput output, FeedPipe stdin, Feeder feeder) {
        this.sandbox = sandbox;
        this.handle = handle;
        this.token = token;
        this.group = group;
        this.execId = execId;
        this.output = output;
        this.stdin = stdin;
        this.feeder = feeder;
    }

    /** The frames of a process's exec, into its handle. */
    static ExecOutput.Sink sinkFor(GuestProcess handle) {
        AtomicBoolean unwanted = new AtomicBoolean();
        return new ExecOutput.Sink() {
            @Override
            public boolean offer(ExecStream stream, byte[] payload) {
                boolean wanted = handle.output(stream, payload, 0, payload.length);
                if (!wanted) {
                    unwanted.set(true);
                }
                return wanted;
            }

            @Override
            public boolean stopped() {
                return unwanted.get();
            }

            @Override
            public void ended() {
                handle.outputEnded(ExecStream.STDOUT);
                handle.outputEnded(ExecStream.STDERR);
            }
        };
    }

    /** The feeder exec's callback: it carries no output; its end means stdin is gone. */
    static final class Feeder extends ResultCallback.Adapter<Frame> {
        private final FeedPipe stdin;

        Feeder(FeedPipe stdin) {
            this.stdin = stdin;
        }

        @Override
        public void onComplete() {
            stdin.abort();
            super.onComplete();
        }

        @Override
        public void onError(Throwable error) {
            stdin.abort();
            super.onError(error);
        }
    }

    /** Attaches the started process to its handle and starts the watch. */
    static void serve(DockerSandbox sandbox, GuestProcess handle, String token, long group, String execId,
            ExecOutput output, FeedPipe stdin, Feeder feeder) {
        DockerProcess process = new DockerProcess(sandbox, handle, token, group, execId, output, stdin, feeder);
        handle.attach(process);
        Thread watch = new Thread(process::watch, "sandbox4j-docker-process-" + token.substring(0, 8));
        watch.setDaemon(true);
        watch.start();
    }

    @Override
    public void writeStdin(byte[] bytes, int off, int len) throws IOException {
        stdin.write(bytes, off, len);
    }

    /**
     * Ends the feeder's input; once docker-java copied the last byte to the engine, the feeder's
     * connection is closed, so the engine closes {@code cat}'s stdin, {@code cat} ends, and the FIFO
     * losing its writer is the command's end of input.
     */
    @Override
    public void closeStdin() {
        stdin.end();
        while (handle.isAlive() && !stdin.awaitDrained(EXIT_POLL)) {
            // The guest has not read it all yet: the last bytes are still on their way.
        }
        closeQuietly(feeder);
    }

    @Override
    public void signal(ProcessSignal signal) {
        sandbox.internal(GuestScripts.signal(signal.shellName(), group), DockerSandbox.KILL_TIMEOUT);
    }

    @Override
    public void killTree() {
        stdin.abort();
        sandbox.killTree(token, OptionalLong.of(group), "was ended by its handle or left processes behind");
        closeQuietly(feeder);
    }

    @Override
    public boolean sandboxDisposed() {
        return sandbox.backend().wasDisposedOf(sandbox.containerId());
    }

    /** Until the handle ends: reports the leader's exit, or the container's end; then closes the streams. */
    private void watch() {
        long livenessEvery = Math.max(1, DockerSandbox.LIVENESS_POLL.toMillis() / EXIT_POLL.toMillis());
        int failed = 0;
        try {
            for (long poll = 1; handle.isAlive(); poll++) {
                TimeUnit.NANOSECONDS.sleep(EXIT_POLL.toNanos());
                if (!handle.isAlive()) {
                    break;
                }
                InspectExecResponse inspected;
                try {
                    inspected = sandbox.inspectExec(execId);
                    failed = 0;
                } catch (RuntimeException failure) {
                    if (Engine.isNotFound(failure) || !runningQuietly()) {
                        containerEnded();
                        break;
                    }
                    if (++failed >= MAX_FAILED_POLLS) {
                        handle.lost(sandbox.backend().engineFailure("follow a started process in container "
                                + sandbox.containerName(), failure));
                        break;
                    }
                    continue;
                }
                Long code = inspected.getExitCodeLong();
                if (!Boolean.TRUE.equals(inspected.isRunning()) && code != null) {
                    // Let what the leader wrote last arrive first; leftovers holding the pipes are killed next.
                    awaitStreamEnd(EXIT_POLL);
                    handle.exited(code.intValue());
                    break;
                }
                if (poll % livenessEvery == 0 && !runningQuietly()) {
                    containerEnded();
                    break;
                }
            }
            awaitStreamEnd(GuestProcess.END_GRACE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(output);
            closeQuietly(feeder);
            stdin.abort();
        }
    }

    /** The container is gone or stopped: a disposal ends the handle as one, anything else loses it. */
    private void containerEnded() {
        boolean disposed;
        try {
            disposed = sandboxDisposed();
        } catch (RuntimeException engineFailed) {
            // The handle must end whatever the engine says: a watcher that dies leaves it running forever.
            handle.lost(sandbox.backend().engineFailure("tell whether container " + sandbox.containerName()
                    + " was disposed of", engineFailed));
            return;
        }
        if (disposed) {
            handle.exited(KILLED_EXIT);
            return;
        }
        handle.lost(new SandboxException("backend '" + sandbox.backend().name() + "': container "
                + sandbox.containerName() + " stopped while the process ran (it may have exhausted its memory or "
                + "process limit); start the process again (the next command starts the container again, with an "
                + "empty work area)"));
    }

    private boolean runningQuietly() {
        try {
            return sandbox.backend().isRunning(sandbox.containerId());
        } catch (RuntimeException failure) {
            return true;
        }
    }

    private void awaitStreamEnd(Duration wait) throws InterruptedException {
        try {
            output.awaitEndOrCap(wait.toNanos());
        } catch (RuntimeException streamFailed) {
            // The stream broke: it has ended.
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Closing an ended stream can only fail uninterestingly.
        }
    }
}
