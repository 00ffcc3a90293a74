package org.sandbox4j.local;

import org.sandbox4j.core.WorkspaceFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;

/**
 * A handle on one bubblewrap sandbox: file methods work host-side on its workspace (openat-relative,
 * never following a link), and each exec runs a fresh {@code bwrap}. Handles are cheap; several
 * (in several processes) may share one sandbox.
 */
final class BubblewrapSandbox implements Sandbox {

    private final BubblewrapBackend backend;
    private final String id;
    private final Path directory;
    private final String mountPoint;
    private final Optional<EgressLink> egress;
    private final WorkspaceFiles files;
    private volatile Instant leaseUntil;

    BubblewrapSandbox(BubblewrapBackend backend, String id, Path directory, String mountPoint,
            Optional<EgressLink> egress) {
        this.backend = backend;
        this.id = id;
        this.directory = directory;
        this.mountPoint = mountPoint;
        this.egress = egress;
        this.files = new WorkspaceFiles(directory.resolve(LocalStore.WORKSPACE), mountPoint, backend.name());
        this.leaseUntil = Instant.now().plus(backend.sandboxes().lease());
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        requireLive();
        renewLeaseIfWaning();
        List<String> argv = commandLine(command, options);
        long start = System.nanoTime();
        Process process;
        try {
            process = backend.processBuilder(argv).start();
        } catch (IOException e) {
            throw ProcessRun.couldNotStart(backend.name(), "bwrap", e);
        }
        // Killing the outer bwrap ends the guest's PID namespace, and with it every process the command started.
        return ProcessRun.await(process, Process::destroyForcibly, options, command.toShellLine(), backend.name(),
                start);
    }

    List<String> commandLine(Command command, ExecOptions options) {
        return backend.commandLine(directory, id, mountPoint, egress, command, options);
    }

    BubblewrapBackend backend() {
        return backend;
    }

    Optional<Path> egressAuditLog() {
        return egress.map(link -> directory.resolve(EgressLink.AUDIT_FILE));
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        requireLive();
        files.writeFile(path, content, workingDirectory);
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        requireLive();
        return files.stat(path, workingDirectory);
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        requireLive();
        return files.readFile(path, workingDirectory, maxBytes);
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        requireLive();
        return files.listDir(path, workingDirectory);
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        requireLive();
        files.remove(path, workingDirectory, recursive);
    }

    private void requireLive() {
        if (!Files.isDirectory(directory)) {
            throw new SandboxException("backend '" + backend.name() + "': this sandbox (" + id + ") was disposed of, "
                    + "here or by another process sharing the state root; acquire it again for a fresh one");
        }
    }

    /** Keeps the record's lease ahead of the reaper while the sandbox is used. */
    private void renewLeaseIfWaning() {
        if (Instant.now().plus(backend.sandboxes().lease().dividedBy(2)).isBefore(leaseUntil)) {
            return;
        }
        leaseUntil = backend.sandboxes().renewLease(id);
    }

    @Override
    public String toString() {
        return "BubblewrapSandbox[" + id + " at " + mountPoint + "]";
    }
}
