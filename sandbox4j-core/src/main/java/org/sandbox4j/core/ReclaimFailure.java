package org.sandbox4j.core;

import java.util.Objects;

/**
 * A call's guest path that was left behind: a data-retention failure. Later calls in the same
 * sandbox may read what it holds; disposing of the sandbox is the only real remedy.
 *
 * @param tool   the tool whose call left it
 * @param key    the conversation whose sandbox holds it
 * @param path   the absolute guest path that was not removed
 * @param reason why, as {@link GuestPathReclaim#reclaim} reported it
 */
public record ReclaimFailure(String tool, SandboxKey key, String path, String reason) {

    public ReclaimFailure {
        Objects.requireNonNull(tool, "tool");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(reason, "reason");
    }
}
