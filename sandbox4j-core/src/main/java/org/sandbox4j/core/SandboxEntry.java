package org.sandbox4j.core;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * One entry as a no-follow stat describes it.
 *
 * @param path      relative to the working directory the call used
 * @param kind      what it is
 * @param sizeBytes its size; empty means unknown and fails closed everywhere (never taken as 0).
 *                  A link's size is always empty: a stat reports its target string, not bytes one could read.
 * @param mode      its permission bits as {@code stat} gives them ({@code st_mode & 07777}; a backend that
 *                  sees only the nine rwx bits gives those); empty when the backend cannot tell
 * @param modified  when its content last changed ({@code st_mtime}, of the entry itself, never a link's
 *                  target); empty when the backend cannot tell
 */
public record SandboxEntry(String path, EntryKind kind, OptionalLong sizeBytes, OptionalInt mode,
        Optional<Instant> modified) {

    /** The largest mode: the permission bits with set-user-id, set-group-id and sticky. */
    public static final int MAX_MODE = 07777;

    public SandboxEntry {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(sizeBytes, "sizeBytes");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(modified, "modified");
        if (kind == EntryKind.SYMLINK && sizeBytes.isPresent()) {
            throw new IllegalArgumentException("a link has no readable size: report it with an empty size");
        }
        if (sizeBytes.isPresent() && sizeBytes.getAsLong() < 0) {
            throw new IllegalArgumentException("a size cannot be negative: " + sizeBytes.getAsLong());
        }
        if (mode.isPresent() && (mode.getAsInt() < 0 || mode.getAsInt() > MAX_MODE)) {
            throw new IllegalArgumentException("a mode is permission bits between 0 and 07777, not 0"
                    + Integer.toOctalString(mode.getAsInt()));
        }
    }

    /** An entry whose mode and modification time are not known. */
    public SandboxEntry(String path, EntryKind kind, OptionalLong sizeBytes) {
        this(path, kind, sizeBytes, OptionalInt.empty(), Optional.empty());
    }

    public static SandboxEntry file(String path, long sizeBytes) {
        return new SandboxEntry(path, EntryKind.FILE, OptionalLong.of(sizeBytes));
    }

    /** A regular file whose size the backend could not tell. */
    public static SandboxEntry fileOfUnknownSize(String path) {
        return new SandboxEntry(path, EntryKind.FILE, OptionalLong.empty());
    }

    public static SandboxEntry directory(String path) {
        return new SandboxEntry(path, EntryKind.DIRECTORY, OptionalLong.empty());
    }

    public static SandboxEntry symlink(String path) {
        return new SandboxEntry(path, EntryKind.SYMLINK, OptionalLong.empty());
    }

    public static SandboxEntry other(String path) {
        return new SandboxEntry(path, EntryKind.OTHER, OptionalLong.empty());
    }

    /** This entry with {@code bits} as its mode. */
    public SandboxEntry withMode(int bits) {
        return new SandboxEntry(path, kind, sizeBytes, OptionalInt.of(bits), modified);
    }

    /** This entry with {@code time} as its modification time. */
    public SandboxEntry withModified(Instant time) {
        return new SandboxEntry(path, kind, sizeBytes, mode, Optional.of(time));
    }

    /** This entry without mode and modification time: what it is, for comparing what two sources say of its shape. */
    public SandboxEntry withoutAttributes() {
        return new SandboxEntry(path, kind, sizeBytes);
    }
}
