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
        List<String> argv = command instanceof Command.Argv words ? words.words()
                : List.of("sh", "-c", ((Command.Shell) command).line());
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
        switch (outcome.ending()) {
            case STARTED:
                // A kill's exit code on a sandbox disposed of meanwhile is not the command's word.
                if (outcome.exitCode() >= SIGNALLED && backend.wasDisposedOf(this)) {
                    throw disposedWhileRunning(shellLine);
                }
                return new ExecResult(outcome.capture().stdout(), outcome.capture().stderr(), outcome.exitCode(),
                        Duration.ofNanos(System.nanoTime() - start));
            case WORKING_DIRECTORY_MISSING:
                throw ExecRefusals.workingDirectoryMissing(options.workingDirectory());
            case WORKING_DIRECTORY_NOT_A_DIRECTORY:
                throw ExecRefusals.workingDirectoryNotADirectory(options.workingDirectory());
            case WORKING_DIRECTORY_UNENTERABLE:
                throw ExecRefusals.workingDirectoryNotEnterable(options.workingDirectory());
            case WRAPPER_FAILED:
                throw new SandboxException("backend '" + backend.name() + "': the exec wrapper in sandbox " + name
                        + " could not prepare " + GuestText.quote(shellLine) + " (find setsid, setpriv and sh, "
                        + "decode its words, or make its state under " + SbxScripts.CALL_STATE_PREFIX + "); nothing "
                        + "ran: check that the template has " + String.join(" ", SbxScripts.REQUIRED_COMMANDS)
                        + " and a writable /tmp");
            case UNBOUND:
                throw new SandboxException("backend '" + backend.name() + "': the command's own namespace in "
                        + "sandbox " + name + " could not bind the workspace at " + mountPoint + " ("
                        + GuestText.quote(outcome.preamble().strip()) + "); nothing ran: check that the template "
                        + "lets its user run 'unshare --user --mount --map-root-user mount --bind', or dispose of "
                        + "the sandbox and acquire a fresh one");
            default:
                throw sbxFailed(outcome.preamble());
        }
    }

    private SandboxDisposed disposedWhileRunning(String shellLine) {
        return new SandboxDisposed("backend '" + backend.name() + "': sandbox " + name + " was disposed of while "
                + GuestText.quote(shellLine) + " ran (here or by another process); the command was stopped with "
                + "it: acquire again for a fresh one");
    }

    /** Kills the call's process group in the guest, then the client; false when the kill could not run. */
    private boolean stop(Process process, String callState) {
        boolean killed = backend.killGroup(this, callState);
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
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
