package org.sandbox4j.microvm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.agent.AgentConnectionFailed;
import org.sandbox4j.agent.AgentFiles;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.egress.GuestProxyEnvironment;

/**
 * One guest as a sandbox: its commands and files both go through the guest agent, so nothing on
 * the host side ever opens a path the guest chose. The guest's whole writable file system is an
 * overlay in its own memory, bounded by its size option; the host's disk is never written.
 */
final class MicroVmSandbox implements ConfinedFilesSandbox {

    private static final String SHELL = "/bin/sh";

    private final MicroVm vm;
    private final AgentFiles files;
    private final boolean egress;
    private final String backendName;

    /**
     * A handle held to {@code spec}'s per-file transfer caps; with {@code egress}, every command's
     * environment points its clients at the tunnel's end in the guest.
     */
    MicroVmSandbox(MicroVm vm, SandboxSpec spec, boolean egress, String backendName) {
        this.vm = vm;
        this.files = new AgentFiles(vm.agent(), backendName, spec.filesIn(), spec.filesOut());
        this.egress = egress;
        this.backendName = backendName;
    }

    boolean servedBy(String backend) {
        return backendName.equals(backend);
    }

    boolean egress() {
        return egress;
    }

    Path directory() {
        return vm.directory();
    }

    @Override
    public ConfinedFiles<?> files() {
        return files;
    }

    /**
     * The argv reaches the agent as words ({@code execve}, no shell); a shell command is
     * {@code /bin/sh -c line}. The guest environment is the kit's, with the caller's on top.
     */
    @Override
    public ExecResult exec(Command command, ExecOptions options) {
        Map<String, String> environment = environment(options);
        if (egress) {
            GuestProxyEnvironment.variables().forEach(environment::putIfAbsent);
        }
        return guarded(() -> vm.agent().exec(argv(command), GuestPaths.normalize(options.workingDirectory()),
                environment, options, command.toShellLine()));
    }

    @Override
    public void writeFile(String path, byte[] content, String workingDirectory) {
        guarded(() -> {
            files.writeFile(path, content, workingDirectory);
            return null;
        });
    }

    @Override
    public Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return guarded(() -> files.stat(path, workingDirectory));
    }

    @Override
    public byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return guarded(() -> files.readFile(path, workingDirectory, maxBytes));
    }

    @Override
    public List<SandboxEntry> listDir(String path, String workingDirectory) {
        return guarded(() -> files.listDir(path, workingDirectory));
    }

    @Override
    public void mkdir(String path, String workingDirectory) {
        guarded(() -> {
            files.mkdir(path, workingDirectory);
            return null;
        });
    }

    @Override
    public void remove(String path, String workingDirectory, boolean recursive) {
        guarded(() -> {
            files.remove(path, workingDirectory, recursive);
            return null;
        });
    }

    /**
     * Runs one call on the guest, and says what a broken connection means: the sandbox was disposed
     * of (by this process or another: the guest is gone), or the guest died on its own.
     */
    private <T> T guarded(Supplier<T> call) {
        if (vm.closed()) {
            throw disposed("before this call", null);
        }
        try {
            return call.get();
        } catch (AgentConnectionFailed broken) {
            if (vm.closed() || !vm.process().isAlive()) {
                throw disposed("while the call ran", broken);
            }
            throw broken;
        }
    }

    private SandboxDisposed disposed(String when, Throwable cause) {
        return new SandboxDisposed("backend '" + backendName + "': this sandbox's guest (QEMU pid " + vm.process().pid()
                + ") was disposed of, or ended, " + when + "; acquire the key again for a fresh one", cause);
    }

    /**
     * Makes {@code workDir} when it is missing and hands it to the guest user: the host's own setup,
     * run with the agent's identity, since the user may not write where the work dir's parents are.
     */
    void makeWorkDir(String workDir, Duration timeout) {
        makeWorkDir(vm.agent(), workDir, timeout, backendName);
    }

    /** {@link #makeWorkDir(String, Duration)} on any guest's agent: a snapshot template's too. */
    static void makeWorkDir(AgentConnection agent, String workDir, Duration timeout, String backendName) {
        // Each directory it makes belongs to the user, so the user may also make siblings beside the work dir.
        String script = "set -f; IFS=/; made=; for part in $1; do [ -n \"$part\" ] || continue; made=\"$made/$part\"; "
                + "[ -d \"$made\" ] || { mkdir -- \"$made\" && chown " + QemuLaunch.GUEST_USER
                + " -- \"$made\"; } || exit 1; done";
        Command command = Command.argv(SHELL, "-c", script, "make-work-dir", workDir);
        ExecOptions options = ExecOptions.in("/", timeout);
        ExecResult made = agent.execAsAgent(argv(command), "/", environment(options), options,
                command.toShellLine());
        if (made.exitCode() != 0) {
            throw new SandboxException("backend '" + backendName + "' could not make the work dir "
                    + GuestText.quote(workDir) + " in the guest: " + GuestText.quote(made.stderrText())
                    + "; choose another work dir");
        }
    }

    private static List<String> argv(Command command) {
        return command instanceof Command.Shell shell ? List.of(SHELL, "-c", shell.line())
                : ((Command.Argv) command).words();
    }

    private static Map<String, String> environment(ExecOptions options) {
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        environment.putAll(options.environment());
        return environment;
    }

    MicroVm vm() {
        return vm;
    }

    @Override
    public String toString() {
        return "MicroVmSandbox[" + backendName + ", qemu pid " + vm.process().pid() + ", " + vm.accelerator() + "]";
    }
}
