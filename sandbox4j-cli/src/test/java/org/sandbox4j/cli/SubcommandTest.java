package org.sandbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** The command a line names, found before any model is built, and the model built for it. */
class SubcommandTest {

    @Test
    void eachNameIsTheOneItsCommandDeclares() {
        for (Subcommand subcommand : Subcommand.values()) {
            assertThat(new CommandLine(subcommand.create()).getCommandName()).isEqualTo(subcommand.commandName());
        }
    }

    @Test
    void theGlobalOptionsTakingAValueAreThoseTheRootDeclares() {
        Set<String> withValue = Main.commandLine(Optional.empty()).getCommandSpec().options().stream()
                .filter(option -> option.arity().max() > 0).map(OptionSpec::names).flatMap(Arrays::stream)
                .collect(Collectors.toSet());
        assertThat(withValue).isEqualTo(Subcommand.ROOT_OPTIONS_WITH_VALUE);
    }

    @Test
    void theCommandIsTheFirstWordNeitherAnOptionNorAnOptionsValue() {
        assertThat(Subcommand.named(List.of("run", "-e", "print(1)"))).contains(Subcommand.RUN);
        assertThat(Subcommand.named(List.of("-q", "--config", "run", "exec", "ls"))).contains(Subcommand.EXEC);
        assertThat(Subcommand.named(List.of("--state-dir", "mcp", "-v", "doctor", "run"))).contains(Subcommand.DOCTOR);
        assertThat(Subcommand.named(List.of("--config=run", "-qv", "purge"))).contains(Subcommand.PURGE);
        assertThat(Subcommand.named(List.of("ls", "--json"))).contains(Subcommand.LS);
    }

    @Test
    void noCommandAnUnknownOneOrOneAfterTheEndOfOptionsNamesNone() {
        assertThat(Subcommand.named(List.of())).isEmpty();
        assertThat(Subcommand.named(List.of("--help"))).isEmpty();
        assertThat(Subcommand.named(List.of("rnu", "run"))).isEmpty();
        assertThat(Subcommand.named(List.of("--", "run"))).isEmpty();
        assertThat(Subcommand.named(List.of("--config"))).isEmpty();
    }

    @Test
    void aNamedCommandIsBuiltAloneAndOtherwiseAllAreInTheHelpsOrder() {
        assertThat(Main.commandLine(Optional.of(Subcommand.MCP)).getSubcommands()).containsOnlyKeys("mcp");
        assertThat(Main.commandLine(Optional.empty()).getSubcommands().keySet())
                .containsExactly("run", "exec", "doctor", "ls", "purge", "mcp");
    }

    @Test
    void aGlobalOptionReachesTheCommandBuiltAlone() {
        CommandLine commandLine = Main.commandLine(Optional.of(Subcommand.LS));
        commandLine.parseArgs("ls", "--state-dir", "/tmp/elsewhere", "-q");
        Sandbox4jCommand root = commandLine.getCommand();
        assertThat(root.stateDir).isEqualTo("/tmp/elsewhere");
        assertThat(root.quiet).isTrue();
    }
}
