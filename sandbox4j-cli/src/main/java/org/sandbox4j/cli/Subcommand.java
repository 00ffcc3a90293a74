package org.sandbox4j.cli;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import picocli.CommandLine.Model.CommandSpec;

/**
 * The subcommands, in the order the help lists them. Building a command's model loads its class and
 * those of its options, so an invocation builds only the one it names (see {@link #named}); help, a
 * missing or an unknown command gets them all.
 */
enum Subcommand {
    RUN("run"),
    EXEC("exec"),
    DOCTOR("doctor"),
    LS("ls"),
    PURGE("purge"),
    MCP("mcp");

    /** The global options that take a value: the word after one is that value, not a command. */
    static final Set<String> ROOT_OPTIONS_WITH_VALUE = Set.of(Sandbox4jCommand.CONFIG_OPTION,
            Sandbox4jCommand.STATE_DIR_OPTION);
    /** Ends the options; picocli takes what follows as positional, never as a command. */
    private static final String END_OF_OPTIONS = "--";

    private final String commandName;

    Subcommand(String commandName) {
        this.commandName = commandName;
    }

    /** The name on the command line, as its {@code @Command} declares it. */
    String commandName() {
        return commandName;
    }

    /** The command's model, bound to a new instance of it; a switch, so that no other command's class is loaded. */
    CommandSpec create(Sandbox4jCommand root) {
        return switch (this) {
            case RUN -> new RunCommand(root).spec;
            case EXEC -> new ExecCommand(root).spec;
            case DOCTOR -> new DoctorCommand(root).spec;
            case LS -> new LsCommand(root).spec;
            case PURGE -> new PurgeCommand(root).spec;
            case MCP -> new McpCommand(root).spec;
        };
    }

    /**
     * The subcommand these arguments run, found as picocli would find it: the first word that is
     * neither an option nor a global option's value. Empty when that word names none (or there is
     * none): then every subcommand is built, and picocli says what is wrong with the line.
     */
    static Optional<Subcommand> named(List<String> args) {
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals(END_OF_OPTIONS)) {
                return Optional.empty();
            }
            if (ROOT_OPTIONS_WITH_VALUE.contains(arg)) {
                i++;
            } else if (!arg.startsWith("-")) {
                return byName(arg);
            }
        }
        return Optional.empty();
    }

    /** A loop, not a stream: this runs first in every JVM, where a lambda's first link costs milliseconds. */
    private static Optional<Subcommand> byName(String word) {
        for (Subcommand command : values()) {
            if (command.commandName.equals(word)) {
                return Optional.of(command);
            }
        }
        return Optional.empty();
    }
}
