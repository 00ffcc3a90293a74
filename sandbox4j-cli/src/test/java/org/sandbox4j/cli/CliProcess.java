package org.sandbox4j.cli;

import java.io.ByteArrayOutputStream;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
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
        return start(cliCommand(List.of(args)), stdin);
    }

    /** Runs any program (the launcher script) in the same environment. */
    Result runProgram(List<String> command, byte[] stdin) {
        return start(command, stdin);
    }

    /**
     * Starts the command and returns at once, its standard input closed: the test reads its output
     * line by line as it arrives, may signal it, then {@link Running#finish() finishes} it.
     */
    Running launch(String... args) {
        // A job a non-interactive shell starts in the background (CI's runner may be one) inherits SIGINT
        // ignored, and a JVM started so never runs its shutdown hooks on SIGINT: a user's Ctrl-C reaches a
        // foreground command, so the command under test gets SIGINT back at its default.
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT"));
        command.addAll(cliCommand(List.of(args)));
        try {
            Process process = builder(command).start();
            process.getOutputStream().close();
            return new Running(process, drain(process.getErrorStream()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> cliCommand(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(args);
        return command;
    }

    private ProcessBuilder builder(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("SANDBOX4J_"));
        env.put("SANDBOX4J_STATE_DIR", stateDir.toString());
        env.put("XDG_CONFIG_HOME", configHome.toString());
        // No microVM guest of the user's (GuestImage.defaultDirectory) either: without one the command's
        // default backend is bubblewrap, which these tests drive; a test that wants the microVM names it.
        env.put("XDG_CACHE_HOME", configHome.resolve("cache").toString());
        env.putAll(environment);
        return builder;
    }

    private Result start(List<String> command, byte[] stdin) {
        ProcessBuilder builder = builder(command);
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

    /** A command still running: its standard output line by line, each with when it arrived. */
    static final class Running implements AutoCloseable {

        private final Process process;
        private final CompletableFuture<byte[]> stderr;
        private final BlockingQueue<Line> lines = new LinkedBlockingQueue<>();
        private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        private final Thread reader;

        private Running(Process process, CompletableFuture<byte[]> stderr) {
            this.process = process;
            this.stderr = stderr;
            this.reader = new Thread(this::readLines, "sandbox4j-cli-test-lines");
            reader.setDaemon(true);
            reader.start();
        }

        /** One line of standard output, and {@link System#nanoTime()} when its newline arrived. */
        record Line(String text, long arrivedNanos) {
        }

        private void readLines() {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            try (InputStream in = process.getInputStream()) {
                for (int b = in.read(); b >= 0; b = in.read()) {
                    synchronized (stdout) {
                        stdout.write(b);
                    }
                    if (b == '\n') {
                        lines.add(new Line(line.toString(StandardCharsets.UTF_8), System.nanoTime()));
                        line.reset();
                    } else {
                        line.write(b);
                    }
                }
            } catch (IOException ended) {
                // The process is gone: what arrived is kept.
            }
        }

        long pid() {
            return process.pid();
        }

        boolean isAlive() {
            return process.isAlive();
        }

        /** The next line of standard output, waiting at most {@code within}. */
        Line nextLine(Duration within) {
            try {
                Line line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
                if (line == null) {
                    throw new AssertionError("no line on standard output within " + within + "; stdout so far: "
                            + stdoutSoFar());
                }
                return line;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        /** Sends {@code signal} (INT, TERM) to the command's JVM, as a shell's Ctrl-C or kill does. */
        void signal(String signal) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
                if (!kill.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || kill.exitValue() != 0) {
                    throw new AssertionError("kill -" + signal + " " + process.pid() + " failed");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        /** Waits for the command to end; {@link System#nanoTime()} when it had, with what it left. */
        Finished finish() {
            try {
                if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError("the command did not end within " + TIMEOUT);
                }
                long endedNanos = System.nanoTime();
                reader.join(TIMEOUT.toMillis());
                return new Finished(new Result(process.exitValue(), stdoutSoFar(),
                        new String(stderr.join(), StandardCharsets.UTF_8)), endedNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        private String stdoutSoFar() {
            synchronized (stdout) {
                return stdout.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    /** What a {@link Running} command left, and when it was seen to end. */
    record Finished(Result result, long endedNanos) {
    }

    /** What one invocation left. */
    record Result(int exitCode, String stdout, String stderr) {

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }
}
