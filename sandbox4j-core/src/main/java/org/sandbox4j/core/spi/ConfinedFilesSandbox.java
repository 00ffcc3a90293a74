package org.sandbox4j.core.spi;

import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;

/**
 * A sandbox whose file methods are its {@link ConfinedFiles}: implement {@link #files()} and
 * {@code exec}, and the file methods come from the kit unchanged.
 */
public interface ConfinedFilesSandbox extends Sandbox {

    /** The sandbox's file primitives, with the kit's front half. */
    ConfinedFiles<?> files();

    @Override
    default void writeFile(String path, byte[] content, String workingDirectory) {
        files().writeFile(path, content, workingDirectory);
    }

    @Override
    default void mkdir(String path, String workingDirectory) {
        files().mkdir(path, workingDirectory);
    }

    @Override
    default Optional<SandboxEntry> stat(String path, String workingDirectory) {
        return files().stat(path, workingDirectory);
    }

    @Override
    default byte[] readFile(String path, String workingDirectory, long maxBytes) {
        return files().readFile(path, workingDirectory, maxBytes);
    }

    @Override
    default List<SandboxEntry> listDir(String path, String workingDirectory) {
        return files().listDir(path, workingDirectory);
    }

    @Override
    default void remove(String path, String workingDirectory, boolean recursive) {
        files().remove(path, workingDirectory, recursive);
    }
}
