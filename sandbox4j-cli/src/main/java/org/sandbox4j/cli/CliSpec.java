package org.sandbox4j.cli;

import java.util.function.Consumer;
import java.util.function.Supplier;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.IGetter;
import picocli.CommandLine.Model.ISetter;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.Range;

/**
 * The command line's model, declared in code. picocli's annotations cost every start of the command
 * a dynamic proxy class per annotation type (Command, Option, Parameters, Mixin, Spec, ParentCommand
 * and their meta-annotations), generated and linked before the first argument is read (about 50 ms
 * of a {@code sandbox4j run}), and no class-data cache keeps them. A model built here reads no
 * annotation and reflects over no field: each option writes its command's own field through two
 * lambdas. As picocli does with a field, the value the field starts with is the one it is reset to
 * before a parse.
 */
final class CliSpec {

    private CliSpec() {
    }

    /**
     * A command named {@code name} that runs {@code command} (its {@code call} or {@code run}), its help
     * text {@code description}'s paragraphs; the caller adds its options, then {@link #standardHelpOptions}.
     */
    static CommandSpec command(String name, Object command, String... description) {
        CommandSpec spec = CommandSpec.wrapWithoutInspection(command).name(name);
        spec.usageMessage().description(description);
        return spec;
    }

    /**
     * Adds {@code -h, --help} and {@code -V, --version} as picocli's {@code mixinStandardHelpOptions}
     * does: last of the command's own options, in its words.
     */
    static void standardHelpOptions(CommandSpec spec) {
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true)
                .description("Show this help message and exit.").build());
        spec.addOption(OptionSpec.builder("-V", "--version").versionHelp(true)
                .description("Print version information and exit.").build());
    }

    /** An option taking one value of {@code type}, held in a field the two lambdas read and write. */
    static <T> OptionSpec.Builder option(String[] names, String paramLabel, Class<?> type, Supplier<T> get,
            Consumer<T> set, String description) {
        FieldBinding<T> binding = new FieldBinding<>(get, set);
        return OptionSpec.builder(names).paramLabel(paramLabel).type(type).description(description)
                .getter(binding).setter(binding).initialValue(get.get());
    }

    /** {@link #option(String[], String, Class, Supplier, Consumer, String)} with one name. */
    static <T> OptionSpec.Builder option(String name, String paramLabel, Class<?> type, Supplier<T> get,
            Consumer<T> set, String description) {
        return option(new String[] {name}, paramLabel, type, get, set, description);
    }

    /** A flag: present or not, no value. */
    static OptionSpec.Builder flag(String[] names, Supplier<Boolean> get, Consumer<Boolean> set, String description) {
        FieldBinding<Boolean> binding = new FieldBinding<>(get, set);
        return OptionSpec.builder(names).type(boolean.class).arity("0").description(description)
                .getter(binding).setter(binding).initialValue(get.get());
    }

    /** Positional parameters, all of them, into one list; required when {@code arity} asks for at least one. */
    static <T> PositionalParamSpec.Builder positionals(String arity, String paramLabel, Supplier<T> get,
            Consumer<T> set, String description) {
        FieldBinding<T> binding = new FieldBinding<>(get, set);
        return PositionalParamSpec.builder().index("0..*").arity(arity).required(Range.valueOf(arity).min() > 0)
                .paramLabel(paramLabel)
                .type(java.util.List.class).auxiliaryTypes(String.class).description(description)
                .getter(binding).setter(binding).initialValue(get.get());
    }

    /** A value in a command's field: what picocli's field binding does, without reflection. */
    private static final class FieldBinding<T> implements IGetter, ISetter {
        private final Supplier<T> get;
        private final Consumer<T> set;

        FieldBinding(Supplier<T> get, Consumer<T> set) {
            this.get = get;
            this.set = set;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <R> R get() {
            return (R) get.get();
        }

        @Override
        @SuppressWarnings("unchecked")
        public <R> R set(R value) {
            R previous = get();
            set.accept((T) value);
            return previous;
        }
    }
}
