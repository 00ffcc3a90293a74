package org.sandbox4j.core.hosttools;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The warning that host tools run with the host's authority: logged once per process (on the
 * first registration anywhere), since it is a fact about the deployment, not about one tool.
 */
final class HostAuthorityNotice {

    /** The process-wide notice every registry uses. */
    static final HostAuthorityNotice PROCESS = new HostAuthorityNotice();

    static final String MESSAGE = "sandbox4j host tools are registered: calls dispatched from sandboxed code run"
            + " with this host's full authority and bypass the agent framework's tool middleware"
            + " (approval, filters, auditing); register only tools you would let that code call directly";

    private final AtomicBoolean emitted = new AtomicBoolean();

    HostAuthorityNotice() {
    }

    /** Logs the warning unless this notice has already been given; returns whether it logged. */
    boolean emitOnce(Logger logger) {
        if (!emitted.compareAndSet(false, true)) {
            return false;
        }
        logger.log(Level.WARNING, MESSAGE);
        return true;
    }
}
