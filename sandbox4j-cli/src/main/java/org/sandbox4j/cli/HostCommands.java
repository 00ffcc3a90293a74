package org.sandbox4j.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/** Finds a program on {@code PATH}, as a shell would, without running a shell. */
final class HostCommands {

    private HostCommands() {
    }

    static Optional<Path> find(String name, Map<String, String> environment) {
        if (name.contains("/")) {
            Path path = Path.of(name);
            return Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
        }
        String path = environment.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String directory : path.split(File.pathSeparator)) {
            if (directory.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(directory, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
