package org.sandbox4j.local;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Finds host programs on the JVM's PATH (never through a shell). */
final class HostPrograms {

    private HostPrograms() {
    }

    /** The executable {@code name} resolves to: itself when it holds a slash, else the first on PATH. */
    static Optional<Path> find(String name) {
        if (name.contains("/")) {
            Path path = Path.of(name);
            return Files.isExecutable(path) && !Files.isDirectory(path) ? Optional.of(path.toAbsolutePath())
                    : Optional.empty();
        }
        String path = System.getenv("PATH");
        if (path == null || path.isBlank()) {
            path = "/usr/local/bin:/usr/bin:/bin";
        }
        for (String directory : path.split(File.pathSeparator)) {
            if (directory.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(directory, name);
            if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                return Optional.of(candidate.toAbsolutePath());
            }
        }
        return Optional.empty();
    }
}
