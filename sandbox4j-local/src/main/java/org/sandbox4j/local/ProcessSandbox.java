package org.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
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
    Launch launch(Command command, ExecOptions options, Path report) {
        Path workingDirectory = Path.of(options.workingDirectory());
        if (!workingDirectory.isAbsolute()) {
            // Relative, it would name a directory below the JVM's own working directory.
            throw ExecRefusals.workingDirectoryMissing(options.workingDirectory());
        }
        ProcessBuilder builder = new ProcessBuilder(backend.commandLine(id(), command, report))
                .directory(workingDirectory.toFile());
        builder.environment().clear();
        builder.environment().putAll(backend.environment(directory(), workspace, options));
        ExecMarker marker = ExecMarker.forExec(id());
        builder.environment().put(marker.variable(), marker.value());
        ExecMarker everyExec = ExecMarker.forSandbox(id());
        builder.environment().put(everyExec.variable(), everyExec.value());
        return new Launch(builder, started -> backend.killTree(started, marker), "setsid");
    }

    /**
     * The host could not start the launch. In a working directory that is not one, it is the
     * JVM's own chdir that failed, before anything ran: what is there, seen without following a
     * link, says which refusal it is; for a link, as bwrap's chdir says it, a link to nothing is
     * missing and one to a file not a directory.
     */
    @Override
    SandboxException couldNotStart(Launch launch, ExecOptions options, IOException cause) {
        String workingDirectory = options.workingDirectory();
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(Path.of(workingDirectory), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
        } catch (IOException missing) {
            return ExecRefusals.workingDirectoryMissing(workingDirectory);
        }
        if (attributes.isDirectory()) {
            return super.couldNotStart(launch, options, cause);
        }
        // A link the chdir followed: the JVM's message carries the chdir's errno (20, ENOTDIR: it led to a file).
        boolean notADirectory = !attributes.isSymbolicLink()
                || String.valueOf(cause.getMessage()).contains("error=20,");
        return notADirectory ? ExecRefusals.workingDirectoryNotADirectory(workingDirectory)
                : ExecRefusals.workingDirectoryMissing(workingDirectory);
    }

    /** The command's result when the trampoline reported it started; else the launcher's failure. */
    @Override
    ExecResult commandResult(ExecResult launched, String report, Command command, ExecOptions options) {
        if (report.equals(GuestCommand.STARTED)) {
            return launched;
        }
        throw launcherFailed("the launcher", launched, command);
    }

    /** The trampoline's setsid made the launch a session and group leader, and it execs the command: its pid is the group. */
    @Override
    long processGroup(Process launcher) {
        return launcher.pid();
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
