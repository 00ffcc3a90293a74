package org.sandbox4j.core.fakes;

import java.time.Duration;
import java.util.Objects;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;

/**
 * One {@link ScriptedSandbox#exec} call as the sandbox received it.
 *
 * @param command   the command exactly as passed
 * @param shellLine {@code command.toShellLine()}: the text scripted outputs are matched against
 * @param options   the options exactly as passed
 */
public record RecordedCommand(Command command, String shellLine, ExecOptions options) {

    public RecordedCommand {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(shellLine, "shellLine");
        Objects.requireNonNull(options, "options");
    }

    /** The working directory the command was asked to run in. */
    public String workingDirectory() {
        return options.workingDirectory();
    }

    /** The caller's bound for the command. */
    public Duration timeout() {
        return options.timeout();
    }
}
