package org.sandbox4j.cli;

import java.util.List;
import java.util.Optional;
import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import java.util.stream.Collectors;

import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.spi.GuestText;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code sandbox4j} command. Exit codes: the program's own for {@code run} and
 * {@code exec}; otherwise see {@link ExitCodes}.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code; never exits the JVM. */
    public static int execute(String... args) {
        CommandLine commandLine = commandLine(Subcommand.named(List.of(args)));
        commandLine.setExecutionStrategy(Main::executeQuietly);
        commandLine.setExecutionExceptionHandler(Main::handle);
        commandLine.setParameterExceptionHandler(Main::usage);
        commandLine.setOverwrittenOptionsAllowed(false);
        CommandLine run = commandLine.getSubcommands().get(Subcommand.RUN.commandName());
        if (run != null) {
            // The program's own flags after FILE are its own, as with uv run and docker run.
            run.setStopAtPositional(true);
        }
        return commandLine.execute(args);
    }

    /** The model: the root with the one subcommand the line names, else with all of them. */
    static CommandLine commandLine(Optional<Subcommand> named) {
        Sandbox4jCommand root = new Sandbox4jCommand();
        CommandLine commandLine = new CommandLine(root.spec);
        for (Subcommand subcommand : named.map(List::of).orElseGet(() -> List.of(Subcommand.values()))) {
            commandLine.addSubcommand(subcommand.commandName(), subcommand.create(root));
        }
        return commandLine;
    }

    /**
     * A wrong command line: one line saying what, a "did you mean" when a name is near (see
     * {@link Suggestions}), and where the help is; never the help itself (it buries the line that
     * matters).
     */
    private static int usage(ParameterException wrong, String[] args) {
        CommandLine commandLine = wrong.getCommandLine();
        Sandbox4jCommand root = commandLine.getCommandSpec().root().commandLine().getCommand();
        Console console = root.console();
        if (wrong instanceof UnmatchedArgumentException unmatched && !unmatched.getUnmatched().isEmpty()) {
            String typed = unmatched.getUnmatched().get(0);
            boolean option = typed.startsWith("-");
            console.error((option ? "unknown option " : commandLine.getSubcommands().isEmpty() ? "unexpected argument "
                    : "unknown command ") + GuestText.quote(typed));
            List<String> near = Suggestions.of(typed, commandLine.getCommandSpec());
            if (!near.isEmpty()) {
                console.error("did you mean " + near.stream().map(GuestText::escape)
                        .collect(Collectors.joining(" or ")) + "?");
            }
        } else {
            console.error(GuestText.escape(wrong.getMessage()));
        }
        if (!root.quiet) {
            console.error("see '" + commandLine.getCommandSpec().qualifiedName() + " --help'");
        }
        return ExitCodes.USAGE;
    }

    /** Silences the backends' log (it goes to standard error) unless --verbose asked for it, then runs. */
    private static int executeQuietly(ParseResult parseResult) {
        Sandbox4jCommand root = parseResult.commandSpec().commandLine().getCommand();
        configureLogging(root.verbose && !root.quiet);
        return new CommandLine.RunLast().execute(parseResult);
    }

    private static int handle(Exception failure, CommandLine commandLine, ParseResult parseResult) {
        if (Interruption.signalled()) {
            // The signal's hook said so and disposes of the sandbox; what failed under it is no news.
            return ExitCodes.INTERRUPTED;
        }
        Sandbox4jCommand root = parseResult.commandSpec().root().commandLine().getCommand();
        Console console = root.console();
        if (failure instanceof CliFailure cli) {
            console.error(cli.getMessage());
            if (cli.exitCode() == ExitCodes.USAGE && !root.quiet) {
                console.error("see '" + commandLine.getCommandSpec().qualifiedName() + " --help'");
            }
            return cli.exitCode();
        }
        if (failure instanceof SandboxException library) {
            CliFailure mapped = Failures.of(library);
            console.error(mapped.getMessage());
            return mapped.exitCode();
        }
        console.error("failed unexpectedly: " + failure);
        if (root.verbose) {
            failure.printStackTrace(System.err);
        }
        return ExitCodes.FAILED;
    }

    private static void configureLogging(boolean verbose) {
        LogManager.getLogManager().reset();
        Logger rootLogger = Logger.getLogger("");
        if (!verbose) {
            rootLogger.setLevel(Level.OFF);
            return;
        }
        Handler handler = new ConsoleHandler();
        handler.setLevel(Level.INFO);
        handler.setFormatter(new SimpleFormatter() {
            @Override
            public String format(java.util.logging.LogRecord record) {
                return Console.PREFIX + record.getLevel().getName().toLowerCase(java.util.Locale.ROOT) + ": "
                        + formatMessage(record) + System.lineSeparator();
            }
        });
        rootLogger.addHandler(handler);
        rootLogger.setLevel(Level.INFO);
    }
}
