package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.ProcessPump;
import org.sandbox4j.core.spi.WorkspaceFiles;

/**
 * What every local sandbox handle shares: file methods host-side on its workspace, a refusal once
 * the sandbox was disposed of (here or by another process), and a lease kept ahead of the reaper
 * while it is used, and one exec path (launch, record, supervise, read the launch's report).
 * Subclasses add how a command is launched and what its launcher's report means.
 */
abstract class LocalSandbox implements Sandbox {

    private final String backendName;
    private final LocalSandboxes sandboxes;
    private final String id;
    private final Path directory;
    private final WorkspaceFiles files;
    /** The spec's caps: every write and read through this handle is held to them before a byte moves. */
    private final TransferLimits filesIn;
    private final TransferLimits filesOut;
    private volatile Instant leaseUntil;

    LocalSandbox(String backendName, LocalSandboxes sandboxes, String id, Path directory, WorkspaceFiles files,
            SandboxSpec spec) {
        this.backendName = backendName;
        this.sandboxes = sandboxes;
        this.id = id;
        this.directory = directory;
        this.files = files;
        this.filesIn = spec.filesIn();
        this.filesOut = spec.filesOut();
        this.leaseUntil = Instant.now().plus(sandboxes.lease());
    }

    final String id() {
        return id;
    }

    final Path directory() {
        return directory;
    }

    /** Call before running a command: refuses a disposed sandbox and renews a waning lease. */
    private void beforeExec() {
        requireLive();
        if (Instant.now().plus(sandboxes.lease().dividedBy(2)).isBefore(leaseUntil)) {
            return;
        }
        leaseUntil = sandboxes.renewLease(id);
    }

    @Override
    public final void writeFile(String path, byte[] content, String workingDirectory) {
        requireLive();
        filesIn.refuseOversizeWrite(content, path);
        files.writeFile(path, content, workingDirectory);
    }

    @Override
    public final Optional<SandboxEntry> stat(String path, String workingDirectory) {
        requireLive();
        return files.stat(path, workingDirectory);
    }

    @Override
    public final byte[] readFile(String path, String workingDirectory, long maxBytes) {
        requireLive();
        return files.readFile(path, workingDirectory, filesOut.readCap(maxBytes));
    }

    @Override
    public final List<SandboxEntry> listDir(String path, String workingDirectory) {
        requireLive();
        return files.listDir(path, workingDirectory);
    }

    @Override
    public final void mkdir(String path, String workingDirectory) {
        requireLive();
        files.mkdir(path, workingDirectory);
    }

    @Override
    public final void remove(String path, String workingDirectory, boolean recursive) {
        requireLive();
        files.remove(path, workingDirectory, recursive);
    }

    /**
     * How one command is launched on the host: the process to start, how to kill everything it
     * started, and the host program that starts it (for messages).
     */
    record Launch(ProcessBuilder process, ProcessPump.TreeKill treeKill, String launcher) {
    }

    /** The launch of {@code command}, told to write how it went to {@code report}. */
    abstract Launch launch(Command command, ExecOptions options, Path report);

    /**
     * The command's result, or the refusal when the launch's {@code report} says the command never
     * started (the launcher, not the command, ended with {@code launched}'s exit code).
     */
    abstract ExecResult commandResult(ExecResult launched, String report, Command command, ExecOptions options);

    /** The refusal when the launcher could not even be started (the host failed to run it). */
    SandboxException couldNotStart(Launch launch, ExecOptions options, IOException cause) {
        return ExecRefusals.couldNotStart(backendName, launch.launcher(), cause);
    }

    /**
     * Runs {@code command}: starts its launch, records it among the sandbox's launches so that a
     * disposal (here or in another process) stops it before touching the files, waits for it
     * under {@code options}, and reads the launch's report so that a launcher's failure is never
     * returned as the command's exit code. A disposal before or during the run ends the call with
     * {@link SandboxDisposed}, never with whatever exit code the kill left.
     */
    @Override
    public final ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        beforeExec();
        try (LaunchReport report = newReport()) {
            Launch launch = launch(command, options, report.file());
            long start = System.nanoTime();
            Process process;
            try {
                process = launch.process().start();
            } catch (IOException e) {
                throw couldNotStart(launch, options, e);
            }
            ExecResult launched = supervise(process, launch.treeKill(), options, command.toShellLine(), start);
            return commandResult(launched, report.read(), command, options);
        }
    }

    /**
     * The one wording of a launcher that failed before the command started: nothing ran, and what
     * the launcher said (the guest printed nothing yet) is the reason.
     */
    final SandboxException launcherFailed(String launcher, ExecResult launched, Command command) {
        return ExecRefusals.launcherFailed(backendName, launcher, command.toShellLine(), launched.exitCode(),
                new String(launched.stderr(), StandardCharsets.UTF_8).strip());
    }

    private LaunchReport newReport() {
        try {
            return LaunchReport.in(directory);
        } catch (IOException e) {
            requireLive();
            throw new SandboxException("backend '" + backendName + "' could not prepare the launch of a command in "
                    + "the sandbox " + id + ": " + ErrorDetail.of(e), e);
        }
    }

    private ExecResult supervise(Process process, ProcessPump.TreeKill treeKill, ExecOptions options, String description,
            long startNanos) {
        Optional<Launches.Registration> registration = Launches.register(directory, process);
        if (registration.isEmpty()) {
            treeKill.kill(process);
            throw disposedDuring(description, null);
        }
        try (Launches.Registration ignored = registration.get()) {
            ExecResult result = ProcessPump.await(process, treeKill, options, description, backendName, startNanos);
            if (retired()) {
                throw disposedDuring(description, null);
            }
            return guestSeesHostPaths() ? result : withoutHostPaths(result);
        } catch (SandboxDisposed | SandboxInterrupted passOn) {
            throw passOn;
        } catch (SandboxException failed) {
            if (retired()) {
                throw disposedDuring(description, failed);
            }
            throw failed;
        }
    }

    /**
     * The result with this host's state directory kept out of its stderr: only a launcher failing
     * (bwrap naming a bind source) could print it, and where sandboxes live is the host's business.
     */
    private ExecResult withoutHostPaths(ExecResult result) {
        byte[] hostPath = directory.getParent().toString().getBytes(StandardCharsets.UTF_8);
        byte[] stderr = result.stderr();
        if (indexOf(stderr, hostPath, 0) < 0) {
            return result;
        }
        byte[] hidden = "<sandbox4j state>".getBytes(StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(stderr.length);
        int from = 0;
        for (int at = indexOf(stderr, hostPath, 0); at >= 0; at = indexOf(stderr, hostPath, from)) {
            out.write(stderr, from, at - from);
            out.write(hidden, 0, hidden.length);
            from = at + hostPath.length;
        }
        out.write(stderr, from, stderr.length - from);
        return new ExecResult(result.stdout(), out.toByteArray(), result.exitCode(), result.elapsed());
    }

    private static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = from; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Whether the guest's own paths are host paths (an os_process guest): then its stderr is left as it is. */
    abstract boolean guestSeesHostPaths();

    private boolean retired() {
        return !Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS);
    }

    private SandboxDisposed disposedDuring(String description, Throwable cause) {
        return new SandboxDisposed("backend '" + backendName + "': this sandbox (" + id + ") was disposed of while "
                + GuestText.quote(description) + " ran, here or by another process sharing the state root; the "
                + "command was stopped with everything it started: acquire the sandbox again for a fresh one", cause);
    }

    private void requireLive() {
        if (retired()) {
            throw new SandboxDisposed("backend '" + backendName + "': this sandbox (" + id + ") was disposed of, "
                    + "here or by another process sharing the state root; acquire it again for a fresh one");
        }
        if (workspaceLost()) {
            throw new SandboxDisposed("backend '" + backendName + "': this sandbox's (" + id + ") workspace is gone "
                    + "(its keeper process ended: it was killed, or the host restarted); acquire the sandbox again "
                    + "for a fresh, empty workspace");
        }
    }

    /** Whether the workspace's files are gone while the sandbox's record is still there. */
    boolean workspaceLost() {
        return false;
    }
}
