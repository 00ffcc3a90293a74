package org.sandbox4j.sbx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.spi.GuestProcess;
import org.sandbox4j.core.spi.HostProcess;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * A handle on one sbx sandbox instance (a name and the id of the create that made it). Commands
 * run through the {@link SbxScripts#WRAPPER wrapper}; stats, reads, listings and writes act on the
 * host side of its workspace through {@link WorkspaceFiles}; removals check host-side, then
 * remove in the guest. Handles are cheap; several (in several processes) may share one sandbox.
 */
final class SbxSandbox implements Sandbox {

    /** The bound on the in-guest {@code rm} of {@link #remove}. */
    static final Duration REMOVE_TIMEOUT = Duration.ofSeconds(60);
    private static final int NONCE_BYTES = 16;
    /** An exit code at or above this is 128 + the signal that killed the command. */
    private static final int SIGNALLED = 128;
    /** How a timed-out, over-cap or interrupted command was ended. */
    private static final String KILLED = "was killed with its process group";
    private static final int CALL_ID_BYTES = 12;
    /**
     * How long past its lifetime a started process's guest-side backstop waits: the host's own
     * lifetime kill (one bounded sbx exec) comes first, and reports the timeout.
     */
    static final Duration BACKSTOP_GRACE = Duration.ofSeconds(30);
    /** How long a client whose wrapper refused to start the command may take to end by itself. */
    private static final Duration REFUSED_CLIENT_GRACE = Duration.ofSeconds(5);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(SbxSandbox.class.getName());

    private final SbxBackend backend;
    private final String name;
    private final String id;
    private final Path workspace;
    private final String mountPoint;
    private final WorkspaceFiles files;
    private volatile boolean retired;
    /** Who host-side writes are made as; null until first needed. */
    private volatile Optional<java.nio.file.attribute.UserPrincipal> hostUser;

    /** The spec's caps: every write and read is held to them before a byte moves. */
    private final TransferLimits filesIn;
    private final TransferLimits filesOut;

    SbxSandbox(SbxBackend backend, String name, String id, Path workspace, String mountPoint) {
        this(backend, name, id, workspace, mountPoint, TransferLimits.DEFAULT, TransferLimits.DEFAULT);
    }

    private SbxSandbox(SbxBackend backend, String name, String id, Path workspace, String mountPoint,
            TransferLimits filesIn, TransferLimits filesOut) {
        this.backend = backend;
        this.name = name;
        this.id = id;
        this.workspace = workspace;
        this.mountPoint = mountPoint;
        // Its guest can make FIFOs in the shared workspace: host opens are made so that they cannot block.
        this.files = new WorkspaceFiles(workspace, mountPoint, backend.name(), WorkspaceFiles.Fifos.MAY_EXIST);
        this.filesIn = filesIn;
        this.filesOut = filesOut;
    }

    /** This handle, held to {@code spec}'s per-file caps. */
    SbxSandbox limitedTo(SandboxSpec spec) {
        return new SbxSandbox(backend, name, id, workspace, mountPoint, spec.filesIn(), spec.filesOut());
    }

    String sandboxName() {
        return name;
    }

    String id() {
        return id;
    }

    Path workspace() {
        return workspace;
    }

    String mountPoint() {
        return mountPoint;
    }

    /**
     * Makes the spec's work dir (a child of the mount point) in the workspace, so the first command
     * of a conversation runs in it. Host-side, as a write is: {@code mkdir(2)} never follows a link
     * at the name (whatever the guest left there is kept, and an exec in it says what it is), and
     * what it made is handed to the guest user.
     */
    void makeWorkDir(String workDir) {
        String confined = GuestPaths.normalize(workDir);
        String below = GuestPaths.relativeTo(confined, mountPoint).orElseThrow();
        try {
            Files.createDirectory(workspace.resolve(below));
        } catch (java.nio.file.FileAlreadyExistsException present) {
            return;
        } catch (IOException e) {
            throw new SandboxException("backend '" + backend.name() + "' could not make the work dir "
                    + GuestText.quote(workDir) + " of sandbox " + name + " in its workspace " + workspace + ": "
                    + org.sandbox4j.core.spi.ErrorDetail.of(e) + "; make the workspace root writable, or dispose of "
                    + "the key and acquire again", e);
        }
        handOver(confined);
    }

    // ---------------------------------------------------------------- exec

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        requireLive();
        // Every guest program can use the network: an allowlist sandbox's rules are checked first.
        backend.checkEgress(this);
        List<String> argv = argvOf(command);
        long start = System.nanoTime();
        String nonce = random(NONCE_BYTES);
        String callState = SbxScripts.CALL_STATE_PREFIX + random(CALL_ID_BYTES);
        List<String> parameters = SbxScripts.wrapperParameters(nonce, callState, workspace.toString(), mountPoint,
                options.workingDirectory(), options.environment(), argv);
        List<String> args = SbxCli.execArgs(name, false, options.stdin().isPresent(),
                SbxScripts.shell(SbxScripts.WRAPPER, "sandbox4j-exec", parameters));
        String shellLine = command.toShellLine();
        Process process;
        try {
            process = backend.cli().runner().start(args);
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(backend.name(), backend.config().sbxPath(),
                    "install sbx, or name it with SbxConfig.builder().sbxPath(path)", e);
        }
        SbxExecRun.Outcome outcome;
        try {
            outcome = SbxExecRun.await(process, options, nonce, backend.name(), start);
        } catch (InterruptedException e) {
            stop(process, callState);
            Thread.currentThread().interrupt();
            throw ExecRefusals.interrupted(shellLine, "the command " + KILLED, e);
        }
        if (outcome.timedOut() || outcome.stopped()) {
            boolean killed = stop(process, callState);
            String ended = KILLED + (killed ? "" : "; its process group could not be killed, so this sandbox is "
                    + "retired (acquire again for a fresh one)");
            throw outcome.capture().refusal(shellLine, ended)
                    .orElseGet(() -> ExecRefusals.timedOut(shellLine, options.timeout(), ended));
        }
        if (outcome.ending() != SbxExecRun.Ending.STARTED) {
            throw notStarted(outcome.ending(), options.workingDirectory(), shellLine, outcome.preamble());
        }
        // A kill's exit code on a sandbox disposed of meanwhile is not the command's word.
        if (outcome.exitCode() >= SIGNALLED && backend.wasDisposedOf(this)) {
            throw disposedWhileRunning(shellLine);
        }
        return new ExecResult(outcome.capture().stdout(), outcome.capture().stderr(), outcome.exitCode(),
                Duration.ofNanos(System.nanoTime() - start));
    }

    private static List<String> argvOf(Command command) {
        return command instanceof Command.Argv words ? words.words()
                : List.of("sh", "-c", ((Command.Shell) command).line());
    }

    /** Why the wrapper ran nothing, as its marker line (or its missing nonce) said. */
    private SandboxException notStarted(SbxExecRun.Ending ending, String workingDirectory, String shellLine,
            String preamble) {
        return switch (ending) {
            case WORKING_DIRECTORY_MISSING -> ExecRefusals.workingDirectoryMissing(workingDirectory);
            case WORKING_DIRECTORY_NOT_A_DIRECTORY -> ExecRefusals.workingDirectoryNotADirectory(workingDirectory);
            case WORKING_DIRECTORY_UNENTERABLE -> ExecRefusals.workingDirectoryNotEnterable(workingDirectory);
            case WRAPPER_FAILED -> new SandboxException("backend '" + backend.name() + "': the exec wrapper in sandbox "
                    + name + " could not prepare " + GuestText.quote(shellLine) + " (find setsid, setpriv and sh, "
                    + "decode its words, or make its state under " + SbxScripts.CALL_STATE_PREFIX + "); nothing "
                    + "ran: check that the template has " + String.join(" ", SbxScripts.REQUIRED_COMMANDS)
                    + " and a writable /tmp");
            case UNBOUND -> new SandboxException("backend '" + backend.name() + "': the command's own namespace in "
                    + "sandbox " + name + " could not bind the workspace at " + mountPoint + " ("
                    + GuestText.quote(preamble.strip()) + "); nothing ran: check that the template "
                    + "lets its user run 'unshare --user --mount --map-root-user mount --bind', or dispose of "
                    + "the sandbox and acquire a fresh one");
            default -> sbxFailed(preamble);
        };
    }

    // ---------------------------------------------------------------- start

    /**
     * {@code sbx exec -i} of the wrapper as a started process ({@link HostProcess}): stdin is the
     * client's, closed to end the command's input. It is started once the wrapper's marker line says
     * so (a refusal of the working directory is thrown here, never an exit code). Signals and the
     * tree kill go through a second {@code sbx exec} ({@link SbxScripts#SIGNAL}, {@link SbxScripts#KILL}),
     * then the client is ended; a guest-side backstop ({@link #BACKSTOP_GRACE} past the lifetime)
     * covers a host that went away.
     */
    @Override
    public SandboxProcess start(Command command, ProcessOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        requireLive();
        backend.checkEgress(this);
        String nonce = random(NONCE_BYTES);
        String callState = SbxScripts.CALL_STATE_PREFIX + random(CALL_ID_BYTES);
        List<String> parameters = SbxScripts.wrapperParameters(nonce, callState, workspace.toString(), mountPoint,
                options.workingDirectory(), backstopSeconds(options.lifetime()), options.environment(),
                argvOf(command));
        List<String> args = SbxCli.execArgs(name, false, true,
                SbxScripts.shell(SbxScripts.WRAPPER, "sandbox4j-exec", parameters));
        String shellLine = command.toShellLine();
        GuestProcess handle = GuestProcess.reserve(backend.name(), name, shellLine, options);
        boolean served = false;
        try {
            Process client;
            try {
                client = backend.cli().runner().start(args);
            } catch (IOException e) {
                throw ExecRefusals.couldNotStart(backend.name(), backend.config().sbxPath(),
                        "install sbx, or name it with SbxConfig.builder().sbxPath(path)", e);
            }
            Optional<SbxProcessStart.Seen> seen;
            try {
                seen = SbxProcessStart.await(client, nonce, backend.config().commandTimeout());
            } catch (InterruptedException e) {
                stop(client, callState, false);
                Thread.currentThread().interrupt();
                throw ExecRefusals.interrupted(shellLine, "its start " + KILLED, e);
            } catch (RuntimeException e) {
                stop(client, callState, false);
                throw e;
            }
            if (seen.isEmpty()) {
                boolean killed = stop(client, callState, false);
                throw new SandboxException("backend '" + backend.name() + "': sbx exec did not start "
                        + GuestText.quote(shellLine) + " in sandbox " + name + " within " + backend.config()
                        .commandTimeout().toSeconds() + " s; it " + KILLED + (killed ? "" : " (or, where that could "
                        + "not run, the sandbox was retired)") + ": check the sandbox with 'sbx ls', or raise "
                        + "SbxConfig.builder().commandTimeout");
            }
            if (seen.get().ending() != SbxExecRun.Ending.STARTED) {
                endRefusedClient(client);
                throw notStarted(seen.get().ending(), options.workingDirectory(), shellLine, seen.get().preamble());
            }
            backend.holdClient(name, client);
            handle.whenEnded(() -> backend.forgetClient(name, client));
            HostProcess.serve(handle, client, started -> stop(started, callState, true),
                    (started, signal) -> signal(callState, signal, shellLine), () -> backend.wasDisposedOf(this));
            served = true;
            return handle;
        } finally {
            if (!served) {
                // Nothing of it runs: its slot is given back.
                handle.abandon();
            }
        }
    }

    /** The guest-side bound of a started process: its lifetime in whole seconds, rounded up, plus the grace. */
    static long backstopSeconds(Duration lifetime) {
        long seconds = lifetime.getSeconds() + (lifetime.getNano() > 0 ? 1 : 0);
        return seconds + BACKSTOP_GRACE.toSeconds();
    }

    private void signal(String callState, ProcessSignal signal, String shellLine) {
        if (backend.signalGroup(this, callState, signal)) {
            return;
        }
        if (backend.wasDisposedOf(this)) {
            throw disposedWhileRunning(shellLine);
        }
        throw new SandboxException("backend '" + backend.name() + "' could not send SIG" + signal.shellName() + " to "
                + GuestText.quote(shellLine) + " in sandbox " + name + " (the second sbx exec that delivers it did "
                + "not run); the process goes on: kill or close it, or check the sandbox with 'sbx ls'");
    }

    /** A client whose wrapper ran nothing ends by itself at once; it is ended here if it does not. */
    private static void endRefusedClient(Process client) {
        try {
            client.waitFor(REFUSED_CLIENT_GRACE.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        client.descendants().forEach(ProcessHandle::destroyForcibly);
        client.destroyForcibly();
    }

    private SandboxDisposed disposedWhileRunning(String shellLine) {
        return new SandboxDisposed("backend '" + backend.name() + "': sandbox " + name + " was disposed of while "
                + GuestText.quote(shellLine) + " ran (here or by another process); the command was stopped with "
                + "it: acquire again for a fresh one");
    }

    /** Kills the call's process group in the guest, then the client; false when the kill could not run. */
    private boolean stop(Process process, String callState) {
        return stop(process, callState, false);
    }

    /** {@link #stop(Process, String)}; {@code started}: a started process's, whose call state then goes too. */
    private boolean stop(Process process, String callState, boolean started) {
        boolean killed = backend.killGroup(this, callState, started);
        // A client that already exited is left alone: destroying it closes its streams, and the tail of
        // a started process's output (after its leader's exit) is still being read from them.
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        return killed;
    }

    private SandboxException sbxFailed(String said) {
        String line = SbxReply.errorLineIn(said).orElse("");
        backend.cli().raiseShared(said);
        if (line.contains(SbxCli.NOT_FOUND)) {
            return new SandboxDisposed("backend '" + backend.name() + "': sandbox " + name + " no longer exists (it "
                    + "was disposed of, here or by another process); acquire again for a fresh one");
        }
        String shown = line.isEmpty() ? said.strip() : line;
        return new SandboxException("backend '" + backend.name() + "': sbx exec failed before the command started"
                + (shown.isEmpty() ? "" : " (" + GuestText.quote(shown) + ")") + "; check the sandbox with 'sbx ls', "
                + "and that its template can run unshare --user --mount --map-root-user");
    }

    void retire() {
        retired = true;
    }

    /** Whether this instance is gone: its workspace deleted, or sbx no longer lists it under its id. */
    boolean isGone() {
        if (!Files.isDirectory(workspace)) {
            return true;
        }
        try {
            return backend.cli().find(name).map(listing -> !listing.id().equals(id)).orElse(true);
        } catch (RuntimeException unreachable) {
            return false;
        }
    }

    private void requireLive() {
        if (retired || backend.isRetired(name, id)) {
            retired = true;
            throw new SandboxException("backend '" + backend.name() + "': sandbox " + name + " is retired (a timed-out "
                    + "command in it could not be killed); acquire again and the backend replaces it");
        }
        if (!Files.isDirectory(workspace)) {
            throw new SandboxDisposed("backend '" + backend.name() + "': sandbox " + name + " was disposed of, here or "
                    + "by another process; acquire it again for a fresh one");
        }
    }

    // ---------------------------------------------------------------- files

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        requireLive();
        filesIn.refuseOversizeWrite(content, path);
        String confined = requireReachable(path, workingDirectory);
        files.writeFile(path, content, workingDirectory);
        handOver(confined);
    }

    /** Gives what the write made to the workspace's owner (the guest user), where the host is someone else. */
    private void handOver(String confined) {
        Optional<java.nio.file.attribute.UserPrincipal> host = hostUser;
        if (host == null) {
            host = WorkspaceOwner.hostUser(workspace);
            hostUser = host;
        }
        if (host.isEmpty()) {
            return;
        }
        String below = GuestPaths.relativeTo(confined, mountPoint).orElseThrow();
        try {
            WorkspaceOwner.handOver(workspace, host.get(), List.of(below.split("/")));
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backend.name() + "': " + GuestText.quote(confined)
                    + " was written but stays owned by the host user: " + org.sandbox4j.core.spi.ErrorDetail.of(e));
        }
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return files(path, workingDirectory).stat(path, workingDirectory);
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return files(path, workingDirectory).readFile(path, workingDirectory, filesOut.readCap(maxBytes));
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        return files(path, workingDirectory).listDir(path, workingDirectory);
    }

    @Override
    public void mkdir(String path, String workingDirectory) {
        files(path, workingDirectory).mkdir(path, workingDirectory);
        handOver(GuestPaths.confine(path, workingDirectory));
    }

    /** The workspace's files, once this instance is live and {@code path} lies in the workspace. */
    private WorkspaceFiles files(String path, String workingDirectory) {
        requireLive();
        requireReachable(path, workingDirectory);
        return files;
    }

    /**
     * The host-side check (confinement and the no-follow walk through {@link WorkspaceFiles}),
     * then {@code rm -f} (or {@code rm -rf}) in the guest: a guest keeps seeing a name for a while
     * after a host-side delete, so the guest removes it at its own authority.
     */
    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        requireLive();
        GuestPaths.confineRemovalPath(path, workingDirectory);
        String confined = requireReachable(path, workingDirectory);
        if (confined.equals(mountPoint)) {
            throw new SandboxPathNotConfined(GuestText.quote(path) + " names the workspace's mount point "
                    + GuestText.quote(mountPoint) + " itself; refusing to remove the workspace");
        }
        Optional<SandboxEntry> entry = files.stat(path, workingDirectory);
        if (entry.isEmpty()) {
            return;
        }
        if (entry.get().kind() == EntryKind.DIRECTORY && !recursive) {
            throw new SandboxFileException(GuestText.quote(path) + " is a directory; nothing was removed: pass "
                    + "recursive = true to remove it and everything under it");
        }
        List<String> rm = new ArrayList<>(List.of("rm", recursive ? "-rf" : "-f", "--", confined));
        ExecResult removal = exec(Command.argv(rm), ExecOptions.in("/", REMOVE_TIMEOUT));
        if (removal.exitCode() != 0) {
            String said = removal.stderrText().strip();
            throw new SandboxFileException("the guest refused to remove " + GuestText.quote(path) + ": rm exited "
                    + removal.exitCode() + (said.isEmpty() ? "" : " — " + GuestText.quote(said)));
        }
    }

    /**
     * File methods reach only the workspace, bound at the storage base's parent.
     *
     * @return the confined absolute path
     * @throws SandboxPathNotConfined   an escape from the working directory
     * @throws IllegalArgumentException a path outside the workspace's mount point
     */
    private String requireReachable(String path, String workingDirectory) {
        String confined = GuestPaths.confine(path, workingDirectory);
        if (GuestPaths.relativeTo(confined, mountPoint).isEmpty()) {
            throw new IllegalArgumentException(GuestText.quote(path) + " resolves to " + GuestText.quote(confined)
                    + ", outside " + GuestText.quote(mountPoint) + " (the parent of the spec's work dir, where the "
                    + "workspace is bound); backend '" + backend.name() + "' reaches files only under it");
        }
        backend.refuseAlteredNames(files, confined, mountPoint);
        return confined;
    }

    private static String random(int bytes) {
        byte[] value = new byte[bytes];
        RANDOM.nextBytes(value);
        return HexFormat.of().formatHex(value);
    }

    @Override
    public String toString() {
        return "SbxSandbox[" + name + " (" + id + ") at " + mountPoint + "]";
    }
}
