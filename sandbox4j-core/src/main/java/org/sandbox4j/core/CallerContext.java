package org.sandbox4j.core;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Where a tool call comes from, read from the host's own per-call context. Scope and thread are
 * suppliers read on every call, never values captured when the tool was built: a host that
 * reuses one agent across conversations would otherwise let one conversation reach another's
 * sandbox. No API takes a key from the model.
 */
public final class CallerContext {

    private final Supplier<String> scope;
    private final Supplier<String> threadId;
    private final FileListing listing;

    private CallerContext(Supplier<String> scope, Supplier<String> threadId, FileListing listing) {
        this.scope = Objects.requireNonNull(scope, "scope");
        this.threadId = Objects.requireNonNull(threadId, "threadId");
        this.listing = Objects.requireNonNull(listing, "listing");
    }

    /**
     * Stores the three callables and calls none of them.
     *
     * @param scope    the current tenant or application scope
     * @param threadId the current conversation thread; may answer null outside a conversation
     * @param listing  the names a command may refer to
     */
    public static CallerContext of(Supplier<String> scope, Supplier<String> threadId, FileListing listing) {
        return new CallerContext(scope, threadId, listing);
    }

    /**
     * The key of the current call. The thread is read first: without one the call is refused
     * rather than served from a key every caller would share.
     *
     * @throws SandboxThreadContextMissing outside any conversation thread
     */
    public SandboxKey key(String agentDir) {
        String thread = threadId.get();
        if (thread == null || thread.isBlank()) {
            throw new SandboxThreadContextMissing("no active conversation thread: a sandboxed tool must be called "
                    + "from within a thread, so its sandbox cannot be shared with another conversation");
        }
        String currentScope = scope.get();
        if (currentScope == null) {
            throw new SandboxThreadContextMissing("no scope for the current call: the host's scope supplier "
                    + "answered null");
        }
        return new SandboxKey(currentScope, thread, agentDir);
    }

    /** The names of {@code store} a command may refer to now. */
    public List<String> listFiles(FileStore store) {
        return List.copyOf(listing.list(store));
    }
}
