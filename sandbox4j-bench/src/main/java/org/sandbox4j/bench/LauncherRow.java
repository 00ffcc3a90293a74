package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The whole command, as a user types it: {@code sandbox4j run -e 'print(1)'} against
 * {@code python3 -c 'print(1)'}, wall time from start to exit. The launcher is named with
 * {@code -Dsandbox4j.launcher=PATH}; {@code -Dsandbox4j.launcher.args="--floor container"} adds
 * words after {@code run} (split on spaces).
 */
final class LauncherRow {

    static final String LAUNCHER_PROPERTY = "sandbox4j.launcher";
    static final String ARGS_PROPERTY = "sandbox4j.launcher.args";
    static final Target TARGET = Target.millisAtMost(200);
    private static final String ROW = "launcher: run -e 'print(1)' vs python3 -c";
    private static final long WAIT_SECONDS = 600;
    private static final int MAX_STDOUT_BYTES = 4096;
    private static final int STDERR_TAIL_CHARS = 300;
    private static final String EXPECTED = "1";

    private LauncherRow() {
    }

    static TableLine measure(Settings settings, Path scratch) throws Exception {
        String launcher = System.getProperty(LAUNCHER_PROPERTY, "");
        if (launcher.isBlank()) {
            return TableLine.skipped(ROW, "name the launcher: -D" + LAUNCHER_PROPERTY + "=/path/to/sandbox4j");
        }
        if (!Files.isExecutable(Path.of(launcher))) {
            return TableLine.skipped(ROW, "not an executable file: " + launcher);
        }
        Optional<Path> python = HostFacts.onPath("python3");
        if (python.isEmpty()) {
            return TableLine.skipped(ROW, "no python3 on PATH");
        }
        List<String> command = new ArrayList<>(List.of(launcher, "run"));
        for (String word : System.getProperty(ARGS_PROPERTY, "").split(" ")) {
            if (!word.isBlank()) {
                command.add(word);
            }
        }
        command.addAll(List.of("-e", "print(1)"));
        List<String> bare = List.of(python.get().toString(), "-c", "print(1)");
        Path stderr = scratch.resolve("launcher-stderr.txt");
        double[] medians = Interleaved.medianMillis(settings.warmup(), settings.rounds(), List.of(
                Sample.timed(() -> printsOne(command, stderr)),
                Sample.timed(() -> printsOne(bare, stderr))));
        return TableLine.millis(ROW, medians[0], medians[1], TARGET);
    }

    /** Runs to exit, stdin closed, stderr to a file; fails unless it exits 0 having printed "1". */
    private static void printsOne(List<String> command, Path stderr) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        process.getOutputStream().close();
        String stdout;
        try (InputStream in = process.getInputStream()) {
            stdout = new String(in.readNBytes(MAX_STDOUT_BYTES), StandardCharsets.UTF_8).strip();
        }
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(command.get(0) + " did not finish in " + WAIT_SECONDS + " s");
        }
        if (process.exitValue() != 0 || !EXPECTED.equals(stdout)) {
            String errors = Files.readString(stderr, StandardCharsets.UTF_8).strip();
            String tail = errors.length() > STDERR_TAIL_CHARS ? errors.substring(errors.length() - STDERR_TAIL_CHARS)
                    : errors;
            throw new IllegalStateException(command.get(0) + " exited " + process.exitValue() + ", stdout '" + stdout
                    + "', stderr: " + tail);
        }
    }
}
