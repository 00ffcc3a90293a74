package org.sandbox4j.microvm;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sandbox4j.agent.AgentFiles;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.ConfinedFiles;
import org.sandbox4j.core.spi.ConfinedFilesSandbox;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.GuestPaths;

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

    MicroVmSandbox(MicroVm vm, String backendName) {
        this.vm = vm;
        this.files = new AgentFiles(vm.agent(), backendName);
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
        List<String> argv = command instanceof Command.Shell shell ? List.of(SHELL, "-c", shell.line())
                : ((Command.Argv) command).words();
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        environment.putAll(options.environment());
        return vm.agent().exec(argv, GuestPaths.normalize(options.workingDirectory()), environment, options,
                command.toShellLine());
    }

    MicroVm vm() {
        return vm;
    }

    @Override
    public String toString() {
        return "MicroVmSandbox[" + backendName + ", qemu pid " + vm.pid() + ", " + vm.accelerator() + "]";
    }
}
