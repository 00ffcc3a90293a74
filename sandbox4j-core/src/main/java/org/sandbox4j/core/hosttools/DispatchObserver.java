package org.sandbox4j.core.hosttools;

/**
 * Watches each dispatch, e.g. to open a tracing span. Called before the dispatch is counted; the
 * returned handle is closed after the dispatch ends however it ends, including by interruption.
 * A failure of either call is logged and contained: observing never changes a dispatch's outcome.
 */
@FunctionalInterface
public interface DispatchObserver {

    /**
     * @param run  the run dispatching
     * @param name the tool name as the guest sent it: not yet checked, so possibly not a string,
     *             {@code null}, or not a registered tool
     * @return a handle closed when the dispatch ends, or {@code null} for nothing to close
     */
    AutoCloseable observe(HostToolRun run, Object name);
}
