package org.sandbox4j.core;

import java.util.Objects;

/**
 * Which conversation a sandbox belongs to. Built from host context only (see
 * {@link CallerContext}); no API accepts a key from the model.
 *
 * @param scope    the tenant or application scope
 * @param threadId the conversation thread
 * @param agentDir the agent's own directory or name, separating agents in one thread
 */
public record SandboxKey(String scope, String threadId, String agentDir) {

    public SandboxKey {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(agentDir, "agentDir");
    }
}
