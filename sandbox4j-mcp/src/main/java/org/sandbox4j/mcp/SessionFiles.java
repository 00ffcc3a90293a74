package org.sandbox4j.mcp;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * What a host allows when it enables the MCP file tools ({@code write_file}, {@code read_file},
 * {@code list_files}, {@code delete_file}): where the per-session file areas live on the host, and
 * how much each may hold. Off unless given to {@link SandboxMcpServer.Builder#sessionFiles}.
 *
 * <pre>{@code
 * SandboxMcpServer.builder()
 *         .router(router).scope("my-app")
 *         .sessionFiles(SessionFiles.builder().root(Path.of("/var/lib/my-app/mcp-files")).build())
 *         .tools((context, files) -> List.of(CodeAct.builder(router, "mcp", context)
 *                 .fileStore(files)                                        // write_file, then `files`
 *                 .outputs(OutputMode.DECLARED).outputSink(files)          // `outputs`, then read_file
 *                 .build()))
 *         .build();
 * }</pre>
 *
 * <p>Each MCP session gets its own directory under the root, named by the SHA-256 of its session
 * id, made at its first write and deleted when the session closes (and when the server closes).
 * A cap is never met by truncating: a write that would break one is refused whole. Immutable.
 *
 * @param root          the host directory holding every session's area (host configuration: trusted,
 *                      made if missing); held absolute and normalized
 * @param maxFileBytes  the largest file one session may hold, in bytes
 * @param maxFiles      how many files one session may hold
 * @param maxTotalBytes how many bytes one session's files may hold together
 */
public record SessionFiles(Path root, long maxFileBytes, int maxFiles, long maxTotalBytes) {

    /** The largest file a session may hold, unless the host says otherwise: 1 MiB. */
    public static final long DEFAULT_MAX_FILE_BYTES = 1024L * 1024;

    /** How many files a session may hold, unless the host says otherwise. */
    public static final int DEFAULT_MAX_FILES = 32;

    /** How many bytes a session's files may hold together, unless the host says otherwise: 8 MiB. */
    public static final long DEFAULT_MAX_TOTAL_BYTES = 8L * 1024 * 1024;

    /** The tool that puts a file into the session's area. */
    public static final String WRITE_FILE = "write_file";

    /** The tool that reads one back. */
    public static final String READ_FILE = "read_file";

    /** The tool that lists the area. */
    public static final String LIST_FILES = "list_files";

    /** The tool that deletes a file from it. */
    public static final String DELETE_FILE = "delete_file";

    /** The file tools, in the order the server lists them (after the factory's tools). */
    public static final List<String> TOOL_NAMES = List.of(WRITE_FILE, READ_FILE, LIST_FILES, DELETE_FILE);

    /**
     * @throws NullPointerException     no root
     * @throws IllegalArgumentException a cap below 1, or a per-file cap above the total
     */
    public SessionFiles {
        Objects.requireNonNull(root, "root: name the host directory the session file areas go under");
        if (maxFileBytes < 1 || maxFiles < 1 || maxTotalBytes < 1) {
            throw new IllegalArgumentException("every session-file cap must be at least 1, not maxFileBytes="
                    + maxFileBytes + ", maxFiles=" + maxFiles + ", maxTotalBytes=" + maxTotalBytes);
        }
        if (maxFileBytes > maxTotalBytes) {
            throw new IllegalArgumentException("maxFileBytes (" + maxFileBytes + ") is above maxTotalBytes ("
                    + maxTotalBytes + "), so no file could ever reach it; lower maxFileBytes or raise maxTotalBytes");
        }
        root = root.toAbsolutePath().normalize();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String toString() {
        // The root is a host path: keep it out of anything that might be rendered to a model.
        return "SessionFiles[maxFileBytes=" + maxFileBytes + ", maxFiles=" + maxFiles + ", maxTotalBytes="
                + maxTotalBytes + "]";
    }

    /** Single-use builder; {@link #build()} validates. */
    public static final class Builder {
        private Path root;
        private long maxFileBytes = DEFAULT_MAX_FILE_BYTES;
        private int maxFiles = DEFAULT_MAX_FILES;
        private long maxTotalBytes = DEFAULT_MAX_TOTAL_BYTES;

        private Builder() {
        }

        /** The host directory the per-session areas go under; required. Give it to this server alone. */
        public Builder root(Path root) {
            this.root = Objects.requireNonNull(root, "root");
            return this;
        }

        /** The largest file a session may hold (default {@value SessionFiles#DEFAULT_MAX_FILE_BYTES} bytes). */
        public Builder maxFileBytes(long bytes) {
            this.maxFileBytes = bytes;
            return this;
        }

        /** How many files a session may hold (default {@value SessionFiles#DEFAULT_MAX_FILES}). */
        public Builder maxFiles(int files) {
            this.maxFiles = files;
            return this;
        }

        /** How many bytes a session's files may hold together (default {@value SessionFiles#DEFAULT_MAX_TOTAL_BYTES}). */
        public Builder maxTotalBytes(long bytes) {
            this.maxTotalBytes = bytes;
            return this;
        }

        /**
         * @throws NullPointerException     no root
         * @throws IllegalArgumentException a cap below 1, or a per-file cap above the total
         */
        public SessionFiles build() {
            return new SessionFiles(root, maxFileBytes, maxFiles, maxTotalBytes);
        }
    }
}
