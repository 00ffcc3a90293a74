package org.sandbox4j.core;

/**
 * A provider of sandboxes: one per mechanism (bubblewrap, a container engine, a cloud service).
 * Implementations must be thread-safe.
 *
 * <h2>Identity and reuse</h2>
 * A sandbox's identity is at least {@code (key, spec.kind())}, plus whatever else fixes what it
 * is (image, egress allowlist). {@link #acquire} is get-or-create with warm reuse: a second
 * acquire for the same identity returns the same running sandbox; two kinds are never served
 * from one sandbox. Concurrent acquires for one key must not both create (tool calls of one
 * assistant message race): serialise per key, or rely on the provider rejecting a duplicate name
 * and adopt the winner.
 *
 * <h2>Ownership</h2>
 * Record ownership where a second process can find it (labels, names, a state directory), with
 * label values hashed, never truncated, and the same mapping on write and query. Then
 * {@link #disposeScope} can answer from the provider's own record, a replica that never created a
 * sandbox can dispose of it, and sandboxes left behind by a crashed process are found.
 *
 * <h2>Honesty</h2>
 * {@link #declarations()} states only what the backend enforces; the router refuses every spec
 * it cannot serve before calling {@link #acquire}. What a backend cannot do, it refuses, naming
 * itself and why; it never degrades silently.
 */
public interface SandboxBackend {

    /** A short configuration id, e.g. {@code bubblewrap}; unique among a router's backends. */
    String name();

    /** What this backend claims. Read once by the router at construction: it must not change. */
    BackendDeclarations declarations();

    /**
     * Gets or creates the sandbox for {@code (key, spec.kind())}. The router has already checked
     * the spec against {@link #declarations()}.
     *
     * @throws SandboxException when the provider fails; the message names this backend and
     *                          carries no provider detail (log that instead)
     */
    Sandbox acquire(SandboxKey key, SandboxSpec spec);

    /** Deletes every kind's sandbox for {@code key}. Best effort: never throws. */
    void dispose(SandboxKey key);

    /**
     * Deletes every sandbox of one conversation, whatever its agent dir and kind, found by
     * querying the provider's own record (never this process's memory). Best effort: never throws.
     *
     * @return how many sandboxes were deleted
     */
    int disposeScope(String scope, String threadId);
}
