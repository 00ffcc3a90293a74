package org.sandbox4j.testkit.tck.reference;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxKey;

/**
 * Who owns one sandbox, as a properties file next to its storage: every label hashed (SHA-256,
 * hex, never truncated), so the same mapping serves writing and querying whatever the labels hold.
 *
 * @param scopeHash    SHA-256 hex of the scope
 * @param threadHash   SHA-256 hex of the thread id
 * @param agentDirHash SHA-256 hex of the agent dir
 * @param kindHash     SHA-256 hex of the kind
 * @param createdAt    when the sandbox was created
 */
record OwnershipRecord(String scopeHash, String threadHash, String agentDirHash, String kindHash, Instant createdAt) {

    /** The record's file name inside a sandbox directory. */
    static final String FILE_NAME = "owner.properties";
    /** The storage directory's name inside a sandbox directory. */
    static final String STORAGE = "storage";

    /** How many hex digits of the identity hash name a sandbox directory (128 bits). */
    private static final int ID_HEX_DIGITS = 32;
    private static final String SCOPE = "scope-sha256";
    private static final String THREAD = "thread-sha256";
    private static final String AGENT_DIR = "agent-dir-sha256";
    private static final String KIND = "kind-sha256";
    private static final String CREATED_AT = "created-at";

    OwnershipRecord {
        Objects.requireNonNull(scopeHash, "scopeHash");
        Objects.requireNonNull(threadHash, "threadHash");
        Objects.requireNonNull(agentDirHash, "agentDirHash");
        Objects.requireNonNull(kindHash, "kindHash");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    static OwnershipRecord of(SandboxKey key, String kind) {
        return new OwnershipRecord(sha256(key.scope()), sha256(key.threadId()), sha256(key.agentDir()), sha256(kind),
                Instant.now());
    }

    /**
     * The sandbox directory name for {@code (key, kind)}: a hash over the length-prefixed labels,
     * so no two different label tuples share an encoding.
     */
    static String idOf(SandboxKey key, String kind) {
        return digestOf(key.scope(), key.threadId(), key.agentDir(), kind);
    }

    /**
     * A host-wide name for a sandbox's process group: its id alone would collide between two
     * backends (two builds on one machine) whose sandboxes share a key.
     */
    static String processGroupOf(Path sandboxesRoot, String id) {
        return digestOf(sandboxesRoot.toAbsolutePath().toString(), id);
    }

    private static String digestOf(String... labels) {
        return KeyDigest.ofParts(List.of(labels)).substring(0, ID_HEX_DIGITS);
    }

    boolean belongsTo(String scope, String threadId) {
        return scopeHash.equals(sha256(scope)) && threadHash.equals(sha256(threadId));
    }

    boolean belongsTo(SandboxKey key) {
        return belongsTo(key.scope(), key.threadId()) && agentDirHash.equals(sha256(key.agentDir()));
    }

    /** Writes to a temporary file beside {@code file}, then renames it into place. */
    void writeAtomically(Path file) throws IOException {
        Properties properties = new Properties();
        properties.setProperty(SCOPE, scopeHash);
        properties.setProperty(THREAD, threadHash);
        properties.setProperty(AGENT_DIR, agentDirHash);
        properties.setProperty(KIND, kindHash);
        properties.setProperty(CREATED_AT, createdAt.toString());
        Path temporary = Files.createTempFile(file.getParent(), FILE_NAME, ".tmp");
        try {
            try (OutputStream out = Files.newOutputStream(temporary)) {
                properties.store(out, "sandbox4j namespace-shell ownership record");
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    /** The record in {@code file}; empty when there is none or it is incomplete. */
    static Optional<OwnershipRecord> read(Path file) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        String scope = properties.getProperty(SCOPE);
        String thread = properties.getProperty(THREAD);
        String agentDir = properties.getProperty(AGENT_DIR);
        String kind = properties.getProperty(KIND);
        String createdAt = properties.getProperty(CREATED_AT);
        if (scope == null || thread == null || agentDir == null || kind == null || createdAt == null) {
            return Optional.empty();
        }
        return Optional.of(new OwnershipRecord(scope, thread, agentDir, kind, Instant.parse(createdAt)));
    }

    private static String sha256(String label) {
        return KeyDigest.sha256Hex(label);
    }
}
