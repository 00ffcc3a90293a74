package org.sandbox4j.core;

import java.lang.System.Logger.Level;
import java.util.Objects;

/**
 * What a host calls from its own conversation-delete path, so a deleted conversation leaves no
 * sandbox behind in any backend. Never throws.
 */
public final class SandboxPurger {

    private static final System.Logger LOG = System.getLogger(SandboxPurger.class.getName());

    private final SandboxRouter router;

    public SandboxPurger(SandboxRouter router) {
        this.router = Objects.requireNonNull(router, "router");
    }

    /** Disposes of every sandbox of the conversation, in every registered backend; returns the count. */
    public int purgeScopedThread(String scope, String threadId) {
        int disposed = router.disposeScope(scope, threadId);
        if (disposed > 0) {
            LOG.log(Level.INFO, () -> "purged " + disposed + " sandbox(es) of a deleted conversation");
        }
        return disposed;
    }
}
