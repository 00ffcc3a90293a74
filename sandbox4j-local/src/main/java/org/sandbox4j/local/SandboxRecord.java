package org.sandbox4j.local;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.RecordText;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;

/**
 * Who owns one local sandbox, as a properties file beside its workspace, so another process (a
 * replica, a restarted JVM) can find, adopt, dispose of or reap it. Labels are stored hashed;
 * what a label holds never reaches the disk.
 *
 * @param id          the sandbox's directory name: a digest of (backend, key, kind, fingerprint)
 * @param scopeHash   SHA-256 hex of the scope
 * @param threadHash  SHA-256 hex of the thread id
 * @param agentHash   SHA-256 hex of the agent dir
 * @param kind        the kind the sandbox serves
 * @param fingerprint a digest of what fixes the sandbox's identity (root file system, egress)
 * @param createdAt   when it was made
 * @param ownerPid    the process that last acquired it
 * @param ownerStart  when that process started (a pid alone is reused)
 * @param leaseUntil  until when the owner vouches for it; past this, with the owner gone, it may be reaped
 * @param attached    whether the owner still holds it: true from acquire until the owner's backend
 *                    closes (or its JVM exits normally). An attached sandbox whose owner is gone was
 *                    left by a crash and is reaped at once; a detached one waits for its lease
 *                    (the next process may adopt it: a named CLI thread, a restarted service).
 */
record SandboxRecord(String id, String scopeHash, String threadHash, String agentHash, String kind,
        String fingerprint, Instant createdAt, long ownerPid, Instant ownerStart, Instant leaseUntil,
        boolean attached) {

    static final String FILE_NAME = "sandbox.properties";
    /** How many hex digits of the identity digest name a sandbox directory (128 bits). */
    private static final int ID_HEX_DIGITS = 32;
    /** 2 adds {@code attached}; a format-1 record reads as detached (its lease decides, as before). */
    private static final String FORMAT = "2";

    SandboxRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(scopeHash, "scopeHash");
        Objects.requireNonNull(threadHash, "threadHash");
        Objects.requireNonNull(agentHash, "agentHash");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(ownerStart, "ownerStart");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
    }

    /** The directory name for {@code (backend, key, kind, fingerprint)}. */
    static String idOf(String backendType, SandboxKey key, String kind, String fingerprint) {
        return "sbx-" + KeyDigest.ofParts(List.of(backendType, key.scope(), key.threadId(), key.agentDir(), kind,
                fingerprint)).substring(0, ID_HEX_DIGITS);
    }

    static SandboxRecord fresh(String id, SandboxKey key, String kind, String fingerprint, Duration lease) {
        Instant now = Instant.now();
        return new SandboxRecord(id, KeyDigest.sha256Hex(key.scope()), KeyDigest.sha256Hex(key.threadId()),
                KeyDigest.sha256Hex(key.agentDir()), kind, fingerprint, now, CURRENT.pid(), currentStart(),
                now.plus(lease), true);
    }

    /** This record, owned and held by the current process with a fresh lease. */
    SandboxRecord renewed(Duration lease) {
        return new SandboxRecord(id, scopeHash, threadHash, agentHash, kind, fingerprint, createdAt, CURRENT.pid(),
                currentStart(), Instant.now().plus(lease), true);
    }

    /** This record let go by its owner, kept until its lease runs out for the next process to adopt. */
    SandboxRecord detached() {
        return new SandboxRecord(id, scopeHash, threadHash, agentHash, kind, fingerprint, createdAt, ownerPid,
                ownerStart, leaseUntil, false);
    }

    /** Whether the current process owns it. */
    boolean ownedHere() {
        return ownerPid == CURRENT.pid() && ownerStart.equals(currentStart());
    }

    boolean belongsTo(String scope, String threadId) {
        return scopeHash.equals(KeyDigest.sha256Hex(scope)) && threadHash.equals(KeyDigest.sha256Hex(threadId));
    }

    /** Whether this sandbox is one {@code query} asks for. */
    boolean matches(SandboxQuery query) {
        return scopeHash.equals(KeyDigest.sha256Hex(query.scope()))
                && query.threadId().map(thread -> threadHash.equals(KeyDigest.sha256Hex(thread))).orElse(true);
    }

    /** What {@code ls} shows of this record, for {@code query} (which knew the scope and maybe the thread). */
    SandboxListing listing(String backendName, SandboxQuery query, Optional<Instant> lastUsed) {
        return new SandboxListing(backendName, id, Optional.of(kind), query.scope(), query.threadId(),
                threadHash.substring(0, SandboxListing.THREAD_DIGEST_HEX), Optional.of(createdAt), lastUsed);
    }

    boolean belongsTo(SandboxKey key) {
        return belongsTo(key.scope(), key.threadId()) && agentHash.equals(KeyDigest.sha256Hex(key.agentDir()));
    }

    /** Whether the owning process still runs: same pid and the same start time. */
    boolean ownerAlive() {
        Optional<ProcessHandle> owner = ProcessHandle.of(ownerPid);
        if (owner.isEmpty() || !owner.get().isAlive()) {
            return false;
        }
        return owner.get().info().startInstant().map(start -> start.equals(ownerStart)).orElse(true);
    }

    /**
     * Whether it may be reaped: its owner is gone and either still held it (it crashed: no need to
     * wait) or let it go longer ago than the lease.
     */
    boolean abandoned(Instant now) {
        return (attached || now.isAfter(leaseUntil)) && !ownerAlive();
    }

    /** Whether less than half the lease is left, so an exec should renew it. */
    boolean leaseWaning(Duration lease, Instant now) {
        return now.plusMillis(lease.toMillis() / 2).isAfter(leaseUntil); // not dividedBy: BigDecimal, slow cold
    }

    void write(Path directory) throws IOException {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("format", FORMAT);
        fields.put("id", id);
        fields.put("scope-sha256", scopeHash);
        fields.put("thread-sha256", threadHash);
        fields.put("agent-dir-sha256", agentHash);
        fields.put("kind", kind);
        fields.put("fingerprint", fingerprint);
        fields.put("created-at", createdAt.toString());
        fields.put("owner-pid", Long.toString(ownerPid));
        fields.put("owner-start", ownerStart.toString());
        fields.put("lease-until", leaseUntil.toString());
        fields.put("attached", Boolean.toString(attached));
        Path temporary = directory.resolve("." + FILE_NAME + "-" + UUID.randomUUID());
        Files.writeString(temporary, RecordText.of("sandbox4j local sandbox; labels are SHA-256 digests", fields),
                StandardCharsets.UTF_8);
        Files.move(temporary, directory.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    /** The record in {@code directory}; empty when there is none or it cannot be read. */
    static Optional<SandboxRecord> read(Path directory) {
        Path file = directory.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        Properties properties = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(in);
            return Optional.of(new SandboxRecord(required(properties, "id"), required(properties, "scope-sha256"),
                    required(properties, "thread-sha256"), required(properties, "agent-dir-sha256"),
                    required(properties, "kind"), required(properties, "fingerprint"),
                    Instant.parse(required(properties, "created-at")),
                    Long.parseLong(required(properties, "owner-pid")),
                    Instant.parse(required(properties, "owner-start")),
                    Instant.parse(required(properties, "lease-until")),
                    Boolean.parseBoolean(properties.getProperty("attached", "false"))));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static String required(Properties properties, String name) {
        String value = properties.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("the record has no " + name);
        }
        return value;
    }

    private static final ProcessHandle CURRENT = ProcessHandle.current();

    private static Instant currentStart() {
        return CURRENT.info().startInstant().orElse(Instant.EPOCH);
    }
}
