package org.sandbox4j.cli;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import org.sandbox4j.core.SandboxException;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

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
        CommandLine commandLine = new CommandLine(new Sandbox4jCommand());
        commandLine.setExecutionStrategy(Main::executeQuietly);
        commandLine.setExecutionExceptionHandler(Main::handle);
        commandLine.setOverwrittenOptionsAllowed(false);
        return commandLine.execute(args);
    }

    /** Silences the backends' log (it goes to standard error) unless --verbose asked for it, then runs. */
    private static int executeQuietly(ParseResult parseResult) {
        Sandbox4jCommand root = parseResult.commandSpec().commandLine().getCommand();
        configureLogging(root.verbose && !root.quiet);
        return new CommandLine.RunLast().execute(parseResult);
    }

    private static int handle(Exception failure, CommandLine commandLine, ParseResult parseResult) {
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
