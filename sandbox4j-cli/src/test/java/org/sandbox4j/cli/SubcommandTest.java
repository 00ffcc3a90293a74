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
            assertThat(new CommandLine(subcommand.create(new Sandbox4jCommand())).getCommandName())
                    .isEqualTo(subcommand.commandName());
        }
    }

    /**
     * The model is declared in code ({@link CliSpec}): an annotation read at start-up costs a
     * generated proxy class per annotation type. Reading them here on every class behind the
     * command line keeps one from coming back unnoticed.
     */
    @Test
    void noCommandOrOptionsClassCarriesAPicocliAnnotation() {
        List<Class<?>> modelled = List.of(Sandbox4jCommand.class, RunCommand.class, ExecCommand.class,
                DoctorCommand.class, LsCommand.class, PurgeCommand.class, InventoryCommand.class, McpCommand.class,
                SandboxOptions.class, ConversationOptions.class, DockerOptions.class);
        for (Class<?> type : modelled) {
            List<java.lang.annotation.Annotation> found = new java.util.ArrayList<>(Arrays.asList(type.getAnnotations()));
            for (java.lang.reflect.Field field : type.getDeclaredFields()) {
                found.addAll(Arrays.asList(field.getAnnotations()));
            }
            for (java.lang.reflect.Method method : type.getDeclaredMethods()) {
                found.addAll(Arrays.asList(method.getAnnotations()));
            }
            assertThat(found).as(type.getSimpleName())
                    .noneMatch(annotation -> annotation.annotationType().getName().startsWith("picocli."));
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
