package org.sandbox4j.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * sandbox4j next to the raw mechanism it drives, in one run and one table (issue 22): each row
 * runs both sides round by round, interleaved so load falls on both alike, and prints the medians,
 * their ratio and the target. A row whose prerequisite is missing says "skipped: why"; a row that
 * fails says "failed: why"; neither stops the others.
 *
 * <p>Run: {@code java -Xmx3g -cp sandbox4j-bench/target/benchmarks.jar org.sandbox4j.bench.SideBySide
 * 20 [--rows exec,stdout,...] [--held 0,100,1000] [--warmup 2]} (see the module's README).
 */
public final class SideBySide {

    private static final int USAGE_ERROR = 2;

    private SideBySide() {
    }

    public static void main(String[] arguments) throws IOException {
        Settings settings;
        try {
            settings = Settings.parse(arguments);
        } catch (IllegalArgumentException e) {
            System.err.println("side-by-side: " + e.getMessage());
            System.exit(USAGE_ERROR);
            return;
        }
        List<String> header = new ArrayList<>(HostFacts.describe());
        header.add("rounds: " + settings.rounds() + " counted (medians) after " + settings.warmup() + " warm-up");
        header.add("load at start: " + HostFacts.load());
        header.forEach(line -> System.err.println("side-by-side: " + line));
        List<TableLine> lines = new ArrayList<>(List.of(TableLine.HEADER));
        // Others may pass through (not list): bubblewrap as root runs its guests as another uid.
        Path scratch = Files.createTempDirectory(Path.of("/tmp"), "s4jside",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        try {
            localRows(settings, scratch, lines, header);
            dockerRows(settings, scratch, lines, header);
            if (settings.wants(Row.LAUNCHER)) {
                lines.add(attempt(Row.LAUNCHER, () -> LauncherRow.measure(settings, scratch)));
            }
        } finally {
            // The guests have stopped with their sandboxes; the kit's removal never follows a link they left.
            TreeRemoval.remove(scratch, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        }
        header.add("load at end: " + HostFacts.load());
        header.forEach(System.out::println);
        System.out.println();
        System.out.print(TableLine.render(lines));
    }

    private static void localRows(Settings settings, Path scratch, List<TableLine> lines, List<String> header) {
        List<Row> local = List.of(Row.EXEC, Row.EXECUTE_CODE, Row.STDOUT, Row.HEAP, Row.READ_LOCAL, Row.FLEET);
        if (local.stream().noneMatch(settings::wants)) {
            return;
        }
        LocalRows rows;
        try {
            rows = LocalRows.open(settings, scratch.resolve("local"));
        } catch (RuntimeException unavailable) {
            for (Row row : local) {
                if (settings.wants(row)) {
                    lines.add(TableLine.skipped(row.wire(), "bubblewrap cannot run here: " + unavailable.getMessage()));
                }
            }
            return;
        }
        try (rows) {
            header.add("bubblewrap: isolation " + rows.isolation());
            if (settings.wants(Row.EXEC)) {
                lines.add(attempt(Row.EXEC, rows::exec));
            }
            if (settings.wants(Row.EXECUTE_CODE)) {
                lines.add(attempt(Row.EXECUTE_CODE, rows::executeCode));
            }
            if (settings.wants(Row.STDOUT)) {
                lines.add(attempt(Row.STDOUT, rows::stdout));
            }
            if (settings.wants(Row.HEAP)) {
                lines.add(attempt(Row.HEAP, rows::heap));
            }
            if (settings.wants(Row.READ_LOCAL)) {
                lines.add(attempt(Row.READ_LOCAL, rows::readLocal));
            }
            if (settings.wants(Row.FLEET)) {
                lines.addAll(attemptAll(Row.FLEET, rows::fleet));
            }
        }
    }

    private static void dockerRows(Settings settings, Path scratch, List<TableLine> lines, List<String> header) {
        List<Row> docker = List.of(Row.DOCKER_EXEC, Row.DOCKER_WRITE, Row.DOCKER_READ, Row.RUNSC_WRITE);
        if (docker.stream().noneMatch(settings::wants)) {
            return;
        }
        Optional<DockerRows> available = DockerRows.fromEnvironment(settings, scratch.resolve("docker"));
        if (available.isEmpty()) {
            docker.stream().filter(settings::wants)
                    .forEach(row -> lines.add(TableLine.skipped(row.wire(), DockerRows.whyMissing())));
            return;
        }
        try (DockerRows rows = available.get()) {
            header.add(rows.engineFacts());
            if (settings.wants(Row.DOCKER_EXEC)) {
                lines.addAll(attemptAll(Row.DOCKER_EXEC, rows::exec));
            }
            if (settings.wants(Row.DOCKER_WRITE)) {
                lines.add(attempt(Row.DOCKER_WRITE, rows::write));
            }
            if (settings.wants(Row.DOCKER_READ)) {
                lines.add(attempt(Row.DOCKER_READ, rows::read));
            }
            if (settings.wants(Row.RUNSC_WRITE)) {
                lines.add(attempt(Row.RUNSC_WRITE, rows::runscWrite));
            }
        }
    }

    /** One row's measurement; whatever it throws becomes its "failed" line. */
    @FunctionalInterface
    private interface Measurement<T> {
        T run() throws Exception;
    }

    private static TableLine attempt(Row row, Measurement<TableLine> measurement) {
        return attemptAll(row, () -> List.of(measurement.run())).get(0);
    }

    private static List<TableLine> attemptAll(Row row, Measurement<List<TableLine>> measurement) {
        System.err.println("side-by-side: measuring " + row.wire() + " (" + HostFacts.load() + ")");
        try {
            return measurement.run();
        } catch (Exception | Error failure) {
            if (failure instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (failure instanceof Error && !(failure instanceof OutOfMemoryError)) {
                throw (Error) failure;
            }
            failure.printStackTrace();
            return List.of(TableLine.failed(row.wire(), failure));
        }
    }
}
