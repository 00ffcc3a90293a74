package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * A handle on one {@link ProcessBackend} sandbox: a workspace on the host whose path is the
 * guest's path (the guest shares the host's file system), file methods confined to it, and each
 * exec a host process in a session of its own.
 */
final class ProcessSandbox extends LocalSandbox {

    private final ProcessBackend backend;
    private final Path workspace;
    private final String workDir;

    ProcessSandbox(ProcessBackend backend, String id, Path directory, Path workspace, String workDir,
            SandboxSpec spec) {
        super(backend.name(), backend.sandboxes(), id, directory,
                new WorkspaceFiles(workspace, workspace.toString(), backend.name()), spec);
        this.backend = backend;
        this.workspace = workspace;
        this.workDir = workDir;
    }

    /** Always present: the guest shares the host's file system, so each sandbox's work dir is its own host path. */
    @Override
    public Optional<String> relocatedWorkDir() {
        return Optional.of(workDir);
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        beforeExec();
        Path workingDirectory = Path.of(options.workingDirectory());
        if (!workingDirectory.isAbsolute() || !Files.isDirectory(workingDirectory, LinkOption.NOFOLLOW_LINKS)) {
            throw new SandboxException("backend '" + backend.name() + "' cannot run " + GuestText.quote(
                    command.toShellLine()) + " in " + GuestText.quote(options.workingDirectory())
                    + ": there is no such directory; create it first (this sandbox's work dir is " + workDir + ")");
        }
        ProcessBuilder builder = new ProcessBuilder(backend.commandLine(id(), command)).directory(
                workingDirectory.toFile());
        builder.environment().clear();
        builder.environment().putAll(backend.environment(directory(), workspace, options));
        ExecMarker marker = ExecMarker.forExec(id());
        builder.environment().put(marker.variable(), marker.value());
        ExecMarker everyExec = ExecMarker.forSandbox(id());
        builder.environment().put(everyExec.variable(), everyExec.value());
        long start = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(backend.name(), "setsid", e);
        }
        return supervise(process, started -> backend.killTree(started, marker), options, command.toShellLine(), start);
    }

    @Override
    boolean guestSeesHostPaths() {
        return true;
    }

    @Override
    public String toString() {
        return "ProcessSandbox[" + id() + " at " + workDir + "]";
    }
}
