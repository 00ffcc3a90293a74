package org.sandbox4j.core.tool;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;

/**
 * The conversation of the tool call running on this thread, as an adapter learnt it from its
 * framework (a memory id, a tool-context value, an MCP session). Set only by {@link FrameworkCalls}
 * for the length of one call, read by the {@link CallerContext} it hands the tool factory; never
 * from the tool's arguments, so a model cannot name another conversation. Thread-safe.
 */
public final class CurrentConversation {

    private final ThreadLocal<String> current = new ThreadLocal<>();

    /** The conversation of the call in progress on this thread; empty outside a call. */
    public Optional<String> thread() {
        return Optional.ofNullable(current.get());
    }

    /**
     * The context an adapter hands its tool factory: {@code scope} fixed, the thread read from
     * this holder on every call (so one tool serves every conversation, each under its own key).
     *
     * @throws NullPointerException     no scope
     * @throws IllegalArgumentException a blank scope
     */
    public CallerContext callerContext(String scope, FileListing listing) {
        Objects.requireNonNull(scope, "scope");
        if (scope.isBlank()) {
            throw new IllegalArgumentException("the scope cannot be blank; name the user or application");
        }
        return CallerContext.of(() -> scope, current::get, listing);
    }

    /** Runs {@code body} as a call of {@code thread}, restoring what was there before (a nested call). */
    <T> T callAs(String thread, Supplier<T> body) {
        String previous = current.get();
        current.set(Objects.requireNonNull(thread, "thread"));
        try {
            return body.get();
        } finally {
            if (previous == null) {
                current.remove();
            } else {
                current.set(previous);
            }
        }
    }
}
