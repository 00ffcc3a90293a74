package org.sandbox4j.agent;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.GuestText;

/**
 * One exec over an {@link AgentConnection}, as every backend runs one: stdin fed through the
 * agent's window, stdout and stderr into one {@link ExecCapture} (one cap for both, the caller's
 * listener), output credit granted back only for what the capture kept, and the command's whole
 * tree killed at the cap, at the deadline or when the caller's thread is interrupted, each then
 * refused in {@link ExecRefusals}' words. A program that is not there exits 127 and one that may
 * not be executed 126, with a line on stderr naming it; a missing working directory, or one that is
 * not a directory, is the kit's typed refusal; any other launch failure is a
 * {@link SandboxException} naming the backend, never an exit code. A command killed by signal
 * {@code n} exits {@code 128 + n}, as a shell reports it.
 */
final class AgentExec {

    /** How long the agent may take to report the exit of a command it was told to kill. */
    static final Duration KILL_GRACE = Duration.ofSeconds(5);
    /** Besides its output credit, what an exec may have waiting: its small frames (STARTED, acks, EXIT). */
    private static final long SMALL_FRAMES_BYTES = 64 * 1024;
    /**
     * The output window of an exec whose output the reader puts straight into its capture: large,
     * since what the agent sends within it lands in the capture (bounded by the cap) or is dropped,
     * never queued; a frame-queued exec (one with a listener) keeps {@link AgentProtocol#OUTPUT_WINDOW}.
     */
    static final int CAPTURED_OUTPUT_WINDOW = 4 * 1024 * 1024;
    /** How much output arrives before its credit is granted back: a quarter window, so grants are few. */
    static final int CAPTURED_GRANT_BYTES = CAPTURED_OUTPUT_WINDOW / 4;
    private static final String KILLED = ExecRefusals.KILLED_WITH_EVERY_PROCESS;
    /** EACCES: the only errno a LAUNCH error carries for a working directory the command may not enter. */
    private static final int EACCES = 13;

    private enum Ending { RAN, CAP, TIMEOUT, INTERRUPTED }

    private final AgentConnection connection;
    private final List<String> argv;
    private final String cwd;
    private final Map<String, String> env;
    private final ExecOptions options;
    private final String shellLine;
    private final boolean asAgent;
    private final boolean endTree;
    private final ExecCapture capture;
    /** Where the reader puts the output; absent for a listener, called on this thread (see {@link #run}). */
    private final Optional<OutputSink> sink;
    /** Per stream (index {@code stream - 1}): output kept and not yet granted back. */
    private final long[] ungranted = new long[2];
    private final byte[] stdin;
    private int stdinSent;
    private long stdinUnacknowledged;
    private boolean stdinClosed;

    AgentExec(AgentConnection connection, List<String> argv, String cwd, Map<String, String> env,
            ExecOptions options, String shellLine, boolean asAgent, boolean endTree) {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("an exec needs a program: the argv is empty");
        }
        this.connection = connection;
        this.argv = List.copyOf(argv);
        this.cwd = cwd;
        this.env = Map.copyOf(env);
        this.options = options;
        this.shellLine = shellLine;
        this.asAgent = asAgent;
        this.endTree = endTree;
        this.capture = new ExecCapture(options, connection.backendName());
        // A listener runs on this exec's thread, never the connection's reader: one that is slow, or
        // calls back into the sandbox, must not stall every other call's frames.
        this.sink = options.listener().isPresent() ? Optional.empty()
                : Optional.of(new OutputSink(capture, CAPTURED_OUTPUT_WINDOW, CAPTURED_GRANT_BYTES));
        this.stdin = options.stdin().orElse(null);
    }

    ExecResult run() {
        long start = System.nanoTime();
        long deadline = start + options.timeout().toNanos();
        PendingCall call = sink.isPresent() ? connection.register(SMALL_FRAMES_BYTES, sink.get())
                : connection.register(2L * AgentProtocol.OUTPUT_WINDOW + SMALL_FRAMES_BYTES);
        try {
            connection.send(AgentProtocol.EXEC, call.id(), execPayload());
            feedStdin(call);
            Ending ending = Ending.RAN;
            while (true) {
                Frame frame;
                try {
                    frame = call.next(ending == Ending.RAN ? deadline : deadline + KILL_GRACE.toNanos());
                } catch (InterruptedException e) {
                    kill(call);
                    awaitExitAfterInterrupt(call);
                    Thread.currentThread().interrupt();
                    throw ExecRefusals.interrupted(shellLine, "the command " + KILLED, e);
                }
                if (frame == null) {
                    if (ending != Ending.RAN) {
                        // Killed, and no EXIT within the grace: the refusal stands; late frames are dropped.
                        break;
                    }
                    ending = Ending.TIMEOUT;
                    kill(call);
                    deadline = System.nanoTime();
                    continue;
                }
                Optional<AgentExit> exit = handle(call, frame, ending != Ending.RAN);
                if (ending == Ending.RAN && capture.stopped()) {
                    ending = Ending.CAP;
                    kill(call);
                    deadline = System.nanoTime();
                }
                if (exit.isPresent()) {
                    if (exit.get().treeSurvived()) {
                        throw killFailed(connection, shellLine);
                    }
                    if (ending == Ending.TIMEOUT) {
                        break;
                    }
                    Optional<RuntimeException> refused = capture.refusal(shellLine, KILLED);
                    if (refused.isPresent()) {
                        throw refused.get();
                    }
                    return capture.result(exit.get().exitCode(), Duration.ofNanos(System.nanoTime() - start));
                }
            }
            throw capture.refusal(shellLine, KILLED)
                    .orElseGet(() -> ExecRefusals.timedOut(shellLine, options.timeout(), KILLED));
        } finally {
            connection.unregister(call);
        }
    }

    private byte[] execPayload() {
        List<String> variables = new ArrayList<>(env.size());
        env.forEach((name, value) -> variables.add(name + "=" + value));
        int flags = (stdin == null ? 0 : AgentProtocol.EXEC_STDIN_PIPE) | (asAgent ? AgentProtocol.EXEC_AS_AGENT : 0)
                | (endTree ? AgentProtocol.EXEC_END_TREE : 0);
        return Payload.create().u32(flags).text(cwd).texts(argv)
                .texts(variables).u32(sink.isPresent() ? CAPTURED_OUTPUT_WINDOW : AgentProtocol.OUTPUT_WINDOW).build();
    }

    /** Sends what stdin the agent's window has room for; closes it once all is sent. */
    private void feedStdin(PendingCall call) {
        if (stdin == null || stdinClosed) {
            return;
        }
        while (stdinSent < stdin.length) {
            int chunk = Math.min(AgentProtocol.STDIN_CHUNK_MAX, stdin.length - stdinSent);
            if (stdinUnacknowledged + chunk > AgentProtocol.STDIN_WINDOW) {
                return;
            }
            connection.send(AgentProtocol.STDIN, call.id(), Payload.create().bytes(stdin, stdinSent, chunk).build());
            stdinSent += chunk;
            stdinUnacknowledged += chunk;
        }
        connection.send(AgentProtocol.STDIN_CLOSE, call.id(), Payload.empty());
        stdinClosed = true;
    }

    /**
     * Takes one frame of the exec.
     *
     * @param killed whether the command was killed: its output is no longer kept or granted
     * @return the exit once the command ended
     */
    private Optional<AgentExit> handle(PendingCall call, Frame frame, boolean killed) {
        switch (frame.type()) {
            case AgentProtocol.STARTED:
                return Optional.empty();
            case AgentProtocol.OUT:
                if (sink.isPresent()) {
                    outputArrived(call, sink.get(), killed);
                } else {
                    output(call, frame, killed);
                }
                return Optional.empty();
            case AgentProtocol.STDIN_ACK:
                long acknowledged = connection.decode(() -> frame.reader().u32());
                if (acknowledged > stdinUnacknowledged) {
                    throw connection.broken(new AgentProtocolViolation("the agent acknowledged " + acknowledged
                            + " stdin bytes, more than the " + stdinUnacknowledged + " it had"));
                }
                stdinUnacknowledged -= acknowledged;
                if (!killed) {
                    feedStdin(call);
                }
                return Optional.empty();
            case AgentProtocol.EXIT:
                return Optional.of(exit(frame));
            case AgentProtocol.ERROR:
                throw launchRefusal(connection, connection.error(frame), options.workingDirectory(), shellLine);
            default:
                throw connection.broken(new AgentProtocolViolation("the agent answered an exec with a frame of type 0x"
                        + Integer.toHexString(frame.type())));
        }
    }

    private void output(PendingCall call, Frame frame, boolean killed) {
        PayloadReader reader = frame.reader();
        int stream = connection.decode(reader::u8);
        byte[] data = connection.decode(() -> reader.bytes(AgentProtocol.OUT_CHUNK_MAX, "output"));
        if (stream != AgentProtocol.STDOUT && stream != AgentProtocol.STDERR) {
            throw connection.broken(new AgentProtocolViolation("output on stream " + stream));
        }
        if (killed || capture.stopped()) {
            return;
        }
        ExecStream which = stream == AgentProtocol.STDOUT ? ExecStream.STDOUT : ExecStream.STDERR;
        // Credit goes back only for what the capture kept: past the cap the command is stopped, not fed.
        if (capture.offer(which, data)) {
            connection.send(AgentProtocol.OUTPUT_ACK, call.id(), Payload.create().u8(stream).u32(data.length).build());
        }
    }

    /** Output the reader put into the capture: its credit granted back a grant's worth at a time. */
    private void outputArrived(PendingCall call, OutputSink into, boolean killed) {
        long[] arrived = into.take();
        // Credit goes back only while the capture keeps all: past the cap the command is stopped, not fed.
        if (killed || capture.stopped()) {
            return;
        }
        for (int index = 0; index < arrived.length; index++) {
            ungranted[index] += arrived[index];
            if (ungranted[index] >= into.grantBytes()) {
                int stream = index + 1;
                into.granted(stream, ungranted[index]);
                connection.send(AgentProtocol.OUTPUT_ACK, call.id(),
                        Payload.create().u8(stream).u32(ungranted[index]).build());
                ungranted[index] = 0;
            }
        }
    }

    private AgentExit exit(Frame frame) {
        AgentExit exit = AgentExit.of(connection, frame);
        launchLine(exit, argv).ifPresent(line -> capture.offer(ExecStream.STDERR, line));
        return exit;
    }

    /** A launch failure's line for stderr, as a shell would print one; empty for a command that ran. */
    static Optional<byte[]> launchLine(AgentExit exit, List<String> argv) {
        String line = switch (exit.launch()) {
            case AgentProtocol.LAUNCH_NOT_FOUND -> GuestText.quote(argv.get(0)) + ": not found";
            case AgentProtocol.LAUNCH_NOT_EXECUTABLE -> GuestText.quote(argv.get(0))
                    + ": permission denied (not executable)";
            default -> null;
        };
        return Optional.ofNullable(line).map(text -> (text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** The refusal for an ERROR answering an EXEC: the kit's typed one for the working directory, else a launch failure. */
    static SandboxException launchRefusal(AgentConnection connection, AgentError error, String workingDirectory,
            String shellLine) {
        switch (error.code()) {
            case CWD_NOT_FOUND:
                return ExecRefusals.workingDirectoryMissing(workingDirectory);
            case CWD_NOT_DIRECTORY:
                return ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            case LAUNCH:
                if (error.errno() == EACCES) {
                    return ExecRefusals.workingDirectoryNotEnterable(workingDirectory);
                }
                return launchFailed(connection, error, shellLine);
            default:
                return launchFailed(connection, error, shellLine);
        }
    }

    private static SandboxException launchFailed(AgentConnection connection, AgentError error, String shellLine) {
        return new SandboxException("backend '" + connection.backendName() + "': the guest agent could not start "
                + GuestText.quote(shellLine) + ": " + error.describe() + "; nothing ran"
                + (error.code() == AgentProtocol.ErrorCode.LIMIT ? ": too many commands run at once, run fewer" : ""));
    }

    /** The agent's kill left processes of the command alive (its EXIT said so). */
    static AgentKillFailed killFailed(AgentConnection connection, String shellLine) {
        return new AgentKillFailed("backend '" + connection.backendName() + "': processes of "
                + GuestText.quote(shellLine) + " survived the guest agent's kill of its whole tree; the sandbox may "
                + "still run them and must not be reused: dispose of it");
    }

    private void kill(PendingCall call) {
        sink.ifPresent(OutputSink::drop);
        try {
            connection.send(AgentProtocol.KILL, call.id(), Payload.empty());
        } catch (AgentConnectionFailed gone) {
            // The connection broke: the agent kills every command of a session that ends.
        }
    }

    /** After an interrupt: the agent's EXIT, within the grace, without being interrupted again. */
    private void awaitExitAfterInterrupt(PendingCall call) {
        long until = System.nanoTime() + KILL_GRACE.toNanos();
        while (System.nanoTime() - until < 0) {
            try {
                Frame frame = call.next(until);
                if (frame == null || frame.type() == AgentProtocol.EXIT || frame.type() == AgentProtocol.ERROR) {
                    return;
                }
            } catch (InterruptedException again) {
                // Already refusing for the interrupt: keep waiting out the grace.
            } catch (AgentConnectionFailed gone) {
                return;
            }
        }
    }
}
