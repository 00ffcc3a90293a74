package org.sandbox4j.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the command as a user would: a separate JVM ({@code java -cp <test class path>
 * org.sandbox4j.cli.Main ...}) with its own environment, standard input and exit code. Every run
 * gets a short state root and an empty config home of the test's, never the user's.
 */
final class CliProcess implements AutoCloseable {

    /** Bound on one invocation: a cold JVM plus a sandbox, with room for a loaded machine. */
    static final Duration TIMEOUT = Duration.ofSeconds(90);

    private final Path stateDir;
    private final Path configHome;
    private final Map<String, String> environment = new LinkedHashMap<>();

    CliProcess(Path stateDir, Path configHome) {
        this.stateDir = stateDir;
        this.configHome = configHome;
    }

    /** A fresh short state root ({@code s4jc…}: an allowlisting sandbox's socket path stays under 108 bytes). */
    static CliProcess fresh() {
        try {
            return new CliProcess(Files.createTempDirectory("s4jc"), Files.createTempDirectory("s4jcfg"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path stateDir() {
        return stateDir;
    }

    Path configHome() {
        return configHome;
    }

    /** Adds a variable to every later invocation's environment. */
    CliProcess env(String name, String value) {
        environment.put(name, value);
        return this;
    }

    Result run(String... args) {
        return run(new byte[0], args);
    }

    Result run(byte[] stdin, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        return start(command, stdin);
    }

    /** Runs any program (the launcher script) in the same environment. */
    Result runProgram(List<String> command, byte[] stdin) {
        return start(command, stdin);
    }

    private Result start(List<String> command, byte[] stdin) {
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("SANDBOX4J_"));
        env.put("SANDBOX4J_STATE_DIR", stateDir.toString());
        env.put("XDG_CONFIG_HOME", configHome.toString());
        // No microVM guest of the user's (GuestImage.defaultDirectory) either: without one the command's
        // default backend is bubblewrap, which these tests drive; a test that wants the microVM names it.
        env.put("XDG_CACHE_HOME", configHome.resolve("cache").toString());
        env.putAll(environment);
        try {
            Process process = builder.start();
            CompletableFuture<byte[]> out = drain(process.getInputStream());
            CompletableFuture<byte[]> err = drain(process.getErrorStream());
            try (OutputStream in = process.getOutputStream()) {
                in.write(stdin);
            } catch (IOException closedEarly) {
                // The command did not read its input: fine.
            }
            if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("sandbox4j " + command + " did not end within " + TIMEOUT);
            }
            return new Result(process.exitValue(), new String(out.join(), StandardCharsets.UTF_8),
                    new String(err.join(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static CompletableFuture<byte[]> drain(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, runnable -> {
            // A thread per stream: the common pool may have one worker on a small machine.
            Thread reader = new Thread(runnable, "sandbox4j-cli-test-drain");
            reader.setDaemon(true);
            reader.start();
        });
    }

    /** Disposes of every sandbox left in this state root, then deletes it and the config home. */
    @Override
    public void close() {
        for (Path directory : List.of(stateDir, configHome)) {
            try (var walk = Files.walk(directory)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException | UncheckedIOException ignored) {
                // Best effort: a temporary directory.
            }
        }
    }

    /** What one invocation left. */
    record Result(int exitCode, String stdout, String stderr) {

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }
}
