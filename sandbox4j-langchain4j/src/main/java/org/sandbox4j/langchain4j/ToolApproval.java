package org.sandbox4j.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;

/**
 * Asks a person (or the host's policy) whether one call of a tool that
 * {@linkplain org.sandbox4j.core.tool.SandboxTool#requiresApproval() requires approval} may run.
 * LangChain4j runs every tool call the model asks for, so a tool that acts with the user's identity
 * is offered only when the host gives one of these.
 */
@FunctionalInterface
public interface ToolApproval {

    /**
     * @param thread  the conversation the call belongs to (the memory id, as the sandbox key holds it)
     * @param request the tool's name and the model's arguments (JSON text), as the model sent them
     * @return whether the call may run; a call not approved is answered with a fixed sentence
     */
    boolean approve(String thread, ToolExecutionRequest request);
}
