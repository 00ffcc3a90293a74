package org.sandbox4j.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Settings in order of precedence: a flag, then an environment variable ({@code SANDBOX4J_*}),
 * then one config file ({@code --config FILE}, else
 * {@code $XDG_CONFIG_HOME/sandbox4j/config.properties}, else
 * {@code ~/.config/sandbox4j/config.properties}). A key the file does not know is a usage error,
 * so a typo never silently falls back to a default.
 */
final class Configuration {

    static final String FILE_NAME = "config.properties";

    private final Map<String, String> environment;
    private final Properties file;
    private final Optional<Path> source;

    private Configuration(Map<String, String> environment, Properties file, Optional<Path> source) {
        this.environment = Map.copyOf(environment);
        this.file = file;
        this.source = source;
    }

    /**
     * @param explicit    {@code --config FILE}; it must exist
     * @param environment the process environment
     * @throws CliFailure a usage failure when the file cannot be read or names an unknown key
     */
    static Configuration load(Optional<Path> explicit, Map<String, String> environment) {
        Path path = explicit.orElseGet(() -> defaultFile(environment));
        Properties properties = new Properties();
        if (explicit.isEmpty() && !Files.isRegularFile(path)) {
            return new Configuration(environment, properties, Optional.empty());
        }
        try (Reader in = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            properties.load(in);
        } catch (IOException | IllegalArgumentException e) {
            throw CliFailure.usage("cannot read the config file " + path + ": " + e.getMessage());
        }
        Set<String> known = Arrays.stream(Setting.values()).map(Setting::key).collect(Collectors.toSet());
        Set<String> unknown = new TreeSet<>(properties.stringPropertyNames());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw CliFailure.usage("the config file " + path + " has unknown key(s) " + unknown + "; known keys: "
                    + new TreeSet<>(known));
        }
        return new Configuration(environment, properties, Optional.of(path));
    }

    /** {@code $XDG_CONFIG_HOME/sandbox4j/config.properties}, else under {@code ~/.config}. */
    static Path defaultFile(Map<String, String> environment) {
        String xdg = environment.get("XDG_CONFIG_HOME");
        Path base = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute() ? Path.of(xdg)
                : Path.of(System.getProperty("user.home"), ".config");
        return base.resolve("sandbox4j").resolve(FILE_NAME);
    }

    /** The flag's value, else the variable's, else the file's. */
    Optional<String> value(Setting setting, String flag) {
        if (flag != null) {
            return Optional.of(flag);
        }
        String variable = environment.get(setting.variable());
        if (variable != null && !variable.isBlank()) {
            return Optional.of(variable.strip());
        }
        return Optional.ofNullable(file.getProperty(setting.key())).map(String::strip).filter(value -> !value.isEmpty());
    }

    /** A list setting: the flags when given, else the variable's or the file's words (commas or spaces). */
    List<String> values(Setting setting, List<String> flags) {
        if (flags != null && !flags.isEmpty()) {
            return List.copyOf(flags);
        }
        return value(setting, null).map(words -> Arrays.stream(words.split("[,\\s]+")).filter(w -> !w.isEmpty())
                .toList()).orElse(List.of());
    }

    /** Where a value came from, for messages that name the fix. */
    String whereSet(Setting setting, String flag) {
        if (flag != null) {
            return setting.flag();
        }
        String variable = environment.get(setting.variable());
        if (variable != null && !variable.isBlank()) {
            return setting.variable();
        }
        return source.filter(path -> file.getProperty(setting.key()) != null)
                .map(path -> setting.key() + " in " + path).orElse("the default");
    }

    Map<String, String> environment() {
        return environment;
    }
}
