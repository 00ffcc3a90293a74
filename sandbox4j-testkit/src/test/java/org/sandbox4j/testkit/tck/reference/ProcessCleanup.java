package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** Kills the processes a flawed backend let escape, found by a unique marker in their command line. */
final class ProcessCleanup {

    private static final Path PROC = Path.of("/proc");

    private ProcessCleanup() {
    }

    /** Kills every process whose command line contains {@code marker}; never matches broadly. */
    static void killProcessesMentioning(String marker) {
        if (marker.length() < "00000000-0000".length()) {
            throw new IllegalArgumentException("a cleanup marker must be unique, not '" + marker + "'");
        }
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, entry -> entry.getFileName().toString()
                .chars().allMatch(Character::isDigit))) {
            for (Path process : processes) {
                if (commandLineOf(process).contains(marker)) {
                    ProcessHandle.of(Long.parseLong(process.getFileName().toString()))
                            .ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not scan /proc to clean up escaped processes", e);
        }
    }

    private static String commandLineOf(Path process) {
        try {
            // Arguments are NUL-separated; a marker never contains NUL, so a plain search works.
            return new String(Files.readAllBytes(process.resolve("cmdline")), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }
}
