package org.sandbox4j.langchain4j;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Optional;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;

import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.tool.CallApproval;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;

/**
 * Runs one {@link SandboxTool} as a LangChain4j {@link ToolExecutor}: the call's thread is the
 * invocation's memory id, and the model's arguments are handed over as they came; core's
 * {@link FrameworkCalls} runs the call, so every outcome is a result the model reads and nothing
 * is thrown at LangChain4j, whose default error handler would show the model an exception's message.
 */
final class SandboxToolExecutor implements ToolExecutor {

    static final Logger LOG = System.getLogger(SandboxToolExecutor.class.getName());

    private final SandboxTool tool;
    private final FrameworkCalls calls;
    private final Optional<ToolApproval> approval;

    SandboxToolExecutor(SandboxTool tool, FrameworkCalls calls, Optional<ToolApproval> approval) {
        this.tool = tool;
        this.calls = calls;
        this.approval = approval;
    }

    @Override
    public String execute(ToolExecutionRequest request, Object memoryId) {
        return run(request, memoryId).text();
    }

    @Override
    public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext context) {
        ToolResult result = run(request, context == null ? null : context.chatMemoryId());
        return ToolExecutionResult.builder().resultText(result.text()).isError(result.error()).build();
    }

    ToolResult run(ToolExecutionRequest request, Object memoryId) {
        Optional<String> thread = MemoryIds.thread(memoryId);
        if (thread.isEmpty()) {
            // Refused before the arguments are read: a shared key would let one conversation reach
            // another's sandbox, and LangChain4j passes "default" when the AI service has no @MemoryId.
            LOG.log(Level.WARNING, () -> tool.name() + ": refused a call without a conversation (memory id "
                    + (memoryId == null ? "absent" : GuestText.quote(memoryId.toString())) + "); give the AI "
                    + "service method a @MemoryId parameter and a ChatMemoryProvider");
            return ToolResult.error(FrameworkCalls.noConversation(tool.name()));
        }
        // The host's approval is asked with LangChain4j's own request, as the model sent it.
        Optional<CallApproval> asked = approval.map(host -> (name, arguments, conversation) ->
                host.approve(conversation, request));
        return calls.call(tool, thread.get(), request.arguments(), asked);
    }

    @Override
    public String toString() {
        return "SandboxToolExecutor[" + tool.name() + "]";
    }
}
