package org.sandbox4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.sandbox4j.core.HostCeilings;

/** What a reader of a {@link SideBySide} table needs to know about where it ran: JDK, host, load. */
final class HostFacts {

    private static final long TOOL_WAIT_SECONDS = 10;
    private static final int MAX_TOOL_OUTPUT = 4096;
    private static final long MIB = 1024 * 1024;

    private HostFacts() {
    }

    /** The output of {@code uptime} (or {@code /proc/loadavg} where there is none). */
    static String load() {
        return firstLineOf(List.of("uptime")).or(() -> readLine(Path.of("/proc/loadavg")).map(line -> "loadavg " + line))
                .orElse("(no uptime, no /proc/loadavg)");
    }

    static List<String> describe() {
        List<String> facts = new ArrayList<>();
        Runtime runtime = Runtime.getRuntime();
        facts.add("jdk: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + " (" + System.getProperty("java.vm.vendor") + "), max heap " + runtime.maxMemory() / MIB
                + " MiB, largest output cap " + HostCeilings.MAX_BUFFERED_BYTES / MIB + " MiB, GC "
                + ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                        .collect(Collectors.joining(", ")));
        facts.add("host: " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch") + ", " + runtime.availableProcessors() + " cpus ("
                + cpuModel().orElse("model unknown") + "), " + memoryTotal().orElse("memory unknown")
                + ", user " + System.getProperty("user.name"));
        facts.add("bwrap: " + firstLineOf(List.of("bwrap", "--version")).orElse("not found"));
        facts.add("python3: " + firstLineOf(List.of("python3", "--version")).orElse("not found"));
        return facts;
    }

    private static Optional<String> cpuModel() {
        return linesStartingWith(Path.of("/proc/cpuinfo"), "model name").map(line -> line.replaceFirst("^[^:]*:\\s*", ""));
    }

    private static Optional<String> memoryTotal() {
        return linesStartingWith(Path.of("/proc/meminfo"), "MemTotal:").map(line -> line.replaceAll("\\s+", " "));
    }

    private static Optional<String> linesStartingWith(Path file, String prefix) {
        try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.filter(line -> line.startsWith(prefix)).findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> readLine(Path file) {
        return linesStartingWith(file, "");
    }

    /** The first line a host tool prints (stdout and stderr together), bounded; empty when it cannot run. */
    static Optional<String> firstLineOf(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            byte[] output;
            try (InputStream in = process.getInputStream()) {
                output = in.readNBytes(MAX_TOOL_OUTPUT);
            }
            if (!process.waitFor(TOOL_WAIT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return Optional.empty();
            }
            String text = new String(output, StandardCharsets.UTF_8).strip();
            return process.exitValue() == 0 && !text.isEmpty() ? Optional.of(text.lines().findFirst().orElse(""))
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The absolute path of a program on {@code PATH}, if there is one. */
    static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String directory : path.split(":")) {
            if (directory.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(directory, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
