package org.sandbox4j.microvm;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sandbox4j.agent.AgentFiles;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;
import org.sandbox4j.core.spi.GuestText;

/**
 * One guest as a sandbox: its commands and files both go through the guest agent, so nothing on
 * the host side ever opens a path the guest chose. The guest's whole writable file system is an
 * overlay in its own memory, bounded by its size option; the host's disk is never written.
 */
final class MicroVmSandbox implements ConfinedFilesSandbox {

    private static final String SHELL = "/bin/sh";

    private final MicroVm vm;
    private final AgentFiles files;
    private final String backendName;

    /** A handle held to {@code spec}'s per-file transfer caps. */
    MicroVmSandbox(MicroVm vm, SandboxSpec spec, String backendName) {
        this.vm = vm;
        this.files = new AgentFiles(vm.agent(), backendName, spec.filesIn(), spec.filesOut());
        this.backendName = backendName;
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
        return vm.agent().exec(argv(command), GuestPaths.normalize(options.workingDirectory()),
                environment(options), options, command.toShellLine());
    }

    /**
     * Makes {@code workDir} when it is missing and hands it to the guest user: the host's own setup,
     * run with the agent's identity, since the user may not write where the work dir's parents are.
     */
    void makeWorkDir(String workDir, Duration timeout) {
        String script = "[ -d \"$1\" ] || { mkdir -p -- \"$1\" && chown " + QemuLaunch.GUEST_USER + " -- \"$1\"; }";
        Command command = Command.argv(SHELL, "-c", script, "make-work-dir", workDir);
        ExecOptions options = ExecOptions.in("/", timeout);
        ExecResult made = vm.agent().execAsAgent(argv(command), "/", environment(options), options,
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
        return "MicroVmSandbox[" + backendName + ", qemu pid " + vm.pid() + ", " + vm.accelerator() + "]";
    }
}
