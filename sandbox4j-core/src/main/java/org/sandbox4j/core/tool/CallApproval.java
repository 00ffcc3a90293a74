package org.sandbox4j.core.tool;

/**
 * Asks a person (or the host's policy) whether one call of a tool that
 * {@linkplain SandboxTool#requiresApproval() requires approval} may run. No framework an adapter
 * serves stops a model's call for a person, so {@link ToolSet} refuses such a tool unless the host
 * gave one of these, and {@link FrameworkCalls} asks it before every call of that tool (only
 * those). Called on the thread of the call; may block while it asks.
 */
@FunctionalInterface
public interface CallApproval {

    /**
     * @param toolName      the tool the model called
     * @param argumentsJson the arguments as the model sent them (JSON text)
     * @param thread        the conversation the call belongs to, as the sandbox key holds it
     * @return whether the call may run; {@code false}, or a throw, gives the model
     *         {@link FrameworkCalls#NOT_APPROVED} and nothing is acquired
     */
    boolean approve(String toolName, String argumentsJson, String thread);
}
