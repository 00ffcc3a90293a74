package org.sandbox4j.agent;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestProcess;
import org.sandbox4j.core.spi.GuestText;

/**
 * The agent's side of one started process ({@link AgentConnection#start}), the driver of its
 * {@link GuestProcess} handle. Two threads serve it: the <em>pump</em> takes every frame of the
 * exec (so stdin acknowledgements and the {@code EXIT} are seen at once, whatever the caller reads)
 * and queues its output for the <em>delivery</em> thread, which puts it into the handle's windows
 * (waiting while they are full) and only then gives the agent that much credit back: the agent stops
 * reading the command's pipe, so the guest waits in its own {@code write}, and the queue never holds
 * more than the credit granted. The {@code EXIT} ends the handle once what came before it was
 * delivered, or after {@link #EXIT_DELIVERY_WAIT} if the caller is not reading.
 *
 * <p>A kill is the agent's {@code KILL} (its whole tree, by whatever means the agent has), confirmed
 * by the {@code EXIT} within {@link AgentExec#KILL_GRACE}. An agent of 1.2 or later is asked to end
 * the tree when the leader exits ({@code EXEC_END_TREE}), so nothing the command left behind outlives
 * it; an {@code EXIT} saying processes survived the kill is reported as {@link AgentKillFailed}.
 */
final class AgentProcess implements GuestProcess.Driver {

    /** How long the end of a process waits for its last output to reach the handle before it is reported. */
    static final Duration EXIT_DELIVERY_WAIT = Duration.ofMillis(200);
    /** How long the agent may take to answer the EXEC with STARTED (or why not). */
    static final Duration START_DEADLINE = AgentConnection.REQUEST_DEADLINE;
    /** Besides its output credit, what a process may have waiting: its small frames (acks, EXIT). */
    private static final long SMALL_FRAMES_BYTES = 64 * 1024;
    private static final long NO_DEADLINE = Long.MAX_VALUE / 2;
    private static final int SIGKILL = 9;

    private final AgentConnection connection;
    private final PendingCall call;
    private final GuestProcess handle;
    private final String shellLine;
    private final BooleanSupplier sandboxDisposed;
    private final Object lock = new Object();
    /** Output the pump took, for the delivery thread; bounded by the credit the agent was granted. */
    private final ArrayDeque<Frame> output = new ArrayDeque<>();
    private long stdinUnacknowledged;
    private boolean outputWanted = true;
    private boolean deliveryIdle = true;
    private AgentExit exit;
    private boolean ended;

    private AgentProcess(AgentConnection connection, PendingCall call, GuestProcess handle, String shellLine,
            BooleanSupplier sandboxDisposed) {
        this.connection = connection;
        this.call = call;
        this.handle = handle;
        this.shellLine = shellLine;
        this.sandboxDisposed = sandboxDisposed;
    }

    static SandboxProcess start(AgentConnection connection, List<String> argv, String cwd, Map<String, String> env,
            ProcessOptions options, String shellLine, String sandboxId, BooleanSupplier sandboxDisposed) {
        return launch(connection, argv, cwd, env, options, shellLine, sandboxId, sandboxDisposed).handle;
    }

    /** As {@link #start}, returning the driver (whose {@link #killForDisposal} a backend sharing one agent needs). */
    static AgentProcess launch(AgentConnection connection, List<String> argv, String cwd, Map<String, String> env,
            ProcessOptions options, String shellLine, String sandboxId, BooleanSupplier sandboxDisposed) {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("a process needs a program: the argv is empty");
        }
        GuestProcess handle = GuestProcess.reserve(connection.backendName(), sandboxId, shellLine, options);
        PendingCall call;
        try {
            call = connection.register(2L * options.windowBytes() + SMALL_FRAMES_BYTES);
        } catch (RuntimeException failed) {
            handle.abandon();
            throw failed;
        }
        AgentProcess process = new AgentProcess(connection, call, handle, shellLine, sandboxDisposed);
        try {
            Optional<Frame> launchFailed = process.launch(argv, cwd, env, options);
            handle.attach(process);
            daemon("delivery", process::deliver);
            if (launchFailed.isPresent()) {
                process.take(launchFailed.get()); // nothing more will come about it: no pump
            } else {
                daemon("pump", process::pump);
            }
            return process;
        } catch (RuntimeException failed) {
            connection.unregister(call);
            handle.abandon();
            throw failed;
        }
    }

    /**
     * Sends the EXEC and waits for STARTED; an EXIT instead (a program that is not there) is
     * returned, to be taken like any, so the handle reports its 127 and its line on stderr.
     */
    private Optional<Frame> launch(List<String> argv, String cwd, Map<String, String> env, ProcessOptions options) {
        List<String> variables = new ArrayList<>(env.size());
        env.forEach((name, value) -> variables.add(name + "=" + value));
        int flags = AgentProtocol.EXEC_STDIN_PIPE | (connection.treeReport() ? AgentProtocol.EXEC_END_TREE : 0);
        // The agent's credit is the handle's window (both 4 KiB to 16 MiB): what the guest may have in flight
        // beyond what the handle holds is no more than the handle itself holds.
        connection.send(AgentProtocol.EXEC, call.id(), Payload.create().u32(flags).text(cwd).texts(argv)
                .texts(variables).u32(options.windowBytes()).build());
        Frame first = connection.next(call, System.nanoTime() + START_DEADLINE.toNanos(), "start " + shellLine,
                START_DEADLINE);
        switch (first.type()) {
            case AgentProtocol.STARTED:
                return Optional.empty();
            case AgentProtocol.EXIT:
                AgentExit launched = AgentExit.of(connection, first);
                AgentExec.launchLine(launched, argv).ifPresent(line -> handle.output(ExecStream.STDERR, line, 0,
                        line.length));
                return Optional.of(first);
            case AgentProtocol.ERROR:
                throw AgentExec.launchRefusal(connection, connection.error(first), options.workingDirectory(),
                        shellLine);
            default:
                throw connection.broken(new AgentProtocolViolation("the agent answered an EXEC with a frame of type 0x"
                        + Integer.toHexString(first.type())));
        }
    }

    // ---- the driver

    @Override
    public void writeStdin(byte[] bytes, int off, int len) throws IOException {
        while (len > 0) {
            int chunk = Math.min(AgentProtocol.STDIN_CHUNK_MAX, len);
            synchronized (lock) {
                while (!ended && stdinUnacknowledged + chunk > AgentProtocol.STDIN_WINDOW) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted while writing to " + shellLine, e);
                    }
                }
                if (ended) {
                    throw new IOException("the process ended: its stdin takes no more");
                }
                stdinUnacknowledged += chunk;
            }
            sendOrThrow(AgentProtocol.STDIN, Payload.create().bytes(bytes, off, chunk).build());
            off += chunk;
            len -= chunk;
        }
    }

    @Override
    public void closeStdin() throws IOException {
        sendOrThrow(AgentProtocol.STDIN_CLOSE, Payload.empty());
    }

    @Override
    public void signal(ProcessSignal signal) {
        synchronized (lock) {
            if (ended) {
                return;
            }
        }
        connection.send(AgentProtocol.SIGNAL, call.id(),
                Payload.create().u32(signal.number()).u8(AgentProtocol.SIGNAL_GROUP).build());
    }

    /**
     * Sends KILL unless the process ended already (with agent 1.2 the tree ended with its leader),
     * and waits for its EXIT.
     *
     * @throws AgentKillFailed the agent reported survivors
     * @throws SandboxTimeoutException no EXIT within {@link AgentExec#KILL_GRACE}
     */
    @Override
    public void killTree() {
        boolean sent = false;
        synchronized (lock) {
            if (exit == null && !ended) {
                sent = true;
            }
        }
        if (sent) {
            try {
                connection.send(AgentProtocol.KILL, call.id(), Payload.empty());
            } catch (AgentConnectionFailed gone) {
                // The session ended: the agent kills every command of a session that ends.
                return;
            }
        }
        long until = System.nanoTime() + AgentExec.KILL_GRACE.toNanos();
        boolean interrupted = false;
        synchronized (lock) {
            while (exit == null && !ended) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        AgentExit seen;
        synchronized (lock) {
            seen = exit;
            if (seen == null && ended) {
                return; // the connection broke: the agent ends a session's commands
            }
        }
        if (seen == null) {
            throw new SandboxTimeoutException("backend '" + connection.backendName() + "': the guest agent did not "
                    + "confirm the kill of " + GuestText.quote(shellLine) + " within " + AgentExec.KILL_GRACE.toMillis()
                    + " ms");
        }
        if (seen.treeSurvived()) {
            throw AgentExec.killFailed(connection, shellLine);
        }
    }

    /** The handle the caller holds. */
    GuestProcess handle() {
        return handle;
    }

    /**
     * Kills the tree as a disposal does, not through the handle: its EXIT (a death by SIGKILL) then
     * ends the handle as disposed of, since {@link #sandboxDisposed} says so by then.
     */
    void killForDisposal() {
        try {
            connection.send(AgentProtocol.KILL, call.id(), Payload.empty());
        } catch (AgentConnectionFailed gone) {
            // The session ended: its commands are gone.
        }
    }

    @Override
    public boolean sandboxDisposed() {
        return sandboxDisposed.getAsBoolean();
    }

    // ---- the threads

    /** Takes every frame of the exec until its EXIT, or until the connection breaks. */
    private void pump() {
        try {
            while (true) {
                Frame frame;
                try {
                    frame = call.next(System.nanoTime() + NO_DEADLINE);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (frame != null && take(frame)) {
                    return;
                }
            }
        } catch (AgentConnectionFailed broken) {
            if (sandboxDisposed.getAsBoolean()) {
                // The disposal ended the agent itself (its namespace or container), and the command with it.
                finish(new AgentExit(AgentExit.SIGNAL_EXIT_BASE + SIGKILL, AgentProtocol.LAUNCH_RAN,
                        AgentProtocol.TREE_ENDED));
                return;
            }
            lose(new SandboxException("backend '" + connection.backendName() + "': the connection to the guest agent "
                    + "broke while " + GuestText.quote(shellLine) + " ran: " + broken.getMessage(), broken));
        } catch (RuntimeException failed) {
            lose(new SandboxException("backend '" + connection.backendName() + "': following " + GuestText.quote(
                    shellLine) + " failed: " + ErrorDetail.of(failed), failed));
        }
    }

    /** One frame; true once the exec is over. */
    private boolean take(Frame frame) {
        switch (frame.type()) {
            case AgentProtocol.STARTED:
                return false;
            case AgentProtocol.OUT:
                synchronized (lock) {
                    output.add(frame);
                    lock.notifyAll();
                }
                return false;
            case AgentProtocol.STDIN_ACK:
                long acknowledged = connection.decode(() -> frame.reader().u32());
                synchronized (lock) {
                    if (acknowledged > stdinUnacknowledged) {
                        throw connection.broken(new AgentProtocolViolation("the agent acknowledged " + acknowledged
                                + " stdin bytes, more than the " + stdinUnacknowledged + " it had"));
                    }
                    stdinUnacknowledged -= acknowledged;
                    lock.notifyAll();
                }
                return false;
            case AgentProtocol.EXIT:
                finish(AgentExit.of(connection, frame));
                return true;
            case AgentProtocol.ERROR:
                AgentError error = connection.error(frame);
                if (error.code() == AgentProtocol.ErrorCode.FLOW || error.code() == AgentProtocol.ErrorCode.UNKNOWN_ID) {
                    // Stdin was refused (the agent closed it), or a frame crossed the end: the process goes on.
                    return false;
                }
                lose(new SandboxException("backend '" + connection.backendName() + "': the guest agent reported "
                        + error.describe() + " about " + GuestText.quote(shellLine)));
                return true;
            default:
                throw connection.broken(new AgentProtocolViolation("the agent sent a frame of type 0x"
                        + Integer.toHexString(frame.type()) + " about a started process"));
        }
    }

    /** The leader exited (and its tree, if asked): what came before is delivered, briefly waited for, then told. */
    private void finish(AgentExit ended) {
        long until = System.nanoTime() + EXIT_DELIVERY_WAIT.toNanos();
        synchronized (lock) {
            exit = ended;
            lock.notifyAll();
            while ((!output.isEmpty() || !deliveryIdle) && outputWanted) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        connection.unregister(call);
        handle.exited(ended.exitCode());
        synchronized (lock) {
            this.ended = true;
            lock.notifyAll();
        }
    }

    private void lose(SandboxException why) {
        connection.unregister(call);
        synchronized (lock) {
            ended = true;
            lock.notifyAll();
        }
        handle.lost(why);
    }

    /** Puts output into the handle, then gives its credit back; ends the streams after the EXIT. */
    private void deliver() {
        try {
            while (true) {
                Frame frame;
                synchronized (lock) {
                    while (output.isEmpty() && exit == null && !ended) {
                        lock.wait();
                    }
                    if (output.isEmpty()) {
                        break;
                    }
                    frame = output.poll();
                    deliveryIdle = false;
                }
                try {
                    deliverOne(frame);
                } finally {
                    synchronized (lock) {
                        deliveryIdle = true;
                        lock.notifyAll();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException failed) {
            lose(new SandboxException("backend '" + connection.backendName() + "': delivering the output of "
                    + GuestText.quote(shellLine) + " failed: " + ErrorDetail.of(failed), failed));
        } finally {
            handle.outputEnded(ExecStream.STDOUT);
            handle.outputEnded(ExecStream.STDERR);
        }
    }

    private void deliverOne(Frame frame) {
        PayloadReader reader = frame.reader();
        int stream = connection.decode(reader::u8);
        byte[] data = connection.decode(() -> reader.bytes(AgentProtocol.OUT_CHUNK_MAX, "output"));
        if (stream != AgentProtocol.STDOUT && stream != AgentProtocol.STDERR) {
            throw connection.broken(new AgentProtocolViolation("output on stream " + stream));
        }
        synchronized (lock) {
            if (!outputWanted) {
                return;
            }
        }
        ExecStream which = stream == AgentProtocol.STDOUT ? ExecStream.STDOUT : ExecStream.STDERR;
        if (!handle.output(which, data, 0, data.length)) {
            // Nobody reads any more: no credit goes back, so the agent stops reading the command's pipe.
            synchronized (lock) {
                outputWanted = false;
                lock.notifyAll();
            }
            return;
        }
        synchronized (lock) {
            if (exit != null || ended) {
                return; // the exec is over: nothing to grant
            }
        }
        try {
            connection.send(AgentProtocol.OUTPUT_ACK, call.id(), Payload.create().u8(stream).u32(data.length).build());
        } catch (AgentConnectionFailed gone) {
            // The pump reports the broken connection.
        }
    }

    private void sendOrThrow(int type, byte[] payload) throws IOException {
        try {
            connection.send(type, call.id(), payload);
        } catch (AgentConnectionFailed broken) {
            throw new IOException(broken.getMessage(), broken);
        }
    }

    private static void daemon(String role, Runnable body) {
        Thread thread = new Thread(body, "sandbox4j-agent-process-" + role);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public String toString() {
        return "AgentProcess[" + connection.backendName() + " " + GuestText.quote(shellLine) + "]";
    }
}
