package org.sandbox4j.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;

/** {@code sandbox4j}: the global options; {@link Main} adds the subcommands ({@link Subcommand}). */
final class Sandbox4jCommand implements Runnable {

    /** The global options that take a value (the word after one is never a command: see {@link Subcommand}). */
    static final String CONFIG_OPTION = "--config";
    static final String STATE_DIR_OPTION = "--state-dir";

    final CommandSpec spec;
    boolean quiet;
    boolean verbose;
    Path config;
    String stateDir;

    Sandbox4jCommand() {
        spec = CliSpec.command("sandbox4j", this, "Runs code somewhere else than this process: in a sandbox chosen "
                + "by policy, refused loudly when that sandbox is weaker than the floor allows.");
        spec.versionProvider(new Version());
        Map<String, String> exitCodes = new LinkedHashMap<>();
        exitCodes.put("0-255", "the program's own exit code (run, exec)");
        exitCodes.put("1", "sandbox4j could not run the program (a line starting 'sandbox4j:' says why)");
        exitCodes.put("2", "usage: a wrong flag, argument or config file");
        exitCodes.put("3", "refused by policy: the backend is below the floor or cannot enforce what was asked");
        exitCodes.put("4", "backend unavailable: not installed, not permitted here, or failing");
        exitCodes.put("124", "the program timed out and was stopped with everything it started");
        exitCodes.put("130", "interrupted (Ctrl-C); the invocation's own sandbox was disposed of");
        spec.usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(exitCodes);
        CliSpec.standardHelpOptions(spec);
        // Every subcommand takes these too (picocli copies an inherited option into each one added).
        spec.addOption(CliSpec.flag(new String[] {"-q", "--quiet"}, () -> quiet, value -> quiet = value,
                "Say nothing on standard error but errors.").scopeType(ScopeType.INHERIT).build());
        spec.addOption(CliSpec.flag(new String[] {"-v", "--verbose"}, () -> verbose, value -> verbose = value,
                "Say what happens on standard error, with the backends' own log.").scopeType(ScopeType.INHERIT)
                .build());
        spec.addOption(CliSpec.option(CONFIG_OPTION, "FILE", Path.class, () -> config, value -> config = value,
                "The config file (default $XDG_CONFIG_HOME/sandbox4j/config.properties).")
                .scopeType(ScopeType.INHERIT).build());
        spec.addOption(CliSpec.option(STATE_DIR_OPTION, "DIR", String.class, () -> stateDir,
                value -> stateDir = value, "Where the local backends keep their sandboxes, and docker its egress "
                        + "proxies' sockets (env SANDBOX4J_STATE_DIR; default $XDG_STATE_HOME/sandbox4j).")
                .scopeType(ScopeType.INHERIT).build());
    }

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
