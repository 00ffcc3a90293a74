package org.sandbox4j.local;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.WorkspaceFiles;

/**
 * What every local sandbox handle shares: file methods host-side on its workspace, a refusal once
 * the sandbox was disposed of (here or by another process), and a lease kept ahead of the reaper
 * while it is used. Subclasses add how a command runs.
 */
abstract class LocalSandbox implements Sandbox {

    private final String backendName;
    private final LocalSandboxes sandboxes;
    private final String id;
    private final Path directory;
    private final WorkspaceFiles files;
    private volatile Instant leaseUntil;

    LocalSandbox(String backendName, LocalSandboxes sandboxes, String id, Path directory, WorkspaceFiles files) {
        this.backendName = backendName;
        this.sandboxes = sandboxes;
        this.id = id;
        this.directory = directory;
        this.files = files;
        this.leaseUntil = Instant.now().plus(sandboxes.lease());
    }

    final String id() {
        return id;
    }

    final Path directory() {
        return directory;
    }

    /** Call before running a command: refuses a disposed sandbox and renews a waning lease. */
    final void beforeExec() {
        requireLive();
        if (Instant.now().plus(sandboxes.lease().dividedBy(2)).isBefore(leaseUntil)) {
            return;
        }
        leaseUntil = sandboxes.renewLease(id);
    }

    @Override
    public final void writeFile(String path, byte[] content, String workingDirectory) {
        requireLive();
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
        return files.readFile(path, workingDirectory, maxBytes);
    }

    @Override
    public final List<SandboxEntry> listDir(String path, String workingDirectory) {
        requireLive();
        return files.listDir(path, workingDirectory);
    }

    @Override
    public final void remove(String path, String workingDirectory, boolean recursive) {
        requireLive();
        files.remove(path, workingDirectory, recursive);
    }

    private void requireLive() {
        if (!Files.isDirectory(directory)) {
            throw new SandboxException("backend '" + backendName + "': this sandbox (" + id + ") was disposed of, "
                    + "here or by another process sharing the state root; acquire it again for a fresh one");
        }
    }
}
