package org.sandbox4j.agent;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.spi.GuestEnvironment;

/** How the tests' backend maps a {@link Command} onto an agent's exec, as a real backend would. */
final class GuestCommands {

    private static final String SHELL = "/bin/sh";

    private GuestCommands() {
    }

    static List<String> argv(Command command) {
        if (command instanceof Command.Shell shell) {
            return List.of(SHELL, "-c", shell.line());
        }
        return ((Command.Argv) command).words();
    }

    /** The guest's fixed environment with the caller's laid over it. */
    static Map<String, String> environment(ExecOptions options) {
        Map<String, String> environment = new LinkedHashMap<>(GuestEnvironment.WITH_SYSTEM_PATH);
        environment.putAll(options.environment());
        return environment;
    }

    static ExecResult run(AgentConnection connection, Command command, ExecOptions options) {
        return connection.exec(argv(command), options.workingDirectory(), environment(options), options,
                command.toShellLine());
    }
}
