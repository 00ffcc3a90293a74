package org.sandbox4j.local;

import java.util.List;
import java.util.Objects;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;

/**
 * What every local backend does the same way, written once: its sandboxes' lifecycle (dispose,
 * list, reap, let go) is its {@link LocalSandboxes}'. Each backend adds how a sandbox is made and
 * how a command runs.
 */
abstract class LocalBackend implements SandboxBackend, SandboxInventory, AutoCloseable {

    /** The name the router and messages use. */
    final String name;

    LocalBackend(String name) {
        this.name = name;
    }

    @Override
    public final String name() {
        return name;
    }

    /** The sandboxes under this backend's state root. */
    abstract LocalSandboxes sandboxes();

    @Override
    public void dispose(SandboxKey key) {
        sandboxes().dispose(key);
    }

    @Override
    public int disposeScope(String scope, String threadId) {
        return sandboxes().disposeScope(scope, threadId);
    }

    /** The sandboxes under this backend's state root for {@code query}, whichever process made them. */
    @Override
    public List<SandboxListing> list(SandboxQuery query) {
        return sandboxes().list(Objects.requireNonNull(query, "query"));
    }

    @Override
    public int dispose(SandboxQuery query) {
        return sandboxes().dispose(Objects.requireNonNull(query, "query"));
    }

    /** How this backend limits sandboxes on this host. */
    public LimitMechanism limitMechanism() {
        return sandboxes().limiter().mechanism();
    }

    /**
     * Reclaims what crashed owners left: sandboxes whose owner is gone and whose lease expired,
     * half-built or half-removed directories, and control groups with no sandbox. Runs when the
     * backend starts; call it again on demand. Returns how many sandboxes it removed.
     */
    public int reapAbandoned() {
        return sandboxes().reapAbandoned();
    }

    /**
     * Lets go of the sandboxes this instance acquired: they stay, detached, until their lease runs
     * out, for the next process to adopt or dispose of (a JVM that exits normally does the same;
     * one that crashes leaves them attached, and the next backend on the state root reaps them at
     * once).
     */
    @Override
    public void close() {
        sandboxes().close();
    }
}
