package org.sandbox4j.cli;

import java.nio.file.Path;
import java.util.Optional;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/** {@code sandbox4j}: the global options; {@link Main} adds the subcommands ({@link Subcommand}). */
@Command(name = "sandbox4j", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Runs code somewhere else than this process: in a sandbox chosen by policy, refused loudly "
                + "when that sandbox is weaker than the floor allows.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0-255:the program's own exit code (run, exec)",
            "1:sandbox4j could not run the program (a line starting 'sandbox4j:' says why)",
            "2:usage: a wrong flag, argument or config file",
            "3:refused by policy: the backend is below the floor or cannot enforce what was asked",
            "4:backend unavailable: not installed, not permitted here, or failing",
            "124:the program timed out and was stopped with everything it started",
            "130:interrupted (Ctrl-C); the invocation's own sandbox was disposed of"})
final class Sandbox4jCommand implements Runnable {

    /** The global options that take a value (the word after one is never a command: see {@link Subcommand}). */
    static final String CONFIG_OPTION = "--config";
    static final String STATE_DIR_OPTION = "--state-dir";

    @Spec
    CommandSpec spec;

    @Option(names = {"-q", "--quiet"}, scope = ScopeType.INHERIT,
            description = "Say nothing on standard error but errors.")
    boolean quiet;

    @Option(names = {"-v", "--verbose"}, scope = ScopeType.INHERIT,
            description = "Say what happens on standard error, with the backends' own log.")
    boolean verbose;

    @Option(names = CONFIG_OPTION, scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "The config file (default $XDG_CONFIG_HOME/sandbox4j/config.properties).")
    Path config;

    @Option(names = STATE_DIR_OPTION, scope = ScopeType.INHERIT, paramLabel = "DIR",
            description = "Where the local backends keep their sandboxes, and docker its egress proxies' sockets "
                    + "(env SANDBOX4J_STATE_DIR; default $XDG_STATE_HOME/sandbox4j).")
    String stateDir;

    private Configuration configuration;
    private Console console;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "name a command: run, exec, doctor, ls, purge or mcp");
    }

    /** The settings of this invocation, read once. */
    Configuration configuration() {
        if (configuration == null) {
            configuration = Configuration.load(Optional.ofNullable(config), System.getenv());
        }
        return configuration;
    }

    Console console() {
        if (console == null) {
            console = Console.system(quiet, verbose);
        }
        return console;
    }

    /** The state directory, from the flag, the environment or the file; empty means each backend's default. */
    Optional<Path> stateDirectory() {
        return configuration().value(Setting.STATE_DIR, stateDir).map(Path::of).map(Path::toAbsolutePath);
    }
}
