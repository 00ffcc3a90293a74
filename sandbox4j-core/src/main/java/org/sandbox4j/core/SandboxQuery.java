package org.sandbox4j.core;

import java.util.Objects;
import java.util.Optional;

/**
 * Which sandboxes a {@link SandboxInventory} lists or disposes of: every one of a scope, or one
 * conversation's (a scope and a thread).
 *
 * @param scope    the tenant or application scope
 * @param threadId the conversation thread; empty means every thread of the scope
 */
public record SandboxQuery(String scope, Optional<String> threadId) {

    public SandboxQuery {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(threadId, "threadId");
    }

    /** Every sandbox of {@code scope}, whatever its thread. */
    public static SandboxQuery scope(String scope) {
        return new SandboxQuery(scope, Optional.empty());
    }

    /** One conversation's sandboxes. */
    public static SandboxQuery conversation(String scope, String threadId) {
        return new SandboxQuery(scope, Optional.of(Objects.requireNonNull(threadId, "threadId")));
    }
}
