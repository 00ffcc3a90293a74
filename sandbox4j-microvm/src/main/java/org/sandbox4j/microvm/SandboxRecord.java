package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.List;
import java.util.Optional;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.spi.KeyDigest;

/**
 * What a sandbox directory says about itself, so that any instance, in any process, can find a
 * guest by its key and end it: the digests of its conversation, key and kind (never the labels
 * themselves) and the process that owns it. Only this host user may write the sandbox directory the
 * record is in (QEMU writes only its own directory below it), and the record is read without
 * following links.
 *
 * @param conversation digest of (scope, thread)
 * @param key          digest of (scope, thread, agent dir)
 * @param kind         digest of the kind
 * @param ownerPid     the JVM that booted the guest
 * @param ownerStart   that JVM's start instant in epoch milliseconds (a recycled pid is another owner)
 */
record SandboxRecord(String conversation, String key, String kind, long ownerPid, long ownerStart) {

    static final String FILE = "sandbox";
    private static final int MAX_BYTES = 1024;

    static SandboxRecord of(SandboxKey key, String kind) {
        ProcessHandle self = ProcessHandle.current();
        return new SandboxRecord(conversation(key.scope(), key.threadId()), keyDigest(key), KeyDigest.sha256Hex(kind),
                self.pid(), startOf(self));
    }

    /** A snapshot template's: it names no sandbox (no digest looks like this), only the JVM that owns it. */
    static SandboxRecord snapshotTemplate() {
        ProcessHandle self = ProcessHandle.current();
        return new SandboxRecord("snapshot-template", "snapshot-template", "snapshot-template", self.pid(),
                startOf(self));
    }

    static String conversation(String scope, String threadId) {
        return KeyDigest.ofParts(List.of(scope, threadId));
    }

    static String keyDigest(SandboxKey key) {
        return KeyDigest.ofParts(List.of(key.scope(), key.threadId(), key.agentDir()));
    }

    /** The same sandbox: conversation, key and kind (whoever owns it). */
    boolean names(SandboxRecord other) {
        return conversation.equals(other.conversation) && key.equals(other.key) && kind.equals(other.kind);
    }

    /** Whether the JVM that booted the guest is still running. */
    boolean ownerAlive() {
        return ProcessHandle.of(ownerPid).filter(ProcessHandle::isAlive).map(SandboxRecord::startOf)
                .filter(start -> start == ownerStart).isPresent();
    }

    void writeTo(Path directory) throws IOException {
        writeHostFile(directory.resolve(FILE), String.join("\n", conversation, key, kind, Long.toString(ownerPid),
                Long.toString(ownerStart)) + "\n");
    }

    /** The record in {@code directory}, or empty when there is none or it is not one of ours. */
    static Optional<SandboxRecord> readFrom(Path directory) {
        return readHostFile(directory.resolve(FILE), MAX_BYTES).flatMap(text -> {
            List<String> lines = text.lines().toList();
            if (lines.size() != 5) {
                return Optional.empty();
            }
            try {
                return Optional.of(new SandboxRecord(lines.get(0), lines.get(1), lines.get(2),
                        Long.parseLong(lines.get(3)), Long.parseLong(lines.get(4))));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        });
    }

    /** Writes a small file only this host user may read, never through a link. */
    static void writeHostFile(Path file, String text) throws IOException {
        try (SeekableByteChannel out = Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
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

    private static long startOf(ProcessHandle process) {
        return process.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(0L);
    }
}
