package org.sandbox4j.local;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.sandbox4j.agent.AgentConnectionFailed;
import org.sandbox4j.agent.AgentKillFailed;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.spi.Disposals;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.core.spi.ExecRefusals;

/**
 * A handle on one bubblewrap sandbox: file methods work host-side on its workspace (openat-relative,
 * never following a link), and each exec goes through the sandbox's resident agent or, where the
 * backend has none, runs a fresh {@code bwrap}. Handles are cheap; several (in several processes)
 * may share one sandbox.
 */
final class BubblewrapSandbox extends LocalSandbox {

    /** The line bwrap's {@code --json-status-fd} writes when its child exits, having reached exec. */
    private static final Pattern EXIT_CODE = Pattern.compile("\\{\\s*\"exit-code\"\\s*:\\s*-?\\d+\\s*}");

    private final BubblewrapBackend backend;
    private final String mountPoint;
    /** The host directory of its egress proxy's socket, when it allowlists. */
    private final Optional<Path> egress;
    private final WorkspaceKeeper keeper;

    BubblewrapSandbox(BubblewrapBackend backend, String id, Path directory, String mountPoint,
            Optional<Path> egress, SandboxSpec spec, WorkspaceKeeper keeper) {
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

    /**
     * Runs {@code command} through the sandbox's resident agent, as a fresh bwrap would: its own PID
     * and mount namespaces, /proc and temporary directories, as nobody, ended with its whole tree at
     * its leader's exit, at the deadline or at the output cap. An agent that broke meanwhile is ended
     * and forgotten (the next call starts a fresh one), and the call is refused saying so.
     */
    @Override
    Optional<ExecResult> execResident(Command command, ExecOptions options) {
        Optional<ResidentAgents.Agent> agent = backend.residentAgent(directory(), id(), mountPoint, egress, keeper);
        if (agent.isEmpty()) {
            return Optional.empty();
        }
        String line = command.toShellLine();
        try {
            ExecResult result = agent.get().connection().execEndingTree(words(command), options.workingDirectory(),
                    environment(options), options, line);
            if (retired()) {
                throw disposedDuring(line, null);
            }
            return Optional.of(result);
        } catch (RuntimeException failed) {
            throw refusal(agent.get(), line, failed);
        }
    }

    /** As {@link #execResident}, for a started process (the agent's driver of core's handle). */
    @Override
    Optional<SandboxProcess> startResident(Command command, ProcessOptions options) {
        Optional<ResidentAgents.Agent> agent = backend.residentAgent(directory(), id(), mountPoint, egress, keeper);
        if (agent.isEmpty()) {
            return Optional.empty();
        }
        String line = command.toShellLine();
        try {
            return Optional.of(agent.get().connection().start(words(command), options.workingDirectory(),
                    environment(options.asExecOptions()), options, line, id(),
                    () -> new Disposals().wasDisposedOf(id(), this::retired)));
        } catch (RuntimeException failed) {
            throw refusal(agent.get(), line, failed);
        }
    }

    /**
     * What a call through {@code agent} that failed with {@code failed} throws: a disposal's refusal
     * when the sandbox was disposed of meanwhile; else, when the agent broke (its stream ended, it
     * broke the protocol, or its kill left processes), a refusal saying so, the agent ended and
     * forgotten; else the failure as it is (a timeout, the output cap, a missing working directory).
     */
    private RuntimeException refusal(ResidentAgents.Agent agent, String line, RuntimeException failed) {
        if (failed instanceof SandboxDisposed || failed instanceof SandboxInterrupted) {
            return failed;
        }
        boolean broken = failed instanceof AgentConnectionFailed || failed instanceof AgentKillFailed;
        if (broken) {
            backend.agents().discard(id(), agent);
        }
        if (retired()) {
            return disposedDuring(line, failed);
        }
        if (!broken) {
            return failed;
        }
        return new SandboxException("backend '" + backend.name() + "': the resident agent of the sandbox " + id()
                + " ended or broke while " + GuestText.quote(line) + " ran (" + failed.getMessage() + "); the command "
                + "was stopped with everything it started, and the next call starts a fresh agent (its log: "
                + ResidentAgents.LOG_FILE + " in the sandbox's directory)", failed);
    }

    /** The program and its arguments as the agent runs them (never through a shell): a shell line under {@code sh -c}. */
    private static List<String> words(Command command) {
        return command instanceof Command.Shell shell ? List.of("/bin/sh", "-c", shell.line())
                : ((Command.Argv) command).words();
    }

    /** The command's whole environment, as its own bwrap gives it ({@code PWD} last, as bwrap sets it). */
    private java.util.Map<String, String> environment(ExecOptions options) {
        java.util.Map<String, String> environment = backend.environment(egress, options);
        environment.put("PWD", options.workingDirectory());
        return environment;
    }

    @Override
    Launch launch(Command command, ExecOptions options, Path report) {
        return new Launch(backend.processBuilder(commandLine(command, options, Optional.of(report))),
                BubblewrapSandbox::killLaunch, "bwrap");
    }

    /**
     * The command's result when bwrap says its child got as far as exec: bwrap writes its
     * {@code exit-code} only then (the child signals the end of its set-up just before exec), and
     * not when it failed on the way, e.g. to enter the working directory. Until then no guest code
     * ran, so all on stderr is the launchers' own, in the C locale of their cleared environment.
     */
    @Override
    ExecResult commandResult(ExecResult launched, String report, Command command, ExecOptions options) {
        if (EXIT_CODE.matcher(report).find()) {
            return launched;
        }
        String said = new String(launched.stderr(), StandardCharsets.UTF_8);
        String chdirFailed = "bwrap: Can't chdir to " + options.workingDirectory() + ": ";
        if (said.contains(chdirFailed + "No such file or directory")) {
            throw ExecRefusals.workingDirectoryMissing(options.workingDirectory());
        }
        if (said.contains(chdirFailed + "Not a directory")) {
            throw ExecRefusals.workingDirectoryNotADirectory(options.workingDirectory());
        }
        throw launcherFailed("bwrap", launched, command);
    }

    /**
     * Kills the launcher's child: the init of the launch's PID namespace (or, with no namespace of
     * the launch's own, the sandbox's), whose death ends every process the command started. The
     * launcher then reaps it and exits by itself, so nothing is left for the host's init to reap;
     * a launcher that has no child yet is killed instead, one that has ended is left alone.
     */
    static void killLaunch(Process launcher) {
        List<ProcessHandle> children = launcher.children().toList();
        children.forEach(ProcessHandle::destroyForcibly);
        // Only a live launcher: destroying a Process closes its streams, and an ended one's still hold its tail.
        if (children.isEmpty() && launcher.isAlive()) {
            launcher.destroyForcibly();
        }
    }

    /** The host argv of {@code command}; with a {@code report}, bwrap writes its JSON status there. */
    List<String> commandLine(Command command, ExecOptions options, Optional<Path> report) {
        return backend.commandLine(directory(), id(), mountPoint, egress, keeper, command, options, report);
    }

    BubblewrapBackend backend() {
        return backend;
    }

    Optional<Path> egressAuditLog() {
        return egress.map(hostDirectory -> directory().resolve(BubblewrapBackend.EGRESS_AUDIT_FILE));
    }

    /**
     * The launch's first process that leads a session of its own: bwrap's child, which called setsid
     * ({@code --new-session}) before it forked the command, so it leads the command's session and
     * group (as its namespace's init it ignores the signal; the command gets it). The launchers in
     * front of bwrap (unshare, the keeper's entry) stay in the JVM's session.
     */
    @Override
    long processGroup(Process launcher) {
        return launcher.descendants().mapToLong(ProcessHandle::pid).filter(pid -> sessionOf(pid) == pid).findFirst()
                .orElse(launcher.pid());
    }

    /** The session id in {@code /proc/<pid>/stat} (the fourth field after the command's name); -1 if it is gone. */
    private static long sessionOf(long pid) {
        try {
            String stat = java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[3]);
        } catch (java.io.IOException | RuntimeException gone) {
            return -1;
        }
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
