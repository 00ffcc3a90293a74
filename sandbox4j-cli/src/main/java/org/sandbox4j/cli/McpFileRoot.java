package org.sandbox4j.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;

import org.sandbox4j.core.spi.WorkspaceFiles;
import org.sandbox4j.mcp.SessionFiles;

/**
 * Where {@code sandbox4j mcp --file-tools} keeps the sessions' file areas: a directory of this
 * process's own, owner-only, under the state directory ({@code <state>/mcp-files/mcp-<random>})
 * or, without one, a temporary directory. The server deletes each area with its session; this
 * removes the directory itself when the command ends, by signal too.
 */
final class McpFileRoot implements AutoCloseable {

    /** The state directory's subdirectory holding each serving process's own root. */
    static final String STATE_SUBDIRECTORY = "mcp-files";

    private static final String PREFIX = "mcp-";
    private static final int RANDOM_BYTES = 8;
    private static final String OWNER_ONLY = "rwx------";
    private static final String PARENT_MOUNT = "/parent";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path root;
    private final Thread onSignal;

    private McpFileRoot(Path root) {
        this.root = root;
        this.onSignal = new Thread(this::remove, "sandbox4j-mcp-files-removal");
    }

    /** Makes the directory and arranges its removal at exit. @throws CliFailure it cannot be made */
    static McpFileRoot open(Optional<Path> stateDirectory) {
        Path root;
        try {
            if (stateDirectory.isPresent()) {
                Path parent = Files.createDirectories(stateDirectory.get().resolve(STATE_SUBDIRECTORY));
                byte[] random = new byte[RANDOM_BYTES];
                RANDOM.nextBytes(random);
                root = Files.createDirectory(parent.resolve(PREFIX + HexFormat.of().formatHex(random)),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(OWNER_ONLY)));
            } else {
                root = Files.createTempDirectory("sandbox4j-" + PREFIX + "files-"); // owner-only on POSIX
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw CliFailure.failed("cannot make a directory for the MCP file tools: " + e.getMessage()
                    + "; check that the state directory (--state-dir) is writable");
        }
        McpFileRoot made = new McpFileRoot(root);
        Runtime.getRuntime().addShutdownHook(made.onSignal);
        return made;
    }

    Path path() {
        return root;
    }

    /** The file tools' limits: the library's defaults, under this root. */
    SessionFiles sessionFiles() {
        return SessionFiles.builder().root(root).build();
    }

    /** Removes the directory and whatever is left in it (never following a link); never throws. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(onSignal);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running: it removes the directory.
        }
        remove();
    }

    private void remove() {
        Path parent = root.getParent();
        try {
            new WorkspaceFiles(parent, PARENT_MOUNT, "sandbox4j mcp").remove(root.getFileName().toString(),
                    PARENT_MOUNT, true);
        } catch (RuntimeException gone) {
            // Already gone, or not removable: a leftover directory, nothing a user could act on at exit.
        }
    }
}
