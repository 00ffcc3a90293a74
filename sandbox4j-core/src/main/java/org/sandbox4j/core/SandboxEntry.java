package org.sandbox4j.core;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * One entry as a no-follow stat describes it.
 *
 * @param path      relative to the working directory the call used
 * @param kind      what it is
 * @param sizeBytes its size; empty means unknown and fails closed everywhere (never taken as 0).
 *                  A link's size is always empty: a stat reports its target string, not bytes one could read.
 */
public record SandboxEntry(String path, EntryKind kind, OptionalLong sizeBytes) {

    public SandboxEntry {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(sizeBytes, "sizeBytes");
        if (kind == EntryKind.SYMLINK && sizeBytes.isPresent()) {
            throw new IllegalArgumentException("a link has no readable size: report it with an empty size");
        }
        if (sizeBytes.isPresent() && sizeBytes.getAsLong() < 0) {
            throw new IllegalArgumentException("a size cannot be negative: " + sizeBytes.getAsLong());
        }
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
}
