package org.sandbox4j.springai;

/**
 * Asks a person whether one call of a tool that {@linkplain SandboxToolCallback#requiresApproval()
 * requires approval} may run. Spring AI has no approval step of its own, so a provider refuses to
 * offer such a tool unless the host gives one of these. Called on the thread of the tool call;
 * may block while it asks.
 */
@FunctionalInterface
public interface ToolCallApproval {

    /**
     * @param toolName       the tool the model called
     * @param argumentsJson  the arguments as the model sent them (JSON text)
     * @param conversationId the conversation the call belongs to
     * @return whether the call may run; {@code false} gives the model a fixed refusal
     */
    boolean approve(String toolName, String argumentsJson, String conversationId);
}
