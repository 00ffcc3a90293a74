package org.sandbox4j.microvm;

import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.RecordText;

/**
 * What a sandbox directory says about itself, so that any instance, in any process, can find a
 * guest by its key, list it and end it. As the local backends' records do, it keeps the labels as
 * SHA-256 digests (scope, thread, agent dir: never what they hold), the kind, a digest of what
 * else fixes the guest, when it was made, and the process that owns it with the instant until
 * which that owner vouches for it (its lease; the owner renews it while it lives). Only this host
 * user may write the sandbox directory the record is in (QEMU writes only its own directory below
 * it); the record is written whole (a temporary file renamed over it) and read without following
 * links, at most {@link #MAX_BYTES}.
 *
 * @param scopeHash   SHA-256 hex of the scope; {@link #UNCLAIMED} or {@link #TEMPLATE} (which no digest
 *                    is) for a guest that serves no key
 * @param threadHash  SHA-256 hex of the thread id
 * @param agentHash   SHA-256 hex of the agent dir
 * @param kind        the kind the guest serves
 * @param fingerprint a digest of what fixes the guest beside its key (its kind and egress)
 * @param createdAt   when the guest was made for its key
 * @param acquiredAt  when it was last acquired
 * @param ownerPid    the JVM that owns the guest
 * @param ownerStart  when that JVM started (a recycled pid is another owner)
 * @param leaseUntil  until when the owner vouches for it: past this any backend on the state root
 *                    ends it, and the guest powers itself off
 */
record SandboxRecord(String scopeHash, String threadHash, String agentHash, String kind, String fingerprint,
        Instant createdAt, Instant acquiredAt, long ownerPid, Instant ownerStart, Instant leaseUntil) {

    static final String FILE = "sandbox";
    /** What an idle guest of the warm pool names instead of a key: it matches none until claimed. */
    static final String UNCLAIMED = "unclaimed";
    /** What a snapshot template names instead of a key. */
    static final String TEMPLATE = "snapshot-template";
    /** A kind longer than this would not fit the record's bound. */
    static final int MAX_KIND_BYTES = 1024;
    /** Room for the longest kind, escaped (a non-ASCII character takes six bytes), and the rest. */
    private static final int MAX_BYTES = 8192;
    /** 2: properties (1 was five lines of digests, with no lease). */
    private static final String FORMAT = "2";
    private static final ProcessHandle CURRENT = ProcessHandle.current();
    private static final SecureRandom RANDOM = new SecureRandom();

    SandboxRecord {
        Objects.requireNonNull(scopeHash, "scopeHash");
        Objects.requireNonNull(threadHash, "threadHash");
        Objects.requireNonNull(agentHash, "agentHash");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(acquiredAt, "acquiredAt");
        Objects.requireNonNull(ownerStart, "ownerStart");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
    }

    /**
     * A guest made now for {@code key}, owned by this JVM for {@code lease}.
     *
     * @throws IllegalArgumentException {@code kind} is longer than {@link #MAX_KIND_BYTES}
     */
    static SandboxRecord of(SandboxKey key, String kind, String fingerprint, Duration lease) {
        int kindBytes = kind.getBytes(StandardCharsets.UTF_8).length;
        if (kindBytes > MAX_KIND_BYTES) {
            throw new IllegalArgumentException("a microVM sandbox's kind is at most " + MAX_KIND_BYTES + " bytes (its "
                    + "record stays small), not " + kindBytes + ": choose a shorter kind");
        }
        Instant now = Instant.now();
        return new SandboxRecord(KeyDigest.sha256Hex(key.scope()), KeyDigest.sha256Hex(key.threadId()),
                KeyDigest.sha256Hex(key.agentDir()), kind, fingerprint, now, now, CURRENT.pid(), currentStart(),
                now.plus(lease));
    }

    /** An idle guest of the warm pool: it names no key, so nothing finds, lists or disposes of it by one. */
    static SandboxRecord unclaimed(Duration lease) {
        return placeholder(UNCLAIMED, lease);
    }

    /** A snapshot template's: it names no sandbox, only the JVM that owns it. */
    static SandboxRecord snapshotTemplate(Duration lease) {
        return placeholder(TEMPLATE, lease);
    }

    private static SandboxRecord placeholder(String name, Duration lease) {
        Instant now = Instant.now();
        return new SandboxRecord(name, name, name, name, name, now, now, CURRENT.pid(), currentStart(),
                now.plus(lease));
    }

    /** This record acquired now by this JVM, which owns it from now on and vouches for it for {@code lease}. */
    SandboxRecord acquired(Duration lease) {
        Instant now = Instant.now();
        return new SandboxRecord(scopeHash, threadHash, agentHash, kind, fingerprint, createdAt, now, CURRENT.pid(),
                currentStart(), now.plus(lease));
    }

    /** This record with its lease renewed from now. */
    SandboxRecord renewed(Duration lease) {
        return new SandboxRecord(scopeHash, threadHash, agentHash, kind, fingerprint, createdAt, acquiredAt, ownerPid,
                ownerStart, Instant.now().plus(lease));
    }

    /** This record with its lease run out already: what an owner that stopped renewing leaves. */
    SandboxRecord lapsed() {
        return new SandboxRecord(scopeHash, threadHash, agentHash, kind, fingerprint, createdAt, acquiredAt, ownerPid,
                ownerStart, Instant.EPOCH);
    }

    /** The same sandbox: key and fingerprint (whoever owns it). */
    boolean names(SandboxRecord other) {
        return scopeHash.equals(other.scopeHash) && threadHash.equals(other.threadHash)
                && agentHash.equals(other.agentHash) && fingerprint.equals(other.fingerprint);
    }

    /** Whether this is a guest of {@code key}, of whatever kind. */
    boolean belongsTo(SandboxKey key) {
        return matches(SandboxQuery.conversation(key.scope(), key.threadId()))
                && agentHash.equals(KeyDigest.sha256Hex(key.agentDir()));
    }

    /** Whether this is a guest {@code query} asks for. */
    boolean matches(SandboxQuery query) {
        return scopeHash.equals(KeyDigest.sha256Hex(query.scope()))
                && query.threadId().map(thread -> threadHash.equals(KeyDigest.sha256Hex(thread))).orElse(true);
    }

    /**
     * What {@code ls} shows of this record, for {@code query} (which knew the scope and maybe the
     * thread): the guest's directory names it.
     */
    SandboxListing listing(String backendName, String id, SandboxQuery query) {
        return new SandboxListing(backendName, id, Optional.of(kind), query.scope(), query.threadId(),
                threadHash.substring(0, SandboxListing.THREAD_DIGEST_HEX), Optional.of(createdAt),
                Optional.of(acquiredAt));
    }

    /** Whether this JVM owns the guest. */
    boolean ownedHere() {
        return ownerPid == CURRENT.pid() && ownerStart.equals(currentStart());
    }

    /** Whether the JVM that owns the guest is still running: the same pid, started at the same instant. */
    boolean ownerAlive() {
        return ProcessHandle.of(ownerPid).filter(ProcessHandle::isAlive)
                .map(process -> process.info().startInstant().orElse(Instant.EPOCH)).filter(ownerStart::equals)
                .isPresent();
    }

    /** Whether nobody vouches for the guest any more: its owner is gone, or let its lease run out. */
    boolean abandoned(Instant now) {
        return now.isAfter(leaseUntil) || !ownerAlive();
    }

    void writeTo(Path directory) throws IOException {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("format", FORMAT);
        fields.put("scope-sha256", scopeHash);
        fields.put("thread-sha256", threadHash);
        fields.put("agent-dir-sha256", agentHash);
        fields.put("kind", kind);
        fields.put("fingerprint", fingerprint);
        fields.put("created-at", createdAt.toString());
        fields.put("acquired-at", acquiredAt.toString());
        fields.put("owner-pid", Long.toString(ownerPid));
        fields.put("owner-start", ownerStart.toString());
        fields.put("lease-until", leaseUntil.toString());
        writeHostFile(directory.resolve(FILE), RecordText.of("sandbox4j microVM guest; labels are SHA-256 digests",
                fields));
    }

    /** The record in {@code directory}, or empty when there is none or it is not one of ours. */
    static Optional<SandboxRecord> readFrom(Path directory) {
        return readHostFile(directory.resolve(FILE), MAX_BYTES).flatMap(text -> {
            Properties properties = new Properties();
            try {
                properties.load(new StringReader(text));
                if (!FORMAT.equals(properties.getProperty("format"))) {
                    return Optional.empty();
                }
                return Optional.of(new SandboxRecord(required(properties, "scope-sha256"),
                        required(properties, "thread-sha256"), required(properties, "agent-dir-sha256"),
                        required(properties, "kind"), required(properties, "fingerprint"),
                        Instant.parse(required(properties, "created-at")),
                        Instant.parse(required(properties, "acquired-at")),
                        Long.parseLong(required(properties, "owner-pid")),
                        Instant.parse(required(properties, "owner-start")),
                        Instant.parse(required(properties, "lease-until"))));
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        });
    }

    private static String required(Properties properties, String name) {
        String value = properties.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("the record has no " + name);
        }
        return value;
    }

    /**
     * Writes a small file only this host user may read, whole: into a new temporary file beside it
     * (never through a link), renamed over it, so a reader sees the old text or the new.
     */
    static void writeHostFile(Path file, String text) throws IOException {
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        Path temporary = file.resolveSibling("." + file.getFileName() + "-" + HexFormat.of().formatHex(suffix));
        try {
            try (SeekableByteChannel out = Files.newByteChannel(temporary, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    /**
     * A small regular file's text, read without following a link and at most {@code maxBytes};
     * empty when it is absent, not a regular file, or longer.
     */
    static Optional<String> readHostFile(Path file, int maxBytes) {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try (SeekableByteChannel in = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (in.size() > maxBytes) {
                return Optional.empty();
            }
            ByteBuffer bytes = ByteBuffer.allocate(maxBytes + 1);
            while (bytes.hasRemaining() && in.read(bytes) > 0) {
                // until the end, or one byte past the bound
            }
            return bytes.position() > maxBytes ? Optional.empty()
                    : Optional.of(new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Instant currentStart() {
        return CURRENT.info().startInstant().orElse(Instant.EPOCH);
    }
}
