package org.sandbox4j.docker;

import com.github.dockerjava.api.command.ExecCreateCmdResponse;
import com.github.dockerjava.api.command.InspectExecResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.SandboxImageNotUsable;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxProcessLimitExceeded;
import org.sandbox4j.core.spi.GuestProcess;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.egress.GuestBridge;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.FileRefusals;
import org.sandbox4j.core.HostCeilings;
import org.sandbox4j.core.SandboxPathNotConfined;
import java.util.function.Function;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.agent.AgentConnectionFailed;
import org.sandbox4j.agent.AgentFiles;

/**
 * One container. Where the container has the guest agent mounted, commands and file calls go
 * through its resident agent ({@link ContainerAgent}: one per container and backend instance,
 * replaced when it breaks); otherwise commands run through the exec API under
 * {@link GuestScripts#WRAPPER} and files move through the archive endpoints (a tar per write, the
 * first entry's header before any body on a read), after the core's confinement walk, whose
 * no-follow stat is the engine's own path stat. Started processes always take the engine's path.
 */
final class DockerSandbox implements ConfinedFilesSandbox {

    private static final System.Logger LOG = System.getLogger(DockerSandbox.class.getName());
    private static final SecureRandom TOKENS = new SecureRandom();
    private static final int TOKEN_BYTES = 12;
    /** Bound on the second exec that kills a timed-out command's processes. */
    static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    /** Bound on an internal command (removal, probes). */
    static final Duration INTERNAL_TIMEOUT = Duration.ofSeconds(60);
    /** How long to wait for the engine to record an ended exec's exit code. */
    private static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(5);
    private static final long EXIT_CODE_POLL_MILLIS = 10;
    /** An exit code at or above this is 128 + the signal that killed the command. */
    private static final int SIGNALLED = 128;
    /**
     * How long past its lifetime a started process's guest-side backstop waits before it kills the
     * group: the handle's own lifetime kill comes first; the backstop covers a JVM that died holding it.
     */
    static final Duration PROCESS_BACKSTOP_GRACE = Duration.ofSeconds(30);
    /** How often a long exec checks that its container still runs. */
    static final Duration LIVENESS_POLL = Duration.ofSeconds(2);
    /** Output kept from internal commands (kill, rm): enough for a message. */
    private static final long INTERNAL_OUTPUT_CAP = 64 * 1024;
    /** A listing's output: the names one listing may hold (as UTF-8, four bytes a character at most), and a line each. */
    private static final long LISTING_OUTPUT_CAP = HostCeilings.MAX_LISTED_NAME_CHARS * 4
            + (long) HostCeilings.MAX_LISTED_ENTRIES * 64;
    /** The largest byte array a JVM allocates. */
    private static final int FILE_MODE = 0644;
    private static final int DIRECTORY_MODE = 0755;
    private static final int STDIN_MODE = 0600;
    /**
     * How long an agent may take to answer a ping after a call timed out, before it is replaced
     * (which ends every command it runs): generous, so only an agent that really stopped is.
     */
    static final Duration AGENT_PING_TIMEOUT = Duration.ofSeconds(5);

    // Go's os.FileMode type bits, as the engine's path stat reports them.
    private static final long GO_MODE_DIR = 1L << 31;
    private static final long GO_MODE_SYMLINK = 1L << 27;
    private static final long GO_MODE_OTHER = (1L << 26) | (1L << 25) | (1L << 24) | (1L << 21) | (1L << 19);
    private static final long GO_MODE_SETUID = 1L << 23;
    private static final long GO_MODE_SETGID = 1L << 22;
    private static final long GO_MODE_STICKY = 1L << 20;

    private final DockerBackend backend;
    private final Engine engine;
    private final String containerId;
    private final String containerName;
    private final String workArea;
    /** The spec's work dir, normalized: a child of the work area. */
    private final String workDir;
    private final Optional<String> guestSocket;
    /** The spec's caps: every write and read is held to them before a byte moves. */
    private final ArchiveFiles files;
    private final TransferLimits filesIn;
    private final TransferLimits filesOut;
    /** Whether the engine's record of the container's mounts holds the guest agent. */
    private final boolean agentMounted;

    DockerSandbox(DockerBackend backend, Engine engine, String containerId, String containerName, String workDir,
            Optional<String> guestSocket, SandboxSpec spec, boolean agentMounted) {
        this.backend = backend;
        this.engine = engine;
        this.containerId = containerId;
        this.containerName = containerName;
        this.workDir = workDir;
        this.workArea = GuestPaths.parent(workDir);
        this.guestSocket = guestSocket;
        this.files = new ArchiveFiles(spec.filesIn(), spec.filesOut());
        this.filesIn = spec.filesIn();
        this.filesOut = spec.filesOut();
        this.agentMounted = agentMounted;
    }

    DockerBackend backend() {
        return backend;
    }

    String containerId() {
        return containerId;
    }

    String containerName() {
        return containerName;
    }

    @Override
    public String toString() {
        return "DockerSandbox[" + containerName + "]";
    }

    /**
     * Makes the work dir when nothing is there: at acquire (the work area is a fresh tmpfs) and
     * after a restart (its tmpfs came back empty). Through the engine's archive endpoint, which
     * resolves inside the container and, with {@code noOverwriteDirNonDir}, refuses to put a
     * directory over anything else, so no link the guest made is followed or replaced. Whatever
     * the guest put there itself stays; an exec in it says what it is.
     */
    void ensureWorkDir() {
        if (pathStat(workDir).isPresent()) {
            return;
        }
        byte[] archive = backend.tarWriter().directory(below(workDir, workArea), DIRECTORY_MODE).finish();
        try {
            put(workArea, archive, "create the work dir " + GuestText.quote(workDir));
        } catch (SandboxFileException refused) {
            // Something is in the way: the guest put it there (Podman's path stat does not see a dangling
            // link). It stays the guest's work dir; anything else is a failure to make one.
            if (internal(GuestScripts.anythingAt(workDir), INTERNAL_TIMEOUT).exitCode() != 0) {
                throw refused;
            }
        }
    }

    // ---------------------------------------------------------------- exec

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        try {
            ExecResult result = execOnce(command, options);
            // A kill's exit code (128 + signal) on a container disposed of meanwhile is not the command's word.
            if (result.exitCode() >= SIGNALLED && backend.wasDisposedOf(containerId)) {
                throw backend.disposedDuring(containerName, null);
            }
            return result;
        } catch (SandboxDisposed | SandboxInterrupted | SandboxTimeoutException | SandboxExecOutputLimitExceeded
                passOn) {
            // A timeout or a cap stays what it is, even where the backend retired the container to end it.
            throw passOn;
        } catch (SandboxException failed) {
            if (backend.wasDisposedOf(containerId)) {
                throw backend.disposedDuring(containerName, failed);
            }
            throw failed;
        }
    }

    private ExecResult execOnce(Command command, ExecOptions options) {
        Optional<ContainerAgent> agent = agent();
        if (agent.isPresent()) {
            return execThroughAgent(agent.get(), command, options);
        }
        long started = System.nanoTime();
        long deadline = started + options.timeout().toNanos();
        String shellLine = command.toShellLine();
        String token = HexFormat.of().formatHex(randomBytes());
        Optional<byte[]> stdin = options.stdin();
        if (stdin.isPresent()) {
            uploadStdin(token, stdin.get());
        }
        List<String> inner = guestArgv(command);
        List<String> argv = GuestScripts.wrapped(workArea, token, options.workingDirectory(), stdin.isPresent(), inner);
        Map<String, String> environment = new HashMap<>(options.environment());
        environment.put(GuestScripts.EXEC_MARKER, token);

        ExecOutput output = new ExecOutput(new ExecCapture(options, backend.name()), true);
        String execId = start(argv, environment, output);
        try {
            boolean ended = awaitWhileRunning(output, deadline);
            Optional<RuntimeException> refused = output.refusal(shellLine, ExecRefusals.KILLED_WITH_EVERY_PROCESS);
            if (refused.isPresent()) {
                killTree(token, output.group(), "passed its output cap");
                throw refused.get();
            }
            if (!ended) {
                killTree(token, output.group(), "ran past its timeout");
                throw ExecRefusals.timedOut(shellLine, options.timeout(), ExecRefusals.KILLED_WITH_EVERY_PROCESS);
            }
        } catch (InterruptedException interrupted) {
            killTree(token, output.group(), "was interrupted");
            Thread.currentThread().interrupt();
            throw ExecRefusals.interrupted(shellLine, "the command " + ExecRefusals.KILLED_WITH_EVERY_PROCESS, interrupted);
        } catch (RuntimeException streamFailure) {
            if (streamFailure instanceof SandboxException known) {
                throw known;
            }
            killTree(token, output.group(), "lost its output stream");
            throw new SandboxException("backend '" + backend.name() + "': the engine's output stream for the command "
                    + "failed: " + Engine.detail(streamFailure), streamFailure);
        } finally {
            closeQuietly(output);
        }
        output.finish();
        int exitCode = exitCode(execId);
        GuestScripts.Setup setup = output.setup().orElseThrow(() -> notStarted(shellLine, exitCode, output));
        refuseUnlessReady(setup, shellLine, options.workingDirectory());
        return new ExecResult(output.stdout(), output.stderr(), exitCode, Duration.ofNanos(System.nanoTime() - started));
    }

    /** The command's argv as the guest runs it: a shell line through sh, and through the egress bridge where there is one. */
    private List<String> guestArgv(Command command) {
        List<String> words = command instanceof Command.Argv argv ? argv.words()
                : List.of("sh", "-c", ((Command.Shell) command).line());
        return guestSocket.map(socket -> GuestBridge.argv(socket, words)).orElse(words);
    }

    /**
     * One command through the container's agent: its argv executed as given (never through a
     * shell), in the working directory, with the container's environment, the caller's and the
     * exec's marker, and exactly the caller's stdin, cap and timeout. At a timeout, the cap or an
     * interrupt, the agent kills the command's process group; the engine's kill script then ends
     * every process carrying the marker (children that left the group), as on the engine's path.
     */
    private ExecResult execThroughAgent(ContainerAgent agent, Command command, ExecOptions options) {
        String shellLine = command.toShellLine();
        String token = HexFormat.of().formatHex(randomBytes());
        Map<String, String> environment = new java.util.LinkedHashMap<>(agent.environment());
        environment.putAll(options.environment());
        environment.put(GuestScripts.EXEC_MARKER, token);
        try {
            return agent.connection().exec(guestArgv(command), options.workingDirectory(), environment, options,
                    shellLine);
        } catch (SandboxTimeoutException timedOut) {
            killLeftovers(agent, token, "ran past its timeout");
            checkResponsive(agent);
            throw timedOut;
        } catch (SandboxExecOutputLimitExceeded capped) {
            killLeftovers(agent, token, "passed its output cap");
            throw capped;
        } catch (SandboxNotADirectory notADirectory) {
            // chdir's ENOTDIR is also a file on the way to the directory: that one is missing, as the wrapper says.
            if (!existsFollowingLinks(agent, options.workingDirectory())) {
                throw ExecRefusals.workingDirectoryMissing(options.workingDirectory());
            }
            throw notADirectory;
        } catch (SandboxInterrupted interrupted) {
            // The kill must run to its end: the interrupt is put back once it has.
            boolean flag = Thread.interrupted();
            try {
                killLeftovers(agent, token, "was interrupted");
            } finally {
                if (flag) {
                    Thread.currentThread().interrupt();
                }
            }
            throw interrupted;
        } catch (AgentConnectionFailed broken) {
            throw agentLost(agent, broken, "the command ran", Optional.of(token));
        }
    }

    /** Whether anything is at {@code path}, links followed (the wrapper's {@code [ -e ]}), asked through the agent. */
    private boolean existsFollowingLinks(ContainerAgent agent, String path) {
        ExecResult looked = agent.connection().exec(List.of("sh", "-c", "[ -e \"$1\" ]", "sandbox4j-look", path), "/",
                agent.environment(), ExecOptions.in("/", INTERNAL_TIMEOUT).withOutputCap(INTERNAL_OUTPUT_CAP),
                "[ -e " + path + " ]");
        return looked.exitCode() == 0;
    }

    /** After the agent's own kill: what left the process group, by the marker, unless the agent reaches it itself. */
    private void killLeftovers(ContainerAgent agent, String token, String why) {
        if (!agent.killsByMarker()) {
            killTree(token, OptionalLong.empty(), why);
        }
    }

    /**
     * After a call timed out: an agent that no longer answers a ping (the guest stopped it) is
     * replaced, so the next call does not wait on it too.
     */
    private void checkResponsive(ContainerAgent agent) {
        try {
            agent.connection().ping(AGENT_PING_TIMEOUT);
        } catch (SandboxException unresponsive) {
            LOG.log(Level.INFO, () -> "backend '" + backend.name() + "': the guest agent in container " + containerName
                    + " did not answer a ping after a timeout; the next call starts another");
            backend.agentSlot(containerId).discard(agent);
        }
    }

    /**
     * The agent's stream broke during a call: the agent is forgotten (the next call starts another),
     * and the call fails naming why: the container was disposed of, or stopped, or the agent ended
     * (the guest may have killed it), in which case what the command started is killed by its marker.
     */
    private SandboxException agentLost(ContainerAgent agent, AgentConnectionFailed cause, String during,
            Optional<String> token) {
        backend.agentSlot(containerId).discard(agent);
        if (backend.wasDisposedOf(containerId)) {
            backend.forgetAgent(containerId);
            return backend.disposedDuring(containerName, cause);
        }
        if (!backend.isRunning(containerId)) {
            return new SandboxException("backend '" + backend.name() + "': container " + containerName
                    + " stopped while " + during + " (it may have exhausted its memory or process limit); the next "
                    + "call starts it again, with an empty work area (a tmpfs lives only while its container runs)",
                    cause);
        }
        token.ifPresent(marker -> killTree(marker, OptionalLong.empty(), "lost its guest agent"));
        String said = agent.stderrTail();
        return new SandboxException("backend '" + backend.name() + "': the guest agent in container " + containerName
                + " ended while " + during + " (something in the sandbox may have killed it"
                + (said.isEmpty() ? "" : "; it said " + GuestText.quote(said)) + ")"
                + (token.isPresent() ? "; what the command started was killed" : "; the call may or may not have "
                        + "taken effect") + "; the next call starts a new agent", cause);
    }

    // ---------------------------------------------------------------- the resident agent

    /**
     * The container's resident agent, started (or replaced) when needed; empty when this call takes
     * the engine's path: the container has no agent mount, or the agent could not start (the reason
     * is logged, and {@link #route()} says it).
     */
    private Optional<ContainerAgent> agent() {
        if (!agentMounted) {
            return Optional.empty();
        }
        AgentSlot slot = backend.agentSlot(containerId);
        Optional<ContainerAgent> live = slot.live();
        if (live.isPresent()) {
            return live;
        }
        return backend.withAgentLock(containerId, () -> {
            Optional<ContainerAgent> again = slot.live();
            if (again.isPresent() || !slot.mayStart()) {
                return again;
            }
            try {
                ContainerAgent started = startAgent(slot.nextGeneration());
                slot.started(started);
                return Optional.of(started);
            } catch (SandboxDisposed gone) {
                backend.forgetAgent(containerId);
                throw gone;
            } catch (SandboxInterrupted passOn) {
                throw passOn;
            } catch (SandboxException failed) {
                String why = ErrorText.bounded(failed.getMessage());
                slot.failed(why);
                LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': the guest agent would not start in "
                        + "container " + containerName + " (" + why + "); the engine's path serves its calls");
                return Optional.<ContainerAgent>empty();
            }
        });
    }

    /** An exec of the mounted agent, its stream taken over, and a session opened on it. */
    private ContainerAgent startAgent(int generation) {
        Map<String, String> environment = backend.execEnvironment(containerId);
        ExecCreateCmdResponse created = createExecRestarting(ContainerAgent.COMMAND, List.of(), true, true);
        HijackedExec stream;
        try {
            stream = HijackedExec.start(backend.engineSocket(), created.getId(), backend.commandTimeout());
        } catch (IOException failure) {
            throw new SandboxException("backend '" + backend.name() + "' could not attach to the guest agent's exec in "
                    + "container " + containerName + ": " + Engine.detail(failure), failure);
        }
        ContainerAgent agent = ContainerAgent.connect(stream, backend.name(), environment, generation);
        LOG.log(Level.DEBUG, () -> "backend '" + backend.name() + "' started " + agent.describe() + " in container "
                + containerName);
        return agent;
    }

    /** Which way this sandbox's commands and file calls go, and why: for diagnostics. */
    String route() {
        if (!agentMounted) {
            return "engine exec and archive API: " + backend.noAgentReason();
        }
        return backend.agentSlot(containerId).describe();
    }

    /** What a wrapper's preamble word means for the caller: nothing when it started the command. */
    private void refuseUnlessReady(GuestScripts.Setup setup, String shellLine, String workingDirectory) {
        switch (setup) {
            case READY -> {
                // The command ran: its exit code and output are its own.
            }
            case NO_DIRECTORY -> throw ExecRefusals.workingDirectoryMissing(workingDirectory);
            case NOT_A_DIRECTORY -> throw ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            case CANNOT_ENTER -> throw ExecRefusals.workingDirectoryNotEnterable(workingDirectory);
            case NO_STDIN -> throw new SandboxException("backend '" + backend.name() + "': the stdin uploaded for "
                    + GuestText.quote(shellLine) + " was gone from the work area " + workArea + " before the "
                    + "command started (something in the sandbox removed it), so nothing ran");
            case NO_PIPE -> throw new SandboxException("backend '" + backend.name() + "': could not make the stdin "
                    + "pipe of " + GuestText.quote(shellLine) + " in the work area " + workArea + " (it may be full), "
                    + "so nothing ran; free space in the work area");
            case NO_TOOLS -> throw new SandboxImageNotUsable("backend '" + backend.name() + "': container "
                    + containerName + " lacks one of '" + GuestScripts.PROCESS_TOOLS + "' on its PATH, which a started "
                    + "process needs (its stdin pipe and its lifetime bound), so nothing ran; use an image with "
                    + "coreutils (and no PATH in the process's environment that hides them), or run the work with exec");
        }
    }

    // ---------------------------------------------------------------- started processes

    @Override
    public SandboxProcess start(Command command, ProcessOptions options) {
        try {
            return startOnce(command, options);
        } catch (SandboxDisposed | SandboxInterrupted | SandboxProcessLimitExceeded passOn) {
            throw passOn;
        } catch (SandboxException failed) {
            if (backend.wasDisposedOf(containerId)) {
                throw backend.disposedDuring(containerName, failed);
            }
            throw failed;
        }
    }

    /**
     * The command's exec under {@link GuestScripts#PROCESS_WRAPPER}, confirmed by its preamble; then
     * the feeder, whose connection carries stdin into the command's FIFO; then the handle is served.
     */
    private SandboxProcess startOnce(Command command, ProcessOptions options) {
        String shellLine = command.toShellLine();
        GuestProcess handle = GuestProcess.reserve(backend.name(), containerName, shellLine, options);
        String token = HexFormat.of().formatHex(randomBytes());
        ExecOutput output = ExecOutput.process(DockerProcess.sinkFor(handle));
        OptionalLong group = OptionalLong.empty();
        boolean started = false;
        try {
            List<String> words = command instanceof Command.Argv argv ? argv.words()
                    : List.of("sh", "-c", ((Command.Shell) command).line());
            List<String> inner = guestSocket.map(socket -> GuestBridge.argv(socket, words)).orElse(words);
            long bound = options.lifetime().plus(PROCESS_BACKSTOP_GRACE).toSeconds() + 1;
            List<String> argv = GuestScripts.process(workArea, token, options.workingDirectory(), bound, inner);
            Map<String, String> environment = new HashMap<>(options.environment());
            environment.put(GuestScripts.EXEC_MARKER, token);
            String execId = start(argv, environment, output, null);
            started = true;
            if (!output.awaitPreamble(INTERNAL_TIMEOUT.toNanos())) {
                throw new SandboxTimeoutException("backend '" + backend.name() + "': the engine did not start "
                        + GuestText.quote(shellLine) + " in container " + containerName + " within "
                        + INTERNAL_TIMEOUT.toSeconds() + " s, so it was stopped; see the engine's log");
            }
            group = output.group();
            Optional<GuestScripts.Setup> setup = output.setup();
            if (setup.isEmpty()) {
                awaitQuietly(output);
                output.finish();
                throw notStarted(shellLine, exitCode(execId), output);
            }
            if (setup.get() != GuestScripts.Setup.READY) {
                // The wrapper said why it started nothing, and exits: there is nothing to kill.
                started = false;
            }
            refuseUnlessReady(setup.get(), shellLine, options.workingDirectory());
            FeedPipe stdin = new FeedPipe();
            DockerProcess.Feeder feeder = new DockerProcess.Feeder(stdin);
            start(GuestScripts.feeder(workArea, token), Map.of(GuestScripts.EXEC_MARKER, token), feeder, stdin);
            DockerProcess.serve(this, handle, token, group.getAsLong(), execId, output, stdin, feeder);
            return handle;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            abandon(handle, output, token, group, started);
            throw ExecRefusals.interrupted(shellLine, "nothing was started (what had begun was killed)", interrupted);
        } catch (RuntimeException failed) {
            abandon(handle, output, token, group, started);
            throw failed;
        }
    }

    /** A process that did not start: whatever its exec began is killed, and its slot is given back. */
    private void abandon(GuestProcess handle, ExecOutput output, String token, OptionalLong group, boolean started) {
        try {
            if (started) {
                killTree(token, group, "did not start");
            }
        } catch (RuntimeException quiet) {
            LOG.log(Level.DEBUG, () -> "backend '" + backend.name() + "': after a failed start: " + Engine.detail(quiet));
        } finally {
            closeQuietly(output);
            handle.abandon();
        }
    }

    private static void awaitQuietly(ExecOutput output) throws InterruptedException {
        try {
            output.awaitEndOrCap(EXIT_CODE_WAIT.toNanos());
        } catch (RuntimeException streamFailed) {
            // It ended.
        }
    }

    /**
     * The wrapper never ran: the engine or its OCI runtime failed to start the exec and said why in
     * its place. A fault of the engine, never the command's exit code or output.
     */
    private SandboxException notStarted(String shellLine, int exitCode, ExecOutput output) {
        String said = output.engineText();
        return new SandboxException("backend '" + backend.name() + "': the engine could not start "
                + GuestText.quote(shellLine) + " in container " + containerName + ", so nothing ran (the exec "
                + "ended " + exitCode + (said.isEmpty() ? " and the engine said nothing" : ": " + ErrorText.bounded(said))
                + "); see the engine's log, or check the container's limits and the image's /bin/sh");
    }

    /**
     * Waits for the exec's end (or its cap) until {@code deadline}, asking the engine every
     * {@link #LIVENESS_POLL} whether the container still runs: a container that died (its
     * memory or process limit, or gVisor's kernel, gave out) never ends its exec streams.
     */
    private boolean awaitWhileRunning(ExecOutput output, long deadline) throws InterruptedException {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (output.awaitEndOrCap(Math.min(left, LIVENESS_POLL.toNanos()))) {
                return true;
            }
            if (System.nanoTime() < deadline && !backend.isRunning(containerId)) {
                throw new SandboxException("backend '" + backend.name() + "': container " + containerName
                        + " stopped while the command ran (it may have exhausted its memory or process limit); the "
                        + "next command starts it again, with an empty work area (a tmpfs lives only while its container runs)");
            }
        }
    }

    /** Creates and starts an exec attached to {@code output}; returns its id. */
    private String start(List<String> argv, Map<String, String> environment, ExecOutput output) {
        return start(argv, environment, output, null);
    }

    /**
     * Creates and starts an exec: its output attached to {@code output}, or, with {@code stdin}, only
     * its stdin, copied from that stream; returns its id.
     */
    private String start(List<String> argv, Map<String, String> environment, ResultCallback.Adapter<Frame> output,
            InputStream stdin) {
        List<String> env = new ArrayList<>();
        environment.forEach((name, value) -> env.add(name + "=" + value));
        boolean feeds = stdin != null;
        ExecCreateCmdResponse created = createExecRestarting(argv, env, feeds, !feeds);
        try {
            engine.streams().execStartCmd(created.getId()).withDetach(false).withTty(false).withStdIn(stdin)
                    .exec(output);
        } catch (RuntimeException failure) {
            throw backend.engineFailure("start a command in container " + containerName, failure);
        }
        return created.getId();
    }

    /**
     * Creates an exec, attached to its stdin and/or its output; a container that stopped (a limit, a
     * crash) is started again first. Its work area is a tmpfs volume, so it comes back empty (a
     * disk-backed one could not hold its size limit on every engine).
     */
    private ExecCreateCmdResponse createExecRestarting(List<String> argv, List<String> env, boolean stdin,
            boolean output) {
        try {
            return createExec(argv, env, stdin, output);
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure)) {
                throw backend.containerGone(containerName);
            }
            if (!Engine.isConflict(failure)) {
                throw backend.engineFailure("start a command in container " + containerName, failure);
            }
            backend.restart(this);
            ensureWorkDir();
            try {
                return createExec(argv, env, stdin, output);
            } catch (RuntimeException again) {
                throw backend.engineFailure("start a command in container " + containerName, again);
            }
        }
    }

    private ExecCreateCmdResponse createExec(List<String> argv, List<String> env, boolean stdin, boolean output) {
        return engine.streams().execCreateCmd(containerId).withCmd(argv.toArray(String[]::new)).withEnv(env)
                .withAttachStdin(stdin).withAttachStdout(output).withAttachStderr(output).withTty(false)
                .withWorkingDir("/").exec();
    }

    /** What the engine knows of an exec (engine failures as they come). */
    InspectExecResponse inspectExec(String execId) {
        return engine.control().inspectExecCmd(execId).exec();
    }

    /** The exit code the engine recorded; it may lag the end of the stream by a moment. */
    private int exitCode(String execId) {
        long deadline = System.nanoTime() + EXIT_CODE_WAIT.toNanos();
        while (true) {
            InspectExecResponse inspected;
            try {
                inspected = engine.control().inspectExecCmd(execId).exec();
            } catch (RuntimeException failure) {
                throw backend.engineFailure("read a command's exit code in container " + containerName, failure);
            }
            Long code = inspected.getExitCodeLong();
            if (!Boolean.TRUE.equals(inspected.isRunning()) && code != null) {
                return code.intValue();
            }
            if (System.nanoTime() > deadline) {
                throw new SandboxException("backend '" + backend.name() + "': the engine recorded no exit code for a "
                        + "command whose output ended " + EXIT_CODE_WAIT.toSeconds() + " s ago in container "
                        + containerName);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(EXIT_CODE_POLL_MILLIS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new SandboxInterrupted("backend '" + backend.name() + "': interrupted while reading an exit code");
            }
        }
    }

    /**
     * Kills every process of one exec with a second exec; when that cannot be confirmed, the
     * container is retired (another process sees it by name) and the next acquire replaces it.
     */
    void killTree(String token, OptionalLong group, String why) {
        String groupText = group.isPresent() ? Long.toString(group.getAsLong()) : "";
        try {
            Internal result = internal(GuestScripts.kill(token, groupText), KILL_TIMEOUT);
            if (result.exitCode() == 0) {
                return;
            }
            LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': the kill of a command that " + why
                    + " in container " + containerName + " exited " + result.exitCode() + " ("
                    + result.stderr().strip() + "); retiring the container");
        } catch (RuntimeException failure) {
            if (!backend.isRunning(containerId)) {
                // A stopped container runs nothing: the tree is gone with it.
                return;
            }
            LOG.log(Level.WARNING, () -> "backend '" + backend.name() + "': could not kill a command that " + why
                    + " in container " + containerName + " (" + Engine.detail(failure) + "); retiring the container");
        }
        backend.retire(this);
    }

    /** What an internal command left: bounded output and its exit code. */
    record Internal(int exitCode, String stdout, String stderr) {
    }

    /** Runs a fixed internal command (no wrapper, no marker) bounded by {@code timeout}. */
    Internal internal(List<String> argv, Duration timeout) {
        Ended ended = runInternal(argv, timeout, INTERNAL_OUTPUT_CAP);
        return new Internal(ended.exitCode(), new String(ended.stdout(), StandardCharsets.UTF_8),
                new String(ended.stderr(), StandardCharsets.UTF_8));
    }

    /** An internal command's raw output; {@code capped} when it printed more than its cap (its exit code is then -1). */
    private record Ended(int exitCode, byte[] stdout, byte[] stderr, boolean capped) {
    }

    private Ended runInternal(List<String> argv, Duration timeout, long cap) {
        ExecOutput output = new ExecOutput(new ExecCapture(ExecOptions.in("/", timeout)
                .withOutputCap(cap), backend.name()), false);
        String execId = start(argv, Map.of(), output);
        try {
            if (!output.awaitEndOrCap(timeout.toNanos())) {
                throw new SandboxTimeoutException("backend '" + backend.name() + "': an internal command in container "
                        + containerName + " did not end within " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("backend '" + backend.name() + "': interrupted during an internal command");
        } finally {
            closeQuietly(output);
        }
        boolean capped = output.capExceeded();
        return new Ended(capped ? -1 : exitCode(execId), output.stdout(), output.stderr(), capped);
    }

    private void uploadStdin(String token, byte[] input) {
        byte[] archive = backend.tarWriter().file(GuestScripts.STDIN_PREFIX + token, STDIN_MODE, input).finish();
        put(workArea, archive, "deliver stdin");
    }

    // ---------------------------------------------------------------- files

    /** The file primitives this call takes: the agent's where the container has one, the engine's otherwise. */
    @Override
    public ConfinedFiles<?> files() {
        return agent().<ConfinedFiles<?>>map(this::agentFiles).orElse(files);
    }

    private AgentFiles agentFiles(ContainerAgent agent) {
        return new AgentFiles(agent.connection(), backend.name(), filesIn, filesOut);
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        fileCall(false, "the file was written", primitives -> {
            primitives.writeFile(path, content, workingDirectory);
            return null;
        });
    }

    @Override
    public void mkdir(String path, String workingDirectory) {
        fileCall(false, "the directory was made", primitives -> {
            primitives.mkdir(path, workingDirectory);
            return null;
        });
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return fileCall(true, "a path was described", primitives -> primitives.stat(path, workingDirectory));
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return fileCall(true, "a file was read", primitives -> primitives.readFile(path, workingDirectory, maxBytes));
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        return fileCall(true, "a directory was listed", primitives -> primitives.listDir(path, workingDirectory));
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        fileCall(false, "a path was removed", primitives -> {
            primitives.remove(path, workingDirectory, recursive);
            return null;
        });
    }

    /**
     * One file method through the agent where the container has one, else the archive endpoints.
     * An agent whose stream breaks is replaced; a call that only looks ({@code readOnly}) is then
     * made once more on the new agent (or the engine), one that changes the guest fails, since it may
     * have taken effect. An agent that does not answer within its deadline is replaced too.
     */
    private <T> T fileCall(boolean readOnly, String during, Function<ConfinedFiles<?>, T> body) {
        Optional<ContainerAgent> agent = agent();
        if (agent.isEmpty()) {
            return body.apply(files);
        }
        try {
            return body.apply(agentFiles(agent.get()));
        } catch (AgentConnectionFailed broken) {
            SandboxException lost = agentLost(agent.get(), broken, during, Optional.empty());
            if (!readOnly || lost instanceof SandboxDisposed) {
                throw lost;
            }
            Optional<ContainerAgent> fresh = agent();
            if (fresh.isEmpty()) {
                return body.apply(files);
            }
            try {
                return body.apply(agentFiles(fresh.get()));
            } catch (AgentConnectionFailed again) {
                throw agentLost(fresh.get(), again, during, Optional.empty());
            }
        } catch (SandboxTimeoutException unanswered) {
            checkResponsive(agent.get());
            throw unanswered;
        }
    }

    /**
     * The engine's archive endpoints as the kit's file primitives. A call remembers each path's
     * stat, so the walk asks the engine once per ancestor.
     */
    private final class ArchiveFiles extends ConfinedFiles<Map<String, Optional<ConfinedFiles.Stat>>> {

        ArchiveFiles(TransferLimits filesIn, TransferLimits filesOut) {
            super(filesIn, filesOut);
        }

        @Override
        protected <T> T call(String path, String operation, Function<Map<String, Optional<Stat>>, T> body) {
            return body.apply(new HashMap<>());
        }

        @Override
        protected Optional<Stat> lstat(Map<String, Optional<Stat>> seen, String absolute) {
            return seen.computeIfAbsent(absolute, unseen -> pathStat(unseen)
                    .map(found -> new Stat(found.kind(), OptionalLong.of(found.size()), found.mode(), found.modified())));
        }

        /** The deepest directory that exists receives one archive holding the missing parents and the file. */
        @Override
        protected void write(Map<String, Optional<Stat>> seen, String confined, byte[] content, String path) {
            Missing missing = missing(seen, GuestPaths.directoryChain(GuestPaths.parent(confined)));
            Tar.Writer archive = missing.archive(backend.tarWriter());
            archive.file(below(confined, missing.existing()), FILE_MODE, content);
            put(missing.existing(), archive.finish(), "write " + GuestText.quote(path));
        }

        @Override
        protected void makeDirectories(Map<String, Optional<Stat>> seen, String confined, String path) {
            Missing missing = missing(seen, GuestPaths.directoryChain(confined));
            put(missing.existing(), missing.archive(backend.tarWriter()).finish(), "make the directory " + GuestText.quote(path));
        }

        /** The deepest directory of {@code chain} that exists, and the ones below it that do not. */
        private Missing missing(Map<String, Optional<Stat>> seen, List<String> chain) {
            String existing = "/";
            List<String> absent = new ArrayList<>();
            for (String directory : chain) {
                if (!absent.isEmpty() || lstat(seen, directory).isEmpty()) {
                    absent.add(directory);
                } else {
                    existing = directory;
                }
            }
            return new Missing(existing, List.copyOf(absent));
        }

        private record Missing(String existing, List<String> directories) {

            /** An archive, to extract in {@link #existing}, that holds the missing directories. */
            Tar.Writer archive(Tar.Writer archive) {
                for (String directory : directories) {
                    archive.directory(below(directory, existing), DIRECTORY_MODE);
                }
                return archive;
            }
        }

        @Override
        protected byte[] read(Map<String, Optional<Stat>> seen, String confined, Stat stat, long cap, String path) {
            try (Engine.ArchiveResponse response = archive(confined, "read " + GuestText.quote(path))) {
                if (response == null) {
                    throw new SandboxFileNotFound(GuestText.quote(path) + " does not exist");
                }
                // The engine's own no-follow stat decides again: Podman's archive follows a final link.
                EntryKind statted = response.pathStat() == null ? EntryKind.FILE : fromHeader(response.pathStat()).kind();
                FileRefusals.refuseUnlessRegular(statted, path);
                Tar.Header header = Tar.firstHeader(response.body()).orElseThrow(() -> new SandboxFileException(
                        "backend '" + backend.name() + "': the engine sent an empty archive for " + GuestText.quote(path)));
                FileRefusals.refuseUnlessRegular(header.kind(), path);
                if (header.size() > cap) {
                    throw FileRefusals.readOverCap(path, header.size(), cap);
                }
                byte[] content = response.body().readNBytes((int) header.size());
                if (content.length != header.size()) {
                    throw new SandboxFileException("backend '" + backend.name() + "': the archive of "
                            + GuestText.quote(path) + " ended after " + content.length + " of " + header.size()
                            + " bytes");
                }
                return content;
            } catch (IOException e) {
                throw new SandboxFileException("backend '" + backend.name() + "' could not read " + GuestText.quote(path)
                        + " from container " + containerName + ": " + Engine.detail(e), e);
            }
        }

        /** The guest's own no-follow stat of each child ({@link GuestScripts#listing}), bounded as every listing is. */
        @Override
        protected Map<String, Stat> list(Map<String, Optional<Stat>> seen, String confined, String path) {
            Ended listed = runInternal(GuestScripts.listing(confined), INTERNAL_TIMEOUT, LISTING_OUTPUT_CAP);
            if (listed.capped()) {
                throw FileRefusals.listingTooLarge(path);
            }
            if (listed.exitCode() == GuestScripts.LISTING_THROUGH_A_LINK) {
                throw new SandboxPathNotConfined(GuestText.quote(path) + " was reached through a link while it was "
                        + "listed; a listing through a link is refused");
            }
            if (listed.exitCode() == GuestScripts.LISTING_NOT_ENTERED) {
                throw FileRefusals.goneDuringTheCall(path);
            }
            if (listed.exitCode() != 0) {
                throw new SandboxFileException("backend '" + backend.name() + "': the guest could not list "
                        + GuestText.quote(path) + " (exit " + listed.exitCode() + ": " + GuestText.quote(
                        ErrorText.bounded(new String(listed.stderr(), StandardCharsets.UTF_8).strip()))
                        + "); listing needs sh and GNU find (findutils) in the image");
            }
            return ListingOutput.parse(listed.stdout(), path, backend.name());
        }

        /** rm never follows a link: a linked leaf is unlinked, links inside a tree are removed as links. */
        @Override
        protected void unlink(Map<String, Optional<Stat>> seen, String confined, Stat stat, boolean recursive,
                String path) {
            List<String> argv = List.of("rm", recursive ? "-rf" : "-f", "--", confined);
            Internal result = internal(argv, INTERNAL_TIMEOUT);
            if (result.exitCode() != 0) {
                throw new SandboxFileException("backend '" + backend.name() + "': the guest refused to remove "
                        + GuestText.quote(path) + " (rm exited " + result.exitCode() + ": " + result.stderr().strip()
                        + ")");
            }
        }
    }

    // ---------------------------------------------------------------- the engine's archive endpoints

    /**
     * What the engine's path stat says: a kind and, for a regular file, a size; the permission bits
     * and modification time when its header gave them (unknown when only an archive's tar header did).
     */
    record PathStat(EntryKind kind, long size, OptionalInt mode, Optional<Instant> modified) {
        PathStat(EntryKind kind, long size) {
            this(kind, size, OptionalInt.empty(), Optional.empty());
        }
    }

    /** The engine's no-follow stat of an absolute guest path; empty when nothing is there. */
    Optional<PathStat> pathStat(String absolute) {
        try (Engine.ArchiveResponse response = archive(absolute, "stat " + GuestText.quote(absolute))) {
            if (response == null) {
                return Optional.empty();
            }
            if (response.pathStat() != null) {
                return Optional.of(fromHeader(response.pathStat()));
            }
            Tar.Header header = Tar.firstHeader(response.body()).orElseThrow(() -> new SandboxFileException(
                    "backend '" + backend.name() + "': the engine sent an empty archive for " + GuestText.quote(absolute)));
            return Optional.of(new PathStat(header.kind(), header.size()));
        } catch (IOException e) {
            throw new SandboxFileException("backend '" + backend.name() + "' could not stat " + GuestText.quote(absolute)
                    + " in container " + containerName + ": " + Engine.detail(e), e);
        }
    }

    private PathStat fromHeader(String encoded) {
        Map<String, Object> stat;
        try {
            stat = Json.parseObject(new String(Base64.getDecoder().decode(encoded.strip()), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException malformed) {
            throw new SandboxFileException("backend '" + backend.name() + "': the engine's path stat is malformed: "
                    + ErrorText.bounded(encoded));
        }
        long mode = ((Number) stat.getOrDefault("mode", 0)).longValue();
        long size = ((Number) stat.getOrDefault("size", 0)).longValue();
        OptionalInt bits = OptionalInt.of(permissionBits(mode));
        Optional<Instant> modified = stat.get("mtime") instanceof String text ? timeOf(text) : Optional.empty();
        if ((mode & GO_MODE_SYMLINK) != 0) {
            return new PathStat(EntryKind.SYMLINK, 0, bits, modified);
        }
        if ((mode & GO_MODE_DIR) != 0) {
            return new PathStat(EntryKind.DIRECTORY, 0, bits, modified);
        }
        if ((mode & GO_MODE_OTHER) != 0) {
            return new PathStat(EntryKind.OTHER, 0, bits, modified);
        }
        return new PathStat(EntryKind.FILE, size, bits, modified);
    }

    /** A Go os.FileMode's permission bits as st_mode has them: rwx, and set-user-id, set-group-id, sticky. */
    static int permissionBits(long goMode) {
        int bits = (int) (goMode & 0777);
        bits |= (goMode & GO_MODE_SETUID) != 0 ? 04000 : 0;
        bits |= (goMode & GO_MODE_SETGID) != 0 ? 02000 : 0;
        bits |= (goMode & GO_MODE_STICKY) != 0 ? 01000 : 0;
        return bits;
    }

    /** The engine's RFC 3339 mtime; empty when it is not one (it decides nothing). */
    private static Optional<Instant> timeOf(String text) {
        if (text.length() > 64) {
            return Optional.empty();
        }
        try {
            return Optional.of(java.time.OffsetDateTime.parse(text).toInstant());
        } catch (java.time.format.DateTimeParseException notATime) {
            return Optional.empty();
        }
    }

    /** The archive of a path, or null when the engine says the path does not exist. */
    private Engine.ArchiveResponse archive(String absolute, String what) {
        Engine.ArchiveResponse response;
        try {
            response = engine.archive(containerId, absolute);
        } catch (RuntimeException failure) {
            throw backend.engineFailure(what + " in container " + containerName, failure);
        }
        if (response.status() == 200) {
            return response;
        }
        String message = response.message();
        response.close();
        if (response.status() == 404 && !message.toLowerCase(java.util.Locale.ROOT).contains("no such container")) {
            return null;
        }
        if (response.status() == 404) {
            throw backend.containerGone(containerName);
        }
        if (message.toLowerCase(java.util.Locale.ROOT).contains("not a directory")) {
            // A parent is a file: nothing can be there.
            return null;
        }
        throw new SandboxFileException("backend '" + backend.name() + "' could not " + what + " in container "
                + containerName + ": the engine answered " + response.status() + " " + ErrorText.bounded(message));
    }

    private void put(String directory, byte[] archive, String what) {
        try (InputStream in = new ByteArrayInputStream(archive)) {
            engine.control().copyArchiveToContainerCmd(containerId).withRemotePath(directory)
                    .withNoOverwriteDirNonDir(true).withTarInputStream(in).exec();
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        } catch (RuntimeException failure) {
            if (Engine.isNotFound(failure) && String.valueOf(failure.getMessage()).toLowerCase(java.util.Locale.ROOT)
                    .contains("no such container")) {
                throw backend.containerGone(containerName);
            }
            throw new SandboxFileException("backend '" + backend.name() + "' could not " + what + " in container "
                    + containerName + ": " + Engine.detail(failure), failure);
        }
    }

    private static String below(String path, String directory) {
        return GuestPaths.relativeTo(path, directory).orElseThrow(() -> new IllegalStateException(path
                + " is not below " + directory));
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[TOKEN_BYTES];
        TOKENS.nextBytes(bytes);
        return bytes;
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Closing a finished stream can only fail uninterestingly.
        }
    }
}
