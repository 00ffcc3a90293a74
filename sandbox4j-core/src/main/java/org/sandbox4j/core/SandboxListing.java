package org.sandbox4j.core;

import org.sandbox4j.core.spi.KeyDigest;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One sandbox as its provider's own record holds it. Providers may keep labels only as digests,
 * so a listing names what the query already knew (the scope, and the thread when the query named
 * one) and tells threads apart by a digest otherwise.
 *
 * @param backend      the backend's name
 * @param id           the provider's name for the sandbox (a directory, a container, a VM)
 * @param kind         the kind it serves, when the record keeps it
 * @param scope        the scope it belongs to
 * @param threadId     its thread, when the query named it
 * @param threadDigest a short digest of its thread: equal for the sandboxes of one thread
 * @param createdAt    when it was made, where known
 * @param lastUsed     when it was last acquired, where known
 */
public record SandboxListing(String backend, String id, Optional<String> kind, String scope,
        Optional<String> threadId, String threadDigest, Optional<Instant> createdAt, Optional<Instant> lastUsed) {

    /** Hex digits of a thread digest: enough to tell a user's threads apart at a glance. */
    public static final int THREAD_DIGEST_HEX = 12;

    public SandboxListing {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(threadDigest, "threadDigest");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastUsed, "lastUsed");
    }

    /** The digest a listing shows for {@code threadId}: the first hex digits of its SHA-256. */
    public static String threadDigestOf(String threadId) {
        return KeyDigest.sha256Hex(threadId).substring(0, THREAD_DIGEST_HEX);
    }
}
