package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * A handle on one bubblewrap sandbox: file methods work host-side on its workspace (openat-relative,
 * never following a link), and each exec runs a fresh {@code bwrap}. Handles are cheap; several
 * (in several processes) may share one sandbox.
 */
final class BubblewrapSandbox extends LocalSandbox {

    private final BubblewrapBackend backend;
    private final String mountPoint;
    private final Optional<EgressLink> egress;
    private final WorkspaceKeeper keeper;

    BubblewrapSandbox(BubblewrapBackend backend, String id, Path directory, String mountPoint,
            Optional<EgressLink> egress, SandboxSpec spec, WorkspaceKeeper keeper) {
        super(backend.name(), backend.sandboxes(), id, directory,
                new WorkspaceFiles(keeper.workspaceSeenByTheHost(directory.resolve(LocalStore.WORKSPACE)), mountPoint,
                        backend.name(), NoFifoFilter.coversThisHost() ? WorkspaceFiles.Fifos.CANNOT_EXIST
                                : WorkspaceFiles.Fifos.MAY_EXIST),
                spec);
        this.backend = backend;
        this.mountPoint = mountPoint;
        this.egress = egress;
        this.keeper = keeper;
    }

    /** The workspace lives with its keeper: one that is gone (killed, or the host restarted) took the files. */
    @Override
    boolean workspaceLost() {
        return !keeper.alive();
    }

    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(options, "options");
        beforeExec();
        List<String> argv = commandLine(command, options);
        long start = System.nanoTime();
        Process process;
        try {
            process = backend.processBuilder(argv).start();
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(backend.name(), "bwrap", e);
        }
        return supervise(process, BubblewrapSandbox::killLaunch, options, command.toShellLine(), start);
    }

    /**
     * Kills the launcher's child: the init of the launch's PID namespace (or, with no namespace of
     * the launch's own, the sandbox's), whose death ends every process the command started. The
     * launcher then reaps it and exits by itself, so nothing is left for the host's init to reap;
     * a launcher that has no child yet is killed instead.
     */
    private static void killLaunch(Process launcher) {
        List<ProcessHandle> children = launcher.children().toList();
        children.forEach(ProcessHandle::destroyForcibly);
        if (children.isEmpty()) {
            launcher.destroyForcibly();
        }
    }

    List<String> commandLine(Command command, ExecOptions options) {
        return backend.commandLine(directory(), id(), mountPoint, egress, keeper, command, options);
    }

    BubblewrapBackend backend() {
        return backend;
    }

    Optional<Path> egressAuditLog() {
        return egress.map(link -> directory().resolve(EgressLink.AUDIT_FILE));
    }

    @Override
    boolean guestSeesHostPaths() {
        return false;
    }

    @Override
    public String toString() {
        return "BubblewrapSandbox[" + id() + " at " + mountPoint + "]";
    }
}
