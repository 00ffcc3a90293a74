package org.sandbox4j.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.sandbox4j.core.FileStore;

/** The files {@code --file NAME=PATH} shares: exactly those names, read from the host when the call asks. */
final class HostFiles implements FileStore {

    private final Map<String, Path> files;

    HostFiles(Map<String, Path> files) {
        this.files = new LinkedHashMap<>(files);
    }

    /** @throws CliFailure a usage failure when a path is not a readable regular file */
    static HostFiles of(Map<String, Path> files) {
        for (Map.Entry<String, Path> file : files.entrySet()) {
            if (!Files.isRegularFile(file.getValue()) || !Files.isReadable(file.getValue())) {
                throw CliFailure.usage("--file " + file.getKey() + "=" + file.getValue() + ": not a readable file");
            }
        }
        return new HostFiles(files);
    }

    @Override
    public List<String> listNames() {
        return List.copyOf(files.keySet());
    }

    @Override
    public Optional<byte[]> read(String name) {
        Path path = files.get(name);
        if (path == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Files.readAllBytes(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
