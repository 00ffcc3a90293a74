package org.sandbox4j.core;

import java.lang.System.Logger.Level;

/**
 * The end of a conversation, as a try-with-resources block: closing it disposes of the
 * conversation's sandboxes in every backend, however the block ended. It never throws from
 * {@link #close()}, so it never masks the block's own exception.
 */
public final class ScopeDisposal implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ScopeDisposal.class.getName());

    private final SandboxRouter router;
    private final String scope;
    private final String threadId;
    private int disposed;
    private boolean closed;

    ScopeDisposal(SandboxRouter router, String scope, String threadId) {
        this.router = router;
        this.scope = scope;
        this.threadId = threadId;
    }

    /** How many sandboxes the close disposed of; 0 inside the block. */
    public synchronized int disposed() {
        return disposed;
    }

    /** Disposes once; a second close does nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        disposed = router.disposeScope(scope, threadId);
        int count = disposed;
        LOG.log(Level.DEBUG, () -> "conversation scope closed: " + count + " sandbox(es) disposed");
    }
}
