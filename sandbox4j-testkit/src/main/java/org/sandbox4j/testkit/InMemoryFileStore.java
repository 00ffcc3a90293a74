package org.sandbox4j.testkit;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.sandbox4j.core.FileStore;
import org.sandbox4j.core.spi.GuestText;

/** An immutable {@link FileStore} held in memory, for tests. */
public final class InMemoryFileStore implements FileStore {

    private final Map<String, byte[]> files;

    private InMemoryFileStore(Map<String, byte[]> files) {
        this.files = files;
    }

    /**
     * A store holding a copy of {@code files}: each value a {@code byte[]} (copied) or a
     * {@link String} (stored as UTF-8). Later changes to the map or its arrays do not reach the store.
     *
     * @throws IllegalArgumentException a value of any other type
     */
    public static InMemoryFileStore of(Map<String, ?> files) {
        Objects.requireNonNull(files, "files");
        Map<String, byte[]> copy = new TreeMap<>();
        files.forEach((name, content) -> {
            Objects.requireNonNull(name, "file name");
            copy.put(name, bytesOf(name, content));
        });
        return new InMemoryFileStore(Collections.unmodifiableMap(copy));
    }

    /** Every name, sorted. */
    @Override
    public List<String> listNames() {
        return List.copyOf(files.keySet());
    }

    /** A copy of the content under {@code name}, or empty. */
    @Override
    public Optional<byte[]> read(String name) {
        Objects.requireNonNull(name, "name");
        return Optional.ofNullable(files.get(name)).map(byte[]::clone);
    }

    private static byte[] bytesOf(String name, Object content) {
        if (content instanceof byte[]) {
            return ((byte[]) content).clone();
        }
        if (content instanceof String) {
            return ((String) content).getBytes(StandardCharsets.UTF_8);
        }
        throw new IllegalArgumentException("the content of " + GuestText.quote(name) + " is "
                + (content == null ? "null" : "a " + content.getClass().getName())
                + "; give a byte[] or a String (stored as UTF-8)");
    }
}
